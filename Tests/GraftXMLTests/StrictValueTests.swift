import Foundation
import GraftCore
import GraftGraph
import GraftModel
import GraftXML
import Testing

/// Strict reading of an XML store's values, as every store format reads them: a value that is not of its
/// attribute's type, or outside its range, is an error naming the object, the attribute and the value,
/// or (`ValueReading.lenient`) no value with one warning per attribute. Each case is the control document
/// `Valid/company.xml` with one attribute added to Ann (z103, a Manager).
@Suite struct StrictValueTests {
    static let control = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Valid/company.xml")

    struct Refused: CustomTestStringConvertible, Sendable {
        var element: String
        var attribute: String
        var found: String
        var problem: String
        var testDescription: String { element }
    }

    static let refused: [Refused] = [
        // Single precision's largest is about 3.4e38: this would become infinity.
        Refused(
            element: #"<attribute name="rating" type="float">1e39</attribute>"#, attribute: "rating",
            found: "the text '1e39'", problem: "is beyond the range of Float"),
        Refused(
            element: #"<attribute name="salary" type="decimal">1e999999</attribute>"#, attribute: "salary",
            found: "the text '1e999999'", problem: "is beyond what a Decimal holds exactly"),
        // 41 significant digits: Decimal(string:) would round them. (Messages show the first 40 characters.)
        Refused(
            element: #"<attribute name="salary" type="decimal">1.2345678901234567890123456789012345678901</attribute>"#,
            attribute: "salary", found: "the text '1.23456789012345678901234567890123456789…'",
            problem: "is beyond what a Decimal holds exactly"),
        Refused(
            element: #"<attribute name="salary" type="decimal">12abc</attribute>"#, attribute: "salary",
            found: "the text '12abc'", problem: "is not a Decimal value"),
        Refused(
            element: #"<attribute name="employeeid" type="int64">10.5</attribute>"#, attribute: "employeeID",
            found: "the text '10.5'", problem: "is not an Integer 64 value"),
        Refused(
            element: #"<attribute name="employeeid" type="int64">99999999999999999999</attribute>"#,
            attribute: "employeeID", found: "the text '99999999999999999999'",
            problem: "is beyond the range of Integer 64"),
        Refused(
            element: #"<attribute name="isremote" type="bool">2</attribute>"#, attribute: "isRemote",
            found: "the text '2'", problem: "is not a Boolean value (0 or 1)"),
        // Written as another type: a string where the model has a Float.
        Refused(
            element: #"<attribute name="rating" type="string">fast</attribute>"#, attribute: "rating",
            found: "a value written as string", problem: "is not a Float value"),
    ]

    func document(with element: String, in folder: URL) throws -> URL {
        let text = try String(contentsOf: Self.control, encoding: .utf8)
        let anchor = #"<attribute name="name" type="string">Ann</attribute>"#
        #expect(text.contains(anchor))
        let url = folder.appendingPathComponent("company.xml")
        try text.replacingOccurrences(of: anchor, with: anchor + "\n        " + element).write(
            to: url, atomically: true, encoding: .utf8)
        return url
    }

    @Test(arguments: refused)
    func strictReadingNamesTheObjectTheAttributeAndTheValue(_ case: Refused) throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = try document(with: `case`.element, in: folder)
        let reader = try XMLStoreReader(url: url, model: Support.company)
        let error = try #require(throws: GraftError.self) { try Support.snapshots(reader) }
        #expect(error.code == .typeMismatch)
        #expect(error.context.contains(.object("z103")) && error.context.contains(.key(`case`.attribute)), "\(error)")
        #expect(error.message.hasPrefix("holds \(`case`.found), which \(`case`.problem)"), "\(error.message)")
    }

    @Test(arguments: refused)
    func lenientReadingReadsItAsNoValueWithOneWarning(_ case: Refused) throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = try document(with: `case`.element, in: folder)
        let reader = try XMLStoreReader(url: url, model: Support.company, valueReading: .lenient)
        let snapshots = try Support.snapshots(reader)
        let manager = try #require(Support.company.entity(named: "Manager"))
        let ann = try #require(snapshots.first { $0.ref.entity == manager.index })
        #expect(ann[attribute: `case`.attribute, in: manager] == nil)
        #expect(ann[attribute: "name", in: manager] == .string("Ann"))
        let type = manager.attributes[manager.attributeIndexByName[`case`.attribute]!].type
        #expect(
            reader.warnings == [
                "Manager.\(`case`.attribute) (\(type)): 1 stored value is not of the attribute's type or range and "
                    + "was read as no value: z103 (\(`case`.found))"
            ])
    }

    /// What is within range reads as before: the largest Float, 38 digits, a decimal NaN.
    @Test(arguments: [
        (
            #"<attribute name="rating" type="float">3.4028235e38</attribute>"#,
            Value.double(Double(Float.greatestFiniteMagnitude))
        ),
        (
            #"<attribute name="salary" type="decimal">1.234567890123456789012345678901234567</attribute>"#,
            Value.decimal(Decimal(string: "1.234567890123456789012345678901234567")!)
        ),
        (#"<attribute name="employeeid" type="int64">-9223372036854775808</attribute>"#, Value.integer(.min)),
    ])
    func valuesWithinRangeRead(element: String, value: Value) throws {
        let folder = try Support.temporaryFolder()
        defer { Support.cleanUp(folder) }
        let url = try document(with: element, in: folder)
        let reader = try XMLStoreReader(url: url, model: Support.company)
        let manager = try #require(Support.company.entity(named: "Manager"))
        let ann = try #require(try Support.snapshots(reader).first { $0.ref.entity == manager.index })
        let name = element.split(separator: "\"")[1]
        let attribute = try #require(manager.attributes.first { $0.name.lowercased() == name })
        #expect(ann[attribute: attribute.name, in: manager] == value)
    }
}
