import GraftCore
import GraftModel

extension ObjectContext {
    /// Validates the pending changes and writes them to the store in one step.
    ///
    /// New objects get permanent IDs; afterwards every object is unchanged and deleted objects leave the
    /// context. If validation or the store fails, nothing is written and the context is as before.
    ///
    /// - Parameter validating: `false` saves without validating, for a caller that has checked the
    ///   changes itself (a paste, which may be told to keep objects that break rules as they are).
    /// - Returns: what the save wrote, by permanent object IDs (empty when there was nothing to save).
    /// - Throws: `GraftError.validationFailed` listing every failure, or the store's error.
    @discardableResult
    public func save(validating: Bool = true) throws -> SaveChanges {
        guard hasChanges else { return SaveChanges(storeIdentifier: store.identifier) }
        try prepareForSave()  // pending changes processed, will-save observers, `willSave()`
        if validating { try validate() }
        let inserted = insertedObjects
        let updated = updatedObjects
        let deleted = deletedObjects

        // Permanent keys, allocated per inheritance tree.
        var permanent: [ObjectIdentifier: ObjectID] = [:]
        let byRoot = Dictionary(grouping: inserted) { $0.entity.rootIndex }
        for root in byRoot.keys.sorted() {
            let objects = byRoot[root]!
            let keys = try store.allocateKeys(rootEntity: root, count: objects.count)
            guard keys.count == objects.count else {
                throw GraftError(.io, "the store allocated \(keys.count) keys for \(objects.count) new objects")
            }
            for (object, key) in zip(objects, keys) {
                permanent[ObjectIdentifier(object)] = ObjectID(entity: object.entity.index, key: key)
            }
        }
        func ref(_ object: ManagedObject) -> ObjectRef {
            (permanent[ObjectIdentifier(object)] ?? object.objectID).ref
        }
        let snapshot = { (object: ManagedObject) in self.storedSnapshot(of: object, ref: ref) }
        let changes = StoreChanges(
            inserted: inserted.map(snapshot), updated: updated.map(snapshot), deleted: deleted.map { $0.objectID.ref })
        let changedKeys = Dictionary(uniqueKeysWithValues: updated.map { ($0.objectID, Set($0.changedValues().keys)) })
        try store.save(changes)

        // The store has the changes: make the context agree.
        for object in inserted {
            unregister(object)
            object.objectID = permanent[ObjectIdentifier(object)]!
            object.isInsertedFlag = false
            register(object)
        }
        for object in inserted + updated {
            object.committed = object.storage
        }
        for object in pending.values where object.isDeletedFlag {
            unregister(object)
            object.context = nil
        }
        pending.removeAll()
        let saved = SaveChanges(
            storeIdentifier: store.identifier, inserted: inserted.map(\.objectID), updated: updated.map(\.objectID),
            deleted: deleted.map(\.objectID), changedKeys: changedKeys)
        finishSave(saved)  // `didSave()`, did-save observers
        return saved
    }

    /// The object as a snapshot of its current values (transient values left out; to-manys the store has
    /// not loaded stay `.unloaded`). New objects have references with their temporary keys.
    public func snapshot(of object: ManagedObject) throws -> Snapshot {
        try snapshot(of: object) { $0.objectID.ref }
    }

    /// The same, with each object (this one and the related ones) named by `naming`.
    public func snapshot(of object: ManagedObject, naming: (ManagedObject) -> ObjectRef) throws -> Snapshot {
        try fulfill(object)
        return storedSnapshot(of: object, ref: naming)
    }

    private func storedSnapshot(of object: ManagedObject, ref: (ManagedObject) -> ObjectRef) -> Snapshot {
        let storage = object.storage!
        var attributes = storage.attributes
        for (index, attribute) in object.entity.attributes.enumerated() where attribute.isTransient {
            attributes[index] = nil
        }
        let relationships: [RelationshipValue] = storage.relationships.enumerated().map { index, contents in
            if object.entity.relationships[index].isTransient {
                return object.entity.relationships[index].isToMany ? .toMany([]) : .toOne(nil)
            }
            switch contents {
            case .toOne(let target): return .toOne(target.map(ref))
            case .toMany(let list): return .toMany(list.objects.map(ref))
            case .unloaded: return .unloaded
            }
        }
        return Snapshot(ref: ref(object), attributes: attributes, relationships: relationships)
    }

    /// Runs `body` so that it happens whole or not at all: if it throws, every change it made to the
    /// context is reverted (as one undo step when it succeeds).
    ///
    /// For example:
    ///
    /// ```swift
    /// try context.atomically {
    ///     let ann = try context.insert("Employee")
    ///     try ann.setValue(sales, forKey: "department")   // if this throws, Ann is not inserted either
    /// }
    /// ```
    public func atomically<T>(_ body: () throws -> T) rethrows -> T {
        try perform(body)
    }

    /// Discards every pending change: new objects leave the context, edited and deleted objects get their
    /// saved values back. The undo stack is cleared.
    public func rollback() {
        noteRollback()  // for observers, told once the rollback is done
        for object in pending.values {
            if object.isInsertedFlag {
                unregister(object)
                object.isDeletedFlag = true
                object.context = nil
                object.storage = nil
            } else {
                object.isDeletedFlag = false
                object.storage = object.committed
            }
        }
        pending.removeAll()
        removeAllUndoActions()
        processPendingChanges()
    }

    /// Forgets every object: pending changes are discarded and every object the context handed out is
    /// detached from it.
    public func reset() {
        for object in registeredObjects + Array(pending.values) {
            object.storage = nil
            object.committed = nil
            object.context = nil
        }
        pending.removeAll()
        for object in registeredObjects { unregister(object) }
        removeAllUndoActions()
    }

    /// Checks the graph's invariants, for tests: every loaded relationship with an inverse is mirrored
    /// by the inverse (unless a side is deleted), every registered object is registered under its own ID,
    /// and every to-many holds each object once.
    ///
    /// - Throws: `GraftError.invalidOperation` describing the first broken invariant.
    public func checkInvariants() throws {
        for object in registeredObjects where !object.isDeletedFlag {
            guard registeredObject(for: object.objectID) === object else {
                throw GraftError(.invalidOperation, "\(object.label) is registered under another ID")
            }
            guard let storage = object.storage else { continue }
            for (index, relationship) in object.entity.relationships.enumerated() {
                let targets = storage.relationships[index].objects
                if Set(targets.map(ObjectIdentifier.init)).count != targets.count {
                    throw GraftError(.invalidOperation, "\(object.label).\(relationship.name) holds an object twice")
                }
                guard let inverseIndex = relationship.inverseIndex else { continue }
                for target in targets where !target.isDeletedFlag {
                    guard let targetStorage = target.storage else { continue }
                    let inverse = targetStorage.relationships[inverseIndex]
                    if case .unloaded = inverse { continue }
                    if !inverse.objects.contains(where: { $0 === object }) {
                        throw GraftError(
                            .invalidOperation,
                            "\(object.label).\(relationship.name) holds \(target.label), whose '\(target.entity.relationships[inverseIndex].name)' does not hold it back"
                        )
                    }
                }
            }
        }
    }
}
