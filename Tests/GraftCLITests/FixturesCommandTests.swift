import Foundation
import GraftTestSupport
import Testing

/// `graft fixtures` as a user runs it: the output's kind from its name or --format, a clipboard on
/// standard output that `graft paste` takes, and every mistake told with a non-zero exit and nothing written.
@Suite struct FixturesCommandTests {
    let folder: URL
    let model = Project.url("examples/Company/Company.xcdatamodeld").path

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "graft-fixtures-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    @Test(arguments: ["Test.sqlite", "Test.xml", "Test.binary", "Test.json", "Test.plist", "Test.bplist"])
    func writesWhatTheExtensionNamesAndItValidates(name: String) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = InProcessRun(["fixtures", "--model", model, "--count", "Department=3", "-o", path(name)])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.error.contains("Department 3"), "\(run.error)")
        if name.hasSuffix(".sqlite") || name.hasSuffix(".xml") || name.hasSuffix(".binary") {
            let validated = InProcessRun(["validate", path(name)])
            #expect(validated.status == 0, "\(validated.text)\(validated.error)")
        } else {
            // A clipboard pastes into a new store, and the result breaks no rule.
            let pasted = InProcessRun(["paste", path(name), "--into", path("Pasted.sqlite"), "--quiet"])
            #expect(pasted.status == 0, "\(pasted.error)")
            #expect(InProcessRun(["validate", path("Pasted.sqlite")]).status == 0)
        }
    }

    @Test func aClipboardGoesToStandardOutputAndASpecIsRead() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let spec = Project.url("examples/Company/fixtures.json").path
        let run = InProcessRun(["fixtures", "--model", model, "--spec", spec, "--format", "clipboard-xml", "-o", "-"])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.text.hasPrefix("<?xml"))
        #expect(run.error.contains("as a Graft XML clipboard, seed 2025"), "\(run.error)")
        let again = InProcessRun(["fixtures", "--model", model, "--spec", spec, "--format", "clipboard-xml", "-o", "-"])
        #expect(again.output == run.output)
        let pasted = InProcessRun(["paste", "-", "--into", path("FromStdin.xml"), "--quiet"], input: run.output)
        #expect(pasted.status == 0, "\(pasted.error)")
    }

    @Test func thePlanShowsTheCountsTheRulesLedTo() throws {
        let run = InProcessRun(["fixtures", "--model", model, "--count", "Department=20", "--plan"])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.text.hasPrefix("Would generate 90 objects (seed 1):"), "\(run.text)")
        #expect(run.text.contains("  Employee    40"), "\(run.text)")
        let json = InProcessRun(["fixtures", "--model", model, "--plan", "--json"])
        #expect((try JSONSerialization.jsonObject(with: json.output) as? [String: Any])?["objects"] as? Int == 50)
        #expect(InProcessRun(["fixtures", "--model", model, "--plan", "-o", path("P.sqlite")]).status == 64)
    }

    @Test func theSummaryAsJSON() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = InProcessRun(["fixtures", "--model", model, "--seed", "3", "-o", path("F.sqlite"), "--json"])
        #expect(run.status == 0, "\(run.error)")
        let summary = try JSONSerialization.jsonObject(with: run.output) as? [String: Any]
        #expect(summary?["objects"] as? Int == 50)
        #expect(summary?["seed"] as? Int == 3)
        #expect(summary?["format"] as? String == "SQLite store")
    }

    @Test func mistakesAreToldAndNothingIsWritten() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        func fails(_ arguments: [String], status: Int32 = 1, saying text: String) {
            let run = InProcessRun(["fixtures"] + arguments)
            #expect(run.status == status, "\(arguments): \(run.error)")
            #expect(run.error.contains(text), "\(arguments): \(run.error)")
            #expect(!FileManager.default.fileExists(atPath: path("Out.sqlite")))
        }
        fails(["-o", path("Out.sqlite")], status: 64, saying: "needs --model")
        fails(["--model", model], status: 64, saying: "needs -o FILE")
        fails(["--model", path("Missing.xcdatamodeld"), "-o", path("Out.sqlite")], saying: "Missing.xcdatamodeld")
        fails(["--model", model, "--count", "Nobody=3", "-o", path("Out.sqlite")], saying: "no entity 'Nobody'")
        fails(["--model", model, "--count", "Department=x", "-o", path("Out.sqlite")], status: 64, saying: "Entity=n")
        fails(
            [
                "--model", model, "--count", "Department=5", "--count", "Employee=2", "--count", "Manager=0",
                "--count", "Flunky=0", "-o", path("Out.sqlite"),
            ],
            saying: "counts that work: --count Employee=15")
        fails(
            ["--model", model, "--set", "Department.code=0", "-o", path("Out.sqlite")], saying: "below the minimum 1")
        fails(
            ["--model", model, "--version", "Company 9", "-o", path("Out.sqlite")], saying: "has no version 'Company 9'"
        )
        fails(["--model", model, "-o", path("Out.txt")], saying: "cannot tell the output format")
        fails(["--model", model, "--format", "sqlite", "-o", "-"], status: 64, saying: "cannot go to standard output")
        fails(
            ["--model", model, "--spec", path("none.json"), "-o", path("Out.sqlite")],
            saying: "cannot read the spec file")
        // An existing file is kept unless --force.
        FileManager.default.createFile(atPath: path("Kept.json"), contents: Data("mine".utf8))
        let kept = InProcessRun(["fixtures", "--model", model, "-o", path("Kept.json")])
        #expect(kept.status == 1)
        #expect(kept.error.contains("already exists"))
        #expect(FileManager.default.contents(atPath: path("Kept.json")) == Data("mine".utf8))
        #expect(InProcessRun(["fixtures", "--model", model, "-o", path("Kept.json"), "--force", "-q"]).status == 0)
    }

    @Test func anOlderVersionOfTheModelIsChosenByName() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = InProcessRun(["fixtures", "--model", model, "--version", "Company", "-o", path("V1.xml")])
        #expect(run.status == 0, "\(run.error)")
        // Version 1 has no Department.location.
        let text = try String(contentsOfFile: path("V1.xml"), encoding: .utf8)
        #expect(!text.contains("name=\"location\""))
    }
}

/// `graft fixtures --from`: a subset of a real store, planned, written, refused when asked wrongly.
@Suite struct FixturesSubsetCommandTests {
    let folder: URL
    let store = Project.url("examples/Company/Company.sqlite").path

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-subset-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    @Test func plansWritesAndValidates() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let plan = InProcessRun(["fixtures", "--from", store, "--entity", "Employee", "--limit", "2", "--plan"])
        #expect(plan.status == 0, "\(plan.error)")
        #expect(plan.text.contains("Department  1"), "\(plan.text)")
        let run = InProcessRun([
            "fixtures", "--from", store, "--entity", "Employee", "--limit", "2", "-o", path("S.xml"),
        ])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.error.hasPrefix("Took "), "\(run.error)")
        #expect(InProcessRun(["validate", path("S.xml")]).status == 0)
        let anonymous = InProcessRun(
            [
                "fixtures", "--from", store, "--entity", "Employee", "--anonymize", "auto", "--seed", "3", "-o",
                path("A.json"),
            ])
        #expect(anonymous.status == 0, "\(anonymous.error)")
        #expect(!(try String(contentsOfFile: path("A.json"), encoding: .utf8)).contains("Alan Turing"))
        let piped = InProcessRun(["fixtures", "--from", store, "--entity", "Project", "-o", "-"])
        #expect(piped.status == 0)
        #expect(piped.text.hasPrefix("{"))
    }

    @Test func wrongRequestsAreRefused() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        func fails(_ arguments: [String], status: Int32, saying text: String) {
            let run = InProcessRun(["fixtures"] + arguments)
            #expect(run.status == status, "\(arguments): \(run.error)")
            #expect(run.error.contains(text), "\(arguments): \(run.error)")
        }
        fails(["--from", store, "-o", path("S.sqlite")], status: 64, saying: "--from needs --entity")
        fails(
            ["--from", store, "--entity", "Employee", "--count", "Employee=3", "-o", path("S.sqlite")], status: 64,
            saying: "--from takes objects as they are")
        fails(
            ["--model", "M", "--entity", "Employee", "-o", path("S.sqlite")], status: 64, saying: "given with --from")
        fails(
            ["--from", store, "--entity", "Employee", "--plan", "-o", path("S.sqlite")], status: 64,
            saying: "--plan writes nothing")
        fails(
            ["--from", store, "--entity", "Employee", "-o", store, "--force"], status: 1,
            saying: "is the store the subset comes from")
        fails(
            ["--from", store, "--entity", "Employee", "--where", "name ==", "-o", path("S.sqlite")], status: 1,
            saying: "--where")
        #expect(!FileManager.default.fileExists(atPath: path("S.sqlite")))
    }
}
