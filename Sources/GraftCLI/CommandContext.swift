/// Where a running command writes: its standard output, its standard error, and what they are.
///
/// Commands write through their context, never with Swift's `print`, so tests can run them in process
/// and read what they wrote.
///
/// For example:
///
/// ```swift
/// func run(_ context: CommandContext) throws {
///     context.print("Company.sqlite: 3 entities")
///     if context.isErrorTerminal { context.printError("converting…") }
/// }
/// ```
///
/// And in a test:
///
/// ```swift
/// let context = CommandContext.capturing()
/// let status = GraftCommand.main(["--version"], context: context)
/// #expect(context.capturedOutput == "graft 0.1.0\n")
/// ```
public struct CommandContext {
    /// Standard output: results.
    public var output: any TextSink
    /// Standard error: errors, warnings and progress.
    public var errorOutput: any TextSink
    /// Whether standard error is a terminal, where progress can be redrawn in place.
    public var isErrorTerminal: Bool

    public init(output: any TextSink, errorOutput: any TextSink, isErrorTerminal: Bool = false) {
        self.output = output
        self.errorOutput = errorOutput
        self.isErrorTerminal = isErrorTerminal
    }

    /// The process's standard output (buffered unless it is a terminal) and standard error (unbuffered).
    public static func standard() -> CommandContext {
        let errorOutput = FileDescriptorSink(fileDescriptor: 2, isBuffered: false)
        return CommandContext(
            output: FileDescriptorSink(fileDescriptor: 1), errorOutput: errorOutput,
            isErrorTerminal: errorOutput.isTerminal)
    }

    /// A context that keeps what is written, for ``capturedOutput`` and ``capturedErrorOutput``.
    public static func capturing(isErrorTerminal: Bool = false) -> CommandContext {
        CommandContext(output: StringSink(), errorOutput: StringSink(), isErrorTerminal: isErrorTerminal)
    }

    /// What was written to ``output``, if it is a ``StringSink``.
    public var capturedOutput: String? { (output as? StringSink)?.text }

    /// What was written to ``errorOutput``, if it is a ``StringSink``.
    public var capturedErrorOutput: String? { (errorOutput as? StringSink)?.text }

    /// Writes `text` and `terminator` to standard output.
    public func print(_ text: String, terminator: String = "\n") {
        output.write(text + terminator)
    }

    /// Writes `text` and `terminator` to standard error, after writing out any buffered standard output
    /// so the two stay in order where they share a terminal or file.
    public func printError(_ text: String, terminator: String = "\n") {
        output.flush()
        errorOutput.write(text + terminator)
    }
}
