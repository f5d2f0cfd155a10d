import Foundation
import Testing

@testable import GraftCLI

/// The progress line `convert` and `copy` show: on a terminal only, once a run is long, rewritten in place.
@Suite struct ProgressLineTests {
    @Test func aLongRunOnATerminalShowsOneLineRewrittenInPlace() {
        let context = CommandContext.capturing(isErrorTerminal: true)
        let progress = ProgressLine("copying", context: context, shown: true)
        progress.update(10_000, of: 200_000)
        #expect(context.capturedErrorOutput == "")
        progress.update(100_000, of: 200_000)
        progress.update(150_000, of: nil)
        progress.finish()
        #expect(context.capturedErrorOutput == "\rcopying: 100000 of 200000 objects (50%)\rcopying: 150000 objects\n")
    }

    @Test(arguments: [(terminal: false, shown: true), (terminal: true, shown: false)])
    func pipelinesAndQuietRunsShowNothing(terminal: Bool, shown: Bool) {
        let context = CommandContext.capturing(isErrorTerminal: terminal)
        let progress = ProgressLine("converting", context: context, shown: shown)
        progress.update(1_000_000, of: 1_000_000)
        progress.finish()
        #expect(context.capturedErrorOutput == "")
    }

    @Test func aShortRunShowsNothing() {
        let context = CommandContext.capturing(isErrorTerminal: true)
        let progress = ProgressLine("converting", context: context, shown: true)
        progress.update(13, of: 13)
        progress.finish()
        #expect(context.capturedErrorOutput == "")
    }
}
