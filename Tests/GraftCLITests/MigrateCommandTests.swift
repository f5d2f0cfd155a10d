import Foundation
import GraftTestSupport
import Testing

/// `graft migrate` as a user runs it: the plan, a new document, in place, and every mistake told with a
/// non-zero exit and nothing written.
@Suite struct MigrateCommandTests {
    let folder: URL
    let model = Project.url("Tests/Fixtures/Migration/Company.xcdatamodeld").path

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-migrate-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// A store of version 1, made with `graft fixtures`.
    func oldStore(_ name: String = "Old.sqlite") -> String {
        let run = InProcessRun(["fixtures", "--model", model, "--version", "Company", "-o", path(name), "-q"])
        #expect(run.status == 0, "\(run.error)")
        return path(name)
    }

    @Test func thePlanSaysWhichVersionWroteTheStoreAndWhatEachStepChanges() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = oldStore()
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let run = InProcessRun(["migrate", store, "--model", model, "--plan"])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.text.contains("written with version 'Company'\nMigrating to version 'Company 3' in 2 steps:\n"))
        #expect(run.text.contains("Step 1: 'Company' → 'Company 2' (inferred)\n"))
        #expect(run.text.contains("  Department.location: added, default 'Headquarters'\n"))
        #expect(run.text.contains("  Manager.parkingBay: renamed from parkingSpot\n"))
        let json = InProcessRun(["migrate", store, "--model", model, "--version", "Company 2", "--plan", "--json"])
        let plan = try #require(try JSONSerialization.jsonObject(with: json.output) as? [String: Any])
        #expect(plan["storeVersion"] as? String == "Company")
        #expect((plan["steps"] as? [[String: Any]])?.count == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["Old.sqlite"])
    }

    @Test func aNewDocumentThenInPlace() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = oldStore()
        let run = InProcessRun(["migrate", store, "--model", model, "-o", path("New.xml"), "--verify"])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.text.contains("from version 'Company' to 'Company 3' in 2 steps"), "\(run.text)")
        #expect(run.text.contains("(verified: no differences)"))
        #expect(InProcessRun(["validate", path("New.xml"), "--model", model]).status == 0)
        let again = InProcessRun(["migrate", path("New.xml"), "--model", model, "--plan"])
        #expect(again.text.contains("Nothing to migrate"), "\(again.text)")
        let inspected = InProcessRun(["inspect", store, "--model", model])
        #expect(
            inspected.text.contains("\nMigration: Migrating to version 'Company 3' in 2 steps:\n"), "\(inspected.text)")
        let inPlace = InProcessRun(["migrate", store, "--model", model, "--in-place", "--json"])
        #expect(inPlace.status == 0, "\(inPlace.error)")
        let summary = try #require(try JSONSerialization.jsonObject(with: inPlace.output) as? [String: Any])
        #expect(summary["output"] as? String == store)
        #expect(InProcessRun(["validate", store, "--model", model]).status == 0)
    }

    @Test func mistakesExitNonZeroAndWriteNothing() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = oldStore()
        let usage = [
            ["migrate", store, "--model", model],
            ["migrate", store, "-o", path("X.sqlite")],
            ["migrate", store, "--model", model, "-o", path("X.sqlite"), "--in-place"],
            ["migrate", store, "--model", model, "--in-place", "--to", "xml"],
        ]
        for arguments in usage {
            #expect(InProcessRun(arguments).status == 64, "\(arguments)")
        }
        let unknownVersion = InProcessRun(["migrate", store, "--model", model, "--version", "Company 9", "--plan"])
        #expect(unknownVersion.status == 1)
        #expect(unknownVersion.error.contains("no version named 'Company 9'"), "\(unknownVersion.error)")
        let exists = InProcessRun(["migrate", store, "--model", model, "-o", store])
        #expect(exists.status == 1)
        let backwards = InProcessRun(["migrate", store, "--model", model, "-o", path("New.sqlite")])
        #expect(backwards.status == 0)
        let back = InProcessRun(["migrate", path("New.sqlite"), "--model", model, "--version", "Company", "--plan"])
        #expect(back.status == 1)
        #expect(back.error.contains("Graft does not migrate back"), "\(back.error)")
        let missing = InProcessRun(["migrate", path("Nope.sqlite"), "--model", model, "--plan"])
        #expect(missing.status == 1)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["New.sqlite", "Old.sqlite"])
    }
}
