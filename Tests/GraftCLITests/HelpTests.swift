import GraftCLI
import Testing

@Suite struct HelpTests {
    struct Case: Sendable, CustomTestStringConvertible {
        /// The name of the golden help in `Golden/`.
        var golden: String
        var expected: String
        /// Command lines that all print this help.
        var commandLines: [[String]]
        var testDescription: String { golden }
    }

    static let cases: [Case] = [
        Case(
            golden: "testRoot", expected: Golden.testRoot,
            commandLines: [[], ["--help"], ["-h"], ["help"], ["--bogus", "--help"]]),
        Case(
            golden: "convert", expected: Golden.convert,
            commandLines: [
                ["convert", "--help"], ["convert", "-h"], ["help", "convert"], ["convert", "a", "--help", "--bogus"],
                ["convert", "--to", "json", "-h"], ["convert", "-fh"],
            ]),
        Case(golden: "copy", expected: Golden.copy, commandLines: [["copy", "--help"], ["help", "copy"]]),
        Case(
            golden: "fixtures", expected: Golden.fixtures,
            commandLines: [["fixtures", "--help"], ["help", "fixtures"]]),
        Case(
            golden: "model", expected: Golden.model,
            commandLines: [["model"], ["model", "--help"], ["help", "model"]]),
        Case(
            golden: "modelHash", expected: Golden.modelHash,
            commandLines: [["model", "hash", "--help"], ["help", "model", "hash"]]),
        Case(golden: "help", expected: Golden.help, commandLines: [["help", "--help"], ["help", "help"]]),
        Case(golden: "fail", expected: Golden.fail, commandLines: [["fail", "--help"]]),
    ]

    @Test(arguments: cases)
    func printsHelpToStandardOutput(_ test: Case) {
        for words in test.commandLines {
            let result = runTestRoot(words)
            #expect(result.status == 0, "\(words)")
            #expect(result.error == "", "\(words)")
            if words == test.commandLines[0] {
                expectGolden(result.output, test.expected, named: test.golden)
            } else {
                #expect(result.output == test.expected, "\(words)")
            }
        }
    }

    @Test func graftHelp() {
        let context = CommandContext.capturing()
        #expect(GraftCommandLine.main(["graft", "--help"], context: context) == 0)
        expectGolden(context.capturedOutput ?? "", Golden.graft, named: "graft")
        #expect(context.capturedErrorOutput == "")
    }

    @Test func copyPasteValidateFixturesAndMigrateHelp() {
        for (command, expected, golden) in [
            ("copy", Golden.graftCopy, "graftCopy"), ("paste", Golden.graftPaste, "graftPaste"),
            ("validate", Golden.graftValidate, "graftValidate"), ("fixtures", Golden.graftFixtures, "graftFixtures"),
            ("migrate", Golden.graftMigrate, "graftMigrate"),
        ] {
            let context = CommandContext.capturing()
            #expect(GraftCommandLine.main(["graft", command, "--help"], context: context) == 0)
            expectGolden(context.capturedOutput ?? "", expected, named: golden)
        }
    }

    @Test func graftWithoutArgumentsPrintsItsHelp() {
        let context = CommandContext.capturing()
        #expect(GraftCommandLine.main(["graft"], context: context) == 0)
        #expect(context.capturedOutput == Golden.graft)
    }

    @Test(arguments: cases + [Case(golden: "graft", expected: Golden.graft, commandLines: [])])
    func helpFitsIn80ColumnsWithoutTrailingSpaces(_ test: Case) {
        for line in test.expected.split(separator: "\n") {
            #expect(line.count <= 80, "\(line)")
            #expect(!line.hasSuffix(" "), "\(line)")
        }
        #expect(test.expected.hasSuffix("\n") && !test.expected.hasSuffix("\n\n"))
    }

    @Test func dashDashStopsHelpBeingAskedFor() {
        let result = runTestRoot(["convert", "a", "--", "--help"])
        #expect(result.status == 0)
        #expect(result.output == "a -> --help as sqlite, following [], force false\n")
    }

    @Test func versionIsForTheRootOnly() {
        let root = runTestRoot(["--version"])
        #expect(root.status == 0)
        #expect(root.output == "graft 9.8.7\n")
        #expect(root.error == "")

        #expect(runTestRoot(["--bogus", "--version"]).output == "graft 9.8.7\n")
        #expect(runTestRoot(["convert", "--version"]).status == 64)
    }

    @Test func graftVersion() {
        let context = CommandContext.capturing()
        #expect(GraftCommandLine.main(["graft", "--version"], context: context) == 0)
        #expect(context.capturedOutput == "graft \(GraftCommandLine.version)\n")
    }
}
