import Foundation

/// A reader for `NSKeyedArchiver` archives: `.mom` files, the model cache of SQLite stores, the
/// metadata of binary stores, transformable attribute values.
///
/// An archive is a property list with `$archiver`, `$version`, `$top` and `$objects`. Objects refer
/// to each other through UIDs (indexes into `$objects`); UID 0 is `$null`. Start from a top-level
/// object and follow keys with the subscript: each step resolves a UID into an ``ArchivedObject``,
/// and gives `nil` for `$null` or a missing key. Foundation objects have decoders of their own
/// (``ArchivedObject/decodeString()``, ``ArchivedObject/decodeDictionary()``, …).
///
/// Nothing in an archive is trusted: an out-of-range UID, a `$class` that is not a class entry, a
/// value of the wrong type or a cycle where a value must be finite gives a `GraftError`, never a crash.
///
/// For example:
///
/// ```swift
/// let archive = try KeyedArchive(data: FileAccess.read(momURL))
/// guard let model = try archive.topObject(forKey: "root") else { return }
/// print(model.className ?? "?")                           // "NSManagedObjectModel"
/// for (name, entity) in try model["NSEntities"]?.decodeStringKeyedDictionary() ?? [] {
///     print(name, try entity.string(forKey: "NSClassNameForEntity") ?? "-")
/// }
/// ```
public struct KeyedArchive: Sendable {
    /// The `$archiver` string, normally `"NSKeyedArchiver"`.
    public let archiver: String
    /// The `$version` number, normally 100000.
    public let version: Int64?
    /// The `$top` dictionary: names of top-level objects and their UIDs.
    public let top: PropertyList.Dictionary

    let storage: Storage

    /// The `$objects` array, as stored.
    public var objects: [PropertyList] { storage.objects }

    /// Reads an archive from its property list.
    ///
    /// For example:
    ///
    /// ```swift
    /// let archive = try KeyedArchive(try PropertyList.decode(data))
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` when `$objects` or `$top` is missing or of the wrong type,
    ///   or an object's `$class` does not refer to a class entry with a `$classname`.
    public init(_ plist: PropertyList) throws {
        guard case .dictionary(let root) = plist else {
            throw Self.error("a keyed archive is a dictionary, not a \(plist.typeName)")
        }
        guard case .array(let objects)? = root["$objects"] else {
            throw Self.error("the archive has no $objects array")
        }
        guard case .dictionary(let top)? = root["$top"] else {
            throw Self.error("the archive has no $top dictionary")
        }
        archiver = root["$archiver"]?.stringValue ?? ""
        version = root["$version"]?.int64Value
        self.top = top
        storage = try Storage(objects: objects)
    }

    /// Reads an archive from a binary, XML or OpenStep property list.
    ///
    /// For example:
    ///
    /// ```swift
    /// let archive = try KeyedArchive(data: FileAccess.read(momURL))
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` when the data is not a property list or not a keyed archive.
    public init(data: Data) throws {
        try self.init(PropertyList.decode(data))
    }

    /// The names in `$top`, in archive order.
    public var topKeys: [String] { top.keys }

    /// The top-level object with this name (`"root"` for most archives), or `nil` when absent or `$null`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let model = try archive.topObject(forKey: "root")
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` when the `$top` entry is not a UID into `$objects`.
    public func topObject(forKey key: String) throws -> ArchivedObject? {
        guard let value = top[key] else { return nil }
        guard case .uid(let uid) = value else {
            throw Self.error("$top.\(key) is a \(value.typeName), not a UID", context: [.key("$top." + key)])
        }
        return try object(withUID: uid)
    }

    /// The object at `$objects[uid]`, or `nil` for UID 0 (`$null`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let first = try archive.object(withUID: 1)
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` when `uid` is beyond the end of `$objects`.
    public func object(withUID uid: UInt64) throws -> ArchivedObject? {
        try storage.resolve(uid, context: [])
    }

    static func error(_ message: String, context: [GraftError.Location] = []) -> GraftError {
        GraftError(.malformedInput, "keyed archive: " + message, context: context)
    }
}

extension KeyedArchive {
    /// The name and superclass chain of a class entry (`$classname`, `$classes`).
    struct ClassInfo: Sendable {
        let name: String
        let chain: [String]
    }

    /// The objects and their validated class entries, shared by every ``ArchivedObject``.
    final class Storage: Sendable {
        let objects: [PropertyList]
        /// Class entry UID → class.
        let classes: [UInt64: ClassInfo]

        init(objects: [PropertyList]) throws {
            self.objects = objects
            var classes: [UInt64: ClassInfo] = [:]
            for (index, object) in objects.enumerated() {
                guard case .dictionary(let fields) = object, let classReference = fields["$class"] else { continue }
                let context: [GraftError.Location] = [.object("$objects[\(index)]"), .key("$class")]
                guard case .uid(let uid) = classReference else {
                    throw KeyedArchive.error("$class is a \(classReference.typeName), not a UID", context: context)
                }
                if classes[uid] != nil { continue }
                guard uid < UInt64(objects.count) else {
                    throw KeyedArchive.error(
                        "$class refers to object \(uid), but there are only \(objects.count)",
                        context: context)
                }
                guard case .dictionary(let entry) = objects[Int(uid)], case .string(let name)? = entry["$classname"]
                else {
                    throw KeyedArchive.error(
                        "$class refers to object \(uid), which is not a class entry "
                            + "(a dictionary with $classname)", context: context)
                }
                var chain: [String] = []
                if let classes = entry["$classes"] {
                    let names = classes.arrayValue ?? []
                    chain = names.compactMap(\.stringValue)
                    guard classes.arrayValue != nil, chain.count == names.count else {
                        throw KeyedArchive.error(
                            "the $classes of class entry \(uid) is not an array of strings",
                            context: [.object("$objects[\(uid)]")])
                    }
                }
                if chain.isEmpty { chain = [name] }
                classes[uid] = ClassInfo(name: name, chain: chain)
            }
            self.classes = classes
        }

        /// The object for a UID: `nil` for 0 (`$null`), an error beyond the end of `$objects`.
        func resolve(_ uid: UInt64, context: [GraftError.Location]) throws -> ArchivedObject? {
            if uid == 0 { return nil }
            guard uid < UInt64(objects.count) else {
                throw KeyedArchive.error(
                    "UID \(uid) is beyond the end of $objects (\(objects.count) objects)",
                    context: context)
            }
            return ArchivedObject(storage: self, uid: uid, rawValue: objects[Int(uid)])
        }

        /// A field value: a UID is followed, anything else is an inline value.
        func resolve(_ value: PropertyList, context: [GraftError.Location]) throws -> ArchivedObject? {
            if case .uid(let uid) = value { return try resolve(uid, context: context) }
            return ArchivedObject(storage: self, uid: nil, rawValue: value)
        }
    }
}
