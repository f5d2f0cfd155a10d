import Foundation
import GraftTestSupport
import Testing

/// `graft convert`, run as a user runs it: the built binary.
@Suite(.enabled(if: GraftExecutable.url != nil, "the graft executable was not found; run `swift build` first"))
struct ConvertTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-convert-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func graft(_ arguments: String...) throws -> InspectTests.Result {
        try InspectTests().run(arguments)
    }

    func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    @Test func convertsBetweenFormatsAndVerifies() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = Project.url("examples/Company/Company.sqlite")
        let before = try Data(contentsOf: source)
        let binary = folder.appendingPathComponent("company.binary").path
        let back = folder.appendingPathComponent("back.sqlite").path
        let first = try graft("convert", source.path, binary, "--verify")
        #expect(first.status == 0, "\(first.error)")
        #expect(
            first.output.hasPrefix("Converted 13 objects from sqlite to binary: \(binary) (verified: no differences)"))
        let second = try graft("convert", binary, back, "--verify", "--quiet")
        #expect(second.status == 0, "\(second.error)")
        #expect(second.output == "")
        #expect(try Data(contentsOf: source) == before)  // the input is never touched
        #expect(try contents() == ["back.sqlite", "company.binary"])  // no temporary files left
    }

    @Test func anExistingOutputIsKeptUnlessForced() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = Project.url("examples/Company/Company.binary").path
        let output = folder.appendingPathComponent("out.sqlite")
        try Data("precious".utf8).write(to: output)
        let refused = try graft("convert", source, output.path)
        #expect(refused.status == 1)
        #expect(refused.error == "error: \(output.path): already exists (use --force to replace it)\n")
        #expect(try Data(contentsOf: output) == Data("precious".utf8))
        let forced = try graft("convert", source, output.path, "--force")
        #expect(forced.status == 0, "\(forced.error)")
        #expect(try Data(contentsOf: output).starts(with: Data("SQLite format 3\0".utf8)))
    }

    @Test func theFormatComesFromToOrTheExtension() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = Project.url("examples/Company/Company.sqlite").path
        let unknown = try graft("convert", source, folder.appendingPathComponent("out.data").path)
        #expect(unknown.status == 1)
        #expect(unknown.error.contains("give --to sqlite|xml|binary"))
        let chosen = try graft("convert", source, folder.appendingPathComponent("out.data").path, "--to", "binary")
        #expect(chosen.status == 0, "\(chosen.error)")
        let bad = try graft("convert", source, "x", "--to", "json")
        #expect(bad.status == 64)
        #expect(
            bad.error.hasPrefix("error: invalid value 'json' for '--to <format>': expected one of sqlite, xml, binary"))
    }

    static let invalidStores =
        (try? FileManager.default.contentsOfDirectory(atPath: Project.url("Tests/Fixtures/Invalid/sqlite").path)
            .filter { $0.hasSuffix(".sqlite") }.sorted()) ?? []

    @Test(arguments: invalidStores)
    func aCorruptInputGivesAClearErrorAndNoOutput(name: String) throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = Project.url("Tests/Fixtures/Invalid/sqlite/\(name)")
        let before = try Data(contentsOf: input)
        for format in ["binary", "sqlite"] {
            let result = try graft("convert", input.path, folder.appendingPathComponent("out.\(format)").path)
            #expect(result.status == 1)
            #expect(result.error.hasPrefix("error: \(input.path)"), "\(result.error)")
            #expect(result.output == "")
        }
        #expect(try contents().isEmpty)
        #expect(try Data(contentsOf: input) == before)
        let inspect = try graft("inspect", input.path)
        #expect(inspect.status == 1)
    }

    @Test func aModelThatDoesNotMatchIsNamed() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        // The example store is written with the current version (Company 2); version 1 lacks `location`.
        let result = try graft(
            "convert", Project.url("examples/Company/Company.sqlite").path,
            folder.appendingPathComponent("out.binary").path,
            "--model", Project.url("examples/Company/Company.xcdatamodeld/Company.xcdatamodel").path)
        #expect(result.status == 1)
        #expect(result.error.contains("different model; entities that differ: Department"))
        #expect(try contents().isEmpty)
    }
}
