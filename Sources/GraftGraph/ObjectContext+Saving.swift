import GraftCore
import GraftModel

extension ObjectContext {
    /// Validates the pending changes and writes them to the store in one step.
    ///
    /// New objects get permanent IDs; afterwards every object is unchanged and deleted objects leave the
    /// context. If validation or the store fails, nothing is written and the context is as before.
    ///
    /// The save expects the store still to hold each changed or deleted object as this context read it
    /// (optimistic locking). When another context or writer has saved one of them since, the
    /// ``mergePolicy`` decides: by default the save fails with a `GraftError.mergeConflict` listing each
    /// object, its differing keys and their stored and in-memory values; the other policies change the
    /// objects in conflict (as ``MergePolicy`` describes) and save again. (Should that save fail too, the
    /// changes the policy made to the objects in conflict stay.)
    ///
    /// For example:
    ///
    /// ```swift
    /// let saved = try context.save()
    /// try otherContext.merge(changesFrom: saved)
    /// ```
    ///
    /// - Parameter validating: `false` saves without validating, for a caller that has checked the
    ///   changes itself (a paste, which may be told to keep objects that break rules as they are).
    /// - Returns: what the save wrote, by permanent object IDs (empty when there was nothing to save).
    /// - Throws: `GraftError.validationFailed` listing every failure, `GraftError.mergeConflict`, or the
    ///   store's error.
    @discardableResult
    public func save(validating: Bool = true) throws -> SaveChanges {
        guard hasChanges else { return SaveChanges(storeIdentifier: store.identifier) }
        try prepareForSave()  // pending changes processed, will-save observers, `willSave()`
        if validating { try validate() }
        let saved = try writeChanges(validating: validating)
        finishSave(saved)  // `didSave()`, did-save observers
        return saved
    }

    /// Writes the pending changes, resolving optimistic-locking conflicts by the merge policy and trying
    /// again (a bounded number of times: each try follows a newer save by someone else).
    private func writeChanges(validating: Bool) throws -> SaveChanges {
        var permanent: [ObjectIdentifier: ObjectID] = [:]
        var attempts = 0
        while true {
            do {
                return try writeChangesOnce(permanent: &permanent)
            } catch let conflicts as StoreVersionConflicts {
                attempts += 1
                // New objects whose keys another writer took get new ones.
                let taken = Set(conflicts.takenKeys)
                permanent = permanent.filter { !taken.contains($0.value.ref) }
                if conflicts.conflicts.isEmpty {
                    guard attempts < 16 else {
                        throw GraftError(
                            .busy, "other writers kept taking the keys of this save's new objects; nothing was written")
                    }
                    continue
                }
                let records = try mergeConflicts(for: conflicts)
                guard mergePolicy != .error, attempts < 16 else { throw mergeConflictError(records) }
                try resolve(records)
                guard hasChanges else { return SaveChanges(storeIdentifier: store.identifier) }
                if validating { try validate() }
            }
        }
    }

    private func writeChangesOnce(permanent: inout [ObjectIdentifier: ObjectID]) throws -> SaveChanges {
        let inserted = insertedObjects
        let updated = updatedObjects
        let deleted = deletedObjects

        // Permanent keys, allocated per inheritance tree (once: a save tried again keeps them).
        // (An object inserted again by the overwrite policy, after another writer deleted it, keeps its key.)
        let byRoot = Dictionary(
            grouping: inserted.filter { $0.objectID.isTemporary && permanent[ObjectIdentifier($0)] == nil }
        ) {
            $0.entity.rootIndex
        }
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
        let permanentIDs = permanent
        func ref(_ object: ManagedObject) -> ObjectRef {
            (permanentIDs[ObjectIdentifier(object)] ?? object.objectID).ref
        }
        let snapshot = { (object: ManagedObject) in self.storedSnapshot(of: object, ref: ref) }
        // Objects another writer deleted that a merge policy then deleted here are gone already.
        let stored = deleted.filter { !$0.isGoneFromStore }
        var expected: [ObjectRef: Int64] = [:]
        for object in updated + stored {
            if let version = object.version { expected[object.objectID.ref] = version }
        }
        let changes = StoreChanges(
            inserted: inserted.map(snapshot), updated: updated.map(snapshot), deleted: stored.map(\.objectID.ref),
            expectedVersions: expected)
        let changedKeys = Dictionary(
            uniqueKeysWithValues: updated.map { ($0.objectID, Set($0.changedValues().keys)) })
        try store.save(changes)

        // The store has the changes: make the context agree.
        for object in inserted {
            unregister(object)
            object.objectID = permanent[ObjectIdentifier(object)] ?? object.objectID
            object.isInsertedFlag = false
            object.isGoneFromStore = false
            object.version = 1
            register(object)
        }
        for object in updated {
            object.version = object.version.map { $0 + 1 }
            object.isGoneFromStore = false
        }
        for object in inserted + updated {
            object.committed = object.storage
        }
        for object in pending.values where object.isDeletedFlag {
            unregister(object)
            object.context = nil
            object.isGoneFromStore = true
            object.version = nil
        }
        pending.removeAll()
        return SaveChanges(
            storeIdentifier: store.identifier, inserted: inserted.map(\.objectID), updated: updated.map(\.objectID),
            deleted: deleted.map(\.objectID), changedKeys: changedKeys)
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
    /// detached from it. Change observers are told at once, with ``ContextChanges/invalidatedAll`` (Core
    /// Data's `NSInvalidatedAllObjectsKey`) and nothing else: changes not yet processed are not reported,
    /// and key observations end, as their objects left.
    public func reset() {
        defer {
            observation.invalidateAll()
            var changes = ContextChanges()
            changes.invalidatedAll = true
            for observer in observation.changeObservers { observer.handler(changes) }
        }
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
