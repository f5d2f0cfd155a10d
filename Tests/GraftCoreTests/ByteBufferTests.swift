import Foundation
@_spi(GraftInternal) import GraftCore
import Testing

/// The one growable byte buffer: appends, scratch reuse, chunks handed to a sink, the result as `Data`.
@Suite struct ByteBufferTests {
    static func text(_ buffer: ByteBuffer) -> String { String(decoding: buffer.bytes, as: UTF8.self) }

    @Test func appendsBytesTextAndNumbers() {
        let buffer = ByteBuffer(capacity: 1)
        buffer.append(UInt8(ascii: "<"))
        buffer.append("a")
        buffer.append(string: "é ")
        buffer.append(decimal: Int64.min)
        buffer.append(UInt8(ascii: " "), UInt8(ascii: "+"))
        buffer.append(decimal: UInt64.max)
        buffer.append(UInt8(ascii: " "))
        buffer.append(decimal: 42, width: 5)
        buffer.append([0x20, 0x78])
        buffer.append(repeating: UInt8(ascii: "0"), count: 3)
        buffer.appendSpaces(2)
        buffer.append(base64: Data([0, 1, 2, 3]))
        buffer.append(UInt8(ascii: " "))
        buffer.append(double: 0.1)
        #expect(Self.text(buffer) == "<aé -9223372036854775808 +18446744073709551615 00042 x000  AAECAw== 0.1")
    }

    /// Every length of number, at the edges where one more digit begins, and zero-padded widths, as
    /// Swift's own description writes them.
    @Test func writesEveryLengthOfDecimal() {
        var values: [UInt64] = [0, 9, UInt64.max]
        var power: UInt64 = 10
        for _ in 1...19 {
            values += [power - 1, power, power + 1, power + power / 3]
            if power > UInt64.max / 10 { break }
            power *= 10
        }
        for value in values {
            let buffer = ByteBuffer()
            buffer.append(decimal: value)
            #expect(Self.text(buffer) == String(value))
            #expect(NumberText.digitCount(value) == String(value).count)
            if value <= UInt64(Int64.max) {
                buffer.removeAll()
                buffer.append(decimal: -Int64(value))
                #expect(Self.text(buffer) == (value == 0 ? "0" : "-\(value)"))
            }
            for width in [1, 2, 3, 20] {
                buffer.removeAll()
                buffer.append(decimal: value, width: width)
                let text = String(value)
                let expected =
                    text.count >= width
                    ? String(text.suffix(width)) : String(repeating: "0", count: width - text.count) + text
                #expect(Self.text(buffer) == expected, "\(value) in \(width) digits")
            }
        }
    }

    /// Doubles are written as `description` writes them, those written without it (exact decimals from
    /// 0.001 to 2⁵³) and those that are not alike: binary fractions, short decimals, integers, the edges of
    /// that range, widened floats, any bit pattern.
    @Test func writesDoublesAsDescriptionDoes() {
        var values: [Double] = [
            0, -0.0, 0.001, 0.0009999, 0x1p53, 0x1p53 - 1, 1e16, 0.1, 0.5, 1, 600000194.5, .ulpOfOne,
        ]
        for _ in 0..<4_000 {
            let fraction = Double(Int64.random(in: -(1 << 40)...(1 << 40))) / Double(1 << Int.random(in: 0...40))
            values += [fraction, Double(Int64.random(in: -(1 << 53)...(1 << 53)))]
            // Large enough that a shorter decimal than the exact one reads back (2⁵⁰ + 0.25 ends in .2).
            values.append(Double(Int64.random(in: (1 << 40)...(1 << 55))) / Double(1 << Int.random(in: 0...12)))
            values.append(Double("\(Int.random(in: -99_999...99_999)).\(Int.random(in: 0...999_999))")!)
            values.append(Double(Float.random(in: -1_000...1_000)))
            values.append(Double(bitPattern: UInt64.random(in: 0...UInt64.max) & 0x7FEF_FFFF_FFFF_FFFF))
            values.append(Double.random(in: 0.0005...0.002))
        }
        let buffer = ByteBuffer()
        for value in values {
            buffer.removeAll()
            buffer.append(double: value)
            #expect(Self.text(buffer) == value.description, "\(value)")
        }
    }

    @Test func editsInPlace() {
        let buffer = ByteBuffer()
        buffer.append("<nextObjectID>7</nextObjectID>")
        "12345".utf8.withContiguousStorageIfAvailable {
            buffer.replace(start: 14, length: 1, with: UnsafeRawBufferPointer($0))
        }
        #expect(Self.text(buffer) == "<nextObjectID>12345</nextObjectID>")
        buffer.truncate(to: 14)
        #expect(Self.text(buffer) == "<nextObjectID>")
        buffer.reserve(4)
        buffer.end.update(repeating: UInt8(ascii: "x"), count: 4)
        buffer.commit(4)
        #expect(Self.text(buffer) == "<nextObjectID>xxxx")
        buffer.removeAll()
        #expect(buffer.isEmpty)
        buffer.append("again")
        #expect(Self.text(buffer) == "again")
    }

    @Test func handsChunksToItsSinkInOrder() throws {
        var received = Data()
        var calls = 0
        let buffer = ByteBuffer { chunk in
            received.append(contentsOf: chunk)
            calls += 1
        }
        var expected = Data()
        for index in 0..<100_000 {
            buffer.append(decimal: Int64(index))
            buffer.append(UInt8(ascii: ","))
            expected.append(contentsOf: "\(index),".utf8)
            try buffer.flushIfFull()
            #expect(buffer.count < ByteBuffer.chunkSize + 32)
        }
        #expect(buffer.position == expected.count)
        try buffer.flush()
        #expect(received == expected)
        #expect(calls == (expected.count + ByteBuffer.chunkSize - 1) / ByteBuffer.chunkSize)
        #expect(buffer.flushed == expected.count)
    }

    @Test func givesItsMemoryAsData() {
        let buffer = ByteBuffer(capacity: 16)
        for _ in 0..<1_000 { buffer.append("0123456789") }
        let data = buffer.takeData()
        #expect(data.count == 10_000)
        #expect(data.prefix(12) == Data("012345678901".utf8))
        #expect(buffer.isEmpty)
        buffer.append("reused")
        #expect(Self.text(buffer) == "reused")
    }
}
