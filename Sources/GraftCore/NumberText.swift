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
package enum NumberText {
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
