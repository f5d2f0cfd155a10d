import Foundation

/// Apple's XML property-list format: `<plist version="1.0">` documents, and `<plist>` elements
/// embedded in other documents (the Core Data XML store keeps its metadata that way).
///
/// The decoder reads `<dict>`, `<array>`, `<key>`, `<string>`, `<integer>` (decimal or `0x` hex, from
/// −2⁶³ to 2⁶⁴−1), `<real>` (including `nan`, `inf`, `+infinity`, `-infinity`), `<true/>`, `<false/>`,
/// `<date>` (ISO 8601 in UTC), `<data>` (base64, whitespace allowed) and keyed-archive references
/// written as `<dict><key>CF$UID</key><integer>n</integer></dict>`. The encoder writes Apple's layout.
///
/// For example:
///
/// ```swift
/// let info = try XMLPropertyList.decode(FileAccess.read(url.appendingPathComponent(".xccurrentversion")))
/// print(info["_XCCurrentVersionName"]?.stringValue ?? "?")
/// ```
public enum XMLPropertyList {
    /// The XML declaration and document type Apple writes before the `<plist>` element.
    public static let header = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">

        """

    /// The deepest nesting of arrays and dictionaries the decoder follows.
    public static let maximumDepth = 512
}

// MARK: - Text forms shared by the readers and writers

/// Parsing and printing the text forms of numbers and dates.
package enum PropertyListText {
    /// Parses `[+-]digits` or `[+-]0x hexdigits` (white space around allowed) into an integer in
    /// −2⁶³ … 2⁶⁴−1.
    static func integer(_ text: UnsafeRawBufferPointer) -> PropertyList? {
        var start = 0
        var end = text.count
        while start < end, isSpace(text[start]) { start += 1 }
        while end > start, isSpace(text[end - 1]) { end -= 1 }
        var digits = UnsafeRawBufferPointer(rebasing: text[start..<end])
        var negative = false
        if let first = digits.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            digits = UnsafeRawBufferPointer(rebasing: digits.dropFirst())
        }
        var radix: UInt64 = 10
        if digits.count > 2, digits[0] == UInt8(ascii: "0"), digits[1] | 0x20 == UInt8(ascii: "x") {
            radix = 16
            digits = UnsafeRawBufferPointer(rebasing: digits.dropFirst(2))
        }
        // The sign is taken above, so a second one is not read as the magnitude's.
        guard let first = digits.first, first != UInt8(ascii: "-"), first != UInt8(ascii: "+"),
            let (_, magnitude) = NumberText.signedMagnitude(digits, radix: radix)
        else { return nil }
        if negative { return NumberText.int64(negative: true, magnitude: magnitude).map(PropertyList.integer) }
        return PropertyList(integer: magnitude)
    }

    /// Parses a real: a decimal or exponent form, or `nan`, `inf`, `infinity` with an optional sign.
    static func real(_ bytes: UnsafeRawBufferPointer) -> Double? {
        let trimmed = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        var text = trimmed
        if let value = text.withUTF8({ NumberText.nonFinite(UnsafeRawBufferPointer($0)) }) { return value }
        guard let first = trimmed.utf8.first,
            first == UInt8(ascii: "-") || first == UInt8(ascii: "+") || first == UInt8(ascii: ".")
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first)
        else { return nil }
        return Double(trimmed)
    }

    /// Prints a real so that it parses back to the same value: the shortest exact decimal form,
    /// without a trailing `.0` (as Apple writes `1`), and `nan`, `+infinity`, `-infinity`.
    static func real(_ value: Double) -> String {
        if value.isNaN { return "nan" }
        if value.isInfinite { return value < 0 ? "-infinity" : "+infinity" }
        return NumberText.shortest(value)
    }

    /// Parses `YYYY-MM-DDTHH:MM:SSZ` (an optional fraction of a second is accepted) as a UTC date.
    static func date<S: StringProtocol>(_ text: S) -> Date? {
        var trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.withUTF8 { unixSeconds(UnsafeRawBufferPointer($0)) }.map(Date.init(timeIntervalSince1970:))
    }

    /// Parses `[-]YYYY-MM-DDTHH:MM:SSZ`, the year of 4 to 9 digits and an optional fraction of a
    /// second, as seconds since 1970-01-01T00:00:00Z; no white space is allowed around it.
    package static func unixSeconds(_ bytes: UnsafeRawBufferPointer) -> Double? {
        var position = 0
        func number(_ minimumDigits: Int, _ maximumDigits: Int) -> Int? {
            var value = 0
            var digits = 0
            while position < bytes.count, digits < maximumDigits, bytes[position] &- 0x30 < 10 {
                value = value * 10 + Int(bytes[position] &- 0x30)
                digits += 1
                position += 1
            }
            return digits >= minimumDigits ? value : nil
        }
        func expect(_ character: Character) -> Bool {
            guard position < bytes.count, bytes[position] == character.asciiValue! else { return false }
            position += 1
            return true
        }
        let sign = expect("-") ? -1 : 1
        guard let year = number(4, 9), expect("-"), let month = number(2, 2), expect("-"),
            let day = number(2, 2), expect("T"), let hour = number(2, 2), expect(":"),
            let minute = number(2, 2), expect(":"), let second = number(2, 2)
        else { return nil }
        var fraction = 0.0
        if expect(".") {
            let start = position
            while position < bytes.count, bytes[position] &- 0x30 < 10 { position += 1 }
            // Parsed as one decimal, so that the fraction is the nearest double, not a sum of rounded digits.
            guard position > start, let value = Double("0." + String(decoding: bytes[start..<position], as: UTF8.self))
            else { return nil }
            fraction = value
        }
        guard expect("Z"), position == bytes.count, (1...12).contains(month), (1...31).contains(day),
            hour <= 23, minute <= 59, second <= 60
        else { return nil }
        let days = daysFromCivil(year: sign * year, month: month, day: day)
        return Double(days * 86_400 + hour * 3_600 + minute * 60 + second) + fraction
    }

    /// Prints a date as `YYYY-MM-DDTHH:MM:SSZ` in UTC, dropping the fraction of a second (rounding
    /// down, as Apple does). Dates that are not finite print as the reference date, 2001-01-01.
    package static func date(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        // ±10¹⁵ s is about ±31 million years: far beyond any real date, and safe for Int arithmetic.
        let whole = seconds.isFinite ? Int(max(min(seconds, 1e15), -1e15).rounded(.down)) : 978_307_200
        let days = whole >= 0 ? whole / 86_400 : -((-whole + 86_399) / 86_400)
        let secondOfDay = whole - days * 86_400
        let (year, month, day) = civilFromDays(days)
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(abs(value))
            return (value < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3_600, 2)):"
            + "\(pad(secondOfDay % 3_600 / 60, 2)):\(pad(secondOfDay % 60, 2))Z"
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        // Count years from March, so the leap day is the last day of the "year".
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let monthFromMarch = (month + 9) % 12
        let dayOfYear = (153 * monthFromMarch + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date `days` after 1970-01-01.
    static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    @inline(__always)
    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0B || byte == 0x0C
    }
}
