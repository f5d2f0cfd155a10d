import Foundation
import GraftCore
import GraftModel

/// Converts the values people pass to `setValue(_:forKey:)` into the typed values attributes hold.
public enum ValueConversion {
    /// Converts `value` for `attribute`: integers, doubles and decimals convert into each other where the
    /// attribute's type asks for it; a Float attribute's value is rounded to single precision. Range
    /// checks (an Integer 16 holding 70000) are left to validation, which reports them with the rest.
    static func convert(_ value: Any?, to attribute: Attribute, entity: String) throws -> Value? {
        guard let value, !(value is NSNull) else { return nil }
        if case Optional<Any>.none = value as Any? { return nil }
        guard let wrapped = Value(any: value) else {
            throw mismatch(value, attribute, entity)
        }
        if let converted = coerce(wrapped, to: attribute.type) { return converted }
        throw mismatch(value, attribute, entity)
    }

    /// The value as `type` would hold it, or `nil` when it cannot be held without loss of meaning.
    public static func coerce(_ value: Value, to type: AttributeType) -> Value? {
        switch (type, value) {
        case (.integer16, .integer), (.integer32, .integer), (.integer64, .integer): return value
        case (.integer16, .bool(let flag)), (.integer32, .bool(let flag)), (.integer64, .bool(let flag)):
            return .integer(flag ? 1 : 0)
        case (.integer16, .double(let number)), (.integer32, .double(let number)), (.integer64, .double(let number)):
            guard number.rounded() == number, let integer = Int64(exactly: number) else { return nil }
            return .integer(integer)
        case (.integer16, .decimal(let number)), (.integer32, .decimal(let number)), (.integer64, .decimal(let number)):
            guard let integer = Int64(exactly: number.nearestDouble),
                Decimal(integer) == number
            else { return nil }
            return .integer(integer)
        case (.double, .double), (.double, .integer), (.double, .decimal):
            return .double(value.doubleValue!)
        case (.float, .double), (.float, .integer), (.float, .decimal):
            return .double(Double(Float(value.doubleValue!)))
        case (.decimal, .decimal): return value
        case (.decimal, .integer(let number)): return .decimal(Decimal(number))
        case (.decimal, .double(let number)):
            guard number.isFinite else { return nil }
            return .decimal(Decimal(string: String(number)) ?? Decimal(number))
        case (.boolean, .bool): return value
        case (.boolean, .integer(let number)) where number == 0 || number == 1: return .bool(number == 1)
        case (.string, .string), (.date, .date), (.binary, .data), (.uuid, .uuid), (.uri, .uri): return value
        case (.uri, .string(let text)): return URL(string: text).map { .uri($0) }
        case (.uuid, .string(let text)): return UUID(uuidString: text).map { .uuid($0) }
        case (.transformable, .data): return value
        case (.undefined, _), (.objectID, _), (.composite, _): return value
        default: return nil
        }
    }

    /// Whether ``coerce(_:to:)`` gives `value` back as it is, so that a caller may use it unconverted: a
    /// value of the kind its type calls for, but for Float, whose doubles are rounded to single precision.
    package static func holdsAsIs(_ value: Value, _ type: AttributeType) -> Bool {
        type != .float && matches(value, type)
    }

    /// Whether a stored value has the kind its attribute's type calls for (used by validation).
    static func matches(_ value: Value, _ type: AttributeType) -> Bool {
        switch (type, value) {
        case (.integer16, .integer), (.integer32, .integer), (.integer64, .integer): return true
        case (.double, .double), (.float, .double), (.decimal, .decimal), (.string, .string), (.boolean, .bool),
            (.date, .date), (.binary, .data), (.uuid, .uuid), (.uri, .uri), (.transformable, .data):
            return true
        case (.undefined, _), (.objectID, _), (.composite, _): return true
        default: return false
        }
    }

    private static func mismatch(_ value: Any, _ attribute: Attribute, _ entity: String) -> GraftError {
        GraftError(
            .typeMismatch, "\(attribute.type.modelName) attribute cannot hold \(describe(value))",
            context: [.entity(entity), .key(attribute.name)])
    }

    static func describe(_ value: Any) -> String {
        if let value = value as? Value { return "\(value) (\(kind(of: value)))" }
        return "\(value) (\(type(of: value)))"
    }

    static func kind(of value: Value) -> String {
        switch value {
        case .integer: return "integer"
        case .double: return "double"
        case .decimal: return "decimal"
        case .string: return "string"
        case .bool: return "boolean"
        case .date: return "date"
        case .data: return "binary data"
        case .uuid: return "UUID"
        case .uri: return "URI"
        }
    }

    /// The objects of a value assigned to a to-many relationship.
    static func objects(from value: Any?, key: String, owner: ManagedObject) throws -> [ManagedObject] {
        guard let value else { return [] }
        if let objects = value as? [ManagedObject] { return objects }
        if let objects = value as? Set<ManagedObject> { return Array(objects) }
        if let set = value as? RelationshipSet { return try set.allObjects() }
        if let sequence = value as? any Sequence<ManagedObject> { return Array(sequence) }
        if let objects = value as? [Any] {
            return try objects.map {
                guard let object = $0 as? ManagedObject else {
                    throw GraftError(
                        .typeMismatch, "a to-many relationship takes managed objects, not \(type(of: $0))",
                        context: [.object(owner.label), .key(key)])
                }
                return object
            }
        }
        throw GraftError(
            .typeMismatch, "a to-many relationship takes a collection of managed objects, not \(type(of: value))",
            context: [.object(owner.label), .key(key)])
    }
}
