import Foundation
import GraftCore
import GraftModel

/// A scratchpad of managed objects: insert, edit and delete them, then save the changes to a store
/// in one step, or roll them back.
///
/// The context keeps one instance per object ID (uniquing), keeps both sides of every relationship
/// consistent, applies delete rules, validates on save, tracks each object's state and can undo.
///
/// For example:
///
/// ```swift
/// let context = ObjectContext(store: InMemoryStore(model: model))
/// let sales = try context.insert("Department")
/// try sales.setValue("Sales", forKey: "name")
/// try context.save()
/// ```
///
/// A context is not thread-safe: use it from one thread (or task) at a time.
public final class ObjectContext {
    public let store: PersistentStore
    public var model: Model { store.model }

    /// Every object the context knows, held weakly: an unchanged object nobody uses may go away, and
    /// comes back as a new instance with the same ID when asked for again.
    private var registry: [ObjectID: WeakObject] = [:]
    private var registrySweepThreshold = 1024
    /// Objects with pending changes (inserted, edited, deleted), held strongly until saved or rolled back.
    var pending: [ObjectIdentifier: ManagedObject] = [:]
    private var nextTemporaryKey: Int64 = 1
    var undoState = UndoState()
    /// Registered subclasses, their validators, awakenings put off (`ObjectContext+Lifecycle.swift`).
    var lifecycle = LifecycleState()
    /// Observers and the changes not yet told to them (`ObjectContext+Observation.swift`).
    var observation = ObservationState()
    private var faultError: (any Error)?
    /// Every registered object, held strongly while ``retainsRegisteredObjects`` is on.
    private var retained: [ObjectID: ManagedObject] = [:]

    /// What a save does when objects it changes or deletes were saved by someone else since this context
    /// read them (see ``MergePolicy``). The default, as in Core Data, is ``MergePolicy/error``.
    public var mergePolicy: MergePolicy = .error

    /// Whether the context keeps every object it has handed out alive (Core Data's
    /// `retainsRegisteredObjects`). Off by default: an unchanged object nobody holds goes away and is
    /// read again when asked for. Turning it off lets go of the objects it held.
    public var retainsRegisteredObjects = false {
        didSet {
            guard retainsRegisteredObjects != oldValue else { return }
            if retainsRegisteredObjects {
                for (id, entry) in registry { if let object = entry.object { retained[id] = object } }
            } else {
                retained.removeAll()
            }
        }
    }
    /// Faults returned by a fetch with a batch size, by ID: the first of a batch to be used fills the
    /// whole batch (see `FetchRequest.fetchBatchSize`).
    var batchedFaults: [ObjectID: FetchBatch] = [:]

    public init(store: PersistentStore) {
        self.store = store
    }

    /// A context over a new, empty in-memory store.
    public convenience init(model: Model) {
        self.init(store: InMemoryStore(model: model))
    }

    deinit {
        // Objects refer to each other strongly; break those cycles so they can be freed.
        for entry in registry.values {
            entry.object?.storage = nil
            entry.object?.committed = nil
        }
        for object in pending.values {
            object.storage = nil
            object.committed = nil
        }
        for object in retained.values {
            object.storage = nil
            object.committed = nil
        }
    }

    // MARK: Registry

    /// The registered object for an ID, if it is alive.
    public func registeredObject(for id: ObjectID) -> ManagedObject? {
        registry[id]?.object
    }

    /// Every live object the context holds, in ID order.
    public var registeredObjects: [ManagedObject] {
        registry.values.compactMap(\.object).sorted { $0.objectID < $1.objectID }
    }

    func register(_ object: ManagedObject) {
        registry[object.objectID] = WeakObject(object)
        if retainsRegisteredObjects { retained[object.objectID] = object }
        if registry.count > registrySweepThreshold {
            registry = registry.filter { $0.value.object != nil }
            registrySweepThreshold = max(1024, registry.count * 2)
        }
    }

    /// Makes room for `count` more objects at once (a fetch's), so that registering them neither grows
    /// the registry step by step nor sweeps it in the middle.
    func prepareToRegister(_ count: Int) {
        registry.reserveCapacity(registry.count + count)
        registrySweepThreshold = max(registrySweepThreshold, 2 * (registry.count + count))
    }

    func unregister(_ object: ManagedObject) {
        if registry[object.objectID]?.object === object { registry[object.objectID] = nil }
        if retained[object.objectID] === object { retained[object.objectID] = nil }
    }

    /// The object for an ID: the registered instance, or a new fault that reads its values from the
    /// store when first used. (Core Data's `object(with:)`.)
    public func object(with id: ObjectID) -> ManagedObject {
        if let object = registry[id]?.object { return object }
        let object = makeObject(model.descriptions[id.entity], id)
        register(object)
        return object
    }

    /// The object for an ID with its values loaded.
    ///
    /// - Throws: `GraftError.notFound` when the store has no such object.
    public func existingObject(with id: ObjectID) throws -> ManagedObject {
        let object = self.object(with: id)
        try fulfill(object)
        return object
    }

    /// The object a URI names (`x-coredata://<store UUID>/<Entity>/p<key>`).
    ///
    /// - Throws: `GraftError.notFound` when the URI belongs to another store or the object does not exist.
    public func object(forURI uri: String) throws -> ManagedObject {
        let (storeIdentifier, id) = try ObjectID.parse(uri: uri, model: model)
        if id.isTemporary {
            guard let object = registeredObject(for: id) else {
                throw GraftError(.notFound, "no new object in this context has the URI \(uri)")
            }
            return object
        }
        guard storeIdentifier == store.identifier else {
            throw GraftError(
                .notFound, "\(uri) belongs to store \(storeIdentifier), not to this store (\(store.identifier))")
        }
        return try existingObject(with: id)
    }

    func object(for ref: ObjectRef) -> ManagedObject {
        object(with: ObjectID(entity: ref.entity, key: ref.key))
    }

    // MARK: Faults

    /// Fills a fault with its values from the store.
    func fulfill(_ object: ManagedObject) throws {
        guard object.storage == nil else { return }
        guard object.context === self else {
            throw GraftError(
                .invalidOperation, "the object belongs to another context", context: [.object(object.label)])
        }
        if let batch = batchedFaults[object.objectID] {
            try fill(batch)
            if object.storage != nil { return }
        }
        guard !object.objectID.isTemporary, let snapshot = try store.snapshot(for: object.objectID.ref) else {
            throw GraftError(
                .notFound, "the object no longer exists in the store", context: [.object(object.uri)])
        }
        fill(object, from: snapshot)
    }

    /// Loads a snapshot into a fault; objects that already hold values keep them.
    func fill(_ object: ManagedObject, from snapshot: Snapshot) {
        guard object.storage == nil else { return }
        let relationships: [RelationshipStorage] = snapshot.relationships.map { value in
            switch value {
            case .toOne(let ref): return .toOne(ref.map { self.object(for: $0) })
            case .toMany(let refs): return .toMany(ObjectList(refs.map { self.object(for: $0) }))
            case .unloaded: return .unloaded
            }
        }
        let storage = ObjectStorage(attributes: snapshot.attributes, relationships: relationships)
        object.storage = storage
        object.committed = storage
        object.version = snapshot.version
        awakeFromFetch(object)
    }

    /// Makes sure a to-many relationship's objects are in memory.
    func loadToMany(_ object: ManagedObject, _ index: Int) throws {
        try fulfill(object)
        guard case .unloaded = object.storage!.relationships[index] else { return }
        let refs = try store.relatedRefs(of: object.objectID.ref, relationship: index)
        let list = RelationshipStorage.toMany(ObjectList(refs.map { self.object(for: $0) }))
        object.storage!.relationships[index] = list
        if object.committed != nil, case .unloaded = object.committed!.relationships[index] {
            object.committed!.relationships[index] = list
        }
    }

    func recordFaultError(_ error: any Error) {
        if faultError == nil { faultError = error }
    }

    /// Throws (and forgets) the first error met while filling a fault through non-throwing key-value
    /// access since the last call.
    func throwFaultError() throws {
        if let error = faultError {
            faultError = nil
            throw error
        }
    }

    /// Brings an object up to date with its store, or turns it back into a fault (Core Data's
    /// `refresh(_:mergeChanges:)`).
    ///
    /// - `mergeChanges: true`: an object without pending changes turns into a fault (its values are read
    ///   again on next use); an object with pending changes takes the store's current values for every
    ///   attribute *and relationship* it has not changed here, keeps the ones it has changed, and from then
    ///   on counts its changes against the store's current values (so its next save expects the store's
    ///   current version). The other side of a relationship the store changed follows, for objects in
    ///   memory that have not changed that side themselves.
    /// - `mergeChanges: false`: pending changes are discarded — relationship edits undone on both sides —
    ///   and the object turns into a fault, letting go of the objects it held, so a large graph can be
    ///   shrunk in memory.
    ///
    /// New and deleted objects are left as they are.
    ///
    /// - Throws: the store's error when it cannot be read.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) throws {
        guard object.context === self, !object.isInsertedFlag, !object.isDeletedFlag, object.storage != nil else {
            return
        }
        noteRefreshed(object)
        if !object.hasPersistentChanges {
            try takingStoreValues { try noteStoreValuesBeforeFaulting(object) }
            fault(object)
            return
        }
        if mergeChanges {
            guard let snapshot = try store.snapshot(for: object.objectID.ref) else { return }
            try mergeStoredValues(snapshot, into: object, keepingChanges: true)
            return
        }
        try discardChanges(of: object)  // observers hear of the values going back to the ones read
        if !object.hasPersistentChanges {
            try takingStoreValues { try noteStoreValuesBeforeFaulting(object) }
            fault(object)
        }
    }

    /// Reverts an object's pending edits to the values it was read with, both sides of each relationship.
    func discardChanges(of object: ManagedObject) throws {
        try perform {
            let committed = object.committed!
            for index in object.entity.attributes.indices
            where object.storage!.attributes[index] != committed.attributes[index] {
                try setAttribute(object, index, committed.attributes[index])
            }
            for (index, relationship) in object.entity.relationships.enumerated() {
                let target = committed.relationships[index]
                if case .unloaded = target { continue }
                // Objects deleted since cannot be related again (a merge policy may have deleted them).
                let objects = target.objects.filter { !$0.isDeletedFlag }
                if relationship.isToMany {
                    try replaceToMany(object, index, with: objects)
                } else {
                    try setToOne(object, index, objects.first)
                }
            }
        }
    }

    func fault(_ object: ManagedObject) {
        object.willTurnIntoFault()
        object.storage = nil
        object.committed = nil
        object.version = nil
        pending[ObjectIdentifier(object)] = nil
        object.didTurnIntoFault()
    }

    // MARK: Inserting

    /// Inserts a new object of the named entity, with its attributes set to their default values.
    ///
    /// - Throws: `GraftError.notFound` for an unknown entity, `GraftError.invalidOperation` for an abstract one.
    @discardableResult
    public func insert(_ entityName: String) throws -> ManagedObject {
        try insert(model.requireEntity(entityName))
    }

    /// Inserts a new object of `entity`, with its attributes set to their default values.
    @discardableResult
    public func insert(_ entity: EntityDescription) throws -> ManagedObject {
        guard !entity.isAbstract else {
            throw GraftError(
                .invalidOperation, "entity \(entity.name) is abstract and cannot have objects",
                context: [.entity(entity.name)])
        }
        let id = ObjectID(entity: entity.index, key: nextTemporaryKey, isTemporary: true)
        nextTemporaryKey += 1
        let object = makeObject(entity, id)
        object.storage = ObjectStorage(
            attributes: entity.attributes.map(\.defaultValue),
            relationships: entity.relationships.map { $0.isToMany ? .toMany(ObjectList()) : .toOne(nil) })
        object.isInsertedFlag = true
        register(object)
        pending[ObjectIdentifier(object)] = object
        perform {
            record(.inserted(object))
            object.awakeFromInsert()  // in the insertion's undo step
        }
        return object
    }

    // MARK: Change tracking

    /// Objects inserted since the last save, in insertion order.
    public var insertedObjects: [ManagedObject] {
        pending.values.filter { $0.isInsertedFlag && !$0.isDeletedFlag }.sorted { $0.objectID < $1.objectID }
    }

    /// Saved objects whose values have changed since they were read, in ID order.
    public var updatedObjects: [ManagedObject] {
        pending.values.filter { !$0.isInsertedFlag && !$0.isDeletedFlag && $0.hasPersistentChanges }
            .sorted { $0.objectID < $1.objectID }
    }

    /// Saved objects deleted since the last save (objects inserted and deleted again are not listed).
    public var deletedObjects: [ManagedObject] {
        pending.values.filter { $0.isDeletedFlag && !$0.isInsertedFlag }.sorted { $0.objectID < $1.objectID }
    }

    /// Whether saving would change the store.
    public var hasChanges: Bool {
        pending.values.contains { object in
            if object.isInsertedFlag { return !object.isDeletedFlag }
            return object.isDeletedFlag || object.hasPersistentChanges
        }
    }
}

/// A weak reference, for the registry.
struct WeakObject {
    weak var object: ManagedObject?
    init(_ object: ManagedObject) { self.object = object }
}
