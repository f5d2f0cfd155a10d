import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Byte-level helpers shared by the clipboard readers and writers: character classes, UTF-8, lines.
enum ClipboardText {
    /// XML and JSON white space (space, tab, line feed, carriage return).
    @inline(__always)
    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// A byte that may continue an XML name (ASCII name characters and any byte of a multi-byte UTF-8
    /// sequence).
    @inline(__always)
    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "-"),
            UInt8(ascii: "."), 0x80...0xFF:
            return true
        default:
            return false
        }
    }

    /// A byte that may start an XML name.
    @inline(__always)
    static func isNameStartByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"),
            UInt8(ascii: ":"), 0x80...0xFF:
            return true
        default:
            return false
        }
    }

    /// The string the bytes spell, or `nil` when they are not valid UTF-8.
    ///
    /// ASCII is checked eight bytes at a time; other text is validated here, because the standard
    /// library's validating initializer is generic and, unspecialised, costs more than the whole parse.
    @inline(__always)
    static func string(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard isASCII(bytes) || isValidUTF8(bytes) else { return nil }
        return String(decoding: bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
    }

    @inline(__always)
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        var index = 0
        var any: UInt64 = 0
        while index + 8 <= count {
            any |= base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < count {
            any |= UInt64(bytes[index])
            index += 1
        }
        return any & 0x8080_8080_8080_8080 == 0
    }

    /// Whether the bytes are well-formed UTF-8 (no overlong forms, surrogates or values above U+10FFFF).
    static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            let length: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return false
            }
            guard index + length <= count, bytes[index + 1] >= low, bytes[index + 1] <= high else { return false }
            for offset in 2..<max(length, 2) where bytes[index + offset] & 0xC0 != 0x80 { return false }
            index += length
        }
        return true
    }

    /// Whether the bytes equal an ASCII literal.
    @inline(__always)
    static func equals(_ bytes: UnsafeRawBufferPointer, _ literal: StaticString) -> Bool {
        bytes.count == literal.utf8CodeUnitCount
            && (bytes.count == 0 || memcmp(bytes.baseAddress!, literal.utf8Start, bytes.count) == 0)
    }

    /// Whether two byte runs are equal.
    @inline(__always)
    static func equals(_ bytes: UnsafeRawBufferPointer, _ other: UnsafeRawBufferPointer) -> Bool {
        bytes.count == other.count
            && (bytes.count == 0 || memcmp(bytes.baseAddress!, other.baseAddress!, bytes.count) == 0)
    }

    /// Whether XML 1.0 can carry the text: no control characters but tab, line feed and carriage return,
    /// and neither U+FFFE nor U+FFFF.
    static func xmlCanCarry(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte < 0x20 {
                if byte != 0x09 && byte != 0x0A && byte != 0x0D { return false }
            } else if byte == 0xEF, index + 2 < count, bytes[index + 1] == 0xBF, bytes[index + 2] >= 0xBE {
                return false
            }
            index += 1
        }
        return true
    }

    static func xmlCanCarry(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { xmlCanCarry(UnsafeRawBufferPointer($0)) }
    }

    /// The line (from 1) that the byte at `offset` is on.
    static func line(of offset: Int, in bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress else { return 1 }
        var line = 1
        var position = 0
        let end = min(max(offset, 0), bytes.count)
        while position < end {
            guard let found = memchr(base + position, 0x0A, end - position) else { break }
            line += 1
            position = base.distance(to: UnsafeRawPointer(found)) + 1
        }
        return line
    }

    /// A short quotation of text for messages.
    static func excerpt(_ bytes: UnsafeRawBufferPointer, limit: Int = 40) -> String {
        let text = String(decoding: bytes.prefix(limit * 4), as: UTF8.self)
        return text.count <= limit ? text : String(text.prefix(limit)) + "…"
    }

    static func excerpt(_ text: String, limit: Int = 40) -> String {
        text.count <= limit ? text : String(text.prefix(limit)) + "…"
    }
}

// MARK: - Numbers

/// Reading numbers from text, exactly.
enum ClipboardNumbers {
    /// Parses an integer in −2⁶³ … 2⁶³−1: an optional sign and decimal digits, nothing else.
    static func int64(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        var index = 0
        let count = bytes.count
        var negative = false
        if count > 0 && (bytes[0] == UInt8(ascii: "-") || bytes[0] == UInt8(ascii: "+")) {
            negative = bytes[0] == UInt8(ascii: "-")
            index = 1
        }
        guard index < count else { return nil }
        var magnitude: UInt64 = 0
        while index < count {
            let digit = bytes[index] &- 0x30
            guard digit < 10 else { return nil }
            let (shifted, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = shifted.addingReportingOverflow(UInt64(digit))
            if overflow1 || overflow2 { return nil }
            magnitude = sum
            index += 1
        }
        if negative {
            if magnitude <= UInt64(Int64.max) { return -Int64(magnitude) }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : nil
        }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    private static let powersOfTen: [Double] = (0...22).map { pow(10, Double($0)) }

    /// Parses a finite decimal number (`-12.5e3`, `.5`, `1.`) to the nearest double; `nil` when the text
    /// is not a number or overflows.
    static func double(_ bytes: UnsafeRawBufferPointer) -> Double? {
        let count = bytes.count
        var index = 0
        var negative = false
        if count > 0 && (bytes[0] == UInt8(ascii: "-") || bytes[0] == UInt8(ascii: "+")) {
            negative = bytes[0] == UInt8(ascii: "-")
            index = 1
        }
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
            index += 1
            var exponentNegative = false
            if index < count && (bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+")) {
                exponentNegative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            var written = 0
            var exponentDigits = 0
            while index < count, bytes[index] &- 0x30 < 10 {
                if written < 100_000 { written = written * 10 + Int(bytes[index] &- 0x30) }
                exponentDigits += 1
                index += 1
            }
            guard exponentDigits > 0 else { return nil }
            exponent += exponentNegative ? -written : written
        }
        guard index == count else { return nil }
        let value: Double
        if mantissa == 0 {
            value = 0
        } else if significantDigits <= 19, mantissa <= 1 << 53, exponent >= -22, exponent <= 22 {
            // Both the mantissa and the power of ten are exact doubles, so one operation rounds correctly.
            value = exponent < 0 ? Double(mantissa) / powersOfTen[-exponent] : Double(mantissa) * powersOfTen[exponent]
        } else {
            guard let parsed = Double(String(decoding: bytes, as: UTF8.self)) else { return nil }
            return parsed.isFinite ? parsed : nil
        }
        return negative ? -value : value
    }

    /// Reads the names non-finite numbers go by, in any letter case: `NaN`, `Infinity`, `-Infinity`,
    /// `inf`, `+infinity`, `INF`, ….
    static func nonFinite(_ bytes: UnsafeRawBufferPointer) -> Double? {
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
}

// MARK: - Decimals

/// Decimals as strings of their exact digits.
enum ClipboardDecimal {
    /// The most significant digits a `Decimal` holds whatever they are.
    static let maximumDigits = 38

    /// Appends the decimal in plain notation with all its digits (`52000.5`, `-0.000123`, `1200`), or
    /// `NaN`.
    static func append(_ value: Decimal, to output: ClipboardOutput) {
        if value.isNaN {
            output.append("NaN")
            return
        }
        let significand = value.significand
        let small = NSDecimalNumber(decimal: significand).uint64Value
        guard Decimal(small) == significand else {
            // More than 19 digits: Foundation prints them exactly, if slowly.
            output.append(raw: value.description)
            return
        }
        if small == 0 {
            output.append(UInt8(ascii: "0"))
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var digits = 0
            var rest = small
            while rest > 0 {
                let (quotient, remainder) = rest.quotientAndRemainder(dividingBy: 10)
                buffer[19 - digits] = UInt8(truncatingIfNeeded: remainder) &+ 0x30
                rest = quotient
                digits += 1
            }
            let text = UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[(20 - digits)...]))
            if value.sign == .minus { output.append(UInt8(ascii: "-")) }
            let exponent = value.exponent
            if exponent >= 0 {
                output.append(text)
                output.append(repeating: UInt8(ascii: "0"), count: exponent)
            } else if digits > -exponent {
                let point = digits + exponent
                output.append(UnsafeRawBufferPointer(rebasing: text[..<point]))
                output.append(UInt8(ascii: "."))
                output.append(UnsafeRawBufferPointer(rebasing: text[point...]))
            } else {
                output.append("0.")
                output.append(repeating: UInt8(ascii: "0"), count: -exponent - digits)
                output.append(text)
            }
        }
    }

    /// Why a text is not a decimal.
    enum Problem: Error {
        case notANumber
        case tooManyDigits
        case exponentOutOfRange
    }

    /// Reads `[+-]digits[.digits][e[+-]digits]` or `NaN` exactly into a `Decimal`.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> Result<Decimal, Problem> {
        if bytes.count == 3, bytes[0] | 0x20 == UInt8(ascii: "n"), bytes[1] | 0x20 == UInt8(ascii: "a"),
            bytes[2] | 0x20 == UInt8(ascii: "n")
        {
            return .success(.nan)
        }
        let count = bytes.count
        var index = 0
        var negative = false
        if count > 0 && (bytes[0] == UInt8(ascii: "-") || bytes[0] == UInt8(ascii: "+")) {
            negative = bytes[0] == UInt8(ascii: "-")
            index = 1
        }
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
            index += 1
            var exponentNegative = false
            if index < count && (bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+")) {
                exponentNegative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            var written = 0
            var exponentDigits = 0
            while index < count, bytes[index] &- 0x30 < 10 {
                if written < 100_000 { written = written * 10 + Int(bytes[index] &- 0x30) }
                exponentDigits += 1
                index += 1
            }
            guard exponentDigits > 0 else { return .failure(.notANumber) }
            exponent += exponentNegative ? -written : written
        }
        guard index == count else { return .failure(.notANumber) }
        if significant.isEmpty { return .success(0) }
        while significant.last == 0 {
            significant.removeLast()
            exponent += 1
        }
        guard significant.count <= maximumDigits else { return .failure(.tooManyDigits) }
        // Large exponents can move into the significand while it has room.
        while exponent > 127 && significant.count < maximumDigits {
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

    static func message(_ problem: Problem) -> String {
        switch problem {
        case .notANumber: return "is not a decimal number"
        case .tooManyDigits: return "has more than \(maximumDigits) significant digits, more than a Decimal holds"
        case .exponentOutOfRange: return "is too large or too small for a Decimal (exponent −128 … 127)"
        }
    }
}

// MARK: - UUIDs

/// UUIDs written straight from their bytes, in the uppercase form `UUID.uuidString` has.
enum ClipboardUUID {
    static func append(_ uuid: UUID, to output: ClipboardOutput) {
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
