import Testing

@testable import GraftCLI

@Suite struct DeclarationCheckTests {
    @Test func graftsCommandsAreWellDeclared() {
        #expect(DeclarationCheck.problems(in: GraftCommand.self) == [])
    }

    @Test func testCommandsAreWellDeclared() {
        #expect(DeclarationCheck.problems(in: TestRoot.self) == [])
    }

    struct BadRoot: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "bad", version: "1", subcommands: [BadLeaf.self, BadLeaf.self, BadGroup.self])
    }

    struct BadGroup: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "-group", subcommands: [BadLeaf.self])
        static var arguments: [Argument<BadGroup>] { [.flag(\.flag, name: "flag")] }
        var flag = false
    }

    struct BadLeaf: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "leaf")
        static var arguments: [Argument<BadLeaf>] {
            [
                .positional(\.optional, name: "optional"),
                .positional(\.required, name: "required"),
                .positional(\.many, name: "many"),
                .positional(\.required, name: "required"),
                .flag(\.flag, name: "help"),
                .flag(\.flag, name: "version"),
                .flag(\.flag, name: "x", short: "h"),
                .flag(\.flag, name: "y", short: "y"),
                .flag(\.flag, name: "y", short: "y"),
                .option(\.value, name: "--value"),
                .option(\.value, name: "a=b", short: "-"),
            ]
        }
        var optional: String?
        var required = ""
        var many: [String] = []
        var flag = false
        var value = ""
    }

    @Test func reportsEveryProblemWithWhereItIs() {
        #expect(
            DeclarationCheck.problems(in: BadRoot.self) == [
                "bad: subcommand 'leaf' is listed twice",
                "bad leaf: required '<required>' follows an optional argument",
                "bad leaf: positional argument '<required>' is declared twice",
                "bad leaf: '<required>' follows a variadic argument",
                "bad leaf: option '--help' is declared twice or is built in",
                "bad leaf: short name '-h' of '--x' is declared twice, built in or not a letter",
                "bad leaf: option '--y' is declared twice or is built in",
                "bad leaf: short name '-y' of '--y' is declared twice, built in or not a letter",
                "bad leaf: option name '--value' must be a word without '-' at the start, '=' or spaces",
                "bad leaf: option name 'a=b' must be a word without '-' at the start, '=' or spaces",
                "bad leaf: short name '--' of '--a=b' is declared twice, built in or not a letter",
                "bad -group: command name '-group' must be one word not starting with '-'",
                "bad -group: a command with subcommands takes no arguments of its own",
                "bad -group leaf: required '<required>' follows an optional argument",
                "bad -group leaf: positional argument '<required>' is declared twice",
                "bad -group leaf: '<required>' follows a variadic argument",
                "bad -group leaf: option '--help' is declared twice or is built in",
                "bad -group leaf: short name '-h' of '--x' is declared twice, built in or not a letter",
                "bad -group leaf: option '--y' is declared twice or is built in",
                "bad -group leaf: short name '-y' of '--y' is declared twice, built in or not a letter",
                "bad -group leaf: option name '--value' must be a word without '-' at the start, '=' or spaces",
                "bad -group leaf: option name 'a=b' must be a word without '-' at the start, '=' or spaces",
                "bad -group leaf: short name '--' of '--a=b' is declared twice, built in or not a letter",
            ])
    }
}
