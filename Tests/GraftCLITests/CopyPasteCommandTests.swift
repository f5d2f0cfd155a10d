import Foundation
import Graft
import GraftCLI
import GraftTestSupport
import Testing

/// `graft copy` and `graft paste`, run in process with captured streams, and once as a real pipeline.
@Suite struct CopyPasteCommandTests {
    let folder: URL
    let company = Project.url("examples/Company/Company.sqlite")

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-copy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func graft(_ arguments: [String], input: Data = Data()) -> InProcessRun { InProcessRun(arguments, input: input) }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    @Test(arguments: ClipboardEncoding.allCases, Graft.StoreFormat.allCases)
    func copyThenPasteIntoANewStore(encoding: ClipboardEncoding, format: Graft.StoreFormat) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try Data(contentsOf: company)
        let copy = graft([
            "copy", company.path, "--entity", "Department", "--where", "name == 'Sales'", "--follow",
            "Department.employees", "--format", encoding.rawValue,
        ])
        #expect(copy.status == 0, "\(copy.error)")
        #expect(ClipboardEncoding.detect(copy.output) == encoding)
        #expect(copy.error.hasPrefix("Copied "))
        let target = path("new.\(format.rawValue)")
        // The Sales manager's own manager and a project member from elsewhere are references a new store
        // cannot have: refused by default, dropped when asked.
        let refused = graft(["paste", "--into", target], input: copy.output)
        #expect(refused.status == 1)
        #expect(refused.error.contains("is not in the target"))
        #expect(refused.error.contains("--dangling drop"))
        #expect(!FileManager.default.fileExists(atPath: target))
        let paste = graft(["paste", "--into", target, "--dangling", "drop"], input: copy.output)
        #expect(paste.status == 0, "\(paste.error)")
        #expect(paste.error.contains("dropped link to: Manager (employeeID = 1)"))
        let lines = paste.text.split(separator: "\n")
        let clipboard = try ClipboardEncoding.decode(copy.output)
        #expect(lines.count == clipboard.objects.count)
        #expect(lines.allSatisfy { $0.hasPrefix("o") && $0.contains("\tx-coredata://") })
        #expect(paste.error.contains("Pasted into \(target) (new): inserted \(clipboard.objects.count)"))
        // The store opens, with the objects copied.
        let reader = try format.driver.reader(at: URL(fileURLWithPath: target), model: nil, options: StoreReadOptions())
        #expect(try reader.counts().values.reduce(0, +) == clipboard.objects.count)
        #expect(try Data(contentsOf: company) == before)
    }

    @Test func planShowsWhatWouldBeTakenAndWritesNothing() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = graft(["copy", company.path, "--entity", "Department", "--where", "name == 'Sales'", "--plan"])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.text.hasPrefix("Would copy "))
        #expect(run.text.contains("Department.employees (Deny delete rule: not owned, referenced)"))
        #expect(run.error.isEmpty)
    }

    @Test func aClipboardFileAndAnIDMapFile() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let clipboard = path("sales.bplist")
        let copy = graft([
            "copy", company.path, "--entity", "Department", "--follow", "Department.employees", "-o", clipboard,
            "--quiet",
        ])
        #expect(copy.status == 0, "\(copy.error)")
        #expect(copy.output.isEmpty && copy.error.isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: clipboard)).starts(with: Data("bplist00".utf8)))
        // An existing output is kept unless forced.
        let again = graft(["copy", company.path, "--all", "-o", clipboard])
        #expect(again.status == 1)
        #expect(again.error.contains("already exists (use --force to replace it)"))
        let paste = graft([
            "paste", clipboard, "--into", path("copy.xml"), "--id-map", path("ids.json"), "--dangling", "drop",
        ])
        #expect(paste.status == 0, "\(paste.error)")
        #expect(paste.output.isEmpty)
        let ids =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path("ids.json"))))
            as? [String: String]
        #expect(
            ids?.count
                == (try ClipboardEncoding.decode(Data(contentsOf: URL(fileURLWithPath: clipboard)))).objects.count)
    }

    @Test func conflictsDryRunsAndPolicies() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = graft(["copy", company.path, "--all"])
        #expect(copy.status == 0, "\(copy.error)")
        let target = path("target.sqlite")
        #expect(graft(["paste", "--into", target, "-q"], input: copy.output).status == 0)
        let stored = try Data(contentsOf: URL(fileURLWithPath: target))
        // Every identity exists now: refused, listing the conflicts; the store is untouched.
        let refused = graft(["paste", "--into", target], input: copy.output)
        #expect(refused.status == 1)
        #expect(refused.error.contains("already exists"))
        #expect(refused.error.contains("--on-conflict"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == stored)
        // A dry run with skip says what would happen and writes nothing.
        let dry = graft(["paste", "--into", target, "--on-conflict", "skip", "--dry-run"], input: copy.output)
        #expect(dry.status == 0, "\(dry.error)")
        #expect(dry.text.hasPrefix("Dry run: nothing was written"))
        #expect(dry.text.contains("Would skip"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == stored)
        // Merge people and departments, skip projects (which have no identity, so they are inserted).
        let merged = graft(
            ["paste", "--into", target, "--on-conflict", "merge", "--on-conflict", "Project=skip"], input: copy.output)
        #expect(merged.status == 0, "\(merged.error)")
        #expect(merged.error.contains("merged"))
        // A policy for an entity the model does not have is an error, not ignored.
        let unknown = graft(["paste", "--into", target, "--on-conflict", "Nothing=skip"], input: copy.output)
        #expect(unknown.status == 1)
        #expect(unknown.error.contains("Nothing"))
    }

    @Test func badInputsSayWhatAndWhere() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = graft(["copy", path("missing.sqlite"), "--all"])
        #expect(missing.status == 1)
        #expect(missing.error.contains("missing.sqlite"))
        let noRoots = graft(["copy", company.path])
        #expect(noRoots.status == 64)
        #expect(noRoots.error.contains("choose what to copy"))
        let whereAlone = graft(["copy", company.path, "--where", "name == 'x'"])
        #expect(whereAlone.status == 64)
        let badPredicate = graft(["copy", company.path, "--entity", "Department", "--where", "name =="])
        #expect(badPredicate.status == 1)
        let badEntity = graft(["copy", company.path, "--entity", "Nothing"])
        #expect(badEntity.status == 1)
        #expect(badEntity.error.contains("Nothing"))
        let badKey = graft(["copy", company.path, "--key", "Employee"])
        #expect(badKey.status == 64)

        let noInto = graft(["paste"], input: Data("{}".utf8))
        #expect(noInto.status == 64)
        #expect(noInto.error.contains("--into"))
        let empty = graft(["paste", "--into", path("x.sqlite")], input: Data())
        #expect(empty.status == 1)
        #expect(empty.error.contains("the clipboard is empty"))
        let garbage = graft(["paste", "--into", path("x.sqlite")], input: Data("hello".utf8))
        #expect(garbage.status == 1)
        #expect(garbage.error.contains("standard input"))
        let copy = graft(["copy", company.path, "--all", "--format", "json"])
        let truncated = graft(["paste", "--into", path("x.sqlite")], input: copy.output.prefix(copy.output.count / 2))
        #expect(truncated.status == 1)
        let unknownFormat = graft(["paste", "--into", path("x.data")], input: copy.output)
        #expect(unknownFormat.status == 1)
        #expect(unknownFormat.error.contains("(.sqlite, .xml, .binary)"))
        #expect(try contents().isEmpty)  // nothing was created
    }

    /// A clipboard cut short, in every encoding: a clear error, and the store as it was.
    @Test(arguments: ClipboardEncoding.allCases)
    func aBrokenClipboardChangesNothing(encoding: ClipboardEncoding) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = path("target.sqlite")
        try FileManager.default.copyItem(atPath: company.path, toPath: target)
        let before = try contents().map { try Data(contentsOf: folder.appendingPathComponent($0)) }
        let copy = graft(["copy", company.path, "--entity", "Project", "--format", encoding.rawValue])
        #expect(copy.status == 0, "\(copy.error)")
        for broken in [copy.output.prefix(copy.output.count * 2 / 3), copy.output.prefix(20), copy.output.dropLast(3)] {
            let run = graft(["paste", "--into", target, "--dangling", "drop"], input: Data(broken))
            #expect(run.status == 1)
            #expect(run.error.hasPrefix("error: standard input"), "\(run.error)")
            #expect(try contents().map { try Data(contentsOf: folder.appendingPathComponent($0)) } == before)
        }
    }

    @Test func aNewStoreNeedsAModel() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = graft(["copy", company.path, "--all", "--no-model"])
        #expect(copy.status == 0, "\(copy.error)")
        let refused = graft(["paste", "--into", path("new.sqlite")], input: copy.output)
        #expect(refused.status == 1)
        #expect(
            refused.error.hasSuffix(
                "the store does not exist and the clipboard carries no model to create it with (--model names one)\n"),
            "\(refused.error)")
        let model = Project.url("examples/Company/Company.xcdatamodeld").path
        let pasted = graft(["paste", "--into", path("new.sqlite"), "--model", model], input: copy.output)
        #expect(pasted.status == 0, "\(pasted.error)")
    }
}

/// The pipeline the README shows, through a shell.
@Suite(.enabled(if: GraftExecutable.url != nil, "the graft executable was not found; run `swift build` first"))
struct CopyPastePipelineTests {
    @Test func copyPipesIntoPaste() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-pipe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let graft = GraftExecutable.url!.path
        let company = Project.url("examples/Company/Company.sqlite").path
        let target = folder.appendingPathComponent("sales.xml").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c",
            "'\(graft)' copy '\(company)' --entity Department --where 'name == \"Sales\"' --follow Department.employees | '\(graft)' paste --into '\(target)' --dangling drop",
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(text.split(separator: "\n").count >= 4)
        #expect(FileManager.default.fileExists(atPath: target))
    }
}
