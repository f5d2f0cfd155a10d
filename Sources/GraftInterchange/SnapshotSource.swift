import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// Where a copy reads objects from: a store, or a context (which sees its own unsaved changes).
public protocol SnapshotSource {
    var model: Model { get }
    /// The store's UUID, for object URIs.
    var storeIdentifier: String? { get }
    /// One object with every relationship loaded, or `nil` when there is no such object.
    func snapshot(for ref: ObjectRef) throws -> Snapshot?
    /// The objects a fetch finds (entity, subentities, predicate).
    func refs(matching request: FetchRequest) throws -> [ObjectRef]
    /// The URI of an object.
    func uri(of ref: ObjectRef) -> String
}

/// A store as a source: snapshots read from the store, to-manys loaded on demand.
public struct StoreSource: SnapshotSource {
    public let store: any PersistentStore

    public init(_ store: any PersistentStore) { self.store = store }

    public var model: Model { store.model }
    public var storeIdentifier: String? { store.identifier }

    public func snapshot(for ref: ObjectRef) throws -> Snapshot? {
        guard var snapshot = try store.snapshot(for: ref) else { return nil }
        for (index, value) in snapshot.relationships.enumerated() where value == .unloaded {
            snapshot.relationships[index] = .toMany(try store.relatedRefs(of: ref, relationship: index))
        }
        return snapshot
    }

    public func refs(matching request: FetchRequest) throws -> [ObjectRef] {
        // A context over the store applies the predicate exactly as a fetch does (SQL where it can).
        try ObjectContext(store: store).fetch(request).map(\.objectID.ref)
    }

    public func uri(of ref: ObjectRef) -> String {
        ObjectID(entity: ref.entity, key: ref.key).uri(in: model, storeIdentifier: store.identifier)
    }
}

/// A context as a source: objects as they are in the context, saved or not. New objects, which have only
/// temporary IDs, are named by negative keys.
public struct ContextSource: SnapshotSource {
    public let context: ObjectContext

    public init(_ context: ObjectContext) { self.context = context }

    public var model: Model { context.model }
    public var storeIdentifier: String? { context.store.identifier }

    /// The reference a copy uses for an object.
    public static func ref(of object: ManagedObject) -> ObjectRef {
        let id = object.objectID
        return ObjectRef(entity: id.entity, key: id.isTemporary ? -id.key : id.key)
    }

    /// The object a reference names.
    public func object(for ref: ObjectRef) throws -> ManagedObject? {
        if ref.key < 0 {
            return context.registeredObject(for: ObjectID(entity: ref.entity, key: -ref.key, isTemporary: true))
        }
        let id = ObjectID(entity: ref.entity, key: ref.key)
        if let registered = context.registeredObject(for: id) { return registered }
        guard try context.store.snapshot(for: ref) != nil else { return nil }
        return context.object(with: id)
    }

    public func snapshot(for ref: ObjectRef) throws -> Snapshot? {
        guard let object = try object(for: ref), !object.isDeleted else { return nil }
        for relationship in object.entity.relationships where relationship.isToMany {
            _ = try object.relatedObjects(forKey: relationship.name).allObjects()  // loads it
        }
        return try context.snapshot(of: object, naming: Self.ref)
    }

    public func refs(matching request: FetchRequest) throws -> [ObjectRef] {
        try context.fetch(request).map(Self.ref)
    }

    public func uri(of ref: ObjectRef) -> String {
        if let object = try? object(for: ref) { return object.uri }
        return ObjectID(entity: ref.entity, key: ref.key).uri(in: model, storeIdentifier: context.store.identifier)
    }
}
