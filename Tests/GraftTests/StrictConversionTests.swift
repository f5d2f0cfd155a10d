import Foundation
import Graft
import GraftTestSupport
import Testing

@testable import GraftSQLite

/// Crafted stores through the operations that read them: no trap, a clear error under strict reading, a
/// rescue under lenient reading, and a `--verify` that compares with what the input stores rather than
/// with its own reading of it.
@Suite struct StrictConversionTests {
    static let model = try! ModelFile.load(Project.url("examples/Company/Company.xcdatamodeld")).current
    let folder: URL
    let store: URL

    /// A copy of the example Company store.
    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-strict-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        store = folder.appendingPathComponent("Company.sqlite")
        try FileManager.default.copyItem(at: Project.url("examples/Company/Company.sqlite"), to: store)
    }

    func alter(_ statements: String...) throws {
        let database = try SQLiteDatabase.openForWriting(store)
        for statement in statements { try database.execute(statement) }
        database.close()
    }

    // MARK: Reading an XML document once

    /// An XML document whose ids a one-pass read cannot settle (`z104-EMPLOYEE` before a `z104` of the same
    /// tree) converts to SQLite all the same, read again in order, and verifies.
    @Test func anXMLDocumentThatCannotBeReadOnceIsReadInOrder() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let xml = folder.appendingPathComponent("Company.xml")
        _ = try Conversion.convert(from: store, to: xml)
        var text = try String(contentsOf: xml, encoding: .utf8)
        // The first employee's id becomes z<n>-EMPLOYEE for the number of a later employee.
        let employees = text.components(separatedBy: "<object type=\"EMPLOYEE\" id=\"").dropFirst().map {
            String($0.prefix { $0 != "\"" })
        }
        let (first, later) = (try #require(employees.first), try #require(employees.last))
        let renamed = "\(later)-EMPLOYEE"
        for (old, new) in [
            ("\"\(first)\"", "\"\(renamed)\""), (" \(first) ", " \(renamed) "), ("\"\(first) ", "\"\(renamed) "),
            (" \(first)\"", " \(renamed)\""),
        ] {
            text = text.replacingOccurrences(of: old, with: new)
        }
        try Data(text.utf8).write(to: xml)
        let output = folder.appendingPathComponent("Converted.sqlite")
        let report = try Conversion.convert(from: xml, to: output, options: .init(verify: true))
        #expect(report.objects == 13 && report.differences.isEmpty)
    }

    // MARK: A decimal of 1e999999 (an infinite real once in the store)

    @Test(arguments: ["Company.xml", "Company.binary", "Converted.sqlite"])
    func convertingAnInfiniteDecimalIsAnErrorNotATrap(output name: String) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try alter("UPDATE ZDEPARTMENT SET ZBUDGET = '1e999999' WHERE Z_PK = 1")
        let output = folder.appendingPathComponent(name)
        let error = try #require(throws: GraftError.self) { try Conversion.convert(from: store, to: output) }
        #expect(error.code == .typeMismatch)
        #expect(error.context == [.file(store.relativePath), .object("Department p1"), .key("budget")])
        #expect(error.message.hasPrefix("holds inf, which is beyond the range of Decimal"))
        #expect(!FileManager.default.fileExists(atPath: output.path))

        // Leniently: converted without it, said once, and verified.
        let report = try Conversion.convert(
            from: store, to: output, options: .init(verify: true, reading: StoreReadOptions(valueReading: .lenient)))
        #expect(report.objects == 13 && report.differences.isEmpty)
        #expect(report.warnings.filter { $0.hasPrefix("Department.budget (Decimal): 1 stored value") }.count == 1)
        let reader = try StoreFormat.detect(output).driver.reader(
            at: output, model: Self.model, options: StoreReadOptions())
        let department = try #require(Self.model.entity(named: "Department"))
        var budgets: [Int64: Value?] = [:]
        try reader.forEachSnapshot {
            if $0.ref.entity == department.index { budgets[$0.ref.key] = $0[attribute: "budget", in: department] }
        }
        #expect(budgets[1] == .some(nil))
        #expect(budgets[2] == .decimal(2_400_000))
    }

    @Test func copyingAnInfiniteDecimalIsAnErrorNotATrap() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try alter("UPDATE ZDEPARTMENT SET ZBUDGET = '1e999999' WHERE Z_PK = 1")
        // The whole store in one pass, and a selection through a store opened for reading.
        let whole = try #require(throws: GraftError.self) {
            try Copier.copyAll(from: Copier.reader(for: store, model: nil))
        }
        #expect(whole.context.contains(.object("Department p1")) && whole.context.contains(.key("budget")))
        let selection = Selection(roots: [.keys(entity: "Department", [1])])
        let selected = try #require(throws: GraftError.self) {
            try Copier(source: StoreSource(StoreFormat.openForReading(store, model: nil))).copy(selection)
        }
        #expect(selected.code == .typeMismatch)

        let opened = try StoreFormat.openForReading(
            store, model: nil, options: StoreReadOptions(valueReading: .lenient))
        let clipboard = try Copier(source: StoreSource(opened)).copy(selection)
        let sales = try #require(clipboard.objects.first { $0.entity == "Department" })
        #expect(!sales.attributes.contains { $0.name == "budget" })
        #expect(sales.attributes.contains { $0.name == "name" })
        #expect(opened.warnings.count == 1)
        let reader = try Copier.reader(for: store, model: nil, options: StoreReadOptions(valueReading: .lenient))
        let all = try Copier.copyAll(from: reader)
        #expect(all.objects.count == 13)
        #expect(reader.warnings.contains { $0.hasPrefix("Department.budget (Decimal)") })
    }

    // MARK: --verify

    /// A reading that turned text into 0 (as Graft's once did) would read the input the same way again:
    /// the object comparison agrees with itself, the stored values do not.
    @Test func verifyComparesWithTheStoredValuesNotWithItsOwnReading() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try alter("UPDATE ZEMPLOYEE SET ZYEARSOFSERVICE = 'abc' WHERE Z_PK = 1")
        let lenient = try SQLiteStoreReader(url: store, model: nil, valueReading: .lenient)
        let employee = try #require(lenient.model.entity(named: "Employee"))
        var snapshots: [Snapshot] = []
        try lenient.forEachSnapshot { snapshots.append($0) }
        // The mistaken reading: 0 for the text.
        let index = try #require(snapshots.firstIndex { $0.ref.key == 1 && $0.ref.entity == employee.index })
        snapshots[index][attribute: "yearsOfService", in: employee] = .integer(0)
        let mistaken = try InMemoryStore(model: lenient.model, snapshots: snapshots)
        #expect(try Verification.differences(between: mistaken, and: mistaken).isEmpty)

        let check = SQLiteStoredValueCheck(reader: try SQLiteStoreReader(url: store, model: nil))
        let found = try Verification.differences(
            between: mistaken, and: mistaken, storedValues: { try check.differences(of: $0) })
        #expect(
            found == [
                "Employee p1.yearsOfService: the input holds the text 'abc' in ZEMPLOYEE.ZYEARSOFSERVICE, the output 0"
            ])
        // Read leniently, the value is expected to be absent, and is.
        snapshots[index][attribute: "yearsOfService", in: employee] = nil
        let rescued = try InMemoryStore(model: lenient.model, snapshots: snapshots)
        let expected = SQLiteStoredValueCheck(reader: lenient)
        #expect(
            try Verification.differences(
                between: rescued, and: rescued, storedValues: { try expected.differences(of: $0) }
            ).isEmpty)
    }

    /// Values in the forms strict reading accepts compare equal to what they stand for.
    @Test func verifyAcceptsWhatStrictReadingAccepts() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try alter(
            "UPDATE ZEMPLOYEE SET ZHIREDATE = 700000000 WHERE Z_PK = 1",  // a date in whole seconds
            "UPDATE ZEMPLOYEE SET ZBADGE = '0F1E2D3C-AAAA-4BBB-8CCC-DDDDEEEEFFFF' WHERE Z_PK = 1",  // a UUID as text
            "UPDATE ZEMPLOYEE SET ZPREFERENCES = 'plain' WHERE Z_PK = 2")  // a blob's bytes as text
        for name in ["a.xml", "b.binary", "c.sqlite"] {
            let report = try Conversion.convert(
                from: store, to: folder.appendingPathComponent(name), options: .init(verify: true))
            #expect(report.differences.isEmpty, "\(name): \(report.differences)")
        }
    }

    /// A value the output does not hold is a difference, found by the stored-value check as well.
    @Test func aValueChangedOnTheWayIsFound() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let reader = try SQLiteStoreReader(url: store, model: nil)
        let employee = try #require(reader.model.entity(named: "Employee"))
        let check = SQLiteStoredValueCheck(reader: reader)
        var changed: [String] = []
        try reader.forEachSnapshot { snapshot in
            guard snapshot.ref.entity == employee.index, snapshot.ref.key == 1 else { return }
            var copy = snapshot
            copy[attribute: "name", in: employee] = .string("Someone else")
            changed = try check.differences(of: copy)
            #expect(try check.differences(of: snapshot).isEmpty)
        }
        #expect(changed.count == 1)
        #expect(changed.first?.hasPrefix("Employee p1.name: the input holds the text '") == true)
        #expect(changed.first?.hasSuffix("in ZEMPLOYEE.ZNAME, the output Someone else") == true)
    }

    // MARK: Keys at the end of Int64

    @Test(arguments: [
        (
            "UPDATE Z_PRIMARYKEY SET Z_MAX = 9223372036854775807 WHERE Z_NAME = 'Project'",
            "Z_MAX is 9223372036854775807"
        ),
        (
            "UPDATE ZPROJECT SET Z_PK = 9223372036854775807 WHERE Z_PK = 3",
            "the highest Z_PK in ZPROJECT is 9223372036854775807"
        ),
    ])
    func pastingIntoAStoreWithNoKeysLeftIsAnError(sql: String, recorded: String) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let clipboard = try Copier(source: StoreSource(StoreFormat.openForReading(store, model: nil))).copy(
            Selection(roots: [.keys(entity: "Project", [1])]))
        try alter(sql)
        let before = try Data(contentsOf: store)
        let target = try StoreFormat.open(store, model: nil)
        let error = try #require(throws: GraftError.self) {
            try Paster(options: PasteOptions(onConflict: .duplicate)).paste(clipboard, into: target)
        }
        #expect(error.message.hasPrefix("no keys left for Project: \(recorded), so 1 new key would pass"), "\(error)")
        #expect(try Data(contentsOf: store) == before)
    }

    /// A document read into memory (XML, binary) hands out keys after its highest the same way.
    @Test func aDocumentWithNoKeysLeftGivesNone() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let project = try #require(Self.model.entity(named: "Project"))
        let store = try InMemoryStore(model: Self.model, snapshots: [Snapshot(entity: project, key: .max)])
        let error = try #require(throws: GraftError.self) {
            try store.allocateKeys(rootEntity: project.index, count: 1)
        }
        #expect(error.message.hasPrefix("no keys left for Project: its highest key is 9223372036854775807"))
    }

    /// Two trees sharing keys, one of them reaching Int64's largest: copying everything cannot give local
    /// ids above it, and a binary document (one key sequence) cannot hold them; both say so.
    @Test func sharedKeysAtTheEndOfInt64AreAnErrorNotATrap() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try alter("UPDATE ZPROJECT SET Z_PK = 9223372036854775807 WHERE Z_PK = 3")
        let copy = try #require(throws: GraftError.self) {
            try Copier.copyAll(from: Copier.reader(for: store, model: nil))
        }
        #expect(copy.message.contains("cannot be given a local id"), "\(copy)")
        let output = folder.appendingPathComponent("Company.binary")
        let conversion = try #require(throws: GraftError.self) { try Conversion.convert(from: store, to: output) }
        #expect(conversion.message.hasSuffix("is too large to give every object its own key"), "\(conversion)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }
}
