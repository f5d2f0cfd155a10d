import Foundation

/// A property list value: the tree that binary, XML and OpenStep property lists all describe.
///
/// Integers span −2⁶³ … 2⁶⁴−1: values that fit in `Int64` are `.integer`, larger ones
/// `.unsignedInteger` (the decoders keep to that rule, and `==` treats `.integer(5)` and
/// `.unsignedInteger(5)` as equal in case code builds one by hand). `.uid` is the `CF$UID`
/// reference that keyed archives use. Reals compare NaN equal to NaN, so decoded values can be
/// compared after a round trip.
///
/// For example:
///
/// ```swift
/// let plist: PropertyList = ["name": "Ann", "age": 42, "tags": ["a", "b"]]
/// let data = plist.encode(format: .binary)
/// let back = try PropertyList.decode(data)
/// print(back["name"]?.stringValue ?? "?")   // "Ann"
/// ```
public enum PropertyList: Sendable {
    case string(String)
    case integer(Int64)
    /// An integer above `Int64.max` (up to `UInt64.max`).
    case unsignedInteger(UInt64)
    case real(Double)
    case bool(Bool)
    case date(Date)
    case data(Data)
    case array([PropertyList])
    case dictionary(PropertyList.Dictionary)
    /// A keyed-archive reference (`CF$UID`): an index into the archive's `$objects`.
    ///
    /// The binary format has room for 64 bits, but Apple's reader refuses UIDs above `UInt32.max`.
    case uid(UInt64)
}

// MARK: - Building

extension PropertyList {
    /// An integer of any integer type: `.integer` when it fits in `Int64`, `.unsignedInteger` above.
    ///
    /// The value must lie in −2⁶³ … 2⁶⁴−1, the range property lists can hold.
    ///
    /// For example:
    ///
    /// ```swift
    /// PropertyList(integer: UInt64.max)   // .unsignedInteger(18446744073709551615)
    /// PropertyList(integer: entities.count)   // .integer(…)
    /// ```
    public init<T: BinaryInteger>(integer value: T) {
        if let small = Int64(exactly: value) {
            self = .integer(small)
        } else if let large = UInt64(exactly: value) {
            self = .unsignedInteger(large)
        } else {
            preconditionFailure("\(value) is outside the range of property-list integers")
        }
    }
}

// MARK: - Reading values

extension PropertyList {
    /// The string, when this is a `.string`.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer as an `Int64`, when this is an integer that fits.
    public var int64Value: Int64? {
        switch self {
        case .integer(let value): return value
        case .unsignedInteger(let value): return value <= UInt64(Int64.max) ? Int64(value) : nil
        default: return nil
        }
    }

    /// The integer as an `Int`, when this is an integer that fits.
    public var intValue: Int? { int64Value.flatMap { Int(exactly: $0) } }

    /// The integer as a `UInt64`, when this is a non-negative integer.
    public var uint64Value: UInt64? {
        switch self {
        case .integer(let value): return value >= 0 ? UInt64(value) : nil
        case .unsignedInteger(let value): return value
        default: return nil
        }
    }

    /// The number as a `Double`: a real as it is, an integer converted (possibly rounded).
    public var doubleValue: Double? {
        switch self {
        case .real(let value): return value
        case .integer(let value): return Double(value)
        case .unsignedInteger(let value): return Double(value)
        default: return nil
        }
    }

    /// The Boolean, when this is a `.bool`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The date, when this is a `.date`.
    public var dateValue: Date? {
        if case .date(let value) = self { return value }
        return nil
    }

    /// The bytes, when this is a `.data`.
    public var dataValue: Data? {
        if case .data(let value) = self { return value }
        return nil
    }

    /// The elements, when this is an `.array`.
    public var arrayValue: [PropertyList]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The dictionary, when this is a `.dictionary`.
    public var dictionaryValue: PropertyList.Dictionary? {
        if case .dictionary(let value) = self { return value }
        return nil
    }

    /// The archive reference, when this is a `.uid`.
    public var uidValue: UInt64? {
        if case .uid(let value) = self { return value }
        return nil
    }

    /// The value for `key` when this is a dictionary; `nil` when it is not or has no such key.
    ///
    /// For example:
    ///
    /// ```swift
    /// let current = info["NSManagedObjectModel_CurrentVersionName"]?.stringValue
    /// ```
    public subscript(key: String) -> PropertyList? {
        if case .dictionary(let dictionary) = self { return dictionary[key] }
        return nil
    }

    /// The element at `index` when this is an array and the index is in range; `nil` otherwise.
    public subscript(index: Int) -> PropertyList? {
        if case .array(let array) = self, array.indices.contains(index) { return array[index] }
        return nil
    }

    /// A short name for the value's type, for messages: "string", "integer", "dictionary", ….
    public var typeName: String {
        switch self {
        case .string: return "string"
        case .integer, .unsignedInteger: return "integer"
        case .real: return "real"
        case .bool: return "boolean"
        case .date: return "date"
        case .data: return "data"
        case .array: return "array"
        case .dictionary: return "dictionary"
        case .uid: return "UID"
        }
    }
}

// MARK: - Equality

extension PropertyList: Hashable {
    /// Values are equal when they have the same type and contents; NaN equals NaN, `.integer` and
    /// `.unsignedInteger` compare by numeric value, and dictionaries compare regardless of key order.
    public static func == (lhs: PropertyList, rhs: PropertyList) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.unsignedInteger(let a), .unsignedInteger(let b)): return a == b
        case (.integer(let a), .unsignedInteger(let b)), (.unsignedInteger(let b), .integer(let a)):
            return a >= 0 && UInt64(a) == b
        case (.real(let a), .real(let b)): return a == b || (a.isNaN && b.isNaN)
        case (.bool(let a), .bool(let b)): return a == b
        case (.date(let a), .date(let b)):
            let x = a.timeIntervalSinceReferenceDate
            let y = b.timeIntervalSinceReferenceDate
            return x == y || (x.isNaN && y.isNaN)
        case (.data(let a), .data(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.dictionary(let a), .dictionary(let b)): return a == b
        case (.uid(let a), .uid(let b)): return a == b
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .string(let value):
            hasher.combine(0 as UInt8)
            hasher.combine(value)
        case .integer(let value):
            hasher.combine(1 as UInt8)
            hasher.combine(value)
        case .unsignedInteger(let value):
            // Hash like `.integer` when the value fits, so that equal values hash alike.
            if value <= UInt64(Int64.max) {
                hasher.combine(1 as UInt8)
                hasher.combine(Int64(value))
            } else {
                hasher.combine(2 as UInt8)
                hasher.combine(value)
            }
        case .real(let value):
            hasher.combine(3 as UInt8)
            hasher.combine(value.isNaN ? Double.nan : value)
        case .bool(let value):
            hasher.combine(4 as UInt8)
            hasher.combine(value)
        case .date(let value):
            hasher.combine(5 as UInt8)
            let interval = value.timeIntervalSinceReferenceDate
            hasher.combine(interval.isNaN ? Double.nan : interval)
        case .data(let value):
            hasher.combine(6 as UInt8)
            hasher.combine(value)
        case .array(let value):
            hasher.combine(7 as UInt8)
            hasher.combine(value)
        case .dictionary(let value):
            hasher.combine(8 as UInt8)
            hasher.combine(value)
        case .uid(let value):
            hasher.combine(9 as UInt8)
            hasher.combine(value)
        }
    }
}

// MARK: - Literals

extension PropertyList: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension PropertyList: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self = .integer(value) }
}

extension PropertyList: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .real(value) }
}

extension PropertyList: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension PropertyList: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: PropertyList...) { self = .array(elements) }
}

extension PropertyList: ExpressibleByDictionaryLiteral {
    /// A dictionary in the literal's order; a repeated key keeps its first position and last value.
    public init(dictionaryLiteral elements: (String, PropertyList)...) {
        var dictionary = PropertyList.Dictionary(minimumCapacity: elements.count)
        for (key, value) in elements { dictionary[key] = value }
        self = .dictionary(dictionary)
    }
}

// MARK: - Description

extension PropertyList: CustomStringConvertible, CustomDebugStringConvertible {
    /// A compact one-line rendering, for messages and test failures.
    public var description: String {
        var text = ""
        describe(into: &text)
        return text
    }

    public var debugDescription: String { description }

    private func describe(into text: inout String) {
        switch self {
        case .string(let value): text += value.debugDescription
        case .integer(let value): text += String(value)
        case .unsignedInteger(let value): text += String(value)
        case .real(let value): text += value.description
        case .bool(let value): text += value ? "true" : "false"
        case .date(let value): text += "date(\(value.timeIntervalSinceReferenceDate))"
        case .data(let value):
            text += "<\(value.count) bytes"
            if value.count <= 16 { text += ": " + value.map { String(format: "%02x", $0) }.joined() }
            text += ">"
        case .array(let elements):
            text += "["
            for (position, element) in elements.enumerated() {
                if position > 0 { text += ", " }
                element.describe(into: &text)
            }
            text += "]"
        case .dictionary(let dictionary):
            if dictionary.isEmpty {
                text += "[:]"
                return
            }
            text += "["
            for (position, entry) in dictionary.enumerated() {
                if position > 0 { text += ", " }
                text += entry.key.debugDescription + ": "
                entry.value.describe(into: &text)
            }
            text += "]"
        case .uid(let value): text += "uid(\(value))"
        }
    }
}
