import Foundation
import Graft
import GraftTestSupport
import Testing

@testable import GraftInterchange

/// A conversion reads on a thread of its own and hands snapshots to the writer in batches: the writer
/// must see exactly the serial sequence, and errors must come as a serial loop would meet them.
@Suite struct ConversionPipelineTests {
    struct ReadFailure: Error, Equatable { var after: Int }
    struct WriteFailure: Error, Equatable { var at: Int }

    static let model = try! ModelFile.load(Project.url("examples/Company/Company.xcdatamodeld")).current

    /// Hands out `count` snapshots of Department (keys 1…count), then fails if `failAfter` is set.
    final class CountingReader: StoreReader {
        let model: Model
        let metadata: StoreMetadata
        let count: Int
        let failAfter: Int?
        private(set) var handedOut = 0

        init(count: Int, failAfter: Int? = nil) {
            model = ConversionPipelineTests.model
            metadata = StoreMetadata.make(for: model, storeType: .xml)
            self.count = count
            self.failAfter = failAfter
        }

        var keyOffsets: [Int: Int64] { [:] }

        func forEachSnapshot(_ body: (Snapshot) throws -> Void) throws {
            let department = model.entity(named: "Department")!
            for key in 1...max(count, 1) where count > 0 {
                if let failAfter, handedOut == failAfter { throw ReadFailure(after: failAfter) }
                var snapshot = Snapshot(entity: department, key: Int64(key))
                snapshot[attribute: "name", in: department] = .string("Department \(key)")
                handedOut += 1
                try body(snapshot)
            }
            if let failAfter, handedOut == failAfter { throw ReadFailure(after: failAfter) }
        }
    }

    /// Records the keys it is given; fails at the `failAt`-th snapshot (counting from 1) if set.
    struct RecordingWriter: StoreWriter {
        var keys: [Int64] = []
        var failAt: Int?

        mutating func write(_ snapshot: Snapshot) throws {
            if let failAt, keys.count + 1 == failAt { throw WriteFailure(at: failAt) }
            keys.append(snapshot.ref.key)
        }

        mutating func finish() throws {}
        mutating func cancel() {}
    }

    func run(_ reader: CountingReader, _ writer: inout RecordingWriter) throws -> [Int] {
        var counts = [Int](repeating: 0, count: Self.model.descriptions.count)
        try Conversion.pump(reader, into: &writer, counts: &counts, total: reader.count, progress: nil)
        return counts
    }

    @Test(arguments: [0, 1, 255, 256, 257, 5_000])
    func theWriterSeesEverySnapshotInOrder(count: Int) throws {
        var writer = RecordingWriter()
        let counts = try run(CountingReader(count: count), &writer)
        #expect(writer.keys == (0..<count).map { Int64($0 + 1) })
        #expect(counts.reduce(0, +) == count)
    }

    @Test(arguments: [0, 1, 300, 4_000])
    func aReadErrorComesAfterEverythingReadBeforeIt(after: Int) {
        var writer = RecordingWriter()
        #expect(throws: ReadFailure(after: after)) {
            _ = try run(CountingReader(count: 5_000, failAfter: after), &writer)
        }
        #expect(writer.keys.count == after)
    }

    @Test func aWriteErrorBeforeAReadErrorWins() {
        var writer = RecordingWriter(failAt: 100)
        #expect(throws: WriteFailure(at: 100)) { _ = try run(CountingReader(count: 5_000, failAfter: 3_000), &writer) }
        #expect(writer.keys.count == 99)
    }

    @Test func aWriteErrorStopsTheReader() {
        var writer = RecordingWriter(failAt: 10)
        let reader = CountingReader(count: 1_000_000)
        #expect(throws: WriteFailure(at: 10)) { _ = try run(reader, &writer) }
        // The reader stopped soon after: no more than the batches in flight were read ahead.
        #expect(reader.handedOut < 20_000)
    }
}
