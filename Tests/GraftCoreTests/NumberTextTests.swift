import Foundation
@_spi(GraftInternal) import GraftCore
import Testing

/// The one number-text module: integers, doubles and decimals read from bytes exactly, and written back.
@Suite struct NumberTextTests {
    static func bytes<T>(_ text: String, _ body: (UnsafeRawBufferPointer) -> T) -> T {
        var text = text
        return text.withUTF8 { body(UnsafeRawBufferPointer($0)) }
    }

    @Test(arguments: [
        ("0", Int64(0)), ("-0", 0), ("+17", 17), ("9223372036854775807", .max), ("-9223372036854775808", .min),
        ("007", 7),
    ])
    func readsIntegers(text: String, value: Int64) {
        #expect(Self.bytes(text, NumberText.int64) == value)
    }

    @Test(arguments: ["", "-", "+", "9223372036854775808", "-9223372036854775809", "1.0", "1e3", " 1", "0x10", "--1"])
    func refusesWhatIsNotAnInt64(text: String) {
        #expect(Self.bytes(text, NumberText.int64) == nil, "\(text)")
    }

    @Test func readsMagnitudesInBothRadixes() {
        #expect(Self.bytes("ff", { NumberText.signedMagnitude($0, radix: 16) })?.magnitude == 255)
        #expect(Self.bytes("-FfFf", { NumberText.signedMagnitude($0, radix: 16) })?.negative == true)
        #expect(Self.bytes("18446744073709551615", { NumberText.signedMagnitude($0, radix: 10) })?.magnitude == .max)
        #expect(Self.bytes("18446744073709551616", { NumberText.signedMagnitude($0, radix: 10) }) == nil)
        #expect(Self.bytes("fg", { NumberText.signedMagnitude($0, radix: 16) }) == nil)
        #expect(Self.bytes("ff", { NumberText.signedMagnitude($0, radix: 10) }) == nil)
    }

    /// Every double the fast path computes is the one the standard library's correctly rounded parser gives.
    @Test func readsDoublesAsTheStandardLibraryDoes() {
        var generator = SystemRandomNumberGenerator()
        var texts = [
            "0", "-0", "0.1", ".5", "5.", "+3", "1e22", "1e23", "9007199254740993", "123456789012345678901234",
            "2.2250738585072014e-308", "4.9e-324", "1.7976931348623157e308", "0.000001", "1E-5", "-12.5e+3",
        ]
        for _ in 0..<2_000 {
            let value = Double(bitPattern: generator.next() & 0x7FEF_FFFF_FFFF_FFFF)
            texts.append(value.description)
            texts.append(String(format: "%.17g", value))
            texts.append(String(Int64.random(in: -1_000_000...1_000_000)) + "." + String(UInt32.random(in: 0...99_999)))
        }
        for text in texts {
            let ours = Self.bytes(text, NumberText.double)
            let theirs = Double(text)
            #expect(ours == theirs && ours?.sign == theirs?.sign, "\(text)")
        }
    }

    /// Mantissas longer than 2⁵³ (a `Float` widened to a double takes 17 digits) are rounded in integers:
    /// they must round as the standard library's parser does, ties to even included.
    @Test func readsLongMantissasAsTheStandardLibraryDoes() {
        var texts: [String] = []
        for _ in 0..<4_000 {
            let mantissa = UInt64.random(in: 10_000_000_000_000_000..<10_000_000_000_000_000_000)
            texts.append("\(mantissa)e\(Int.random(in: -25...25))")
            texts.append("0.\(mantissa)")
            texts.append(Double(Float.random(in: -1_000...1_000)).description)
            texts.append(Double(Float(bitPattern: UInt32.random(in: 0..<0x7F80_0000))).description)
            // Exactly halfway between two doubles: odd integers in [2⁵³, 2⁵⁴) (ties go to the even one),
            // their multiples of ten, and eighths in [2⁵⁰, 2⁵¹) (spaced a quarter apart), in thousandths.
            let odd = (1 << 53) + 2 * UInt64.random(in: 0..<(1 << 52)) + 1
            texts += ["\(odd)", "\(odd)0", "\(odd)00e-2"]
            texts.append("\((1 << 50) * 1_000 + 250 * UInt64.random(in: 0..<(1 << 52)) + 125)e-3")
        }
        for text in texts {
            let ours = Self.bytes(text, NumberText.double)
            #expect(ours != nil && ours == Double(text), "\(text)")
        }
    }

    @Test(arguments: ["", "-", ".", "1e", "1e+", "1.2.3", "inf", "nan", "0x10", " 1", "1 ", "1e400", "-1e400", "1,5"])
    func refusesWhatIsNotAFiniteDecimalNumber(text: String) {
        #expect(Self.bytes(text, NumberText.double) == nil, "\(text)")
    }

    @Test func readsTheNamesOfNonFiniteNumbers() {
        for text in ["nan", "NaN", "+nan", "-NAN"] { #expect(Self.bytes(text, NumberText.nonFinite)?.isNaN == true) }
        for text in ["inf", "+Inf", "Infinity", "+INFINITY"] {
            #expect(Self.bytes(text, NumberText.nonFinite) == .infinity)
        }
        for text in ["-inf", "-Infinity"] { #expect(Self.bytes(text, NumberText.nonFinite) == -.infinity) }
        for text in ["in", "infinite", "1", "nann", ""] { #expect(Self.bytes(text, NumberText.nonFinite) == nil) }
    }

    @Test func writesTheShortestFormWithoutAPointZero() {
        #expect(NumberText.shortest(200.0) == "200")
        #expect(NumberText.shortest(19.6) == "19.6")
        #expect(NumberText.shortest(1e-05) == "1e-05")
        #expect(NumberText.shortest(Float(0.1)) == "0.1")
        #expect(NumberText.shortest(-0.0) == "-0")
    }

    @Test(arguments: [
        ("1200", "1200"), ("-0.005", "-0.005"), ("1.50", "1.5"), ("0", "0"), ("0.000", "0"),
        ("12345678901234567890123456789012345678", "12345678901234567890123456789012345678"), ("5e127", nil),
        ("1e-128", nil), ("10e-129", nil), ("+7", "7"),
    ])
    func readsDecimalsExactly(text: String, description: String?) throws {
        let value = try Self.bytes(text, NumberText.decimal).get()
        #expect(value == Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) || text == "10e-129")
        if let description { #expect(value.description == description) }
    }

    @Test(arguments: [
        ("abc", NumberText.DecimalProblem.notANumber), ("1e", .notANumber), ("NaN", .notANumber), ("", .notANumber),
        ("123456789012345678901234567890123456789", .tooManyDigits), ("1e200", .exponentOutOfRange),
        ("1e-129", .exponentOutOfRange),
    ])
    func refusesWhatADecimalCannotHold(text: String, problem: NumberText.DecimalProblem) {
        #expect(throws: problem) { try Self.bytes(text, NumberText.decimal).get() }
    }

    /// `Decimal(exactText:)` reads what `NumberText.decimal` accepts, as `Decimal(string:)` represents it.
    @Test func exactTextKeepsDecimalStringsRepresentation() throws {
        for text in ["0.00", "1.50", "1200", "-3.25", "1e3"] {
            let exact = try #require(Decimal(exactText: text))
            let foundation = try #require(Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")))
            #expect(exact.hasSameRepresentation(as: foundation), "\(text)")
        }
        #expect(Decimal(exactText: "NaN")?.isNaN == true)
        #expect(Decimal(exactText: "nan") == nil)
        #expect(Decimal(exactText: "12abc") == nil)
        #expect(Decimal(exactText: "1e999999") == nil)
    }

    @Test(arguments: ["0", "1200", "-0.005", "52000.5", "0.1", "-1", "123.456", "1e-30", "18446744073709551615", "NaN"])
    func writesDecimalsAsDescriptionDoes(text: String) throws {
        let value = try #require(
            text == "NaN" ? .nan : Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")))
        let output = ByteBuffer()
        NumberText.append(value, to: output)
        #expect(String(decoding: output.bytes, as: UTF8.self) == value.description)
    }

    /// A decimal's double is the one its text reads as: correctly rounded, on the exact path and off it.
    @Test(arguments: [
        "19.99", "3019890.53", "7928.46", "-0.07", "0.1", "123456789012345.67", "9007199254740993", "1e-30",
        "-4.2e100", "0.000000000000000000000123", "99999999999999999999.5",
    ])
    func aDecimalsNearestDoubleIsItsTexts(text: String) {
        let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))!
        #expect(decimal.nearestDouble == Double(decimal.description)!, "\(text)")
        #expect(decimal.nearestDouble == Double(text)! || decimal.description != text)
    }
}
