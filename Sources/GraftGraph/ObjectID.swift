import GraftCore
import GraftModel

/// The identity of one object: its entity and its key in the store.
///
/// Objects inserted into a context get a *temporary* ID until they are saved; saving replaces it with
/// a permanent one. Within a context there is at most one `ManagedObject` per ID (uniquing).
///
/// An ID's URI form is `x-coredata://<store UUID>/<Entity>/p<key>` (`t<key>` for temporary IDs, which
/// have no store part), as Core Data writes it.
public struct ObjectID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The entity's index in `Model.descriptions`.
    public let entity: Int
    /// The primary key (permanent IDs) or a context-local number (temporary IDs).
    public let key: Int64
    public let isTemporary: Bool

    public init(entity: Int, key: Int64, isTemporary: Bool = false) {
        self.entity = entity
        self.key = key
        self.isTemporary = isTemporary
    }

    /// The store-level reference this ID stands for.
    public var ref: ObjectRef { ObjectRef(entity: entity, key: key) }

    public static func < (lhs: ObjectID, rhs: ObjectID) -> Bool {
        (lhs.isTemporary ? 1 : 0, lhs.entity, lhs.key) < (rhs.isTemporary ? 1 : 0, rhs.entity, rhs.key)
    }

    public var description: String { "\(entity)/\(isTemporary ? "t" : "p")\(key)" }

    /// The URI Core Data would give this object.
    ///
    /// For example: `x-coredata://0C9F…/Employee/p12`.
    public func uri(in model: Model, storeIdentifier: String) -> String {
        let name = model.descriptions[entity].name
        if isTemporary { return "x-coredata:///\(name)/t\(key)" }
        return "x-coredata://\(storeIdentifier)/\(name)/p\(key)"
    }

    /// Parses a URI of the form `x-coredata://<store>/<Entity>/p<key>`.
    ///
    /// - Throws: `GraftError.malformedInput` for a URI that is not an object URI, and
    ///   `GraftError.notFound` when the entity is not in `model`.
    public static func parse(uri: String, model: Model) throws -> (storeIdentifier: String, id: ObjectID) {
        let prefix = "x-coredata://"
        guard uri.hasPrefix(prefix) else {
            throw GraftError(.malformedInput, "'\(uri)' is not an object URI (x-coredata://STORE/Entity/pKEY)")
        }
        let parts = uri.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, let kind = parts[2].first, kind == "p" || kind == "t",
            let key = Int64(parts[2].dropFirst())
        else {
            throw GraftError(.malformedInput, "'\(uri)' is not an object URI (x-coredata://STORE/Entity/pKEY)")
        }
        let entity = try model.requireEntity(String(parts[1]))
        return (String(parts[0]), ObjectID(entity: entity.index, key: key, isTemporary: kind == "t"))
    }
}

/// A reference to an object in a store: the exact entity and the primary key.
///
/// Keys are unique within an inheritance tree (Core Data shares one key sequence per root entity), so
/// `(entity, key)` names exactly one object.
public struct ObjectRef: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The entity's index in `Model.descriptions`.
    public var entity: Int
    public var key: Int64

    public init(entity: Int, key: Int64) {
        self.entity = entity
        self.key = key
    }

    public static func < (lhs: ObjectRef, rhs: ObjectRef) -> Bool { (lhs.entity, lhs.key) < (rhs.entity, rhs.key) }

    public var description: String { "\(entity)/p\(key)" }
}
