import Foundation
import GraftCore
import Testing

@_spi(GraftInternal) @testable import GraftModel

@Suite struct DeflateTests {
    @Test func rawDeflateRoundTrips() throws {
        let text = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 % 251) })
        let packed = try RawDeflate.deflate(text)
        #expect(packed.count < text.count)
        #expect(try RawDeflate.inflate(packed) == text)
        #expect(try RawDeflate.inflate(RawDeflate.deflate(Data())) == Data())
    }

    @Test func corruptTruncatedAndOversizedInputsAreErrors() throws {
        let packed = try RawDeflate.deflate(Data(repeating: 7, count: 100_000))
        #expect(throws: GraftError.self) { try RawDeflate.inflate(packed.prefix(packed.count / 2)) }
        #expect(throws: GraftError.self) { try RawDeflate.inflate(Data([0xFF, 0xFF, 0xFF, 0xFF])) }
        let error = try #require(throws: GraftError.self) { try RawDeflate.inflate(packed, limit: 1000) }
        #expect(error.message.contains("more than 1000 bytes"))
    }
}
