import Foundation
import Graft
import GraftTestSupport
import Testing

/// What Graft writes, checked by independent tools: `sqlite3` and `xmllint`.
@Suite struct OutputCheckTests {
    static func tool(_ name: String) -> URL? {
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let url = URL(fileURLWithPath: String(folder)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }

    static func run(_ tool: URL, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    func converted(to format: String) throws -> (folder: URL, file: URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("graft-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("company.\(format)")
        _ = try Conversion.convert(from: Project.url("examples/Company/Company.binary"), to: file)
        return (folder, file)
    }

    @Test(.enabled(if: tool("sqlite3") != nil, "sqlite3 is not installed"))
    func sqliteStoresOpenInTheSQLiteShell() throws {
        let (folder, file) = try converted(to: "sqlite")
        defer { try? FileManager.default.removeItem(at: folder) }
        let sqlite3 = Self.tool("sqlite3")!
        let check = try Self.run(
            sqlite3, [file.path, "PRAGMA integrity_check; PRAGMA journal_mode; PRAGMA auto_vacuum; PRAGMA page_size"])
        #expect(check.status == 0)
        #expect(check.output == "ok\nwal\n2\n4096\n")
        let rows = try Self.run(
            sqlite3,
            [
                file.path,
                "SELECT count(*) FROM ZEMPLOYEE; SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY WHERE Z_SUPER = 0 ORDER BY Z_ENT",
            ])
        #expect(rows.output == "8\nDepartment|2\nEmployee|8\nProject|3\n")
    }

    @Test(.enabled(if: tool("xmllint") != nil, "xmllint is not installed"))
    func xmlStoresAreWellFormed() throws {
        let (folder, file) = try converted(to: "xml")
        defer { try? FileManager.default.removeItem(at: folder) }
        let check = try Self.run(Self.tool("xmllint")!, ["--noout", "--nonet", file.path])
        #expect(check.status == 0, "\(check.output)")
    }
}
