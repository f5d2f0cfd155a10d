import GraftCLI
import Testing

@Suite struct UsageErrorTests {
    /// The usage line printed after an error, for each command of ``TestRoot``.
    static let usageLines: [String: String] = [
        "graft": "usage: graft <subcommand>",
        "graft convert": """
        usage: graft convert [--to <format>] [--model <path>] [--batch-size <count>]
               [--follow <relationship> ...] [--force] [--quiet] <in> <out>
        """,
        "graft copy": "usage: graft copy [--where <predicate>] [--ratio <ratio>] <store> [<out>]",
        "graft fixtures": """
        usage: graft fixtures [--count <count>] [--seed <seed>] [--format <format> ...]
               <model> [<entities> ...]
        """,
        "graft model": "usage: graft model <subcommand>",
        "graft model hash": "usage: graft model hash <model>",
        "graft help": "usage: graft help [<subcommand> ...]",
    ]

    struct Case: Sendable, CustomTestStringConvertible {
        var words: [String]
        var message: String
        /// The command whose usage follows the message.
        var command: String
        var testDescription: String { words.joined(separator: " ") }

        init(_ words: [String], _ message: String, usage command: String) {
            self.words = words
            self.message = message
            self.command = command
        }
    }

    static let cases: [Case] = [
        // Unknown options, with a suggestion when one is close.
        Case(["--bogus"], "unknown option '--bogus'", usage: "graft"),
        Case(["--verison"], "unknown option '--verison'; did you mean '--version'?", usage: "graft"),
        Case(["convert", "a", "b", "--bogus"], "unknown option '--bogus'", usage: "graft convert"),
        Case(
            ["convert", "a", "b", "--forse"], "unknown option '--forse'; did you mean '--force'?",
            usage: "graft convert"),
        Case(
            ["convert", "--hlep", "a", "b"], "unknown option '--hlep'; did you mean '--help'?", usage: "graft convert"),
        Case(
            ["convert", "--batchsize=3", "a", "b"], "unknown option '--batchsize'; did you mean '--batch-size'?",
            usage: "graft convert"),
        Case(["convert", "--version"], "unknown option '--version'", usage: "graft convert"),
        Case(["convert", "-x", "a", "b"], "unknown option '-x'", usage: "graft convert"),
        Case(["convert", "-fxq", "a", "b"], "unknown option '-x' in '-fxq'", usage: "graft convert"),
        Case(["convert", "-5", "a", "b"], "unknown option '-5'", usage: "graft convert"),
        // Missing values.
        Case(["convert", "a", "b", "--to"], "missing value for '--to <format>'", usage: "graft convert"),
        Case(["convert", "a", "b", "-t"], "missing value for '-t <format>'", usage: "graft convert"),
        Case(["convert", "a", "b", "-ft"], "missing value for '-t <format>'", usage: "graft convert"),
        Case(["convert", "--to", "--force", "a", "b"], "missing value for '--to <format>'", usage: "graft convert"),
        Case(["convert", "--to", "--", "a", "b"], "missing value for '--to <format>'", usage: "graft convert"),
        Case(
            ["convert", "--batch-size", "-5", "a", "b"], "missing value for '--batch-size <count>'",
            usage: "graft convert"),
        Case(["fixtures", "m", "--seed"], "missing value for '--seed <seed>'", usage: "graft fixtures"),
        // Invalid values, naming the option and what it expects.
        Case(
            ["convert", "--to", "json", "a", "b"],
            "invalid value 'json' for '--to <format>': expected one of sqlite, xml, binary", usage: "graft convert"),
        Case(
            ["convert", "-tJSON", "a", "b"],
            "invalid value 'JSON' for '-t <format>': expected one of sqlite, xml, binary", usage: "graft convert"),
        Case(
            ["convert", "--to=", "a", "b"],
            "invalid value '' for '--to <format>': expected one of sqlite, xml, binary", usage: "graft convert"),
        Case(
            ["convert", "--batch-size", "ten", "a", "b"],
            "invalid value 'ten' for '--batch-size <count>': expected an integer", usage: "graft convert"),
        Case(
            ["convert", "--batch-size=99999999999999999999", "a", "b"],
            "invalid value '99999999999999999999' for '--batch-size <count>': expected an integer",
            usage: "graft convert"),
        Case(
            ["convert", "--model=", "a", "b"], "invalid value '' for '--model <path>': expected a path",
            usage: "graft convert"),
        Case(["convert", "", "b"], "invalid value '' for '<in>': expected a path", usage: "graft convert"),
        Case(
            ["copy", "--ratio", "half", "s"], "invalid value 'half' for '--ratio <ratio>': expected a number",
            usage: "graft copy"),
        Case(
            ["copy", "--ratio", "nan", "s"], "invalid value 'nan' for '--ratio <ratio>': expected a number",
            usage: "graft copy"),
        Case(
            ["fixtures", "m", "--format", "xml", "--format", "json"],
            "invalid value 'json' for '--format <format>': expected one of sqlite, xml, binary",
            usage: "graft fixtures"),
        // Flags take no value.
        Case(["convert", "--force=yes", "a", "b"], "flag '--force' does not take a value", usage: "graft convert"),
        Case(["--version=2"], "flag '--version' does not take a value", usage: "graft"),
        Case(["convert", "--help=please"], "flag '--help' does not take a value", usage: "graft convert"),
        // Missing and unexpected arguments.
        Case(["convert"], "missing argument '<in>'", usage: "graft convert"),
        Case(["convert", "a"], "missing argument '<out>'", usage: "graft convert"),
        Case(["convert", "--force", "--", "a"], "missing argument '<out>'", usage: "graft convert"),
        Case(["model", "hash"], "missing argument '<model>'", usage: "graft model hash"),
        Case(["convert", "a", "b", "c"], "unexpected argument 'c'", usage: "graft convert"),
        Case(["convert", "--", "a", "b", "--force"], "unexpected argument '--force'", usage: "graft convert"),
        Case(["copy", "s", "o", "-"], "unexpected argument '-'", usage: "graft copy"),
        Case(["--", "convert"], "unexpected argument 'convert'", usage: "graft"),
        // Unknown subcommands, with a suggestion when one is close.
        Case(["nosuch"], "unknown subcommand 'nosuch'", usage: "graft"),
        Case(["-"], "unknown subcommand '-'", usage: "graft"),
        Case(["convrt", "a", "b"], "unknown subcommand 'convrt'; did you mean 'convert'?", usage: "graft"),
        Case(["hlep"], "unknown subcommand 'hlep'; did you mean 'help'?", usage: "graft"),
        Case(["Convert"], "unknown subcommand 'Convert'; did you mean 'convert'?", usage: "graft"),
        Case(["model", "hsah"], "unknown subcommand 'hsah'; did you mean 'hash'?", usage: "graft model"),
        Case(["help", "nosuch"], "unknown subcommand 'nosuch'", usage: "graft"),
        Case(["help", "model", "nosuch"], "unknown subcommand 'nosuch'", usage: "graft model"),
        Case(["help", "convert", "extra"], "unexpected argument 'extra'", usage: "graft convert"),
        Case(["help", "--bogus"], "unknown option '--bogus'", usage: "graft help"),
        // Errors from a command's own validation.
        Case(["convert", "a", "b", "--batch-size", "0"], "'--batch-size' must be at least 1", usage: "graft convert"),
        Case(["convert", "same", "same"], "<in> and <out> must be different files", usage: "graft convert"),
    ]

    @Test(arguments: cases)
    func printsTheErrorAndUsageAndExits64(_ test: Case) throws {
        let usage = try #require(Self.usageLines[test.command])
        let result = runTestRoot(test.words)
        #expect(result.status == 64)
        #expect(result.output == "")
        #expect(result.error == "error: \(test.message)\n\(usage)\nSee '\(test.command) --help'.\n")
    }

    @Test func usageLinesMatchTheHelp() throws {
        // Every command's usage after an error is its help's USAGE line with a different prefix.
        for (command, usage) in Self.usageLines {
            let words = Array(command.split(separator: " ").dropFirst().map(String.init)) + ["--help"]
            let help = runTestRoot(words).output
            let helpUsage = usage.replacingOccurrences(of: "usage: ", with: "USAGE: ")
            #expect(help.contains("\n\n" + helpUsage + "\n\n"), "\(command)")
        }
    }

    @Test func parseThrowsTheSameMessages() {
        #expect(throws: UsageError("missing argument '<out>'")) { try FakeConvert.parse(["a"]) }
        #expect(throws: UsageError("unknown option '-x' in '-fxq'")) { try FakeConvert.parse(["-fxq", "a", "b"]) }
        #expect(throws: UsageError("<in> and <out> must be different files")) { try FakeConvert.parse(["a", "a"]) }
    }
}
