import Foundation

/// `NSDecimalNumber` as Foundation's keyed archiver writes it: `NS.exponent`, `NS.length` (16-bit
/// mantissa words in use), `NS.negative`, `NS.compact`, `NS.mantissa.bo` (1: the words are
/// little-endian) and `NS.mantissa`, sixteen bytes holding a 128-bit unsigned mantissa as eight
/// 16-bit words, least significant first. The value is ±mantissa × 10^exponent.
///
/// `Decimal`'s own fields are not public on Linux, so the mantissa is worked out from the number's
/// decimal digits.
///
/// For example:
///
/// ```swift
/// let parts = DecimalNumberArchive.parts(of: Decimal(string: "52000.50")!)
/// // exponent −1, mantissa 520005, compact
/// let value = DecimalNumberArchive.decimal(exponent: -1, isNegative: false, mantissa: parts!.mantissa)
/// ```
enum DecimalNumberArchive {
    struct Parts: Equatable {
        var exponent: Int
        var length: Int
        var isNegative: Bool
        var isCompact: Bool
        /// Sixteen bytes: eight little-endian 16-bit words, least significant first.
        var mantissa: Data
    }

    /// The archived form of `decimal`, compacted (no trailing zeros in the mantissa); `nil` for NaN
    /// and for numbers whose digits do not fit (more than 38 digits, or an exponent outside −128…127).
    static func parts(of decimal: Decimal) -> Parts? {
        guard decimal.isFinite else { return nil }
        var text = "\(decimal)"
        let isNegative = text.hasPrefix("-")
        if isNegative { text.removeFirst() }
        var exponent = 0
        if let point = text.firstIndex(of: ".") {
            exponent = -text.distance(from: point, to: text.endIndex) + 1
            text.remove(at: point)
        }
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        while text.count > 1 && text.hasPrefix("0") { text.removeFirst() }
        if text == "0" {
            return Parts(exponent: 0, length: 0, isNegative: false, isCompact: true, mantissa: Data(count: 16))
        }
        while text.hasSuffix("0") {
            text.removeLast()
            exponent += 1
        }
        guard (-128...127).contains(exponent) else { return nil }
        var words = [UInt32](repeating: 0, count: 8)
        for digit in text.utf8 {
            var carry = UInt32(digit - UInt8(ascii: "0"))
            for position in words.indices {
                let product = words[position] * 10 + carry
                words[position] = product & 0xFFFF
                carry = product >> 16
            }
            guard carry == 0 else { return nil }
        }
        var mantissa = Data()
        for word in words {
            mantissa.append(UInt8(word & 0xFF))
            mantissa.append(UInt8(word >> 8))
        }
        let length = (words.lastIndex { $0 != 0 } ?? -1) + 1
        return Parts(exponent: exponent, length: length, isNegative: isNegative, isCompact: true, mantissa: mantissa)
    }

    /// The number an archived `NSDecimalNumber` holds; `nil` when the mantissa is not sixteen bytes.
    ///
    /// - Parameter littleEndian: whether the words are little-endian (`NS.mantissa.bo` is 1).
    static func decimal(exponent: Int, isNegative: Bool, mantissa: Data, littleEndian: Bool = true) -> Decimal? {
        guard mantissa.count == 16 else { return nil }
        let bytes = [UInt8](mantissa)
        var words = (0..<8).map { index -> UInt32 in
            let low = UInt32(bytes[2 * index])
            let high = UInt32(bytes[2 * index + 1])
            return littleEndian ? low | high << 8 : high | low << 8
        }
        var digits: [Character] = []
        while words.contains(where: { $0 != 0 }) {
            var remainder: UInt32 = 0
            for position in words.indices.reversed() {
                let value = remainder << 16 | words[position]
                words[position] = value / 10
                remainder = value % 10
            }
            digits.append(Character(String(remainder)))
        }
        guard let significand = Decimal(string: digits.isEmpty ? "0" : String(digits.reversed())) else { return nil }
        return Decimal(sign: isNegative ? .minus : .plus, exponent: exponent, significand: significand)
    }
}
