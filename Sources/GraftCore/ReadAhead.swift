import Foundation

/// Elements made in chunks on a thread of their own, ahead of the thread that takes them one by one:
/// a long run of small reads (rows of a cursor, say) moved off a busy thread. At most `chunksAhead`
/// chunks wait, so memory stays bounded whatever the run's length, and the chunks' storage is reused.
///
/// What `produce` captures is used on the other thread until the run ends or ``stop()`` returns, so
/// it must be its own (a database connection of its own, say).
///
/// For example:
///
/// ```swift
/// let rows = ReadAhead<Int64>(chunkSize: 4096) { chunk, limit in
///     while chunk.count < limit { guard try statement.step() else { return false }; chunk.append(statement.int64(0)) }
///     return true
/// }
/// while let key = try rows.next() { … }
/// ```
package final class ReadAhead<Element> {
    /// Appends up to `limit` elements to the chunk; returns whether more may follow.
    package typealias Produce = (_ chunk: inout [Element], _ limit: Int) throws -> Bool

    /// What both threads use (the producing thread holds it, not the reader, so that dropping the reader
    /// stops the thread).
    private let shared: Shared
    /// The chunk being taken from, and the next element's position in it: used by the one thread that
    /// takes the elements, so without the run-time exclusivity checks of a class's properties (four a
    /// call of ``next()``, a third of its cost).
    @exclusivity(unchecked) private var current: [Element] = []
    @exclusivity(unchecked) private var position = 0

    /// Starts the producing thread.
    package init(chunkSize: Int, chunksAhead: Int = 2, produce: @escaping Produce) {
        shared = Shared(chunkSize: max(1, chunkSize), chunksAhead: max(1, chunksAhead), produce: produce)
        let thread = Thread { [shared] in shared.run() }
        thread.start()
    }

    deinit { shared.stop() }

    /// The next element, waiting for its chunk if need be; nil after the last. Rethrows what the
    /// producer threw, once the elements it made before are taken.
    package func next() throws -> Element? {
        if position < current.count {
            defer { position += 1 }
            return current[position]
        }
        guard let chunk = try shared.take(givingBack: current) else {
            current = []
            return nil
        }
        current = chunk
        position = 1
        return current[0]
    }

    /// Ends the production, if it still runs, and waits until the thread is done with `produce`.
    package func stop() { shared.stop() }

    private final class Shared: @unchecked Sendable {
        let chunkSize: Int
        let chunksAhead: Int
        /// Released by the producing thread as it ends, so that what it captured is let go there.
        private var produce: Produce?

        private let condition = NSCondition()
        /// Chunks made and not yet taken, oldest first.
        private var waiting: [[Element]] = []
        /// Chunks taken and given back, for the producer to fill again.
        private var spare: [[Element]] = []
        /// Whether the producer has made its last chunk (or failed, or was stopped).
        private var finished = false
        private var failure: (any Error)?
        private var stopped = false
        private var threadDone = false

        init(chunkSize: Int, chunksAhead: Int, produce: @escaping Produce) {
            self.chunkSize = chunkSize
            self.chunksAhead = chunksAhead
            self.produce = produce
        }

        /// The next chunk, once made; nil after the last. `spent`, unless empty, is kept for reuse.
        func take(givingBack spent: [Element]) throws -> [Element]? {
            condition.lock()
            defer { condition.unlock() }
            if !spent.isEmpty { spare.append(spent) }
            while waiting.isEmpty && !finished { condition.wait() }
            guard !waiting.isEmpty else {
                if let failure {
                    self.failure = nil
                    throw failure
                }
                return nil
            }
            condition.broadcast()
            return waiting.removeFirst()
        }

        func stop() {
            condition.lock()
            stopped = true
            condition.broadcast()
            while !threadDone { condition.wait() }
            condition.unlock()
        }

        private func produceAll() {
            guard let produce else { return }
            while true {
                condition.lock()
                while waiting.count >= chunksAhead && !stopped { condition.wait() }
                let carryOn = !stopped
                var chunk = carryOn ? spare.popLast() ?? [] : []
                condition.unlock()
                guard carryOn else { return }
                chunk.removeAll(keepingCapacity: true)
                chunk.reserveCapacity(chunkSize)
                var more = false
                var failed: (any Error)?
                do {
                    more = try produce(&chunk, chunkSize)
                } catch {
                    failed = error
                }
                condition.lock()
                if !chunk.isEmpty { waiting.append(chunk) }
                if !more { failure = failed }
                condition.broadcast()
                condition.unlock()
                if !more { return }
            }
        }

        /// The producing thread's work: chunks until the last, a failure or a stop.
        func run() {
            produceAll()
            condition.lock()
            produce = nil
            finished = true
            threadDone = true
            condition.broadcast()
            condition.unlock()
        }
    }
}
