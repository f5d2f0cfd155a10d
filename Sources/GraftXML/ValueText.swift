import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The text forms of attribute values in an XML store: printing and parsing numbers, dates and base64.
enum ValueText {
    // MARK: - Dates: `%.20f`

    /// Appends `seconds` as C's `printf("%.20f")` prints it: the exact binary value rounded to 20
    /// decimals (ties to even), `nan`, `inf`, `-inf`.
    ///
    /// Finite values below 2⁶³ in magnitude are printed without `printf` (it costs about 0.6 µs a
    /// value); the test suite compares both on many values.
    static func appendFixed20(_ seconds: Double, to output: ByteBuffer) {
        guard seconds.isFinite, seconds.magnitude < 9.2e18 else {
            appendPrintf20(seconds, to: output)
            return
        }
        if seconds.sign == .minus { output.append(UInt8(ascii: "-")) }
        let parts = fixed20Parts(seconds.magnitude)
        output.append(decimal: parts.integer)
        output.append(UInt8(ascii: "."))
        output.append(decimal: parts.high, width: 10)
        output.append(decimal: parts.low, width: 10)
    }

    /// A non-negative finite value below 2⁶³ rounded to 20 decimals (ties to even): its integer part,
    /// and its decimals as two runs of ten digits.
    @inline(__always)
    static func fixed20Parts(_ magnitude: Double) -> (integer: UInt64, high: UInt64, low: UInt64) {
        let whole = magnitude.rounded(.towardZero)
        var integer = UInt64(whole)
        let fraction = magnitude - whole  // exact: the result needs no more bits than `magnitude` has
        var high: UInt64 = 0  // the 20 decimals as a 128-bit integer `high:low`
        var low: UInt64 = 0
        if fraction != 0 {
            // fraction = mantissa / 2^shift, with mantissa odd.
            var mantissa: UInt64
            var shift: Int
            if fraction.isNormal {
                mantissa = fraction.significandBitPattern | (1 << 52)
                shift = 52 - Int(fraction.exponent)
            } else {
                mantissa = fraction.significandBitPattern
                shift = 1074
            }
            let zeros = mantissa.trailingZeroBitCount
            mantissa >>= zeros
            shift -= zeros
            // product = mantissa × 10^20 < 2^53 × 2^67 = 2^120, as hi:lo.
            let tenToThe10: UInt64 = 10_000_000_000
            let first = mantissa.multipliedFullWidth(by: tenToThe10)  // < 2^87
            let lowPart = first.low.multipliedFullWidth(by: tenToThe10)
            let productHigh = first.high &* tenToThe10 &+ lowPart.high
            let productLow = lowPart.low
            if shift < 121 {
                // quotient = product >> shift, remainder = product mod 2^shift. (From 121 on, the quotient
                // is below 1/2, and a tie is impossible: the product has exactly 20 factors of 2.)
                let (quotientHigh, quotientLow) = shiftRight(productHigh, productLow, by: shift)
                let (remainderHigh, remainderLow) = lowBits(productHigh, productLow, count: shift)
                let (halfHigh, halfLow) = powerOfTwo(shift - 1)
                var roundUp = false
                if remainderHigh != halfHigh {
                    roundUp = remainderHigh > halfHigh
                } else if remainderLow != halfLow {
                    roundUp = remainderLow > halfLow
                } else {
                    roundUp = quotientLow & 1 == 1  // a tie: round half to even, as printf does
                }
                high = quotientHigh
                low = quotientLow
                if roundUp {
                    low &+= 1
                    if low == 0 { high &+= 1 }
                }
            }
            // 10^20 = 0x5_6BC7_5E2D_6310_0000
            if high == 5 && low == 0x6BC7_5E2D_6310_0000 {
                integer += 1
                high = 0
                low = 0
            }
        }
        let (upper, lower) = UInt64(10_000_000_000).dividingFullWidth((high, low))
        return (integer, upper, lower)
    }

    @inline(__always)
    private static func shiftRight(_ high: UInt64, _ low: UInt64, by shift: Int) -> (UInt64, UInt64) {
        if shift == 0 { return (high, low) }
        if shift >= 128 { return (0, 0) }
        if shift >= 64 { return (0, high >> UInt64(shift - 64)) }
        return (high >> UInt64(shift), (low >> UInt64(shift)) | (high << UInt64(64 - shift)))
    }

    @inline(__always)
    private static func lowBits(_ high: UInt64, _ low: UInt64, count: Int) -> (UInt64, UInt64) {
        if count >= 128 { return (high, low) }
        if count >= 64 {
            let mask: UInt64 = count == 64 ? 0 : (1 << UInt64(count - 64)) - 1
            return (high & mask, low)
        }
        if count == 0 { return (0, 0) }
        return (0, low & ((1 << UInt64(count)) - 1))
    }

    @inline(__always)
    private static func powerOfTwo(_ exponent: Int) -> (UInt64, UInt64) {
        if exponent < 0 { return (0, 0) }
        if exponent >= 64 { return (1 << UInt64(exponent - 64), 0) }
        return (0, 1 << UInt64(exponent))
    }

    /// `%.20f` through the C library, for what the fast path does not cover.
    static func appendPrintf20(_ seconds: Double, to output: ByteBuffer) {
        output.append(string: printf20(seconds))
    }

    /// `%.20f` through the C library.
    static func printf20(_ seconds: Double) -> String {
        var buffer = [CChar](repeating: 0, count: 400)
        let length = withVaList([seconds]) { vsnprintf(&buffer, buffer.count, "%.20f", $0) }
        return String(decoding: buffer[0..<Int(max(length, 0))].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Appends a date's seconds since 2001 as Core Data does (`%.20f`). A value that would not read
    /// back exactly (below about 10⁻⁴ seconds in magnitude, where 20 decimals lose bits) is printed in
    /// the shortest form that does.
    static func appendDate(_ seconds: Double, to output: ByteBuffer) {
        if seconds != 0, seconds.magnitude < 1e-4 {
            let start = output.count
            appendFixed20(seconds, to: output)
            let printed = UnsafeRawBufferPointer(start: output.base + start, count: output.count - start)
            if parseDouble(printed) != seconds {
                output.truncate(to: start)
                output.append(double: seconds)
            }
            return
        }
        appendFixed20(seconds, to: output)
    }

    /// Parses a date's seconds since 2001. Text as Core Data writes it (`%.20f`) takes a fast path: a
    /// Double within an ulp or so is computed from the digits and confirmed by printing it back the same
    /// way, which is exact for values of 1 or more in magnitude (there, two Doubles never print the same
    /// 20 decimals). Anything else goes to `strtod` (about 0.4 µs for 30 digits).
    static func parseDate(_ buffer: UnsafeRawBufferPointer) -> Double? {
        let text = ByteText.trimmed(buffer)
        let count = text.count
        guard count >= 22, count <= 38 else { return parseDouble(buffer) }
        let bytes = text.bytePointer
        var index = 0
        let negative = bytes[0] == UInt8(ascii: "-")
        if negative { index = 1 }
        var integer: UInt64 = 0
        let integerStart = index
        while index < count, bytes[index] != UInt8(ascii: ".") {
            let digit = bytes[index] &- 0x30
            guard digit < 10 else { return parseDouble(buffer) }
            integer = integer * 10 + UInt64(digit)
            index += 1
        }
        let integerDigits = index - integerStart
        guard integerDigits >= 1, integerDigits <= 15, integer >= 1, index + 21 == count,
            bytes[integerStart] != UInt8(ascii: "0")
        else { return parseDouble(buffer) }
        index += 1
        var high: UInt64 = 0
        var low: UInt64 = 0
        for position in 0..<20 {
            let digit = bytes[index + position] &- 0x30
            guard digit < 10 else { return parseDouble(buffer) }
            if position < 10 {
                high = high * 10 + UInt64(digit)
            } else {
                low = low * 10 + UInt64(digit)
            }
        }
        let magnitude = Double(integer) + (Double(high) + Double(low) * 1e-10) * 1e-10
        for candidate in [magnitude, magnitude.nextUp, magnitude.nextDown] where candidate < 9.2e18 {
            let parts = fixed20Parts(candidate)
            if parts.integer == integer && parts.high == high && parts.low == low {
                return negative ? -candidate : candidate
            }
        }
        return parseDouble(buffer)
    }

    // MARK: - Numbers

    /// A Double in its shortest exact form, without a trailing `.0`: `19.6`, `200`, `1e-05`, `nan`,
    /// `inf`, `-inf`.
    static func appendDouble(_ value: Double, to output: ByteBuffer) {
        output.append(string: NumberText.shortest(value))
    }

    /// A Float attribute's value: the shortest form that reads back as the same single-precision
    /// value, when the value is one; otherwise the Double's own shortest form.
    static func appendFloat(_ value: Double, to output: ByteBuffer) {
        let single = Float(value)
        guard Double(single) == value || value.isNaN else {
            appendDouble(value, to: output)
            return
        }
        output.append(string: NumberText.shortest(single))
    }

    /// Appends a decimal exactly as `Decimal.description` writes it (`0.005`, `1200`, `-3.25`, `NaN`).
    static func appendDecimal(_ value: Decimal, to output: ByteBuffer) {
        NumberText.append(value, to: output)
    }

    /// Parses a decimal as `Decimal(string:)` reads it, taking a fast path for plain decimal text; `nil`
    /// for anything `isDecimalNumber` refuses, and for numbers a Decimal cannot hold exactly (more than
    /// 38 digits, beyond its exponent range), which `Decimal(string:)` would round or refuse.
    static func parseDecimal(_ buffer: UnsafeRawBufferPointer) -> Decimal? {
        let text = ByteText.trimmed(buffer)
        if let decimal = Decimal(plainDigits: text) { return decimal }
        return Decimal(exactText: Bytes.string(text))
    }

    /// Parses a decimal integer (surrounding white space allowed).
    static func parseInteger(_ buffer: UnsafeRawBufferPointer) -> Int64? {
        NumberText.int64(ByteText.trimmed(buffer))
    }

    /// Plain decimal text — an optional sign, digits with at most one `.`, at least one digit, no
    /// exponent — as sign, digits (without the point) and the number of digits after the point; `nil`
    /// for other text, more than 19 digits or all zeros.
    @inline(__always)
    private static func plainDecimal(
        _ text: UnsafeRawBufferPointer
    ) -> (
        negative: Bool, digits: UInt64, fractionDigits: Int
    )? {
        let count = text.count
        guard count > 0, count <= 21 else { return nil }
        var index = 0
        var negative = false
        if text[0] == UInt8(ascii: "-") || text[0] == UInt8(ascii: "+") {
            negative = text[0] == UInt8(ascii: "-")
            index = 1
        }
        var digits: UInt64 = 0
        var digitCount = 0
        var pointAt = -1
        while index < count {
            let byte = text[index]
            if byte == UInt8(ascii: ".") {
                guard pointAt < 0 else { return nil }
                pointAt = digitCount
            } else {
                let digit = byte &- 0x30
                guard digit < 10 else { return nil }
                digits = digits &* 10 &+ UInt64(digit)
                digitCount += 1
            }
            index += 1
        }
        guard digitCount > 0, digitCount <= 19, digits != 0 else { return nil }
        return (negative, digits, pointAt < 0 ? 0 : digitCount - pointAt)
    }

    /// Parses a real number as C's `strtod` does (decimal or exponent form, `nan`, `inf`, `infinity`),
    /// requiring the whole text (surrounding white space allowed) to be the number.
    ///
    /// Finite decimal text takes ``NumberText/double(_:)``, which gives the value `strtod` gives.
    static func parseDouble(_ buffer: UnsafeRawBufferPointer) -> Double? {
        let text = ByteText.trimmed(buffer)
        if let value = NumberText.double(text) { return value }
        guard !text.isEmpty, text.count < 400 else {
            return text.count >= 400 ? Double(Bytes.string(text)) : nil
        }
        // A copy with a terminating NUL, on the stack for the usual short numbers.
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: text.count + 1) { copy in
            let base = copy.baseAddress!
            UnsafeMutableRawPointer(base).copyMemory(from: text.baseAddress!, byteCount: text.count)
            base[text.count] = 0
            let first = UInt8(bitPattern: base[0])
            // strtod also reads hexadecimal floats and leading white space; neither is a number here.
            guard
                first == UInt8(ascii: "-") || first == UInt8(ascii: "+") || first == UInt8(ascii: ".")
                    || (first >= 0x30 && first <= 0x39) || first | 0x20 == UInt8(ascii: "n")
                    || first | 0x20 == UInt8(ascii: "i")
            else { return nil }
            var end: UnsafeMutablePointer<CChar>?
            let value = strtod(base, &end)
            guard let end, end == base + text.count else { return nil }
            for index in 0..<text.count
            where base[index] == CChar(UInt8(ascii: "x")) || base[index] == CChar(UInt8(ascii: "X")) {
                return nil
            }
            return value
        }
    }

    /// Parses plain decimal text (digits, sign, point, exponent) to single precision, the value
    /// `Float(String)` gives, without making a `String`: short decimals exactly by division, others with
    /// `strtof`; `nil` for other text and for results that are not normal numbers (zero, subnormal,
    /// infinite), which the caller reads the slow way.
    static func parseFloat(_ buffer: UnsafeRawBufferPointer) -> Float? {
        let text = ByteText.trimmed(buffer)
        // Clinger's fast path in single precision: digits below 2²⁴, at most 10 decimals (10¹⁰ is exact).
        if let plain = plainDecimal(text), plain.digits < 1 << 24, plain.fractionDigits <= 10 {
            let magnitude = Float(plain.digits) / Float(NumberText.powersOfTen[plain.fractionDigits])
            return plain.negative ? -magnitude : magnitude
        }
        guard !text.isEmpty, text.count < 64 else { return nil }
        for byte in text {
            guard
                (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
                    || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
            else { return nil }
        }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: text.count + 1) { copy in
            let base = copy.baseAddress!
            UnsafeMutableRawPointer(base).copyMemory(from: text.baseAddress!, byteCount: text.count)
            base[text.count] = 0
            var end: UnsafeMutablePointer<CChar>?
            let value = strtof(base, &end)
            guard let end, end == base + text.count, value.isNormal else { return nil }
            return value
        }
    }

    /// Whether `text` is a decimal number as `Decimal(string:)` should read it whole: an optional
    /// sign, digits with an optional fraction, an optional exponent; or `NaN`.
    static func isDecimalNumber(_ text: String) -> Bool {
        text == "NaN" || NumberText.isDecimal(text)
    }

    /// Parses a Boolean: `1`/`0` as Core Data writes it; `YES`/`NO` and `true`/`false` are accepted.
    static func parseBool(_ buffer: UnsafeRawBufferPointer) -> Bool? {
        let text = ByteText.trimmed(buffer)
        if text.count == 1 {
            if text[0] == UInt8(ascii: "1") { return true }
            if text[0] == UInt8(ascii: "0") { return false }
        }
        switch Bytes.string(text).lowercased() {
        case "yes", "true": return true
        case "no", "false": return false
        default: return nil
        }
    }

    // MARK: - Base64

    /// Appends base64 as the Core Data XML store writes binary attributes: a line feed after the
    /// first 76 characters and another after the last, none elsewhere (the layout of
    /// `ThingerMajigger/data/Database.xml`'s `recurrenceruledata`). Empty data appends nothing.
    static func appendBase64(_ data: Data, to output: ByteBuffer) {
        guard !data.isEmpty else { return }
        let start = output.count
        appendBase64Plain(data, to: output)
        let length = output.count - start
        if length > 76 {
            // Insert the line feed after character 76.
            output.append(0)
            let breakAt = output.base + start + 76
            (breakAt + 1).update(from: breakAt, count: length - 76)
            breakAt.pointee = 0x0A
        }
        output.append(0x0A)
    }

    /// Appends base64 without line breaks.
    static func appendBase64Plain(_ data: Data, to output: ByteBuffer) {
        let length = Base64.encodedLength(data.count)
        output.reserve(length)
        data.withUnsafeBytes { Base64.encode($0, into: output.base + output.count) }
        output.commit(length)
    }
}
