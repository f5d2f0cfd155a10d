/// A command or subcommand of `graft`: a value whose properties the command line fills in.
///
/// A command is a struct with a static ``configuration`` (its name, abstract and subcommands), a static
/// table of ``arguments`` that says which properties the command line sets, and a ``run(_:)`` that does
/// the work. The flow is always parse → ``validate()`` → ``run(_:)``: parsing starts from `init()`, so
/// each property's initial value is its default, shown in the help.
///
/// For example:
///
/// ```swift
/// struct Inspect: ParsableCommand {
///     static let configuration = CommandConfiguration(
///         commandName: "inspect",
///         abstract: "Print a model's entities and properties.")
///
///     static var arguments: [Argument<Inspect>] {
///         [
///             .positional(\.model, name: "model", help: "The .xcdatamodel(d) or .mom(d) to read."),
///             .flag(\.json, name: "json", help: "Print JSON instead of text."),
///         ]
///     }
///
///     var model: PathArgument = ""
///     var json = false
///
///     func run(_ context: CommandContext) throws {
///         context.print("Reading \(model)")
///     }
/// }
/// ```
///
/// A command with ``CommandConfiguration/subcommands`` is a group: its first operand names the
/// subcommand to run, and run on its own it prints its help.
public protocol ParsableCommand: SendableMetatype {
    /// The command's name, help texts and subcommands.
    static var configuration: CommandConfiguration { get }

    /// The operands, options and flags the command accepts, in the order the help lists them.
    ///
    /// Positional arguments are filled in the order they are declared: required ones first, then
    /// optional ones, then at most one variadic one. The default is no arguments.
    static var arguments: [Argument<Self>] { get }

    /// A command with every property at its default value; parsing starts from it.
    init()

    /// Checks the parsed values together, after parsing and before running.
    ///
    /// Throw a ``UsageError`` naming the option or argument at fault; `graft` prints it with the
    /// command's usage and exits with status 64. The default does nothing.
    mutating func validate() throws

    /// Does the command's work, writing through `context` rather than to the process's streams.
    ///
    /// Throw a `GraftError` (or any error) to fail: `graft` prints `error: ` and its description to
    /// standard error and exits with status 1. Throw an ``ExitCode`` to exit with a status of your own
    /// after reporting the failure yourself. The default prints the command's help, which is what a
    /// group of subcommands does when run without one.
    func run(_ context: CommandContext) throws
}

extension ParsableCommand {
    public static var arguments: [Argument<Self>] { [] }

    public mutating func validate() throws {}

    public func run(_ context: CommandContext) throws {
        throw HelpRequest()
    }
}

/// A mistake on the command line: `graft` prints it with the command's usage and exits with status 64.
///
/// The parser throws it for unknown options, missing or invalid values and unexpected arguments;
/// commands throw it from ``ParsableCommand/validate()``. Name the option or argument at fault.
///
/// For example:
///
/// ```swift
/// mutating func validate() throws {
///     if batchSize < 1 { throw UsageError("'--batch-size' must be at least 1") }
/// }
/// ```
public struct UsageError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong, without the leading `error: `.
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// Ends a command with a chosen exit status, after it has reported whatever needed reporting.
///
/// For example, a command that printed a list of problems itself ends with `throw ExitCode.failure`.
public struct ExitCode: Error, RawRepresentable, Hashable, Sendable {
    public var rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    public init(_ rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Status 0.
    public static let success = ExitCode(0)
    /// Status 1: the command ran and failed.
    public static let failure = ExitCode(1)
    /// Status 64 (`EX_USAGE` in `sysexits.h`): the command line was wrong.
    public static let usageError = ExitCode(64)
}

/// Thrown to print the help of the command being run (`--help`, `-h`, or a group run on its own).
struct HelpRequest: Error {}

/// Thrown to print the root command's version (`--version`).
struct VersionRequest: Error {}
