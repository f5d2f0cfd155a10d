import Foundation
import Graft
import GraftCLI
import GraftTestSupport
import Testing

@testable import GraftSQLite

/// `--lenient` on the commands that read stores: without it a stored value that is not of its
/// attribute's type or range stops the command with an error naming the object, the attribute, the value
/// and the option; with it the value is read as no value, with one warning per attribute.
@Suite struct LenientCommandTests {
    let folder: URL
    let store: String

    /// The example store with text in Ann's (p1) and Bob's (p2) Integer 32 `yearsOfService`.
    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-lenient-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent("Damaged.sqlite")
        try FileManager.default.copyItem(at: Project.url("examples/Company/Company.sqlite"), to: url)
        let database = try SQLiteDatabase.openForWriting(url)
        try database.execute("UPDATE ZEMPLOYEE SET ZYEARSOFSERVICE = 'abc' WHERE Z_PK = 1")
        try database.execute("UPDATE ZEMPLOYEE SET ZYEARSOFSERVICE = 10.5 WHERE Z_PK = 2")
        database.close()
        store = url.path
    }

    func graft(_ arguments: [String]) -> InProcessRun { InProcessRun(arguments) }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    static let refusal =
        "Employee p1: yearsOfService: holds the text 'abc', which is not an Integer 32 value (--lenient reads such "
        + "values as no value, with a warning)"

    static func warning(entity: String = "Employee") -> String {
        "warning: \(entity).yearsOfService (Integer 32): 2 stored values are not of the attribute's type or range and "
            + "were read as no value: p1 (the text 'abc'), p2 (10.5)\n"
    }

    @Test func convertStopsUnlessLenient() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let refused = graft(["convert", store, path("out.xml")])
        #expect(refused.status == 1)
        #expect(refused.error == "error: \(store): \(Self.refusal)\n")
        #expect(!FileManager.default.fileExists(atPath: path("out.xml")))

        let converted = graft(["convert", store, path("out.xml"), "--lenient", "--verify"])
        #expect(converted.status == 0, "\(converted.error)")
        #expect(converted.error == Self.warning())
        #expect(
            converted.text.contains("Converted 13 objects from sqlite to xml")
                && converted.text.contains("(verified: no differences)"))
    }

    @Test(arguments: [["--all"], ["--entity", "Employee"]])
    func copyStopsUnlessLenient(selection: [String]) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let refused = graft(["copy", store] + selection)
        #expect(refused.status == 1)
        #expect(refused.error == "error: \(store): \(Self.refusal)\n")
        #expect(refused.output.isEmpty)

        let copy = graft(["copy", store, "--lenient"] + selection)
        #expect(copy.status == 0, "\(copy.error)")
        #expect(copy.error.hasPrefix(Self.warning()), "\(copy.error)")
        #expect(copy.error.components(separatedBy: "warning:").count == 2)
        let clipboard = try ClipboardEncoding.decode(copy.output)
        func years(_ name: String) -> Value?? {
            clipboard.objects.first { $0[attribute: "name"] == .string(name) }.map { $0[attribute: "yearsOfService"] }
        }
        #expect(years("Alan Turing") == .some(nil))
        #expect(years("Edsger Dijkstra") == .some(nil))
        #expect(years("Barbara Liskov") == .some(.integer(12)))
    }

    @Test func validateStopsUnlessLenient() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let refused = graft(["validate", store])
        #expect(refused.status == 1)
        #expect(refused.error == "error: \(store): \(Self.refusal)\n")

        let checked = graft(["validate", store, "--lenient"])
        #expect(checked.status == 0, "\(checked.error)")
        #expect(checked.error == Self.warning() + "\(store): 13 objects, no rule broken\n")
    }

    /// Inspect reads an XML or binary document's objects (a SQLite store's are counted without reading
    /// their values).
    @Test func inspectStopsUnlessLenient() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let document = path("Damaged.xml")
        #expect(graft(["convert", store, document, "--lenient", "-q"]).status == 0)
        // Barbara Liskov's 12 years become "ten12", which is no integer.
        var text = try String(contentsOf: URL(fileURLWithPath: document), encoding: .utf8)
        let written = #"<attribute name="yearsofservice" type="int32">12</attribute>"#
        #expect(text.contains(written))
        text = text.replacingOccurrences(
            of: written, with: #"<attribute name="yearsofservice" type="int32">ten12</attribute>"#)
        try text.write(toFile: document, atomically: true, encoding: .utf8)

        let refused = graft(["inspect", document])
        #expect(refused.status == 1)
        #expect(
            refused.error.contains(": yearsOfService: holds the text 'ten12', which is not an Integer 32 value"),
            "\(refused.error)")
        #expect(refused.error.contains("(--lenient reads such values as no value, with a warning)"))

        let inspected = graft(["inspect", document, "--lenient"])
        #expect(inspected.status == 0, "\(inspected.error)")
        #expect(
            inspected.error.contains("warning: Employee.yearsOfService (Integer 32): 1 stored value is not"),
            "\(inspected.error)")
        #expect(inspected.text.contains("Employee"))
    }
}
