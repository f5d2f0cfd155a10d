/// What a command is called, what its help says, and which subcommands it has.
///
/// For example:
///
/// ```swift
/// static let configuration = CommandConfiguration(
///     commandName: "convert",
///     abstract: "Convert a store from one format to another.",
///     discussion: "The model is read from the store's metadata unless --model is given.",
///     examples: [
///         CommandExample("graft convert Company.sqlite Company.xml --to xml", "Write an XML copy of a SQLite store."),
///     ])
/// ```
public struct CommandConfiguration: Sendable {
    /// The word that selects the command on the command line, such as `convert`.
    public var commandName: String
    /// One line saying what the command does; shown in its parent's list of subcommands.
    public var abstract: String
    /// Paragraphs shown after the abstract in the command's own help.
    ///
    /// Paragraphs are separated by a blank line and wrapped to the terminal width; a paragraph whose
    /// lines start with a space is kept as written (for code or tables).
    public var discussion: String
    /// The text `--version` prints; only the root command's is used, and only if it is not `nil`.
    public var version: String?
    /// The commands one level down, in the order the help lists them.
    public var subcommands: [any ParsableCommand.Type]
    /// Command lines shown at the end of the help, each with what it does.
    public var examples: [CommandExample]

    public init(
        commandName: String,
        abstract: String = "",
        discussion: String = "",
        version: String? = nil,
        subcommands: [any ParsableCommand.Type] = [],
        examples: [CommandExample] = []
    ) {
        self.commandName = commandName
        self.abstract = abstract
        self.discussion = discussion
        self.version = version
        self.subcommands = subcommands
        self.examples = examples
    }
}

/// A command line shown in a command's help, with a sentence saying what it does.
public struct CommandExample: Hashable, Sendable {
    /// The whole command line, starting with `graft`.
    public var commandLine: String
    /// What running it does.
    public var explanation: String

    public init(_ commandLine: String, _ explanation: String) {
        self.commandLine = commandLine
        self.explanation = explanation
    }
}
