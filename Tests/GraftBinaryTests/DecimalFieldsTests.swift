import Foundation
import GraftModel
import GraftTestSupport
import Testing

@testable import GraftBinary

/// `DecimalFields` takes a decimal's words straight from its 64-bit significand when it can: the
/// fields must be those the general path (the significand's digits) gives.
@Suite struct DecimalFieldsTests {
    /// The fields as computed from the significand's decimal digits.
    static func reference(_ decimal: Decimal) -> DecimalFields {
        var words = [UInt16](repeating: 0, count: 8)
        for digit in decimal.significand.description.utf8 where (48...57).contains(digit) {
            var carry = UInt32(digit - 48)
            for index in words.indices {
                let product = UInt32(words[index]) * 10 + carry
                words[index] = UInt16(truncatingIfNeeded: product)
                carry = product >> 16
            }
        }
        let length = UInt32((words.lastIndex { $0 != 0 } ?? -1) + 1)
        return DecimalFields(
            exponent: Int32(decimal.exponent), length: length, isNegative: decimal.sign == .minus && length > 0,
            isCompact: true, mantissa: words)
    }

    @Test func fieldsAsFromTheDigits() throws {
        var generator = RepeatableRandomNumberGenerator(seed: RepeatableRandomNumberGenerator.seed(default: 800))
        var values: [Decimal] = [
            0, 1, -1, 100, Decimal(UInt64.max), Decimal(Int64.min),
            try #require(Decimal(string: "12345678901234567890123456789")), try #require(Decimal(string: "-0.001")),
        ]
        for round in 0..<20_000 {
            let significand = round % 2 == 0 ? generator.next() : UInt64.random(in: 0...100_000, using: &generator)
            let sign: FloatingPointSign = Bool.random(using: &generator) ? .minus : .plus
            values.append(
                Decimal(
                    sign: sign, exponent: Int.random(in: -30...30, using: &generator), significand: Decimal(significand)
                ))
            values.append(Decimal(Int(truncatingIfNeeded: significand)) / 7)
        }
        for value in values where DecimalFields(value) != Self.reference(value) {
            Issue.record("\(value): \(DecimalFields(value)) != \(Self.reference(value))")
            return
        }
    }
}

extension DecimalFieldsTests {
    /// The decimal the fields stand for, by the digits of the words (as before the 64-bit path).
    static func referenceDecimal(_ fields: DecimalFields) -> Decimal? {
        if fields.length == 0 { return fields.isNegative ? .nan : 0 }
        var words = Array(fields.mantissa.prefix(Int(fields.length)))
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
        return Decimal(
            sign: fields.isNegative ? .minus : .plus, exponent: Int(fields.exponent), significand: significand)
    }

    @Test func decimalsAsFromTheDigits() {
        var generator = RepeatableRandomNumberGenerator(seed: RepeatableRandomNumberGenerator.seed(default: 801))
        for round in 0..<20_000 {
            var mantissa = [UInt16](repeating: 0, count: 8)
            let length = UInt32(round % 6)
            for index in 0..<Int(length) {
                mantissa[index] = round % 3 == 0 ? 0 : UInt16(truncatingIfNeeded: generator.next())
            }
            let fields = DecimalFields(
                exponent: Int32.random(in: -40...40, using: &generator), length: length,
                isNegative: Bool.random(using: &generator), isCompact: true, mantissa: mantissa)
            let value = fields.decimal
            let reference = Self.referenceDecimal(fields)
            let same =
                value == nil && reference == nil
                || (value != nil && reference != nil
                    && (value!.hasSameRepresentation(as: reference!) || (value!.isNaN && reference!.isNaN)))
            if !same {
                Issue.record("\(fields): \(String(describing: value)) != \(String(describing: reference))")
                return
            }
        }
    }
}
