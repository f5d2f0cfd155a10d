import Foundation

/// One value in a keyed archive: an object from `$objects` reached through a UID, or a value stored
/// inline in a field (such as `NSAttributeType = 700`).
///
/// Follow fields with the subscript, which resolves UIDs and gives `nil` for `$null` or a missing
/// field. Read Foundation objects with the `decode…()` methods, or a field directly with
/// ``string(forKey:)``, ``integer(forKey:)`` and friends.
///
/// For example:
///
/// ```swift
/// let entity: ArchivedObject = …
/// let name = try entity.string(forKey: "NSEntityName")
/// let superentity = try entity["NSSuperentity"]          // nil for $null
/// let properties = try entity["NSProperties"]?.decodeStringKeyedDictionary() ?? []
/// ```
public struct ArchivedObject: Sendable {
    let storage: KeyedArchive.Storage
    /// The index in `$objects`, or `nil` for a value stored inline in a field.
    public let uid: UInt64?
    /// The value as stored: a dictionary of fields for archived objects, a plain string, number or
    /// data for the Foundation objects archived as themselves.
    public let rawValue: PropertyList

    init(storage: KeyedArchive.Storage, uid: UInt64?, rawValue: PropertyList) {
        self.storage = storage
        self.uid = uid
        self.rawValue = rawValue
    }

    /// The object's class (`$classname` of its `$class`), or `nil` for plain values such as strings.
    public var className: String? { classInfo?.name }

    /// The class and its superclasses, most specific first (`$classes`), or empty for plain values.
    ///
    /// For example:
    ///
    /// ```swift
    /// entity.classChain   // ["NSEntityDescription", "NSObject"]
    /// ```
    public var classChain: [String] { classInfo?.chain ?? [] }

    /// Whether the class or one of its superclasses is `name`.
    public func isKind(of name: String) -> Bool { classChain.contains(name) }

    /// The names of the object's fields, in archive order, without `$class`.
    public var fieldNames: [String] {
        guard case .dictionary(let fields) = rawValue else { return [] }
        return fields.keys.filter { $0 != "$class" }
    }

    /// Whether the object has a field with this name.
    public func contains(_ key: String) -> Bool { rawValue[key] != nil }

    /// A field's stored value, UIDs not followed; `nil` when absent or when this is not an object with fields.
    public func rawField(_ key: String) -> PropertyList? { rawValue[key] }

    /// The value of a field, following a UID; `nil` when the field is missing or refers to `$null`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let entities = try model["NSEntities"]
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` when this is not an object with fields, or the field's
    ///   UID is beyond the end of `$objects`.
    public subscript(key: String) -> ArchivedObject? {
        get throws {
            guard case .dictionary(let fields) = rawValue else {
                throw failure("has no fields (it is a \(rawValue.typeName)); cannot read '\(key)'")
            }
            guard let value = fields[key] else { return nil }
            return try storage.resolve(value, context: context(key))
        }
    }

    var classInfo: KeyedArchive.ClassInfo? {
        guard case .dictionary(let fields) = rawValue, case .uid(let uid)? = fields["$class"] else { return nil }
        return storage.classes[uid]
    }

    /// Where this object is, for error messages.
    func context(_ key: String? = nil) -> [GraftError.Location] {
        var context: [GraftError.Location] = []
        if let uid { context.append(.object("$objects[\(uid)]")) }
        if let key { context.append(.key(key)) }
        return context
    }

    func failure(_ message: String, key: String? = nil) -> GraftError {
        KeyedArchive.error("\(kindDescription) " + message, context: context(key))
    }

    /// "an NSEntityDescription", "a string", … for messages.
    package var kindDescription: String {
        let name = className ?? rawValue.typeName
        let article = "AEIOU".contains(name.first ?? "x") ? "an" : "a"
        return "\(article) \(name)"
    }
}

extension ArchivedObject: Equatable {
    /// The same object of the same archive (the same UID), or equal inline values.
    public static func == (lhs: ArchivedObject, rhs: ArchivedObject) -> Bool {
        guard lhs.storage === rhs.storage, lhs.uid == rhs.uid else { return false }
        return lhs.uid != nil || lhs.rawValue == rhs.rawValue
    }
}

extension ArchivedObject: CustomStringConvertible {
    public var description: String {
        let place = uid.map { "$objects[\($0)]" } ?? "inline"
        if let className { return "\(className) (\(place))" }
        return "\(rawValue) (\(place))"
    }
}
