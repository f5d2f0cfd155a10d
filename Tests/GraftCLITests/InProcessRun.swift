import Foundation
import GraftCLI

/// `graft` run in this process on captured streams: its exit status, its standard output (as bytes, for
/// clipboards) and its standard error.
struct InProcessRun {
    var status: Int32
    var output: Data
    var text: String { String(decoding: output, as: UTF8.self) }
    var error: String

    /// Runs `graft` with `arguments`, `input` as its standard input.
    init(_ arguments: [String], input: Data = Data()) {
        let context = CommandContext.capturing(input: input)
        status = GraftCommandLine.main(["graft"] + arguments, context: context)
        output = context.capturedOutputBytes ?? Data()
        error = context.capturedErrorOutput ?? ""
    }
}
