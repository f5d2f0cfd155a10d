import Foundation
import GraftCore
import Testing

@Suite struct ReadAheadTests {
    private struct Failure: Error, Equatable { let code: Int }

    /// Counts to `end`, `limit` at a time, on the producing thread; notes how far it got.
    private final class Counter: @unchecked Sendable {
        let end: Int
        private let lock = NSLock()
        private var made = 0
        var produced: Int { lock.withLock { made } }
        init(end: Int) { self.end = end }

        func fill(_ chunk: inout [Int], _ limit: Int) -> Bool {
            while chunk.count < limit {
                let next = lock.withLock {
                    made += 1
                    return made
                }
                guard next <= end else { return false }
                chunk.append(next)
            }
            return lock.withLock { made } < end
        }
    }

    @Test(arguments: [1, 7, 1000]) func givesEveryElementInOrderAcrossChunks(chunkSize: Int) throws {
        let counter = Counter(end: 2_345)
        let rows = ReadAhead<Int>(chunkSize: chunkSize) { counter.fill(&$0, $1) }
        var got: [Int] = []
        while let next = try rows.next() { got.append(next) }
        #expect(got == Array(1...2_345))
        #expect(try rows.next() == nil)
    }

    @Test func aRunWithoutElementsEndsAtOnce() throws {
        let rows = ReadAhead<Int>(chunkSize: 16) { _, _ in false }
        #expect(try rows.next() == nil)
    }

    /// What the producer made before it failed comes first, then the failure, once.
    @Test func theFailureComesAfterTheElementsBeforeIt() throws {
        var made = 0
        let rows = ReadAhead<Int>(chunkSize: 4) { chunk, limit in
            while chunk.count < limit {
                made += 1
                if made == 10 { throw Failure(code: 10) }
                chunk.append(made)
            }
            return true
        }
        var got: [Int] = []
        #expect(throws: Failure(code: 10)) {
            while let next = try rows.next() { got.append(next) }
        }
        #expect(got == Array(1...9))
        #expect(try rows.next() == nil)
    }

    /// The producer stays at most a few chunks ahead, and a reader dropped part way ends the thread, which
    /// lets go of what the producer captured.
    @Test func staysAFewChunksAheadAndEndsWhenDropped() throws {
        weak var released: Counter?
        do {
            let counter = Counter(end: 1_000_000)
            released = counter
            let rows = ReadAhead<Int>(chunkSize: 100, chunksAhead: 2) { [counter] in counter.fill(&$0, $1) }
            #expect(try rows.next() == 1)
            Thread.sleep(forTimeInterval: 0.05)
            // The chunk taken and two waiting.
            #expect(counter.produced <= 300)
        }
        #expect(released == nil)
    }

    @Test func stopEndsTheProductionAndTheRun() throws {
        let counter = Counter(end: 1_000_000)
        let rows = ReadAhead<Int>(chunkSize: 10) { counter.fill(&$0, $1) }
        #expect(try rows.next() == 1)
        rows.stop()
        let after = counter.produced
        Thread.sleep(forTimeInterval: 0.02)
        #expect(counter.produced == after)
    }
}
