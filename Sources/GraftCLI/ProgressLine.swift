/// How far a long run has got, on one line of standard error that each update rewrites: only on a
/// terminal, only when asked for, and only once the run has passed `threshold` objects, so that short
/// runs and pipelines print nothing.
///
/// For example:
///
/// ```swift
/// let progress = ProgressLine("converting", context: context, shown: !quiet)
/// try Conversion.convert(from: input, to: output) { done, total in progress.update(done, of: total) }
/// progress.finish()
/// ```
final class ProgressLine {
    static let threshold = 50_000

    private let verb: String
    private let context: CommandContext
    private let enabled: Bool
    private var shown = false

    init(_ verb: String, context: CommandContext, shown: Bool) {
        self.verb = verb
        self.context = context
        self.enabled = shown && context.isErrorTerminal
    }

    /// Shows `done` objects of `total` (when known), with the share done.
    func update(_ done: Int, of total: Int?) {
        guard enabled, done >= Self.threshold || shown else { return }
        shown = true
        let share = total.map { $0 > 0 ? " (\(done * 100 / $0)%)" : "" } ?? ""
        context.printError("\r\(verb): \(done)\(total.map { " of \($0)" } ?? "") objects\(share)", terminator: "")
    }

    /// Ends the line, if one was shown.
    func finish() {
        if shown { context.printError("") }
    }
}
