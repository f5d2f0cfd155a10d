import Foundation
@_spi(GraftInternal) import GraftCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: - Decimals

/// Decimals in clipboards: their exact digits (``NumberText/decimal(_:)``), or `NaN` in any letter case.
enum ClipboardDecimal {
    /// Reads `[+-]digits[.digits][e[+-]digits]` or `NaN` exactly into a `Decimal`.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> Result<Decimal, NumberText.DecimalProblem> {
        if bytes.count == 3, bytes[0] | 0x20 == UInt8(ascii: "n"), bytes[1] | 0x20 == UInt8(ascii: "a"),
            bytes[2] | 0x20 == UInt8(ascii: "n")
        {
            return .success(.nan)
        }
        return NumberText.decimal(bytes)
    }

    static func message(_ problem: NumberText.DecimalProblem) -> String {
        switch problem {
        case .notANumber: return "is not a decimal number"
        case .tooManyDigits:
            return "has more than \(NumberText.maximumDecimalDigits) significant digits, more than a Decimal holds"
        case .exponentOutOfRange: return "is too large or too small for a Decimal (exponent −128 … 127)"
        }
    }
}

// MARK: - UUIDs

/// UUIDs written straight from their bytes, in the uppercase form `UUID.uuidString` has.
enum ClipboardUUID {
    static func append(_ uuid: UUID, to output: ByteBuffer) {
        output.reserve(36)
        let target = output.end
        withUnsafeBytes(of: uuid.uuid) { bytes in
            let hex: StaticString = "0123456789ABCDEF"
            let digits = hex.utf8Start
            var position = 0
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    target[position] = UInt8(ascii: "-")
                    position += 1
                }
                target[position] = digits[Int(bytes[index] >> 4)]
                target[position + 1] = digits[Int(bytes[index] & 0x0F)]
                position += 2
            }
        }
        output.commit(36)
    }
}

extension ClipboardUUID {
    /// A UUID read straight from its 36 characters (either letter case).
    static func parse(_ text: UnsafeRawBufferPointer) -> UUID? {
        guard text.count == 36 else { return nil }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let valid = withUnsafeMutableBytes(of: &bytes) { out -> Bool in
            var position = 0
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    guard text[position] == UInt8(ascii: "-") else { return false }
                    position += 1
                }
                guard let high = hexDigit(text[position]), let low = hexDigit(text[position + 1]) else { return false }
                out[index] = high << 4 | low
                position += 2
            }
            return true
        }
        return valid ? UUID(uuid: bytes) : nil
    }

    @inline(__always)
    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

// MARK: - JSON strings

/// What JSON strings have in common, read or written: the bytes that end one, start an escape or must be
/// escaped.
enum ClipboardJSONText {
    /// Where the first quote, backslash or control character (below 0x20) is among the eight bytes of
    /// `word`, taken in memory order (the first byte the lowest): 0–7, or 8 when there is none. The bit
    /// tricks that find a zero byte, on the word compared with each; they may mark bytes after the first
    /// that matches, never one before it, so the lowest mark is exact.
    @inline(__always)
    static func firstStop(_ word: UInt64) -> Int {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quotes = word ^ (ones &* 0x22)
        let backslashes = word ^ (ones &* 0x5C)
        let zeroQuote = (quotes &- ones) & ~quotes
        let zeroBackslash = (backslashes &- ones) & ~backslashes
        let below = (word &- ones &* 0x20) & ~word
        return ((zeroQuote | zeroBackslash | below) & highs).trailingZeroBitCount >> 3
    }

    /// The eight bytes at `pointer` as a word in memory order.
    @inline(__always)
    static func word(at pointer: UnsafeRawPointer) -> UInt64 {
        UInt64(littleEndian: pointer.loadUnaligned(as: UInt64.self))
    }

    /// The index of the first quote, backslash or control character in `bytes` from `start`, or
    /// `bytes.count`: eight bytes at a time, the last fewer than eight padded with spaces.
    @inline(__always)
    static func firstStop(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        var index = start
        while index + 8 <= bytes.count {
            let skip = firstStop(word(at: base + index))
            index += skip
            if skip < 8 { return index }
        }
        guard index < bytes.count else { return index }
        var padded: UInt64 = 0x2020_2020_2020_2020
        withUnsafeMutableBytes(of: &padded) {
            $0.copyMemory(from: UnsafeRawBufferPointer(start: base + index, count: bytes.count - index))
        }
        return min(index + firstStop(UInt64(littleEndian: padded)), bytes.count)
    }
}

// MARK: - Doubles

/// Doubles in the text encodings: the shortest text that reads back exactly, and each encoding's words for
/// the values that have no digits.
enum ClipboardDouble {
    @inline(__always)
    static func append(
        _ double: Double, to output: ByteBuffer, nan: StaticString, infinity: StaticString,
        negativeInfinity: StaticString
    ) {
        if double.isFinite {
            output.append(double: double)
        } else {
            output.append(double.isNaN ? nan : double < 0 ? negativeInfinity : infinity)
        }
    }
}
