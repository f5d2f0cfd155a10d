import GraftCLI
import Testing

@Suite struct ParsingTests {
    struct Case<Command: Sendable>: Sendable, CustomTestStringConvertible {
        var words: [String]
        var expected: Command
        var testDescription: String { words.isEmpty ? "(no words)" : words.joined(separator: " ") }

        init(_ words: [String], _ expected: Command) {
            self.words = words
            self.expected = expected
        }
    }

    static let convertCases: [Case<FakeConvert>] = [
        // Positional arguments, defaults kept.
        Case(["a.sqlite", "b.xml"], FakeConvert(input: "a.sqlite", output: "b.xml")),
        // Long options, with a space and with `=`.
        Case(["--to", "xml", "a", "b"], FakeConvert(input: "a", output: "b", format: .xml)),
        Case(["--to=binary", "a", "b"], FakeConvert(input: "a", output: "b", format: .binary)),
        Case(["a", "--batch-size=5", "b"], FakeConvert(input: "a", output: "b", batchSize: 5)),
        // Short options, separate and attached.
        Case(["-t", "xml", "a", "b"], FakeConvert(input: "a", output: "b", format: .xml)),
        Case(["-txml", "a", "b"], FakeConvert(input: "a", output: "b", format: .xml)),
        Case(["-m", "Company.mom", "a", "b"], FakeConvert(input: "a", output: "b", model: "Company.mom")),
        // Flags, long, short and combined, the last letter of a cluster taking a value.
        Case(["--force", "a", "b", "--quiet"], FakeConvert(input: "a", output: "b", force: true, quiet: true)),
        Case(["-f", "a", "b"], FakeConvert(input: "a", output: "b", force: true)),
        Case(["-fq", "a", "b"], FakeConvert(input: "a", output: "b", force: true, quiet: true)),
        Case(["-qf", "a", "b"], FakeConvert(input: "a", output: "b", force: true, quiet: true)),
        Case(
            ["-fqt", "binary", "a", "b"],
            FakeConvert(input: "a", output: "b", format: .binary, force: true, quiet: true)),
        Case(["-fb7", "a", "b"], FakeConvert(input: "a", output: "b", batchSize: 7, force: true)),
        Case(["--force", "--force", "a", "b"], FakeConvert(input: "a", output: "b", force: true)),
        // A repeatable option collects in order.
        Case(
            ["--follow", "employees", "a", "--follow=manager", "b", "--follow", "employees"],
            FakeConvert(input: "a", output: "b", follow: ["employees", "manager", "employees"])),
        // A single option given twice: the last one counts.
        Case(["--to", "xml", "--to", "binary", "a", "b"], FakeConvert(input: "a", output: "b", format: .binary)),
        // Negative numbers and values starting with `-` go after `=`.
        Case(["--batch-size=+3", "a", "b"], FakeConvert(input: "a", output: "b", batchSize: 3)),
        Case(["--model=-odd", "a", "b"], FakeConvert(input: "a", output: "b", model: "-odd")),
        // `-` is an operand; `--` ends the options.
        Case(["-", "b.xml"], FakeConvert(input: "-", output: "b.xml")),
        Case(["-", "-"], FakeConvert(input: "-", output: "-")),
        Case(["--force", "--", "-a", "--to"], FakeConvert(input: "-a", output: "--to", force: true)),
        Case(["a", "--", "-"], FakeConvert(input: "a", output: "-")),
        Case(["--", "--", "-h"], FakeConvert(input: "--", output: "-h")),
        // Values that look like other things are values when an option takes them.
        Case(["--model", "-", "a", "b"], FakeConvert(input: "a", output: "b", model: "-")),
        Case(["--follow", "=", "a", "b"], FakeConvert(input: "a", output: "b", follow: ["="])),
        Case(["--follow=", "a", "b"], FakeConvert(input: "a", output: "b", follow: [""])),
        Case(["--model", "x=y", "a", "b"], FakeConvert(input: "a", output: "b", model: "x=y")),
    ]

    @Test(arguments: convertCases)
    func parsesConvert(_ test: Case<FakeConvert>) throws {
        #expect(try FakeConvert.parse(test.words) == test.expected)
    }

    static let copyCases: [Case<FakeCopy>] = [
        Case(["s.sqlite"], FakeCopy(store: "s.sqlite")),
        Case(["s.sqlite", "clip.plist"], FakeCopy(store: "s.sqlite", output: "clip.plist")),
        Case(["--where", "name == 'x'", "s"], FakeCopy(store: "s", predicate: "name == 'x'")),
        Case(["--where=", "s"], FakeCopy(store: "s", predicate: "")),
        Case(["--ratio", "0.25", "s"], FakeCopy(store: "s", ratio: 0.25)),
        Case(["--ratio=-1e3", "s"], FakeCopy(store: "s", ratio: -1000)),
    ]

    @Test(arguments: copyCases)
    func parsesOptionalPositionalArguments(_ test: Case<FakeCopy>) throws {
        #expect(try FakeCopy.parse(test.words) == test.expected)
    }

    static let fixturesCases: [Case<FakeFixtures>] = [
        Case(["m"], FakeFixtures(model: "m")),
        Case(["m", "Employee"], FakeFixtures(model: "m", entities: ["Employee"])),
        Case(
            ["m", "Employee", "-n", "3", "Department"],
            FakeFixtures(model: "m", entities: ["Employee", "Department"], count: 3)),
        Case(["--count=-2", "m", "--seed", "42"], FakeFixtures(model: "m", count: -2, seed: 42)),
        Case(["m", "--", "--count", "-"], FakeFixtures(model: "m", entities: ["--count", "-"])),
        // A repeatable option's values replace its default rather than add to it.
        Case(["--format", "binary", "m"], FakeFixtures(model: "m", formats: [.binary])),
        Case(
            ["--format", "binary", "--format", "sqlite", "m"], FakeFixtures(model: "m", formats: [.binary, .sqlite])),
    ]

    @Test(arguments: fixturesCases)
    func parsesVariadicArguments(_ test: Case<FakeFixtures>) throws {
        #expect(try FakeFixtures.parse(test.words) == test.expected)
    }

    @Test func parseReportsHelpAsAUsageError() {
        #expect(throws: UsageError("help was requested")) { try FakeConvert.parse(["a", "b", "--help"]) }
    }

    @Test func pathArgumentsKnowStandardStreams() throws {
        let command = try FakeConvert.parse(["-", "out.xml"])
        #expect(command.input.isStandardStream)
        #expect(!command.output.isStandardStream)
        #expect(command.output.path == "out.xml")
    }

    @Test func runsTheNamedSubcommand() {
        let result = runTestRoot(["convert", "-q", "a", "b", "--to", "xml", "--follow", "x"])
        #expect(result.status == 0)
        #expect(result.output == "a -> b as xml, following [\"x\"], force false\n")
        #expect(result.error == "")

        let nested = runTestRoot(["model", "hash", "Company.xcdatamodel"])
        #expect(nested.status == 0)
        #expect(nested.output == "hashes of Company.xcdatamodel\n")
    }

    @Test func commandsWriteThroughTheirContext() {
        let result = runTestRoot(["convert", "a", "b"])
        #expect(result.output == "a -> b as sqlite, following [], force false\n")
        #expect(result.error == "converting a\n")
    }
}
