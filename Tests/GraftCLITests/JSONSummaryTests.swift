import Foundation
import Graft
import GraftCLI
import GraftTestSupport
import Testing

/// `--json` on `convert`, `copy` and `paste`: the summary a script reads, with what the text summary
/// says and the warnings, instead of the text.
@Suite struct JSONSummaryTests {
    let folder: URL
    let company = Project.url("examples/Company/Company.sqlite")

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-json-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func graft(_ arguments: [String], input: Data = Data()) -> InProcessRun { InProcessRun(arguments, input: input) }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// The JSON object in `text`, parsed by Foundation (an independent reader).
    func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func convertPrintsItsReport() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = graft(["convert", company.path, path("c.xml"), "--verify", "--json"])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.error.isEmpty)
        let report = try object(run.text)
        #expect(report["inputFormat"] as? String == "sqlite" && report["outputFormat"] as? String == "xml")
        #expect(report["objects"] as? Int == 13)
        let counts = try #require(report["counts"] as? [String: Int])
        #expect(counts.values.reduce(0, +) == 13)
        #expect((report["differences"] as? [Any])?.isEmpty == true)
        #expect((report["warnings"] as? [Any])?.isEmpty == true)
    }

    @Test func copyPrintsItsSummaryBesideTheClipboard() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        // The clipboard on standard output: the summary on standard error.
        let piped = graft(["copy", company.path, "--entity", "Department", "--json"])
        #expect(piped.status == 0, "\(piped.error)")
        let clipboard = try ClipboardEncoding.decode(piped.output)
        let summary = try object(piped.error)
        #expect(summary["objects"] as? Int == clipboard.objects.count)
        #expect(summary["references"] as? Int == clipboard.references.count)
        #expect((summary["counts"] as? [String: Int])?["Department"] == 2)
        // The clipboard in a file: the summary on standard output.
        let written = graft(["copy", company.path, "--all", "-o", path("all.json"), "--json"])
        #expect(written.status == 0, "\(written.error)")
        #expect(try object(written.text)["objects"] as? Int == 13)
        #expect(
            try ClipboardEncoding.decode(Data(contentsOf: folder.appendingPathComponent("all.json"))).objects.count
                == 13)
    }

    @Test func copyPlanPrintsWhatWouldBeTaken() throws {
        let run = graft([
            "copy", company.path, "--entity", "Department", "--where", "name == 'Sales'", "--plan", "--json",
        ])
        #expect(run.status == 0, "\(run.error)")
        let plan = try object(run.text)
        #expect(plan["roots"] as? Int == 1)
        let exits = try #require(plan["exits"] as? [[String: Any]])
        #expect(!exits.isEmpty)
        for exit in exits {
            for key in ["from", "relationship", "to", "rule"] { #expect(exit[key] is String, "\(key) in \(exit)") }
            #expect((exit["relationship"] as? String)?.contains(".") == true)
        }
    }

    @Test func pastePrintsItsReportWithTheIDMap() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = graft(["copy", company.path, "--all"])
        #expect(copy.status == 0, "\(copy.error)")
        let dry = graft(["paste", "--into", path("new.sqlite"), "--dry-run", "--json"], input: copy.output)
        #expect(dry.status == 0, "\(dry.error)")
        let wouldDo = try object(dry.text)
        #expect(wouldDo["dryRun"] as? Bool == true)
        #expect(!FileManager.default.fileExists(atPath: path("new.sqlite")))

        let pasted = graft(["paste", "--into", path("new.sqlite"), "--json"], input: copy.output)
        #expect(pasted.status == 0, "\(pasted.error)")
        let report = try object(pasted.text)
        #expect(report["dryRun"] as? Bool == false && report["createdStore"] as? Bool == true)
        #expect((report["inserted"] as? [String: Int])?.values.reduce(0, +) == 13)
        let idMap = try #require(report["idMap"] as? [String: String])
        #expect(idMap.count == 13)
        #expect(idMap.values.allSatisfy { $0.hasPrefix("x-coredata://") })

        // Into the store that now exists: not created.
        let again = graft(
            ["paste", "--into", path("new.sqlite"), "--on-conflict", "skip", "--json"], input: copy.output)
        #expect(again.status == 0, "\(again.error)")
        let second = try object(again.text)
        #expect(second["createdStore"] as? Bool == false)
        #expect((second["skipped"] as? [String: Int])?.isEmpty == false)
    }
}
