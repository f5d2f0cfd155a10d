import Foundation
import GraftModel
import GraftTestSupport
import Testing

@testable import GraftSQLite

/// The fast paths for decimals in SQLite stores give exactly what the general paths give.
@Suite struct DecimalValuesTests {
    /// How `wholeNumber` decided before its fast path.
    static func referenceWholeNumber(_ value: Decimal) -> Int64? {
        guard value.exponent >= 0, value.exponent < 19, !value.isNaN else { return nil }
        let magnitude = NSDecimalNumber(decimal: value).int64Value
        return Decimal(magnitude) == value ? magnitude : nil
    }

    @Test func wholeNumbersAsBefore() throws {
        var generator = RepeatableRandomNumberGenerator(seed: RepeatableRandomNumberGenerator.seed(default: 700))
        var values: [Decimal] = [
            0, 1, -1, 100, Decimal(Int64.max), Decimal(Int64.min), Decimal(UInt64.max), .nan,
            try #require(Decimal(string: "9223372036854775808")), try #require(Decimal(string: "-9223372036854775809")),
            try #require(Decimal(string: "1e18")), try #require(Decimal(string: "1e19")),
            try #require(Decimal(string: "12.5")), try #require(Decimal(string: "1.50")),
        ]
        for round in 0..<50_000 {
            let significand: UInt64
            switch round % 3 {
            case 0: significand = UInt64.random(in: 0...100_000, using: &generator)
            case 1: significand = generator.next()
            default: significand = UInt64.random(in: 0...(1 << 53), using: &generator)
            }
            let sign: FloatingPointSign = Bool.random(using: &generator) ? .minus : .plus
            values.append(
                Decimal(
                    sign: sign, exponent: Int.random(in: -5...20, using: &generator), significand: Decimal(significand))
            )
            values.append(Decimal(Int(truncatingIfNeeded: significand)) / 4)
        }
        for value in values where SQLiteValues.wholeNumber(value) != Self.referenceWholeNumber(value) {
            Issue.record("\(value): \(String(describing: SQLiteValues.wholeNumber(value)))")
            return
        }
    }

    @Test func decimalsFromDoublesAsBefore() {
        var generator = RepeatableRandomNumberGenerator(seed: RepeatableRandomNumberGenerator.seed(default: 701))
        var doubles: [Double] = [0, -0.0, 0.1, 1e-7, 1e22, 123.456, -98765.4321, 9.0e15, 1e300, .pi]
        for round in 0..<50_000 {
            switch round % 3 {
            case 0: doubles.append(Double.random(in: -1e6...1e6, using: &generator))
            case 1: doubles.append(Double(Int.random(in: -10_000_000...10_000_000, using: &generator)) / 100)
            default: doubles.append(Double(bitPattern: generator.next()))
            }
        }
        for double in doubles where double.isFinite {
            // Doubles beyond what a Decimal holds (Decimal(string:) refuses their text) have no decimal:
            // reading one is refused rather than turned into NaN or a trap.
            guard let expected = Decimal(string: "\(double)", locale: Locale(identifier: "en_US_POSIX")) else {
                #expect(SQLiteValues.decimal(from: double) == nil, "\(double)")
                continue
            }
            guard let value = SQLiteValues.decimal(from: double) else {
                // Tiny magnitudes whose shortest digits reach below 10⁻¹²⁸: Decimal(string:) drops digits
                // there, which strict reading refuses.
                #expect(abs(double) < 1e-90, "\(double) has a decimal, but none was made")
                continue
            }
            let reference =
                double.rounded() == double && abs(double) < 9.0e15 ? Decimal(Int64(double)) : expected
            guard value.hasSameRepresentation(as: reference) else {
                Issue.record("\(double): \(value) != \(reference)")
                return
            }
        }
        for double in [Double.infinity, -.infinity, .nan, 1e300, -1e200, 1e-200, .leastNonzeroMagnitude] {
            #expect(SQLiteValues.decimal(from: double) == nil, "\(double)")
        }
    }
}
