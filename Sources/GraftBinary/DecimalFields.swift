import Foundation
import GraftModel

/// A `Decimal`'s exact fields — exponent, length, sign, compact flag and the eight 16-bit mantissa
/// words — as `NSDecimalNumber` archives them.
///
/// Foundation on Linux keeps `Decimal`'s own fields internal (and lays them out differently from
/// `NSDecimal`), so they are computed through public API only: the exponent, the sign, and the
/// significand's digits, which are converted to and from 16-bit words here.
struct DecimalFields: Equatable {
    var exponent: Int32
    var length: UInt32
    var isNegative: Bool
    var isCompact: Bool
    /// Least significant word first.
    var mantissa: [UInt16]

    init(exponent: Int32, length: UInt32, isNegative: Bool, isCompact: Bool, mantissa: [UInt16]) {
        self.exponent = exponent
        self.length = length
        self.isNegative = isNegative
        self.isCompact = isCompact
        self.mantissa = mantissa
    }

    init(_ decimal: Decimal) {
        guard !decimal.isNaN else {
            // NSDecimal's NaN: length 0 and the negative flag.
            self.init(
                exponent: 0, length: 0, isNegative: true, isCompact: false, mantissa: Array(repeating: 0, count: 8))
            return
        }
        var words = [UInt16](repeating: 0, count: 8)
        if let parts = decimal.compactParts {
            // The significand fits in 64 bits: its words directly, rather than from its decimal digits.
            var rest = parts.significand
            var length = 0
            while rest != 0 {
                words[length] = UInt16(truncatingIfNeeded: rest)
                rest >>= 16
                length += 1
            }
            self.init(
                exponent: Int32(parts.exponent), length: UInt32(length), isNegative: parts.isNegative,
                isCompact: true, mantissa: words)
            return
        }
        for digit in decimal.significand.description.utf8 where (48...57).contains(digit) {
            // words = words * 10 + digit
            var carry = UInt32(digit - 48)
            for index in words.indices {
                let product = UInt32(words[index]) * 10 + carry
                words[index] = UInt16(truncatingIfNeeded: product)
                carry = product >> 16
            }
        }
        let length = UInt32((words.lastIndex { $0 != 0 } ?? -1) + 1)
        self.init(
            exponent: Int32(decimal.exponent), length: length, isNegative: decimal.sign == .minus && length > 0,
            isCompact: true, mantissa: words)
    }

    /// The decimal, or `nil` when the fields cannot make one (exponent outside −128…127, length
    /// above 8, not eight mantissa words).
    var decimal: Decimal? {
        guard (-128...127).contains(exponent), length <= 8, mantissa.count == 8 else { return nil }
        if length == 0 { return isNegative ? .nan : 0 }
        if length <= 4 {
            // A significand of at most 64 bits: built from the words directly.
            var significand: UInt64 = 0
            for word in mantissa.prefix(Int(length)).reversed() { significand = significand << 16 | UInt64(word) }
            if significand != 0 {
                return Decimal(
                    sign: isNegative ? .minus : .plus, exponent: Int(exponent), significand: Decimal(significand))
            }
        }
        // The significand's decimal digits, by repeated division of the words by 10.
        var words = Array(mantissa.prefix(Int(length)))
        var digits: [UInt8] = []
        while words.contains(where: { $0 != 0 }) {
            var remainder: UInt32 = 0
            for index in words.indices.reversed() {
                let value = remainder << 16 | UInt32(words[index])
                words[index] = UInt16(value / 10)
                remainder = value % 10
            }
            digits.append(UInt8(48 + remainder))
        }
        guard let significand = Decimal(string: String(decoding: digits.reversed(), as: UTF8.self)) else { return nil }
        return Decimal(sign: isNegative ? .minus : .plus, exponent: Int(exponent), significand: significand)
    }

    /// Calls `body` with the mantissa as `NS.mantissa` bytes (little-endian words).
    func withMantissaBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 * mantissa.count) { bytes in
            for (index, word) in mantissa.enumerated() {
                bytes[2 * index] = UInt8(truncatingIfNeeded: word)
                bytes[2 * index + 1] = UInt8(truncatingIfNeeded: word >> 8)
            }
            return try body(UnsafeRawBufferPointer(bytes))
        }
    }

    /// The mantissa as `NS.mantissa` bytes (little-endian words).
    var mantissaBytes: Data {
        var data = Data(capacity: 16)
        for word in mantissa {
            data.append(UInt8(truncatingIfNeeded: word))
            data.append(UInt8(truncatingIfNeeded: word >> 8))
        }
        return data
    }

    /// Reads `NS.mantissa` bytes in the given byte order (`NS.mantissa.bo`: 2 is big-endian, anything
    /// else little-endian).
    static func mantissa(from bytes: UnsafeRawBufferPointer, bigEndian: Bool) -> [UInt16]? {
        guard bytes.count == 16 else { return nil }
        return (0..<8).map { index in
            let first = UInt16(bytes[2 * index]), second = UInt16(bytes[2 * index + 1])
            return bigEndian ? first << 8 | second : second << 8 | first
        }
    }

    static func mantissa(from bytes: Data, bigEndian: Bool) -> [UInt16]? {
        guard bytes.count == 16 else { return nil }
        let raw = [UInt8](bytes)
        return (0..<8).map { index in
            let first = UInt16(raw[2 * index]), second = UInt16(raw[2 * index + 1])
            return bigEndian ? first << 8 | second : second << 8 | first
        }
    }
}
