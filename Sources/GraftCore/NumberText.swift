import Foundation

/// Recognises number text whole, for readers that must not take a number's leading part for the number
/// (`Double("1e400")` is infinity, `Decimal(string: "10abc")` is 10, `"1.5".intValue` is 1).
///
/// For example:
///
/// ```swift
/// NumberText.isDecimal("-2.5e3")      // true
/// NumberText.isDecimal("10abc")       // false
/// NumberText.wholeNumber("60.0")      // "60"
/// NumberText.wholeNumber("1.5")       // nil
/// ```
@_spi(GraftInternal) public enum NumberText {
    /// Whether `text` is a decimal number: an optional sign, digits with an optional fraction (`.5`, `5.`
    /// and `5.25`; at least one digit), then an optional exponent (`e` or `E`, an optional sign, digits).
    /// White space, `inf`, `nan` and hexadecimal forms are not numbers here.
    package static func isDecimal(_ text: some StringProtocol) -> Bool {
        var bytes = Substring(text).utf8[...]
        skipSign(&bytes)
        var digits = skipDigits(&bytes)
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            digits += skipDigits(&bytes)
        }
        guard digits > 0 else { return false }
        if let byte = bytes.first, byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            skipSign(&bytes)
            guard skipDigits(&bytes) > 0 else { return false }
        }
        return bytes.isEmpty
    }

    /// The integer `text` spells, as an optional sign and digits, when `text` is an optional sign, digits
    /// and optionally a point followed by zeros only (`60`, `-3`, `0.0`, `12.`); `nil` for anything else
    /// (`1.5`, `1e3`, `10abc`).
    package static func wholeNumber(_ text: some StringProtocol) -> Substring? {
        let whole = Substring(text)
        var bytes = whole.utf8[...]
        skipSign(&bytes)
        guard skipDigits(&bytes) > 0 else { return nil }
        let end = bytes.startIndex
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            while bytes.first == UInt8(ascii: "0") { bytes = bytes.dropFirst() }
        }
        guard bytes.isEmpty else { return nil }
        return whole[whole.startIndex..<end]
    }

    private static func skipSign(_ bytes: inout Substring.UTF8View.SubSequence) {
        if let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            bytes = bytes.dropFirst()
        }
    }

    private static func skipDigits(_ bytes: inout Substring.UTF8View.SubSequence) -> Int {
        var count = 0
        while let byte = bytes.first, byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
            count += 1
            bytes = bytes.dropFirst()
        }
        return count
    }
}

// MARK: - Integers

extension NumberText {
    /// Parses an integer in −2⁶³ … 2⁶³−1 from bytes: an optional sign and decimal digits, nothing else
    /// (no white space).
    package static func int64(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        guard let (negative, magnitude) = signedMagnitude(bytes, radix: 10) else { return nil }
        return int64(negative: negative, magnitude: magnitude)
    }

    /// The integer −`magnitude` or `magnitude`, when it is in −2⁶³ … 2⁶³−1.
    @inline(__always)
    package static func int64(negative: Bool, magnitude: UInt64) -> Int64? {
        if negative {
            if magnitude <= UInt64(Int64.max) { return -Int64(magnitude) }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : nil
        }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    /// An optional sign and digits in `radix` (10 or 16; either letter case), as the sign and the
    /// magnitude; `nil` for other text, no digits, or a magnitude beyond 2⁶⁴−1.
    package static func signedMagnitude(
        _ bytes: UnsafeRawBufferPointer, radix: UInt64
    ) -> (negative: Bool, magnitude: UInt64)? {
        let count = bytes.count
        var index = 0
        let negative = readSign(bytes, &index)
        guard index < count else { return nil }
        var magnitude: UInt64 = 0
        while index < count {
            let byte = bytes[index]
            var digit = UInt64(byte &- 0x30)
            if digit >= 10 {
                guard radix == 16 else { return nil }
                let letter = byte | 0x20
                guard letter >= UInt8(ascii: "a") && letter <= UInt8(ascii: "f") else { return nil }
                digit = UInt64(letter - UInt8(ascii: "a") + 10)
            }
            let (shifted, overflow1) = magnitude.multipliedReportingOverflow(by: radix)
            let (sum, overflow2) = shifted.addingReportingOverflow(digit)
            if overflow1 || overflow2 { return nil }
            magnitude = sum
            index += 1
        }
        return (negative, magnitude)
    }

    /// Whether the text starts with `-`; a leading `-` or `+` is skipped.
    @inline(__always)
    static func readSign(_ bytes: UnsafeRawBufferPointer, _ index: inout Int) -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") else {
            return false
        }
        index += 1
        return bytes[index - 1] == UInt8(ascii: "-")
    }

    /// How many decimal digits `value` has (1 for 0).
    @inlinable @inline(__always)
    public static func digitCount(_ value: UInt64) -> Int {
        var digits = 1
        var rest = value
        while rest >= 10_000 {
            digits += 4
            rest /= 10_000
        }
        if rest >= 100 {
            digits += 2
            rest /= 100
        }
        return rest >= 10 ? digits + 1 : digits
    }

    /// Writes the lowest `count` decimal digits of `value` at `target`, with leading zeros: two at a
    /// time, from ``digitPairs``.
    @inlinable @inline(__always)
    public static func writeDigits(_ value: UInt64, count: Int, to target: UnsafeMutablePointer<UInt8>) {
        let pairs = digitPairs.utf8Start
        var rest = value
        var index = count
        while index >= 2 {
            let (quotient, remainder) = rest.quotientAndRemainder(dividingBy: 100)
            index -= 2
            target[index] = pairs[Int(remainder) &* 2]
            target[index + 1] = pairs[Int(remainder) &* 2 + 1]
            rest = quotient
        }
        if index == 1 { target[0] = UInt8(truncatingIfNeeded: rest % 10) &+ 0x30 }
    }

    /// "00", "01" … "99" in a row: the text of every pair of digits.
    @inlinable
    static var digitPairs: StaticString {
        """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """
    }
}

// MARK: - Doubles

extension NumberText {
    /// Exact powers of ten in double precision (10²² is the last).
    package static let powersOfTen: [Double] = (0...22).map { pow(10, Double($0)) }

    /// The powers of ten that fit in 64 bits, 10⁰ … 10¹⁹.
    package static let integerPowersOfTen: [UInt64] = (0...19).map { UInt64(pow(10, Double($0))) }

    /// `mantissa × 10^exponent` correctly rounded to a double, when that takes one exact operation;
    /// `nil` for a power of ten beyond ±22, or beyond ±19 for a mantissa above 2⁵³ (the standard library's
    /// parser is then the way).
    ///
    /// A mantissa up to 2⁵³ and a power up to 10²² are both exact doubles, so one multiplication or
    /// division rounds correctly (Clinger's fast path). A longer mantissa — the 17 digits that a `Float`
    /// widened to a double needs — is worked in integers: the product exactly in 128 bits, or the quotient
    /// to 64 significant bits with its lowest bit set when a remainder is left; either way the conversion
    /// to 53 bits then rounds once, as the exact value would.
    package static func nearestDouble(mantissa: UInt64, exponent: Int) -> Double? {
        if mantissa <= 1 << 53 && exponent >= -22 && exponent <= 22 {
            let significand = Double(mantissa)
            return exponent < 0 ? significand / powersOfTen[-exponent] : significand * powersOfTen[exponent]
        }
        guard mantissa != 0, exponent >= -19, exponent <= 19 else { return mantissa == 0 ? 0 : nil }
        if exponent >= 0 {
            let (high, low) = mantissa.multipliedFullWidth(by: integerPowersOfTen[exponent])
            guard high != 0 else { return Double(low) }
            let shift = high.leadingZeroBitCount
            let top = shift == 0 ? high : high << shift | low >> (64 - shift)
            let sticky: UInt64 = low << shift != 0 ? 1 : 0
            return Double(sign: .plus, exponent: 64 - shift, significand: Double(top | sticky))
        }
        // mantissa × 2^shift ÷ divisor lands in [2⁶³, 2⁶⁴): 64 significant bits of the quotient.
        let divisor = integerPowersOfTen[-exponent]
        func shifted(_ shift: Int) -> (high: UInt64, low: UInt64) {
            shift >= 64
                ? (mantissa << (shift - 64), 0)
                : shift == 0 ? (0, mantissa) : (mantissa >> (64 - shift), mantissa << shift)
        }
        var shift = 64 + mantissa.leadingZeroBitCount - divisor.leadingZeroBitCount
        var dividend = shifted(shift)
        if dividend.high >= divisor {
            shift -= 1
            dividend = shifted(shift)
        }
        let (quotient, remainder) = divisor.dividingFullWidth(dividend)
        return Double(sign: .plus, exponent: -shift, significand: Double(quotient | (remainder != 0 ? 1 : 0)))
    }

    /// The digits and decimal places of a double's shortest text when that text is a plain decimal that is
    /// exactly the double (`600000194.5`: 6000001945 and 1 place); `nil` otherwise.
    ///
    /// That is when the double is from 0.001 up to 2⁵³ (where `description` writes no exponent), its binary
    /// fraction ends within 22 decimal places (a fraction of 2⁻ᵏ ends after k places) and the scaled value
    /// is an integer below 2⁵³ (so the multiplication was exact). Then its neighbours are less than two units of
    /// the last place away (at most 2⁻⁵² of it, and it is below 2⁵³ such units), and every decimal with
    /// fewer places is at least one unit away, outside the half of a neighbour's distance that reads back
    /// as this double: these digits are the shortest text, and the only one.
    package static func exactDecimal(_ magnitude: Double) -> (digits: UInt64, places: Int)? {
        guard magnitude >= 0.001, magnitude < 0x1p53 else { return nil }
        let significand = magnitude.significandBitPattern | 1 << 52
        let lowestBit = Int(magnitude.exponent) - 52 + significand.trailingZeroBitCount
        let places = lowestBit >= 0 ? 0 : -lowestBit
        guard places <= 22 else { return nil }
        let scaled = magnitude * powersOfTen[places]
        guard scaled < 0x1p53 else { return nil }
        return (UInt64(scaled), places)
    }

    /// Parses a finite decimal number (`-12.5e3`, `.5`, `1.`, `+3`) to the nearest double; `nil` when the
    /// text is not a number of that form (no white space, no `inf` or `nan`, no hexadecimal) or overflows.
    ///
    /// Up to 19 significant digits with a power of ten within ±19 (±22 for 16 digits) are one correctly
    /// rounded operation (``nearestDouble(mantissa:exponent:)``); other numbers go to the standard
    /// library's parser.
    package static func double(_ bytes: UnsafeRawBufferPointer) -> Double? {
        let count = bytes.count
        var index = 0
        let negative = readSign(bytes, &index)
        var mantissa: UInt64 = 0
        var significantDigits = 0
        var digits = 0
        var exponent = 0
        while index < count, bytes[index] &- 0x30 < 10 {
            let digit = UInt64(bytes[index] &- 0x30)
            if mantissa != 0 || digit != 0 { significantDigits += 1 }
            if significantDigits <= 19 { mantissa = mantissa &* 10 &+ digit } else { exponent += 1 }
            digits += 1
            index += 1
        }
        if index < count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            while index < count, bytes[index] &- 0x30 < 10 {
                let digit = UInt64(bytes[index] &- 0x30)
                if mantissa != 0 || digit != 0 { significantDigits += 1 }
                if significantDigits <= 19 {
                    mantissa = mantissa &* 10 &+ digit
                    exponent -= 1
                }
                digits += 1
                index += 1
            }
        }
        guard digits > 0 else { return nil }
        if index < count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            guard let written = exponentValue(bytes, from: &index) else { return nil }
            exponent += written
        }
        guard index == count else { return nil }
        guard significantDigits <= 19, let value = nearestDouble(mantissa: mantissa, exponent: exponent) else {
            guard let parsed = Double(String(decoding: bytes, as: UTF8.self)) else { return nil }
            return parsed.isFinite ? parsed : nil
        }
        return negative ? -value : value
    }

    /// Reads an exponent from the `e` or `E` at `index`: an optional sign and digits (at least one);
    /// magnitudes past 100,000 are kept at about that, out of every number type's range.
    private static func exponentValue(_ bytes: UnsafeRawBufferPointer, from index: inout Int) -> Int? {
        let count = bytes.count
        index += 1
        let negative = readSign(bytes, &index)
        var written = 0
        var exponentDigits = 0
        while index < count, bytes[index] &- 0x30 < 10 {
            if written < 100_000 { written = written * 10 + Int(bytes[index] &- 0x30) }
            exponentDigits += 1
            index += 1
        }
        guard exponentDigits > 0 else { return nil }
        return negative ? -written : written
    }

    /// Reads the names non-finite numbers go by, in any letter case: `NaN`, `Infinity`, `-Infinity`,
    /// `inf`, `+infinity`, `INF`, ….
    package static func nonFinite(_ bytes: UnsafeRawBufferPointer) -> Double? {
        guard bytes.count >= 3, bytes.count <= 9 else { return nil }
        var lower = ""
        for byte in bytes {
            lower.unicodeScalars.append(Unicode.Scalar(byte | (byte >= 0x41 && byte <= 0x5A ? 0x20 : 0)))
        }
        switch lower {
        case "nan", "+nan", "-nan": return .nan
        case "inf", "+inf", "infinity", "+infinity": return .infinity
        case "-inf", "-infinity": return -.infinity
        default: return nil
        }
    }

    /// A double or float in its shortest exact form without a trailing `.0`: `19.6`, `200`, `1e-05`, `nan`,
    /// `inf`.
    package static func shortest<Number: BinaryFloatingPoint & CustomStringConvertible>(_ value: Number) -> String {
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }
}

// MARK: - Decimals

extension NumberText {
    /// The most significant digits a `Decimal` holds whatever they are.
    package static let maximumDecimalDigits = 38

    /// Why a text is not a decimal.
    package enum DecimalProblem: Error {
        case notANumber
        case tooManyDigits
        case exponentOutOfRange
    }

    /// Reads `[+-]digits[.digits][e[+-]digits]` exactly into a `Decimal` (its significand without trailing
    /// zeros); fails for other text, more than 38 significant digits, and powers of ten a `Decimal`
    /// cannot reach (−128 … 127, after moving what it can into the significand). Zero is `Decimal(0)`.
    package static func decimal(_ bytes: UnsafeRawBufferPointer) -> Result<Decimal, DecimalProblem> {
        let count = bytes.count
        var index = 0
        let negative = readSign(bytes, &index)
        // Significant digits (leading zeros dropped), and the power of ten of the last one.
        var significant = [UInt8]()
        significant.reserveCapacity(24)
        var exponent = 0
        var digits = 0
        while index < count, bytes[index] &- 0x30 < 10 {
            if !significant.isEmpty || bytes[index] != 0x30 { significant.append(bytes[index] &- 0x30) }
            digits += 1
            index += 1
        }
        if index < count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            while index < count, bytes[index] &- 0x30 < 10 {
                if !significant.isEmpty || bytes[index] != 0x30 { significant.append(bytes[index] &- 0x30) }
                exponent -= 1
                digits += 1
                index += 1
            }
        }
        guard digits > 0 else { return .failure(.notANumber) }
        if index < count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            guard let written = exponentValue(bytes, from: &index) else { return .failure(.notANumber) }
            exponent += written
        }
        guard index == count else { return .failure(.notANumber) }
        if significant.isEmpty { return .success(0) }
        while significant.last == 0 {
            significant.removeLast()
            exponent += 1
        }
        guard significant.count <= maximumDecimalDigits else { return .failure(.tooManyDigits) }
        // Large exponents can move into the significand while it has room.
        while exponent > 127 && significant.count < maximumDecimalDigits {
            significant.append(0)
            exponent -= 1
        }
        guard exponent >= -128, exponent <= 127 else { return .failure(.exponentOutOfRange) }
        let magnitude: Decimal
        if significant.count <= 19 {
            var value: UInt64 = 0
            for digit in significant { value = value &* 10 &+ UInt64(digit) }
            magnitude = Decimal(value)
        } else {
            let split = significant.count - 19
            var high: UInt64 = 0
            var low: UInt64 = 0
            for digit in significant[..<split] { high = high &* 10 &+ UInt64(digit) }
            for digit in significant[split...] { low = low &* 10 &+ UInt64(digit) }
            magnitude = Decimal(high) * Decimal(sign: .plus, exponent: 19, significand: 1) + Decimal(low)
        }
        return .success(Decimal(sign: negative ? .minus : .plus, exponent: exponent, significand: magnitude))
    }

    /// Appends a decimal exactly as `Decimal.description` writes it, in plain notation with all its digits
    /// (`52000.5`, `-0.000123`, `1200`, `NaN`), building the text from the digits for decimals whose
    /// significand fits in 64 bits.
    package static func append(_ value: Decimal, to output: ByteBuffer) {
        guard let parts = value.compactParts else {
            output.append(string: value.description)
            return
        }
        if parts.isNegative { output.append(UInt8(ascii: "-")) }
        if parts.exponent >= 0 {
            output.append(decimal: parts.significand)
            output.append(repeating: UInt8(ascii: "0"), count: parts.exponent)
            return
        }
        appendFraction(parts.significand, places: -parts.exponent, to: output)
    }

    /// Appends `digits` × 10^−`places` (`places` ≥ 1) in plain notation, as both `Decimal.description` and
    /// `Double.description` write it: the digits with the point among them (`52000.5`), or `0.`, zeros,
    /// then the digits (`0.000123`).
    package static func appendFraction(_ digits: UInt64, places: Int, to output: ByteBuffer) {
        let count = digitCount(digits)
        if count > places {
            output.reserve(count + 1)
            let start = output.end
            writeDigits(digits, count: count, to: start)
            let point = start + count - places
            (point + 1).update(from: point, count: places)
            point.pointee = UInt8(ascii: ".")
            output.commit(count + 1)
        } else {
            output.append(UInt8(ascii: "0"), UInt8(ascii: "."))
            output.append(decimal: digits, width: places)  // the leading zeros, then the digits
        }
    }
}

extension Decimal {
    /// The decimal as sign × significand × 10^exponent with a significand of 1 to 2⁶⁴ − 1, read through
    /// public API and checked (the significand's bits must be those of `Decimal(significand)`); `nil` for
    /// NaN, zero, larger significands and the rare uncompacted values (whose text and digits take the slow
    /// paths). Much cheaper than `description` or `Decimal(string:)`, for the stores' hot paths.
    package var compactParts: (isNegative: Bool, significand: UInt64, exponent: Int)? {
        guard !isNaN, !isZero else { return nil }
        let significand = self.significand
        let digits = NSDecimalNumber(decimal: significand).uint64Value
        guard digits != 0, Decimal(digits).hasSameRepresentation(as: significand) else { return nil }
        return (sign == .minus, digits, exponent)
    }

    /// The double nearest the decimal, correctly rounded (as `Double(String)` reads the decimal's text).
    ///
    /// Foundation's `NSDecimalNumber.doubleValue` is not: on Linux it gives 19.990000000000002 for 19.99
    /// (and Apple's is reported off by a unit in the last place too, radar 42374293), a different number
    /// that a store would then keep. Significands of 64 bits with small exponents take the exact paths of
    /// ``NumberText/nearestDouble(mantissa:exponent:)``; the rest read the decimal's text.
    package var nearestDouble: Double {
        if isNaN { return .nan }
        if isZero { return 0 }
        if let parts = compactParts,
            let magnitude = NumberText.nearestDouble(mantissa: parts.significand, exponent: parts.exponent)
        {
            return parts.isNegative ? -magnitude : magnitude
        }
        return Double(description) ?? NSDecimalNumber(decimal: self).doubleValue
    }

    /// Whether two decimals have the same mantissa, exponent and flags, not merely the same value.
    package func hasSameRepresentation(as other: Decimal) -> Bool {
        withUnsafeBytes(of: self) { mine in
            withUnsafeBytes(of: other) { theirs in memcmp(mine.baseAddress!, theirs.baseAddress!, mine.count) == 0 }
        }
    }

    /// The decimal `Decimal(string:)` reads from plain decimal text — an optional sign, then digits with
    /// at most one `.` (at least one digit, at most 19, not all zeros, no exponent) — built without
    /// parsing a string; `nil` for any other text, which the caller reads with `Decimal(string:)`. The
    /// result has the same representation as `Decimal(string:)`'s (the test suite compares both).
    package init?(plainDigits text: UnsafeRawBufferPointer) {
        var index = 0
        let count = text.count
        var isNegative = false
        if count > 0, text[0] == UInt8(ascii: "-") || text[0] == UInt8(ascii: "+") {
            isNegative = text[0] == UInt8(ascii: "-")
            index = 1
        }
        var significand: UInt64 = 0
        var digits = 0
        var fractionDigits = 0
        var seenPoint = false
        while index < count {
            let byte = text[index]
            index += 1
            if byte == UInt8(ascii: ".") {
                if seenPoint { return nil }
                seenPoint = true
                continue
            }
            let digit = byte &- 0x30
            guard digit < 10 else { return nil }
            digits += 1
            guard digits <= 19 else { return nil }
            significand = significand &* 10 &+ UInt64(digit)
            if seenPoint { fractionDigits += 1 }
        }
        guard significand != 0 else { return nil }
        self.init(sign: isNegative ? .minus : .plus, exponent: -fractionDigits, significand: Decimal(significand))
    }

    /// The decimal that decimal text stands for, exactly, as `Decimal(string:)` reads it: an optional
    /// sign, digits with an optional fraction, an optional exponent (`12`, `-0.005`, `1.5e3`), or `NaN`;
    /// `nil` for any other text (`Decimal(string:)` reads `12abc` as 12) and for numbers a `Decimal`
    /// cannot hold without losing digits: more than 38 significant digits, or beyond its exponent's range
    /// (`1e999999`), as ``NumberText/decimal(_:)`` tells.
    package init?(exactText text: some StringProtocol) {
        if text == "NaN" {
            self = .nan
            return
        }
        var text = String(text)
        let checked = text.withUTF8 { NumberText.decimal(UnsafeRawBufferPointer($0)) }
        guard case .success = checked,
            let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
        else { return nil }
        self = value
    }

    /// The decimal a double stands for, by its shortest text (`0.1` for the double nearest 0.1); `nil`
    /// for infinities, NaN and magnitudes a `Decimal` cannot hold (beyond about 10¹⁶⁵, or below 10⁻¹²⁸).
    package init?(shortestOf double: Double) {
        guard double.isFinite else { return nil }
        if double.rounded() == double, abs(double) < 9.0e15 {
            self.init(Int64(double))
            return
        }
        var text = "\(double)"
        if let decimal = text.withUTF8({ Decimal(plainDigits: UnsafeRawBufferPointer($0)) }) {
            self = decimal
            return
        }
        guard let decimal = Decimal(exactText: text) else { return nil }
        self = decimal
    }
}
