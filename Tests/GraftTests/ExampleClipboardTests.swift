import Foundation
import Graft
import GraftTestSupport
import Testing

/// The example clipboards in `examples/Company/clipboards`: the Sales department with its people and
/// projects, copied from the example store, in each encoding. Run with `GRAFT_RECORD=1` to write them
/// afresh.
@Suite struct ExampleClipboardTests {
    static let folder = Project.url("examples/Company/clipboards")
    static let files: [(ClipboardEncoding, String)] = [
        (.json, "Sales.json"), (.plist, "Sales.plist"), (.binaryPlist, "Sales.bplist"), (.xml, "Sales.xml"),
    ]

    static func copySales() throws -> Clipboard {
        let store = try StoreFormat.openForReading(Project.url("examples/Company/Company.sqlite"), model: nil)
        return try Copier(source: StoreSource(store)).copy(
            Selection(
                roots: [.predicate(entity: "Department", format: "name == 'Sales'")], follow: ["Department.employees"]))
    }

    @Test(arguments: files.map(\.1))
    func eachExampleIsTheSalesClipboard(name: String) throws {
        let encoding = Self.files.first { $0.1 == name }!.0
        let url = Self.folder.appendingPathComponent(name)
        let clipboard = try Self.copySales()
        let bytes = try encoding.encode(clipboard)
        if ProcessInfo.processInfo.environment["GRAFT_RECORD"] == "1" {
            try FileManager.default.createDirectory(at: Self.folder, withIntermediateDirectories: true)
            try FileAccess.writeAtomically(bytes, to: url)
        }
        let stored = try Data(contentsOf: url)
        #expect(stored == bytes, "the encoder's output changed; GRAFT_RECORD=1 rewrites the example")
        #expect(ClipboardEncoding.detect(stored) == encoding)
        #expect(try ClipboardEncoding.decode(stored) == clipboard)
        // Sales, 4 people, 2 projects; Grace Hopper's manager and a Compiler member are references.
        #expect(clipboard.counts == ["Department": 1, "Employee": 2, "Flunky": 1, "Manager": 1, "Project": 2])
        #expect(clipboard.references.count == 2)
    }

    @Test func theExamplesPasteIntoANewStore() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "graft-examples-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for (_, name) in Self.files {
            let clipboard = try ClipboardEncoding.decode(try Data(contentsOf: Self.folder.appendingPathComponent(name)))
            let url = folder.appendingPathComponent("\(name).sqlite")
            let report = try Paster(options: PasteOptions(dangling: .drop)).paste(
                clipboard, intoNewStoreAt: url, format: .sqlite)
            #expect(report.inserted.values.reduce(0, +) == 7)
            #expect(report.dangling.count == 2)
        }
    }
}
