import Foundation
import GraftCore
import GraftTestSupport
import Testing

@testable import GraftModel

/// Defaults and bounds in model files are read whole and checked against their type's range: text that is
/// not a value of the attribute's type is an error naming the file, entity, attribute, the XML attribute
/// and the text, never the number Foundation's `intValue` would take from it. What real Xcode files hold
/// (a Boolean's `NO` left on an Integer 32 after a type change) reads as Core Data reads it, with a warning.
@Suite struct ModelValueTextTests {
    /// A `contents` document of one entity, `Item`, with one attribute, `field`, of `type`, and `extra`
    /// written into the attribute's element (`defaultValueString="1e400"`).
    static func contents(_ type: String, _ extra: String) -> Data {
        Data(
            """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel">
                <entity name="Item" representedClassName="Item" syncable="YES">
                    <attribute name="field" optional="YES" attributeType="\(type)" \(extra) syncable="YES"/>
                </entity>
            </model>
            """.utf8)
    }

    struct Bad: CustomTestStringConvertible, Sendable {
        var type: String
        var field: String
        var text: String
        var problem: String
        var testDescription: String { "\(type) \(field)=\(text)" }
    }

    static let bad: [Bad] = [
        Bad(type: "Integer 16", field: "defaultValueString", text: "abc", problem: "is not a whole number"),
        Bad(type: "Integer 16", field: "defaultValueString", text: "70000", problem: "out of range (-32768 to 32767)"),
        Bad(type: "Integer 16", field: "minValueString", text: "-40000", problem: "out of range (-32768 to 32767)"),
        Bad(type: "Integer 32", field: "defaultValueString", text: "1.5", problem: "is not a whole number"),
        Bad(type: "Integer 32", field: "maxValueString", text: "3000000000", problem: "out of range"),
        Bad(type: "Integer 64", field: "defaultValueString", text: "10abc", problem: "is not a whole number"),
        Bad(type: "Integer 64", field: "defaultValueString", text: "1e3", problem: "is not a whole number"),
        Bad(type: "Integer 64", field: "maxValueString", text: "99999999999999999999", problem: "out of range"),
        Bad(type: "String", field: "maxValueString", text: "1e400", problem: "is not a whole number"),
        Bad(type: "String", field: "minValueString", text: "abc", problem: "is not a whole number"),
        Bad(type: "Binary", field: "maxValueString", text: "1.5", problem: "is not a whole number"),
        Bad(type: "Double", field: "defaultValueString", text: "1e400", problem: "out of range"),
        Bad(type: "Double", field: "maxValueString", text: "10abc", problem: "is not a number"),
        Bad(type: "Double", field: "defaultValueString", text: "inf", problem: "is not a number"),
        Bad(type: "Float", field: "defaultValueString", text: "1e39", problem: "out of range"),
        Bad(type: "Decimal", field: "defaultValueString", text: "1e400", problem: "out of range"),
        Bad(type: "Decimal", field: "minValueString", text: "10abc", problem: "is not a number"),
        Bad(type: "Boolean", field: "defaultValueString", text: "maybe", problem: "is not YES or NO"),
        Bad(type: "Date", field: "defaultDateTimeInterval", text: "1e400", problem: "is not a number of seconds"),
        Bad(type: "Date", field: "maxDateTimeInterval", text: "soon", problem: "is not a number of seconds"),
        Bad(type: "UUID", field: "defaultValueString", text: "not-a-uuid", problem: "is not a UUID"),
        // Only the words Xcode writes for a Boolean's default count as one.
        Bad(type: "Integer 32", field: "defaultValueString", text: "no", problem: "is not a whole number"),
    ]

    @Test(arguments: bad)
    func textThatIsNotAValueOfTheTypeIsAnErrorNamingWhere(_ bad: Bad) throws {
        let document = Self.contents(bad.type, "\(bad.field)=\"\(bad.text)\"")
        let error = try #require(throws: GraftError.self) {
            try XcdatamodelReader.read(document, path: "Small.xcdatamodel/contents")
        }
        #expect(error.code == .malformedInput)
        #expect(error.context.first == .file("Small.xcdatamodel/contents"))
        #expect(error.context.contains(.entity("Item")) && error.context.contains(.key("field")))
        #expect(error.context.contains(.line(4)))
        #expect(error.message.hasPrefix("\(bad.field) '\(bad.text)' "), "\(error)")
        #expect(error.message.contains(bad.problem), "\(error)")
    }

    @Test(arguments: [
        ("Integer 16", "defaultValueString", "-32768", Value.integer(-32768)),
        ("Integer 16", "maxValueString", "32767", .integer(32767)),
        ("Integer 32", "defaultValueString", "0.0", .integer(0)),
        ("Integer 64", "minValueString", "+12", .integer(12)),
        ("String", "maxValueString", "60", .integer(60)),
        ("Double", "defaultValueString", "-3.5", .double(-3.5)),
        ("Double", "maxValueString", "1e3", .double(1000)),
        ("Float", "defaultValueString", ".5", .double(0.5)),
        ("Decimal", "defaultValueString", "-4.5", .decimal(Decimal(string: "-4.5")!)),
        ("Boolean", "defaultValueString", "0", .bool(false)),
        ("Boolean", "defaultValueString", "YES", .bool(true)),
        ("Date", "defaultDateTimeInterval", "388411200", .date(Date(timeIntervalSinceReferenceDate: 388_411_200))),
    ])
    func valuesOfTheTypeRead(type: String, field: String, text: String, expected: Value) throws {
        var warnings: [String] = []
        let model = try XcdatamodelReader.read(
            Self.contents(type, "\(field)=\"\(text)\""), path: "m/contents", warnings: &warnings)
        let attribute = try #require(model.entity(named: "Item")?.attribute(named: "field"))
        let read =
            field.hasPrefix("default")
            ? attribute.defaultValue : field.hasPrefix("min") ? attribute.minValue : attribute.maxValue
        #expect(read == expected)
        #expect(warnings.isEmpty)
    }

    @Test(arguments: [
        ("Integer 32", "NO", Value.integer(0)), ("Integer 16", "YES", .integer(1)), ("Double", "NO", .double(0)),
        ("Decimal", "YES", .decimal(1)),
    ])
    func aBooleanWordAsANumbersDefaultReadsAsZeroOrOneWithAWarning(type: String, text: String, expected: Value) throws {
        var warnings: [String] = []
        let model = try XcdatamodelReader.read(
            Self.contents(type, "defaultValueString=\"\(text)\""), path: "m/contents", warnings: &warnings)
        #expect(model.entity(named: "Item")?.attribute(named: "field")?.defaultValue == expected)
        #expect(warnings.count == 1)
        #expect(
            warnings.first?.hasPrefix("m/contents: Item.field: its defaultValueString '\(text)' ") == true,
            "\(warnings)")
        // A bound is never a Boolean's.
        let error = try #require(throws: GraftError.self) {
            try XcdatamodelReader.read(Self.contents(type, "minValueString=\"\(text)\""))
        }
        #expect(error.message.contains("minValueString '\(text)'"))
    }

    @Test func textATypeCannotUseIsLeftOutWithAWarning() throws {
        var warnings: [String] = []
        let binary = try XcdatamodelReader.read(
            Self.contents("Transformable", "defaultValueString=\"permanent\""), path: "m/contents", warnings: &warnings)
        #expect(binary.entity(named: "Item")?.attribute(named: "field")?.defaultValue == nil)
        #expect(
            warnings == [
                "m/contents: Item.field: its defaultValueString 'permanent' is left out: a Transformable attribute takes no default value from text"
            ])
        warnings = []
        let flag = try XcdatamodelReader.read(
            Self.contents("Boolean", "maxValueString=\"1\""), path: "m/contents", warnings: &warnings)
        #expect(flag.entity(named: "Item")?.attribute(named: "field")?.maxValue == nil)
        #expect(warnings.count == 1 && warnings[0].contains("has no minimum or maximum"))
    }

    @Test(arguments: [
        ("maxCount", "5000000000", "is out of range for a 32-bit whole number"),
        ("minCount", "1.5", "is not a 32-bit whole number"),
    ])
    func relationshipCountsAre32BitWholeNumbers(key: String, text: String, problem: String) throws {
        let document = Data(
            """
            <model>
                <entity name="A"><relationship name="bs" toMany="YES" \(key)="\(text)" destinationEntity="A"/></entity>
            </model>
            """.utf8)
        let error = try #require(throws: GraftError.self) { try XcdatamodelReader.read(document, path: "m/contents") }
        #expect(error.code == .malformedInput)
        #expect(error.message == "\(key) '\(text)' \(problem)")
        #expect(error.context.contains(.entity("A")) && error.context.contains(.key("bs")))
    }

    // MARK: Xcode 3 elements, compiled models, models built in code

    @Test func anElementsFileIsReadByTheSameRules() throws {
        var archive = ElementsArchive.company
        // Department.name (String), Employee.salary (Decimal).
        archive.entities[0].properties[0].tags.append(("XD_PAttK_maxValueString", .value("1e400")))
        let error = try #require(throws: GraftError.self) {
            try XcodeElementsReader.read(archive.encoded(), path: "Company.xcdatamodel/elements")
        }
        #expect(error.code == .malformedInput)
        #expect(
            error.description
                == "Company.xcdatamodel/elements: Department: name: XD_PAttK_maxValueString '1e400' is not a whole "
                + "number for a String attribute's length")

        archive = ElementsArchive.company
        archive.entities[1].properties[0].tags.append(("XD_PAttK_defaultValueAsString", .value("NO")))
        var warnings: [String] = []
        let model = try XcodeElementsReader.read(archive.encoded(), path: "C/elements", warnings: &warnings)
        #expect(model.entity(named: "Employee")?.attribute(named: "salary")?.defaultValue == .decimal(0))
        #expect(
            warnings.count == 1
                && warnings[0].hasPrefix("C/elements: Employee.salary: its XD_PAttK_defaultValueAsString 'NO' "))
    }

    @Test func aModelBuiltInCodeOrReadFromAnArchiveKeepsIntegersInTheirRange() throws {
        let error = try #require(throws: GraftError.self) {
            try Model(entities: [
                Entity(
                    name: "Item",
                    attributes: [Attribute(name: "small", type: .integer16, defaultValue: .integer(70000))])
            ])
        }
        #expect(error.code == .invalidModel)
        #expect(error.context == [.entity("Item"), .key("small")])
        #expect(
            error.message == "its default value 70000 is out of range for an Integer 16 attribute (-32768 to 32767)")
    }

    @Test func aValidationBoundTheTypeCannotHoldIsLeftOutOfACompiledModelWithAWarning() throws {
        // Core Data compares SELF <= 1.5 with an integer; Graft's bounds are values of the attribute's type.
        let model = try Model(entities: [
            Entity(name: "Item", attributes: [Attribute(name: "count", type: .integer16, maxValue: .double(1.5))])
        ])
        var warnings: [String] = []
        let read = try CompiledModelReader.read(
            CompiledModelWriter.archive(model), path: "small.mom", warnings: &warnings)
        #expect(read.entity(named: "Item")?.attribute(named: "count")?.maxValue == nil)
        #expect(warnings.count == 1)
        #expect(
            warnings.first?.hasPrefix("small.mom: Item.count: its validation predicate 'SELF <= 1.5' ") == true,
            "\(warnings)")
    }

    // MARK: The corpus

    static let contentsFiles = Corpus.paths {
        $0.lastPathComponent == "contents" && $0.deletingLastPathComponent().pathExtension == "xcdatamodel"
    }

    /// Every default and bound in the corpus reads strictly; the one oddity Xcode leaves (a Boolean's `YES` or
    /// `NO` on a number attribute) reads as 0 or 1 with a warning for each, checked here against the XML.
    @Test(.enabled(if: Corpus.isAvailable, Comment(rawValue: Corpus.unavailableMessage)), arguments: contentsFiles)
    func everyCorpusModelReadsStrictlyWithAWarningForEachBooleanWordOnANumber(path: String) throws {
        let url = Corpus.url(path)
        var warnings: [String] = []
        let model = try XcdatamodelReader.read(contentsOf: url, warnings: &warnings)
        var expected: [String] = []
        for entity in try XMLTree.parse(FileAccess.read(url)).children(named: "entity") {
            for element in entity.children(named: "attribute") {
                guard let type = element["attributeType"].flatMap(AttributeType.init(modelName:)), type.isNumeric,
                    let text = element["defaultValueString"], text == "YES" || text == "NO",
                    let entityName = entity["name"], let name = element["name"]
                else { continue }
                let attribute = try #require(model.entity(named: entityName)?.attribute(named: name))
                #expect(attribute.defaultValue?.doubleValue == (text == "YES" ? 1 : 0))
                expected.append("\(entityName).\(name)")
            }
        }
        let booleanWords = warnings.filter { $0.contains("is a Boolean's default") }
        #expect(booleanWords.count == expected.count, "\(booleanWords)")
        for (warning, place) in zip(booleanWords, expected) {
            #expect(warning.hasPrefix("\(url.relativePath): \(place): "), "\(warning)")
        }
    }
}
