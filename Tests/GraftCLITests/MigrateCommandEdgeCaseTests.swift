import Foundation
import GraftTestSupport
import Testing

/// `graft migrate` where a user is likely to go wrong: another output format, an output that exists,
/// a store that cannot be written, paths that are not what they should be.
extension MigrateCommandTests {
    func files() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() }

    @Test func aSQLiteStoreMigratesToAnXMLDocument() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = oldStore()
        let run = InProcessRun(["migrate", store, "--model", model, "--to", "xml", "-o", path("New.data"), "-q"])
        #expect(run.status == 0, "\(run.error)")
        #expect(try String(contentsOfFile: path("New.data"), encoding: .utf8).contains("<database>"))
        let plan = InProcessRun(["migrate", path("New.data"), "--model", model, "--plan"])
        #expect(plan.text.contains("(xml): written with version 'Company 3'"), "\(plan.text)")
        #expect(plan.text.contains("Nothing to migrate"), "\(plan.text)")
        #expect(InProcessRun(["validate", path("New.data"), "--model", model]).status == 0)
    }

    @Test func anExistingOutputIsReplacedOnlyWithForce() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = oldStore()
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: path("New.sqlite")))
        let refused = InProcessRun(["migrate", store, "--model", model, "-o", path("New.sqlite")])
        #expect(refused.status == 1)
        #expect(refused.error.contains("\(path("New.sqlite")): already exists (use --force"), "\(refused.error)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path("New.sqlite"))) == Data("keep me".utf8))
        let forced = InProcessRun(["migrate", store, "--model", model, "-o", path("New.sqlite"), "--force", "-q"])
        #expect(forced.status == 0, "\(forced.error)")
        let plan = InProcessRun(["migrate", path("New.sqlite"), "--model", model, "--plan"])
        #expect(plan.text.contains("Nothing to migrate"), "\(plan.text)")
        #expect(try files() == ["New.sqlite", "Old.sqlite"])
    }

    @Test(.enabled(if: ReadOnlyFiles.isAvailable, Comment(rawValue: ReadOnlyFiles.unavailableMessage)))
    func aReadOnlyStoreIsNotMigratedInPlace() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = oldStore()
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let run = try ReadOnlyFiles.with([URL(fileURLWithPath: store)]) {
            InProcessRun(["migrate", store, "--model", model, "--in-place"])
        }
        #expect(run.status == 1)
        #expect(run.error.contains(store), "\(run.error)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        let left = try files()
        #expect(left == ["Old.sqlite"], "\(left)")
    }

    @Test func pathsThatAreNotWhatTheyShouldBeAreNamed() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = oldStore()
        let noModel = InProcessRun(["migrate", store, "--model", path("Nope.xcdatamodeld"), "-o", path("New.sqlite")])
        #expect(noModel.status == 1)
        #expect(noModel.error.contains(path("Nope.xcdatamodeld")), "\(noModel.error)")
        try FileManager.default.createDirectory(atPath: path("Folder.sqlite"), withIntermediateDirectories: false)
        let folderStore = InProcessRun(["migrate", path("Folder.sqlite"), "--model", model, "-o", path("New.sqlite")])
        #expect(folderStore.status == 1)
        #expect(folderStore.error.contains(path("Folder.sqlite")), "\(folderStore.error)")
        #expect(try files() == ["Folder.sqlite", "Old.sqlite"])
    }
}
