import Foundation

/// One attribute value, typed as Core Data types it.
///
/// Integer 16, 32 and 64 attributes hold `.integer`; Double and Float hold `.double` (a Float attribute's
/// value is rounded to single precision when it is set); Transformable attributes hold the archived bytes
/// as `.data`. A missing value is `nil`, never a case of its own.
///
/// For example:
///
/// ```swift
/// let salary: Value = .decimal(Decimal(string: "52000.50")!)
/// let name: Value = "Ann"            // string literal
/// ```
public enum Value: Sendable, CustomStringConvertible {
    case integer(Int64)
    case double(Double)
    case decimal(Decimal)
    case string(String)
    case bool(Bool)
    /// Seconds since 2001-01-01 00:00:00 UTC, as Foundation's `Date` keeps them.
    case date(Date)
    case data(Data)
    case uuid(UUID)
    case uri(URL)

    public var description: String {
        switch self {
        case .integer(let value): return String(value)
        case .double(let value): return String(value)
        case .decimal(let value): return value.description
        case .string(let value): return value
        case .bool(let value): return value ? "YES" : "NO"
        case .date(let value): return String(value.timeIntervalSinceReferenceDate)
        case .data(let value): return "<\(value.count) bytes>"
        case .uuid(let value): return value.uuidString
        case .uri(let value): return value.absoluteString
        }
    }

    /// The value as a number, if it is one (integers, doubles, decimals and booleans are numbers).
    public var doubleValue: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .double(let value): return value
        case .decimal(let value): return NSDecimalNumber(decimal: value).doubleValue
        case .bool(let value): return value ? 1 : 0
        case .date(let value): return value.timeIntervalSinceReferenceDate
        default: return nil
        }
    }

    /// The value's payload as a plain Swift value: `Int64`, `Double`, `Decimal`, `String`, `Bool`,
    /// `Date`, `Data`, `UUID` or `URL`.
    public var anyValue: any Sendable {
        switch self {
        case .integer(let value): return value
        case .double(let value): return value
        case .decimal(let value): return value
        case .string(let value): return value
        case .bool(let value): return value
        case .date(let value): return value
        case .data(let value): return value
        case .uuid(let value): return value
        case .uri(let value): return value
        }
    }

    /// Wraps a plain Swift value (the inverse of `anyValue`); integers of every width are accepted.
    public init?(any value: Any) {
        switch value {
        case let value as Value: self = value
        case let value as Int64: self = .integer(value)
        case let value as Int: self = .integer(Int64(value))
        case let value as Int32: self = .integer(Int64(value))
        case let value as Int16: self = .integer(Int64(value))
        case let value as Int8: self = .integer(Int64(value))
        case let value as UInt32: self = .integer(Int64(value))
        case let value as UInt16: self = .integer(Int64(value))
        case let value as UInt8: self = .integer(Int64(value))
        case let value as Double: self = .double(value)
        case let value as Float: self = .double(Double(value))
        case let value as Decimal: self = .decimal(value)
        case let value as String: self = .string(value)
        case let value as Substring: self = .string(String(value))
        case let value as Bool: self = .bool(value)
        case let value as Date: self = .date(value)
        case let value as Data: self = .data(value)
        // An empty array of any element type casts to [UInt8]; accept only real byte arrays.
        case let value as [UInt8] where type(of: value as Any) == [UInt8].self: self = .data(Data(value))
        case let value as UUID: self = .uuid(value)
        case let value as URL: self = .uri(value)
        default: return nil
        }
    }
}

extension Value: Hashable {
    /// Values are equal when they have the same case and payload; NaN equals NaN so that documents
    /// holding NaN compare equal to themselves after a round trip.
    public static func == (lhs: Value, rhs: Value) -> Bool {
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b || (a.isNaN && b.isNaN)
        case (.decimal(let a), .decimal(let b)): return a == b || (a.isNaN && b.isNaN)
        case (.string(let a), .string(let b)): return a == b
        case (.bool(let a), .bool(let b)): return a == b
        case (.date(let a), .date(let b)):
            let x = a.timeIntervalSinceReferenceDate
            let y = b.timeIntervalSinceReferenceDate
            return x == y || (x.isNaN && y.isNaN)
        case (.data(let a), .data(let b)): return a == b
        case (.uuid(let a), .uuid(let b)): return a == b
        case (.uri(let a), .uri(let b)): return a.absoluteString == b.absoluteString
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .integer(let value): hasher.combine(0); hasher.combine(value)
        case .double(let value): hasher.combine(1); hasher.combine(value.isNaN ? .nan : value)
        case .decimal(let value): hasher.combine(2); hasher.combine(value.description)
        case .string(let value): hasher.combine(3); hasher.combine(value)
        case .bool(let value): hasher.combine(4); hasher.combine(value)
        case .date(let value):
            let seconds = value.timeIntervalSinceReferenceDate
            hasher.combine(5); hasher.combine(seconds.isNaN ? .nan : seconds)
        case .data(let value): hasher.combine(6); hasher.combine(value)
        case .uuid(let value): hasher.combine(7); hasher.combine(value)
        case .uri(let value): hasher.combine(8); hasher.combine(value.absoluteString)
        }
    }
}

extension Value: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

// MARK: - Decimal fast paths

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

    /// Whether two decimals have the same mantissa, exponent and flags, not merely the same value.
    package func hasSameRepresentation(as other: Decimal) -> Bool {
        withUnsafeBytes(of: self) { mine in
            withUnsafeBytes(of: other) { theirs in mine.elementsEqual(theirs) }
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

    /// The decimal that decimal text stands for, exactly: an optional sign, digits with an optional
    /// fraction, an optional exponent (`12`, `-0.005`, `1.5e3`), or `NaN`; `nil` for any other text
    /// (`Decimal(string:)` reads `12abc` as 12) and for numbers a `Decimal` cannot hold without losing
    /// digits: more than 38 significant digits, or beyond its exponent's range (`1e999999`).
    package init?(exactText text: some StringProtocol) {
        if text == "NaN" {
            self = .nan
            return
        }
        var bytes = Substring(text).utf8[...]
        if let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            bytes = bytes.dropFirst()
        }
        // Significant digits (from the first non-zero one), and the power of ten of the last digit read.
        var digits = 0
        var trailingZeros = 0
        var fractionDigits = 0
        var sawDigit = false
        var sawPoint = false
        while let byte = bytes.first {
            if byte == UInt8(ascii: "."), !sawPoint {
                sawPoint = true
            } else if byte >= 0x30 && byte <= 0x39 {
                sawDigit = true
                if sawPoint { fractionDigits += 1 }
                if byte == 0x30 {
                    if digits > 0 { trailingZeros += 1 }
                } else {
                    digits += trailingZeros + 1
                    trailingZeros = 0
                }
            } else {
                break
            }
            bytes = bytes.dropFirst()
        }
        guard sawDigit else { return nil }
        var exponent = 0
        if let byte = bytes.first, byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            var negative = false
            if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
                negative = sign == UInt8(ascii: "-")
                bytes = bytes.dropFirst()
            }
            var exponentDigits = 0
            while let byte = bytes.first, byte >= 0x30 && byte <= 0x39 {
                // Past six digits the number is out of range whatever the rest says.
                if exponent < 1_000_000 { exponent = exponent * 10 + Int(byte - 0x30) }
                exponentDigits += 1
                bytes = bytes.dropFirst()
            }
            guard exponentDigits > 0 else { return nil }
            if negative { exponent = -exponent }
        }
        guard bytes.isEmpty else { return nil }
        if digits > 0 {
            // The value is (significant digits) × 10^lowest, where lowest is the power of the last
            // non-zero digit: a Decimal holds 38 digits and powers of ten from -128 to 127, and may pad
            // its significand with zeros to reach a higher power.
            let lowest = exponent - fractionDigits + trailingZeros
            guard digits <= 38, lowest >= -128, lowest <= 127 + (38 - digits) else { return nil }
        }
        guard let value = Decimal(string: String(text), locale: Locale(identifier: "en_US_POSIX")) else {
            return nil
        }
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
