import Foundation
import GraftCore

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
        case .decimal(let value): return value.nearestDouble
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
