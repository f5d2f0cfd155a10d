import Foundation
import Testing

enum GraftExecutable {
    struct NotFound: Error {}

    /// The `graft` built beside these tests, or in the package's `.build/debug`.
    static let url: URL? = {
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let candidates = [
            Bundle.main.executableURL?.deletingLastPathComponent(),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            packageRoot.appendingPathComponent(".build/debug"),
        ]
        return candidates.compactMap { $0?.appendingPathComponent("graft") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()
}

/// Runs the built `graft` executable and checks what it prints and how it exits.
@Suite(.enabled(if: GraftExecutable.url != nil, "the graft executable was not found; run `swift build` first"))
struct EndToEndTests {
    struct Result: Equatable {
        var status: Int32
        var output: String
        var error: String
    }

    func graft(_ arguments: String...) throws -> Result {
        let process = Process()
        guard let url = GraftExecutable.url else { throw GraftExecutable.NotFound() }
        process.executableURL = url
        process.arguments = arguments
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // The outputs are small: reading one to its end cannot block on the other.
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        return Result(
            status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
            error: String(decoding: errorData, as: UTF8.self))
    }

    @Test func help() throws {
        let help = Golden.graft
        #expect(try graft("--help") == Result(status: 0, output: help, error: ""))
        #expect(try graft("-h") == Result(status: 0, output: help, error: ""))
        #expect(try graft() == Result(status: 0, output: help, error: ""))
        #expect(try graft("help") == Result(status: 0, output: help, error: ""))
    }

    @Test func version() throws {
        #expect(try graft("--version") == Result(status: 0, output: "graft 0.1.0\n", error: ""))
    }

    @Test func unknownSubcommand() throws {
        #expect(
            try graft("nosuch", "--force")
                == Result(
                    status: 64, output: "",
                    error: "error: unknown subcommand 'nosuch'\nusage: graft <subcommand>\nSee 'graft --help'.\n"))
        #expect(
            try graft("hepl")
                == Result(
                    status: 64, output: "",
                    error: """
                        error: unknown subcommand 'hepl'; did you mean 'help'?
                        usage: graft <subcommand>
                        See 'graft --help'.

                        """))
    }

    @Test func unknownOption() throws {
        #expect(
            try graft("--bogus")
                == Result(
                    status: 64, output: "",
                    error: "error: unknown option '--bogus'\nusage: graft <subcommand>\nSee 'graft --help'.\n"))
    }

    @Test func helpOfHelp() throws {
        #expect(
            try graft("help", "help")
                == Result(status: 0, output: Golden.help, error: ""))
    }
}
