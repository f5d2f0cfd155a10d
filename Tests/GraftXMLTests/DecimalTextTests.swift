import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel
import GraftTestSupport
import Testing

@testable import GraftXML

/// The fast paths for decimal text: printing must give exactly `Decimal.description`, and parsing
/// exactly the `Decimal` (same mantissa, exponent and flags) that `Decimal(string:)` gives.
@Suite struct DecimalTextTests {
    static func printed(_ value: Decimal) -> String {
        let buffer = ByteBuffer()
        ValueText.appendDecimal(value, to: buffer)
        return Bytes.string(buffer.bytes)
    }

    static func parsed(_ text: String) -> Decimal? {
        var text = text
        return text.withUTF8 { ValueText.parseDecimal(UnsafeRawBufferPointer($0)) }
    }

    static let samples = [
        "0", "-0", "0.000", "1", "-1", "1.5", "1.50", "-12.5", "100", "0.005", "-0.001", "1200", "5e30", "1e-40",
        "1.2345e-20", "18446744073709551615", "18446744073709551616", "9223372036854775808", "-9223372036854775808",
        "12345678901234567890123456789012345678", "0.0000000000000000001", ".5", "5.", "+3", "007",
    ]

    /// What the reader did before the fast path: the decimal grammar, then `Decimal(string:)`.
    static func reference(_ text: String) -> Decimal? {
        ValueText.isDecimalNumber(text) ? Decimal(string: text, locale: nil) : nil
    }

    @Test(arguments: samples)
    func printsLikeDescription(_ text: String) throws {
        let value = try #require(Decimal(string: text))
        #expect(Self.printed(value) == value.description)
    }

    @Test(arguments: samples)
    func parsesLikeDecimalString(_ text: String) throws {
        let expected = try #require(Decimal(string: text, locale: nil))
        let value = try #require(Self.parsed(text))
        #expect(value.hasSameRepresentation(as: expected))
    }

    @Test func printsNaNLikeDescription() {
        #expect(Self.printed(.nan) == Decimal.nan.description)
        // NaN is read as NaN (as the writer writes it), where `Decimal(string:)` gives no decimal.
        #expect(Self.parsed("NaN")?.isNaN == true && Decimal(string: "NaN", locale: nil) == nil)
    }

    @Test func printsRandomDecimalsLikeDescription() {
        var generator = RepeatableRandomNumberGenerator(seed: RepeatableRandomNumberGenerator.seed(default: 400))
        for round in 0..<100_000 {
            let significand: UInt64
            switch round % 4 {
            case 0: significand = UInt64.random(in: 0...1000, using: &generator)
            case 1: significand = generator.next()
            case 2: significand = UInt64.random(in: 0...999_999_999, using: &generator) * 1000
            default: significand = UInt64.random(in: 0...(1 << 53), using: &generator)
            }
            let exponent = Int.random(in: -40...40, using: &generator)
            let sign: FloatingPointSign = Bool.random(using: &generator) ? .minus : .plus
            var values = [Decimal(sign: sign, exponent: exponent, significand: Decimal(significand))]
            // Arithmetic results, which need not be compact.
            let quotient = Decimal(Int(significand % 200_001) - 100_000) / Decimal(Int(significand % 999) + 1)
            values.append(quotient)
            values.append(quotient * Decimal(string: "1.10")! + Decimal(string: "0.25")!)
            for value in values where Self.printed(value) != value.description {
                Issue.record("seed \(generator.seed), round \(round): \(Self.printed(value)) != \(value.description)")
                return
            }
        }
    }

    @Test func parsesRandomTextLikeDecimalString() {
        var generator = RepeatableRandomNumberGenerator(seed: RepeatableRandomNumberGenerator.seed(default: 401))
        for round in 0..<100_000 {
            var text = ""
            for _ in 0..<Int.random(in: 1...22, using: &generator) {
                text.append(Character(Unicode.Scalar(UInt8(0x30 + Int.random(in: 0...9, using: &generator)))))
            }
            if round % 3 == 0 { text += String(repeating: "0", count: Int.random(in: 0...3, using: &generator)) }
            if Bool.random(using: &generator) {
                let point = Int.random(in: 0...text.count, using: &generator)
                text.insert(".", at: text.index(text.startIndex, offsetBy: point))
            }
            if round % 5 == 0 { text = "-" + text }
            if round % 7 == 0 { text = "+" + text }
            let expected = Self.reference(text)
            let value = Self.parsed(text)
            guard
                expected == nil && value == nil
                    || (expected != nil && value != nil && value!.hasSameRepresentation(as: expected!))
            else {
                Issue.record("seed \(generator.seed), round \(round): '\(text)' reads differently")
                return
            }
        }
    }

    @Test func refusesWhatIsNotADecimal() {
        for text in ["", "-", ".", "1.2.3", "1e", "abc", "1,5", "0x10", "--1", "+-1", " "] {
            #expect(Self.parsed(text) == nil && Self.reference(text) == nil, "\(text)")
        }
    }
}

/// The fast path for Float attributes: `strtof` on the bytes must give what `Float(String)` gives.
@Suite struct FloatTextTests {
    static func parsed(_ text: String) -> Float? {
        var text = text
        return text.withUTF8 { ValueText.parseFloat(UnsafeRawBufferPointer($0)) }
    }

    @Test func readsLikeFloatString() {
        var generator = RepeatableRandomNumberGenerator(seed: RepeatableRandomNumberGenerator.seed(default: 600))
        var texts = [
            "1", "-1", "0.1", "19.6", "3.4028235e38", "3.4028236e38", "1.1754944e-38", "1e-39", "0", "-0.0",
            "1e39", "+2.5", "1E5", ".5", "5.", "1.00000005960464477539062", "16777217", " 2.5 ",
        ]
        for round in 0..<100_000 {
            switch round % 4 {
            case 0: texts.append(Float(bitPattern: UInt32(truncatingIfNeeded: generator.next())).description)
            case 1: texts.append(String(Double.random(in: -1e6...1e6, using: &generator)))
            case 2:
                // Halfway between two floats, and just beside it: where double rounding would go wrong.
                let float = Float.random(in: 1...1e6, using: &generator)
                let half = (Double(float) + Double(float.nextUp)) / 2
                texts.append(String(format: "%.17g", half))
                texts.append(String(format: "%.17g", half.nextUp))
            default: texts.append(String(format: "%.9e", Double.random(in: -1...1, using: &generator)))
            }
            // Short decimals (the division fast path), including ones just past its limits.
            let digits = Int.random(in: 0...11, using: &generator)
            texts.append(String(format: "%.\(digits)f", Double.random(in: -20_000...20_000, using: &generator)))
            texts.append(String(UInt64.random(in: 16_777_200...16_777_300, using: &generator)))
        }
        for text in texts {
            let expected = Float(text.trimmingCharacters(in: .whitespaces))
            if let value = Self.parsed(text), value.bitPattern != expected?.bitPattern {
                Issue.record("'\(text)': \(value) != \(String(describing: expected))")
                return
            }
        }
        #expect(Self.parsed("19.6") == Float("19.6"))
        #expect(Self.parsed("nan") == nil && Self.parsed("inf") == nil && Self.parsed("0x1p3") == nil)
    }
}

/// The fast path for doubles: plain decimals by one division give what `strtod` gives.
@Suite struct DoubleTextTests {
    static func parsed(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { ValueText.parseDouble(UnsafeRawBufferPointer($0)) }
    }

    @Test func readsLikeStrtod() {
        var generator = RepeatableRandomNumberGenerator(seed: RepeatableRandomNumberGenerator.seed(default: 602))
        var texts = [
            "0.1", "-0.0", "0", "+.5", "5.", "9007199254740992", "9007199254740993", "0.0000000000000000000001",
            "1.0000000000000000000001", "123456789012345678901", "-12.75", ".", "-", "",
        ]
        for _ in 0..<100_000 {
            let digits = Int.random(in: 0...24, using: &generator)
            texts.append(String(format: "%.\(digits)f", Double.random(in: -1e6...1e6, using: &generator)))
            texts.append(String(UInt64.random(in: (1 << 53) - 100...(1 << 53) + 100, using: &generator)))
            texts.append("0." + String(UInt64.random(in: 0...UInt64.max, using: &generator)))
        }
        for text in texts {
            let expected: Double? = text.withCString { start in
                var end: UnsafeMutablePointer<CChar>?
                let value = strtod(start, &end)
                return end == UnsafeMutablePointer(mutating: start) + text.utf8.count && !text.isEmpty ? value : nil
            }
            let value = Self.parsed(text)
            if value?.bitPattern != expected?.bitPattern {
                Issue.record("'\(text)': \(String(describing: value)) != \(String(describing: expected))")
                return
            }
        }
    }
}
