import GraftCore

import struct Foundation.Data

/// Where a running command reads and writes: its standard input, output and error, and what they are.
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
    /// Whether standard output is a terminal (where a binary document should not go).
    public var isOutputTerminal: Bool
    /// Whether standard input is a terminal (so nothing was piped in).
    public var isInputTerminal: Bool
    /// Reads standard input to its end, failing once more than the given number of bytes have come
    /// (`nil`: no limit).
    public var readInput: (_ maxSize: Int?) throws -> Data
    /// Reads standard input to its end in chunks, handing each to `body` as it comes, with the same
    /// limit: for input too large to hold (a clipboard piped into `paste`, spooled to a file).
    public var readInputChunks: (_ maxSize: Int?, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Void

    /// - Parameter readInputChunks: nil to hand on what `readInput` reads, in one chunk.
    public init(
        output: any TextSink, errorOutput: any TextSink, isErrorTerminal: Bool = false, isOutputTerminal: Bool = false,
        isInputTerminal: Bool = false, readInput: @escaping (_ maxSize: Int?) throws -> Data = { _ in Data() },
        readInputChunks: ((_ maxSize: Int?, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Void)? = nil
    ) {
        self.output = output
        self.errorOutput = errorOutput
        self.isErrorTerminal = isErrorTerminal
        self.isOutputTerminal = isOutputTerminal
        self.isInputTerminal = isInputTerminal
        self.readInput = readInput
        self.readInputChunks =
            readInputChunks ?? { maxSize, body in try readInput(maxSize).withUnsafeBytes { try body($0) } }
    }

    /// The process's standard input, standard output (buffered unless it is a terminal) and standard
    /// error (unbuffered).
    public static func standard() -> CommandContext {
        let output = FileDescriptorSink(fileDescriptor: 1)
        let errorOutput = FileDescriptorSink(fileDescriptor: 2, isBuffered: false)
        return CommandContext(
            output: output, errorOutput: errorOutput, isErrorTerminal: errorOutput.isTerminal,
            isOutputTerminal: output.isTerminal, isInputTerminal: isTerminal(0),
            readInput: { try FileAccess.read(fileDescriptor: 0, maxSize: $0, name: "standard input") },
            readInputChunks: {
                try FileAccess.forEachChunk(fileDescriptor: 0, maxSize: $0, name: "standard input", $1)
            })
    }

    /// A context that keeps what is written, for ``capturedOutput`` and ``capturedErrorOutput``, and
    /// reads `input` as its standard input.
    public static func capturing(isErrorTerminal: Bool = false, input: Data = Data()) -> CommandContext {
        CommandContext(
            output: StringSink(), errorOutput: StringSink(), isErrorTerminal: isErrorTerminal,
            readInput: { maxSize in
                if let maxSize, input.count > maxSize { throw FileAccess.tooLarge("standard input", limit: maxSize) }
                return input
            })
    }

    /// What was written to ``output``, if it is a ``StringSink``.
    public var capturedOutput: String? { (output as? StringSink)?.text }

    /// The bytes written to ``output``, if it is a ``StringSink``.
    public var capturedOutputBytes: Data? { (output as? StringSink)?.bytes }

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

    /// Writes the first 20 of `warnings` to standard error, each as `warning: …`, and how many more there are.
    public func printWarnings(_ warnings: [String]) {
        for warning in warnings.prefix(20) { printError("warning: \(warning)") }
        if warnings.count > 20 { printError("warning: … and \(warnings.count - 20) more") }
    }
}
