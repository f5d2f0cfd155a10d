/// The type of an attribute, with the integer codes compiled models and version hashes use.
public enum AttributeType: Int32, Sendable, CaseIterable, CustomStringConvertible {
    case undefined = 0
    case integer16 = 100
    case integer32 = 200
    case integer64 = 300
    case decimal = 400
    case double = 500
    case float = 600
    case string = 700
    case boolean = 800
    case date = 900
    case binary = 1000
    case uuid = 1100
    case uri = 1200
    case transformable = 1800
    case objectID = 2000
    case composite = 2100

    /// The name Xcode writes in a `.xcdatamodel` (`attributeType="Integer 16"`).
    public var modelName: String {
        switch self {
        case .undefined: return "Undefined"
        case .integer16: return "Integer 16"
        case .integer32: return "Integer 32"
        case .integer64: return "Integer 64"
        case .decimal: return "Decimal"
        case .double: return "Double"
        case .float: return "Float"
        case .string: return "String"
        case .boolean: return "Boolean"
        case .date: return "Date"
        case .binary: return "Binary"
        case .uuid: return "UUID"
        case .uri: return "URI"
        case .transformable: return "Transformable"
        case .objectID: return "ObjectID"
        case .composite: return "Composite"
        }
    }

    /// Reads the name Xcode writes (`"Integer 16"`), also accepting older spellings (`"Binary Data"`).
    public init?(modelName: String) {
        switch modelName {
        case "Binary Data", "BinaryData": self = .binary
        case "Integer16": self = .integer16
        case "Integer32": self = .integer32
        case "Integer64": self = .integer64
        default:
            guard let type = AttributeType.allCases.first(where: { $0.modelName == modelName }) else { return nil }
            self = type
        }
    }

    public var description: String { modelName }

    /// Whether values of this type are numbers (and so can have numeric minimum and maximum values).
    public var isNumeric: Bool {
        switch self {
        case .integer16, .integer32, .integer64, .decimal, .double, .float: return true
        default: return false
        }
    }

    /// Whether this is one of the integer types.
    public var isInteger: Bool { self == .integer16 || self == .integer32 || self == .integer64 }

    /// The range an integer attribute of this type can hold.
    public var integerRange: ClosedRange<Int64>? {
        switch self {
        case .integer16: return Int64(Int16.min)...Int64(Int16.max)
        case .integer32: return Int64(Int32.min)...Int64(Int32.max)
        case .integer64: return Int64.min...Int64.max
        default: return nil
        }
    }
}

/// What happens to a relationship's destination when its source object is deleted.
public enum DeleteRule: Int, Sendable, CaseIterable, CustomStringConvertible {
    /// Leave the destination as it is (the inverse keeps pointing at a deleted object).
    case noAction = 0
    /// Remove the deleted object from the destination's inverse relationship.
    case nullify = 1
    /// Delete the destination objects too.
    case cascade = 2
    /// Refuse to delete the source while the relationship holds any object.
    case deny = 3

    /// The name Xcode writes (`deletionRule="Cascade"`).
    public var modelName: String {
        switch self {
        case .noAction: return "No Action"
        case .nullify: return "Nullify"
        case .cascade: return "Cascade"
        case .deny: return "Deny"
        }
    }

    public init?(modelName: String) {
        switch modelName {
        case "No Action", "NoAction": self = .noAction
        case "Nullify": self = .nullify
        case "Cascade": self = .cascade
        case "Deny": self = .deny
        default: return nil
        }
    }

    public var description: String { modelName }
}
