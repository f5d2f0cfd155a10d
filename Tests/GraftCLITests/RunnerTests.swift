import Foundation
import GraftCLI
import GraftCore
import Testing

@Suite struct RunnerTests {
    @Test func graftErrorsPrintTheirDescriptionAndExit1() {
        let result = runTestRoot(["fail"])
        #expect(result.status == 1)
        #expect(result.output == "started\n")
        #expect(
            result.error
                == "error: Company.sqlite: Employee: there is no such file\n  - first cause\n  - second cause\n")
    }

    @Test func otherErrorsPrintTheirDescriptionAndExit1() {
        let result = runTestRoot(["fail", "--other"])
        #expect(result.status == 1)
        #expect(result.error == "error: something else went wrong\n")
    }

    @Test(arguments: [0, 1, 3, 64, 255])
    func exitCodesEndWithTheirStatus(_ status: Int) {
        let result = runTestRoot(["fail", "--status", String(status)])
        #expect(result.status == Int32(status))
        #expect(result.output == "started\n")
        #expect(result.error == "failing with status \(status)\n")
    }

    @Test func exitCodeConstants() {
        #expect(ExitCode.success.rawValue == 0)
        #expect(ExitCode.failure.rawValue == 1)
        #expect(ExitCode.usageError.rawValue == 64)
    }

    @Test func aCommandRunsAsRootOnItsOwn() {
        let context = CommandContext.capturing()
        #expect(FakeConvert.main(["a", "b", "-q"], context: context) == 0)
        #expect(context.capturedOutput == "a -> b as sqlite, following [], force false\n")

        let failing = CommandContext.capturing()
        #expect(FakeConvert.main(["a"], context: failing) == 64)
        #expect(
            failing.capturedErrorOutput == """
                error: missing argument '<out>'
                usage: convert [--to <format>] [--model <path>] [--batch-size <count>]
                       [--follow <relationship> ...] [--force] [--quiet] <in> <out>
                See 'convert --help'.

                """)
    }
}

@Suite struct OutputTests {
    /// Records the order of writes and flushes across sinks.
    final class LoggingSink: TextSink {
        let name: String
        let log: Log
        init(_ name: String, _ log: Log) {
            self.name = name
            self.log = log
        }
        func write(_ text: String) { log.entries.append("\(name) write \(text)") }
        func write(bytes: Data) { log.entries.append("\(name) write \(bytes.count) bytes") }
        func flush() { log.entries.append("\(name) flush") }
    }

    final class Log {
        var entries: [String] = []
    }

    @Test func printErrorFlushesOutputFirst() {
        let log = Log()
        let context = CommandContext(output: LoggingSink("out", log), errorOutput: LoggingSink("err", log))
        context.print("a")
        context.printError("b", terminator: "")
        #expect(log.entries == ["out write a\n", "out flush", "err write b"])
    }

    @Test func capturingContextsKeepWhatIsWritten() {
        let context = CommandContext.capturing(isErrorTerminal: true)
        context.print("one", terminator: " ")
        context.print("two")
        context.printError("three")
        #expect(context.capturedOutput == "one two\n")
        #expect(context.capturedErrorOutput == "three\n")
        #expect(context.isErrorTerminal)
        #expect(!CommandContext.capturing().isErrorTerminal)
    }

    @Test func standardContextTellsWhetherStandardErrorIsATerminal() {
        let context = CommandContext.standard()
        #expect(context.isErrorTerminal == (isatty(2) == 1))
        #expect(context.capturedOutput == nil)
    }

    @Test func fileDescriptorSinksBufferUntilFlushed() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("graft-sink-\(UUID().uuidString)")
        #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
        defer { try? FileManager.default.removeItem(at: url) }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }

        let buffered = FileDescriptorSink(fileDescriptor: handle.fileDescriptor, isBuffered: true)
        #expect(!buffered.isTerminal)
        buffered.write("héllo ")
        #expect(try Data(contentsOf: url).isEmpty)
        buffered.write(String(repeating: "x", count: 70_000))
        #expect(try Data(contentsOf: url).count == 70_007)
        buffered.write("!")
        buffered.flush()
        #expect(try Data(contentsOf: url).count == 70_008)

        let unbuffered = FileDescriptorSink(fileDescriptor: handle.fileDescriptor, isBuffered: false)
        unbuffered.write("\n")
        #expect(try String(contentsOf: url, encoding: .utf8).hasSuffix("x!\n"))
    }
}
