/// `help [<subcommand> ...]`: prints the help of the root command or of one of its subcommands.
///
/// List it last among the root command's subcommands; `graft help convert` then prints what
/// `graft convert --help` prints. The names are looked up from the root command down, wherever this
/// command is listed.
public struct HelpCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "help",
        abstract: "Show help for a subcommand.")

    public static var arguments: [Argument<HelpCommand>] {
        [.positional(\.subcommands, name: "subcommand", help: "The subcommand to show help for, and its subcommands.")]
    }

    /// The names of the subcommands, from the root down.
    public var subcommands: [String] = []

    public init() {}

    public func run(_ context: CommandContext) throws {
        // The runner handles this command: only it knows the root command.
        throw HelpRequest()
    }
}
