import Foundation
import GraftCore
import GraftTestSupport
import Testing

@testable import GraftBinary

/// The writer's `$objects` log keeps only its last chunk in memory: what it gives back must be what
/// was appended, across chunks handed to its temporary file, and the file must never be seen in the
/// folder.
@Suite struct SpilledLogTests {
    /// Values of one to ten LEB128 bytes, in an order that is not sorted.
    static func values(_ count: Int) -> [UInt64] {
        var generator = RepeatableRandomNumberGenerator(seed: 7)
        return (0..<count).map { index in
            let width = UInt64(index % 64)
            return UInt64.random(in: 0...UInt64.max, using: &generator) >> width
        }
    }

    @Test(arguments: [0, 1, 1000, 200_000])
    func givesBackWhatWasAppended(count: Int) throws {
        let scratch = Scratch()
        let log = SpilledLog(folder: scratch.folder)
        let values = Self.values(count)
        for (index, value) in values.enumerated() {
            log.appendLEB128(value)
            if index % 100 == 0 { try log.flushIfFull() }
        }
        // The temporary file, if there is one, was removed from the folder as soon as it was made.
        #expect(scratch.contents.isEmpty)
        var reader = log.reader()
        let read = try values.map { _ in try reader.nextLEB128() }
        #expect(read == values)
        #expect(throws: GraftError.self) { try reader.nextLEB128() }
    }
}
