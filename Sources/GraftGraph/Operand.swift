import Foundation
import GraftCore
import GraftModel

/// A value as comparisons, predicates and collection operators see it: an `Any?` classified once, so
/// that the comparison code can switch over cases instead of casting again and again.
///
/// Integers of every width become `.integer`, `Float` becomes `.double`, `NSNull` and nested nil
/// optionals become `.null`, and arrays, sets and to-many values become `.collection`.
enum Operand {
    case null
    case integer(Int64)
    case double(Double)
    case decimal(Decimal)
    case bool(Bool)
    case string(String)
    case date(Date)
    case data(Data)
    case uuid(UUID)
    case url(URL)
    case object(any KeyValueCoding)
    case collection([Operand])
    /// Anything else (a dictionary, a value of a type Graft does not know): equal to nothing, ordered
    /// against nothing. Boxed, so that the enum stays small and cheap to copy.
    case other(OtherValue)

    /// Classifies a value. The most common attribute types are tried first.
    init(_ value: Any?) {
        guard let value else {
            self = .null
            return
        }
        switch value {
        case let value as String: self = .string(value)
        case let value as Int64: self = .integer(value)
        case let value as Double: self = .double(value)
        case let value as Bool: self = .bool(value)
        case let value as Int: self = .integer(Int64(value))
        case let value as Date: self = .date(value)
        case let value as Decimal: self = .decimal(value)
        case let value as any KeyValueCoding: self = .object(value)
        case let value as any KeyValueCollection: self = .collection(value.keyValueElements.map { .object($0) })
        case let value as UUID: self = .uuid(value)
        case let value as Data: self = .data(value)
        case let value as URL: self = .url(value)
        case let value as Value: self.init(value)
        case let value as Float: self = .double(Double(value))
        case let value as Int32: self = .integer(Int64(value))
        case let value as Int16: self = .integer(Int64(value))
        case let value as Int8: self = .integer(Int64(value))
        case let value as UInt8: self = .integer(Int64(value))
        case let value as UInt16: self = .integer(Int64(value))
        case let value as UInt32: self = .integer(Int64(value))
        case let value as UInt: self = Int64(exactly: value).map { .integer($0) } ?? .decimal(Decimal(value))
        case let value as UInt64: self = Int64(exactly: value).map { .integer($0) } ?? .decimal(Decimal(value))
        case let value as Substring: self = .string(String(value))
        case is NSNull: self = .null
        // An exact type test: any empty array casts to [UInt8].
        case let bytes as [UInt8] where type(of: value) == [UInt8].self: self = .data(Data(bytes))
        case let value as NSNumber: self = Operand.number(value)
        case let value as any OptionalBox: self.init(value.unboxed)
        case is [AnyHashable: Any]: self = .other(OtherValue(value))
        case let value as [Any?]: self = .collection(value.map(Operand.init))
        case let value as any Sequence: self = .collection(Operand.elements(of: value))
        default: self = .other(OtherValue(value))
        }
    }

    /// Wraps an attribute value.
    init(_ value: Value) {
        switch value {
        case .integer(let value): self = .integer(value)
        case .double(let value): self = .double(value)
        case .decimal(let value): self = .decimal(value)
        case .string(let value): self = .string(value)
        case .bool(let value): self = .bool(value)
        case .date(let value): self = .date(value)
        case .data(let value): self = .data(value)
        case .uuid(let value): self = .uuid(value)
        case .uri(let value): self = .url(value)
        }
    }

    private static func elements<S: Sequence>(of sequence: S) -> [Operand] {
        sequence.map { Operand($0) }
    }

    private static func number(_ number: NSNumber) -> Operand {
        if let value = Int64(exactly: number) { return .integer(value) }
        return .double(number.doubleValue)
    }

    /// The plain Swift value again: what key paths and `Expression.evaluate` return.
    var anyValue: Any? {
        switch self {
        case .null: return nil
        case .integer(let value): return value
        case .double(let value): return value
        case .decimal(let value): return value
        case .bool(let value): return value
        case .string(let value): return value
        case .date(let value): return value
        case .data(let value): return value
        case .uuid(let value): return value
        case .url(let value): return value
        case .object(let value): return value
        case .collection(let elements): return elements.map(\.anyValue)
        case .other(let box): return box.value
        }
    }

    /// The value as a number: integers, doubles, decimals, and booleans as 0 or 1.
    var number: Number? {
        switch self {
        case .integer(let value): return .integer(value)
        case .double(let value): return .double(value)
        case .decimal(let value): return .decimal(value)
        case .bool(let value): return .integer(value ? 1 : 0)
        default: return nil
        }
    }

    var isCollection: Bool {
        if case .collection = self { return true }
        return false
    }

    /// The type's name for error messages: "a String", "nil", "a collection of 3 values".
    var kindDescription: String {
        switch self {
        case .null: return "nil"
        case .integer: return "an integer"
        case .double: return "a Double"
        case .decimal: return "a Decimal"
        case .bool: return "a Bool"
        case .string: return "a String"
        case .date: return "a Date"
        case .data: return "Data"
        case .uuid: return "a UUID"
        case .url: return "a URL"
        case .object(let object): return "an object (\(type(of: object)))"
        case .collection(let elements):
            return "a collection of \(Wording.counted(elements.count, "value"))"
        case .other(let box): return "a \(type(of: box.value))"
        }
    }
}

/// A value of a type comparisons do not know.
final class OtherValue {
    let value: Any

    init(_ value: Any) {
        self.value = value
    }
}

/// A number of one of the three kinds comparisons and arithmetic know.
enum Number {
    case integer(Int64)
    case double(Double)
    case decimal(Decimal)

    var doubleValue: Double {
        switch self {
        case .integer(let value): return Double(value)
        case .double(let value): return value
        case .decimal(let value): return value.nearestDouble
        }
    }

    /// The exact decimal value; a Double becomes the decimal number its shortest text shows, so 0.1
    /// becomes exactly 0.1.
    var decimalValue: Decimal {
        switch self {
        case .integer(let value): return Decimal(value)
        case .double(let value):
            guard value.isFinite else { return .nan }
            return Decimal(string: value.description, locale: posixLocale) ?? Decimal(value)
        case .decimal(let value): return value
        }
    }

    var anyValue: Any {
        switch self {
        case .integer(let value): return value
        case .double(let value): return value
        case .decimal(let value): return value
        }
    }

    var operand: Operand {
        switch self {
        case .integer(let value): return .integer(value)
        case .double(let value): return .double(value)
        case .decimal(let value): return .decimal(value)
        }
    }
}

let posixLocale = Locale(identifier: "en_US_POSIX")

/// Lets `Operand.init` see through an optional that was boxed inside `Any`.
protocol OptionalBox {
    var unboxed: Any? { get }
}

extension Optional: OptionalBox {
    var unboxed: Any? {
        switch self {
        case .some(let value): return value
        case .none: return nil
        }
    }
}
