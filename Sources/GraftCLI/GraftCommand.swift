/// The root command, `graft`: a group of subcommands.
///
/// Run without a subcommand, it prints its help and exits with status 0, as `graft --help` does.
public struct GraftCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "graft",
        abstract: "Work with Core Data object graphs: models, stores, conversion, copy and paste, fixtures, migration.",
        discussion: """
            Graft reads and writes Core Data models and the SQLite, XML and binary store formats without \
            Apple's frameworks. Run a subcommand with --help, or 'graft help <subcommand>', to see what it \
            takes.
            """,
        version: "graft \(GraftCommandLine.version)",
        subcommands: [
            // Add subcommands here, in the order the help lists them, keeping `help` last.

            InspectCommand.self,
            ConvertCommand.self,
            CopyCommand.self,
            PasteCommand.self,
            ValidateCommand.self,
            FixturesCommand.self,
            MigrateCommand.self,
            HelpCommand.self,
        ])

    public init() {}
}

/// The `graft` program: runs ``GraftCommand`` on the process's command line and streams.
///
/// For example, the whole of the executable's `main.swift`:
///
/// ```swift
/// import GraftCLI
///
/// GraftCommandLine.exit(GraftCommandLine.main(CommandLine.arguments))
/// ```
public enum GraftCommandLine {
    /// Graft's version, as `graft --version` prints it.
    public static let version = "0.1.0"

    /// Runs `graft` and returns its exit status.
    ///
    /// - Parameters:
    ///   - arguments: The whole command line, the program's name first (as in `CommandLine.arguments`).
    ///   - context: Where to write; the process's standard output and error by default.
    public static func main(_ arguments: [String], context: CommandContext = .standard()) -> Int32 {
        GraftCommand.main(Array(arguments.dropFirst()), context: context)
    }

    /// Ends the process with `status`.
    ///
    /// The corresponding C function is `exit`.
    public static func exit(_ status: Int32) -> Never {
        systemExit(status)
    }
}
