/// Something whose properties can be read by name: managed objects, and test doubles.
///
/// Key paths, predicates and sort descriptors read objects only through this protocol, so they work the
/// same on managed objects and on small test classes.
///
/// For example:
///
/// ```swift
/// final class Employee: KeyValueCoding {
///     var name = "Ann"
///     var department: Department?
///     func value(forKey key: String) -> Any? {
///         switch key {
///         case "name": return name
///         case "department": return department
///         default: return nil
///         }
///     }
/// }
/// ```
public protocol KeyValueCoding: AnyObject {
    /// The value for one key. Attribute values are plain Swift values (`Int64`, `Double`, `Decimal`,
    /// `String`, `Bool`, `Date`, `Data`, `UUID`, `URL`) or nil; a to-one relationship gives another
    /// `KeyValueCoding` object or nil; a to-many gives a `KeyValueCollection`.
    func value(forKey key: String) -> Any?
}

/// The value of a to-many relationship as key-value coding sees it.
public protocol KeyValueCollection {
    /// The related objects; in order for ordered relationships.
    var keyValueElements: [any KeyValueCoding] { get }
}

/// An array of objects is a to-many value, so `value(forKey:)` may return `[any KeyValueCoding]`.
extension Array: KeyValueCollection where Element == any KeyValueCoding {
    public var keyValueElements: [any KeyValueCoding] { self }
}
