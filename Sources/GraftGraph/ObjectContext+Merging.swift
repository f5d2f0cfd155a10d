import GraftCore
import GraftModel

/// What a save does with objects that someone else saved since the context read them (Core Data's
/// merge policies, `NSMergePolicyType`).
///
/// A conflict is an object the save changes or deletes whose version in the store is no longer the
/// one the context read (another context or writer saved it, or deleted it). The rules follow
/// `-[NSMergePolicy resolveOptimisticLockingVersionConflicts:error:]`; see the GraftGraph
/// documentation's "Many contexts" article.
public enum MergePolicy: String, Sendable, CaseIterable {
    /// The save fails with a `GraftError.mergeConflict` listing every conflict, and writes nothing
    /// (Core Data's default, `NSErrorMergePolicy`).
    case error
    /// Property by property: every property the store changed takes the store's value, the others keep
    /// this context's changes (`NSMergeByPropertyStoreTrumpMergePolicy`). An object the store no longer
    /// has is deleted here; an object deleted here that the store changed is brought back.
    case mergeByPropertyStoreTrump
    /// Property by property: every property changed here keeps this context's value, the others take
    /// the store's (`NSMergeByPropertyObjectTrumpMergePolicy`). An object the store no longer has is
    /// deleted here.
    case mergeByPropertyObjectTrump
    /// The whole object as it is in this context is written over the store's (`NSOverwriteMergePolicy`);
    /// an object the store no longer has is inserted again under its key.
    case overwrite
    /// This context's changes to the objects in conflict are discarded and the store's values stand
    /// (`NSRollbackMergePolicy`); an object the store no longer has is deleted here.
    case rollback
}

/// One object a save found changed in the store since the context read it (Core Data's
/// `NSMergeConflict`): its versions and every property whose stored and in-memory values differ.
public struct MergeConflict: CustomStringConvertible {
    /// The object in conflict.
    public let object: ManagedObject
    /// The version the context read (`oldVersionNumber`).
    public let readVersion: Int64
    /// The version the store has now (`newVersionNumber`); `nil` when the store no longer has the object.
    public let storedVersion: Int64?
    /// The properties whose stored and in-memory values differ, in the entity's order.
    public let differences: [Difference]

    /// The value of one property, objects named by their IDs.
    public enum PropertyValue: Hashable, Sendable, CustomStringConvertible {
        case attribute(Value?)
        case toOne(ObjectID?)
        case toMany([ObjectID])

        public var description: String {
            switch self {
            case .attribute(let value): return value.map { String(reflecting: $0.anyValue) } ?? "nil"
            case .toOne(let id): return id.map(Self.name) ?? "nil"
            case .toMany(let ids): return "[" + ids.map(Self.name).joined(separator: ", ") + "]"
            }
        }

        private static func name(_ id: ObjectID) -> String { id.isTemporary ? "new #\(id.key)" : "p\(id.key)" }
    }

    /// One property in conflict.
    public struct Difference: Hashable, Sendable {
        public var key: String
        /// The value the context read.
        public var read: PropertyValue
        /// The value the store has now (`nil` when the store no longer has the object).
        public var stored: PropertyValue?
        /// The value in the context.
        public var inMemory: PropertyValue
        /// Whether the context changed it.
        public var changedHere: Bool { inMemory != read }
        /// Whether the store's value changed since it was read.
        public var changedInStore: Bool { stored != read }
    }

    public var description: String { "\(object.label) " + detail }

    /// The versions and the differing properties, without the object's name.
    var detail: String {
        let versions = "read at version \(readVersion), " + (storedVersion.map { "now \($0)" } ?? "since deleted")
        let keys = differences.map { difference in
            var text = "\(difference.key): stored \(difference.stored?.description ?? "(none)"), "
            text += "in memory \(difference.inMemory)"
            let changed = [difference.changedHere ? "here" : nil, difference.changedInStore ? "in the store" : nil]
            return text + " (changed " + changed.compactMap { $0 }.joined(separator: " and ") + ")"
        }
        return "(\(versions))" + (keys.isEmpty ? "" : ": " + keys.joined(separator: "; "))
    }
}

extension ObjectContext {
    // MARK: Merging another context's save

    /// Brings the changes another context saved to the same store into this one (Core Data's
    /// `mergeChanges(fromContextDidSave:)`): objects it updated are refreshed with their changes here
    /// kept (``refresh(_:mergeChanges:)`` with `true`), objects it deleted leave this context (and the
    /// relationships of objects in memory that held them; objects they cascade to only here — new ones,
    /// or ones related to them by a change made here — are deleted), and objects it inserted are found by fetches from now on. Observers hear of it as one
    /// change set: the deleted objects as deleted, the objects that took values from the store as
    /// refreshed, and each key that changed once.
    ///
    /// For example:
    ///
    /// ```swift
    /// let saved = try background.save()
    /// try viewContext.merge(changesFrom: saved)
    /// ```
    ///
    /// - Throws: `GraftError.invalidOperation` when the changes were saved to another store; the
    ///   store's error when an object cannot be read.
    public func merge(changesFrom changes: SaveChanges) throws {
        guard changes.storeIdentifier == store.identifier else {
            throw GraftError(
                .invalidOperation,
                "the changes were saved to store \(changes.storeIdentifier), not to this context's store "
                    + "(\(store.identifier))")
        }
        defer { processPendingChanges() }  // one change set for the whole merge, as Core Data posts it
        var cascaded: [ManagedObject] = []
        try takingStoreValues {
            for id in changes.deleted {
                guard let object = registeredObject(for: id) else { continue }
                cascaded += objectsCascadedHereOnly(from: object)
                forgetDeletedInStore(object)
            }
            for id in changes.updated {
                guard let object = registeredObject(for: id), !object.isDeletedFlag, !object.isInsertedFlag else {
                    continue
                }
                try refresh(object, mergeChanges: true)
            }
        }
        // The other context's delete rules ran over what the store has; objects that the deleted objects
        // cascade to only here go with them, as `delete(_:)` would take them in Core Data. (A deletion made
        // here, so undoable, and outside the store's values above, which are no change of this context.)
        let remaining = ObjectList(cascaded.filter { !$0.isDeletedFlag && $0.context === self })
        if !remaining.isEmpty { try delete(remaining.objects) }
    }

    /// The objects that a cascade rule of `object` reaches here but not in the store: objects new in
    /// this context, or related to it by a change made here (the other context's cascade already took
    /// the ones the store relates to it).
    private func objectsCascadedHereOnly(from object: ManagedObject) -> [ManagedObject] {
        var found = ObjectList()
        for (index, relationship) in object.entity.relationships.enumerated() where relationship.deleteRule == .cascade
        {
            if let storage = object.storage {
                let read = object.committed?.relationships[index].objects ?? []
                for member in storage.relationships[index].objects
                where !member.isDeletedFlag && !read.contains(where: { $0 === member }) {
                    found.insert(member)
                }
            }
            // The other side may hold it while this side is not in memory.
            guard let inverse = relationship.inverseIndex else { continue }
            for candidate in pending.values where !candidate.isDeletedFlag {
                guard let slot = candidate.storage?.relationships[inverse],
                    slot.objects.contains(where: { $0 === object })
                else { continue }
                let heldBefore = candidate.committed?.relationships[inverse].objects.contains { $0 === object } ?? false
                if !heldBefore { found.insert(candidate) }
            }
        }
        return found.objects
    }

    /// An object another writer deleted: it leaves the context, and objects in memory let go of it (as
    /// the store already has).
    private func forgetDeletedInStore(_ object: ManagedObject) {
        // Change observers get it as deleted (unless it was new to them: then it was never there).
        if !object.isDeletedFlag { noteStoreChange(.deleted(object)) }
        if let storage = object.storage {
            for (index, relationship) in object.entity.relationships.enumerated() {
                guard let inverse = relationship.inverseIndex else { continue }
                for target in storage.relationships[index].objects {
                    adoptInverse(of: object, in: target, inverse, added: false)
                }
            }
        }
        pending[ObjectIdentifier(object)] = nil
        unregister(object)
        object.storage = nil
        object.committed = nil
        object.isDeletedFlag = true
        object.context = nil
    }

    // MARK: Store values into objects

    /// Takes the store's values into an object: each property this context has not changed takes the
    /// stored value; one it has changed keeps its value when `keepingChanges` (or when the store did not
    /// change it), else takes the stored one. A to-many changed on both sides gets both sides' additions
    /// and removals (which never contradict each other), in the order of the side that wins. The values read become the stored ones, and the version the store's, so
    /// that the next save counts changes against what the store has now. Objects in memory on the other
    /// side of a relationship that changes follow it.
    func mergeStoredValues(_ snapshot: Snapshot, into object: ManagedObject, keepingChanges: Bool) throws {
        try takingStoreValues { try mergeStoredValuesNoted(snapshot, into: object, keepingChanges: keepingChanges) }
    }

    private func mergeStoredValuesNoted(_ snapshot: Snapshot, into object: ManagedObject, keepingChanges: Bool) throws {
        guard object.storage != nil, object.committed != nil else { return }
        let entity = object.entity
        for (index, attribute) in entity.attributes.enumerated() where !attribute.isTransient {
            let stored = snapshot.attributes[index]
            let read = object.committed!.attributes[index]
            let current = object.storage!.attributes[index]
            let changedHere = current != read
            if (!changedHere || (!keepingChanges && stored != read)) && current != stored {
                noteStoreChange(.attribute(object, index, old: current, new: stored))
                object.storage!.attributes[index] = stored
            }
            object.committed!.attributes[index] = stored
        }
        for (index, relationship) in entity.relationships.enumerated() where !relationship.isTransient {
            let current = object.storage!.relationships[index]
            let read = object.committed!.relationships[index]
            if case .unloaded = current { continue }  // read from the store when first used
            let storedRefs: [ObjectRef]
            if case .unloaded = snapshot.relationships[index] {
                storedRefs = try store.relatedRefs(of: object.objectID.ref, relationship: index)
            } else {
                storedRefs = snapshot.relationships[index].refs
            }
            let stored = storedRefs.map { self.object(for: $0) }
            let storedSlot: RelationshipStorage =
                relationship.isToMany ? .toMany(ObjectList(stored)) : .toOne(stored.first)
            let ordered = relationship.isOrdered
            let changedHere = !ManagedObject.sameContents(current, read, ordered: ordered)
            let changedInStore = !ManagedObject.sameContents(storedSlot, read, ordered: ordered)
            var result = current.objects
            if !changedHere {
                result = stored
            } else if changedInStore && relationship.isToMany {
                // Both sides' additions and removals (for members they never contradict each other), in
                // the order of the side that wins.
                func has(_ list: [ManagedObject], _ member: ManagedObject) -> Bool { list.contains { $0 === member } }
                let addedHere = current.objects.filter { !has(read.objects, $0) }
                let removedHere = read.objects.filter { !has(current.objects, $0) }
                if keepingChanges {
                    result = current.objects.filter { has(stored, $0) || !has(read.objects, $0) }
                    let addedInStore = stored.filter { !has(read.objects, $0) && !has(result, $0) }
                    result += addedInStore
                } else {
                    result = stored.filter { !has(removedHere, $0) }
                    result += addedHere.filter { !has(result, $0) }
                }
            } else if changedInStore && !keepingChanges {
                result = stored
            }
            if let inverse = relationship.inverseIndex {
                for member in current.objects where !result.contains(where: { $0 === member }) {
                    adoptInverse(of: object, in: member, inverse, added: false)
                }
                for member in result where !current.objects.contains(where: { $0 === member }) {
                    adoptInverse(of: object, in: member, inverse, added: true)
                }
            }
            let merged: RelationshipStorage =
                relationship.isToMany ? .toMany(ObjectList(result)) : .toOne(result.first)
            noteStoreChange(object, index, from: object.storage!.relationships[index], to: merged)
            object.storage!.relationships[index] = merged
            object.committed!.relationships[index] = storedSlot
        }
        object.version = snapshot.version
        if object.hasPersistentChanges {
            touch(object)
        } else {
            pending[ObjectIdentifier(object)] = nil
        }
    }

    /// Adds `object` to (or removes it from) `target`'s side `inverse` of a relationship, in its current
    /// and its read values alike: the store changed it, not this context. Nothing is recorded for undo,
    /// and a side that is not in memory is left to be read.
    private func adoptInverse(of object: ManagedObject, in target: ManagedObject, _ inverse: Int, added: Bool) {
        guard target.storage != nil else { return }
        func adjust(_ slot: RelationshipStorage, unchanged: Bool) -> RelationshipStorage {
            switch slot {
            case .unloaded:
                return slot
            case .toMany(var list):
                if added {
                    if !list.contains(object) { _ = list.insert(object) }
                } else {
                    _ = list.remove(object, keepingOrder: true)
                }
                return .toMany(list)
            case .toOne(let current):
                if added { return unchanged ? .toOne(object) : slot }
                return current === object ? .toOne(nil) : slot
            }
        }
        let unchanged =
            target.committed.map {
                ManagedObject.sameContents(
                    target.storage!.relationships[inverse], $0.relationships[inverse],
                    ordered: target.entity.relationships[inverse].isOrdered)
            } ?? false
        let adjusted = adjust(target.storage!.relationships[inverse], unchanged: unchanged)
        noteStoreChange(target, inverse, from: target.storage!.relationships[inverse], to: adjusted)
        target.storage!.relationships[inverse] = adjusted
        if target.committed != nil {
            target.committed!.relationships[inverse] = adjust(target.committed!.relationships[inverse], unchanged: true)
        }
    }

    // MARK: Conflicts

    /// The conflicts a store reported, with each object's read, stored and in-memory values.
    func mergeConflicts(for conflicts: StoreVersionConflicts) throws -> [MergeConflict] {
        let saving = Dictionary(pending.values.map { ($0.objectID.ref, $0) }, uniquingKeysWith: { first, _ in first })
        return try conflicts.conflicts.compactMap { conflict in
            guard let object = saving[conflict.ref], let read = object.committed, let current = object.storage
            else { return nil }
            let stored = conflict.stored == nil ? nil : try store.snapshot(for: conflict.ref)
            var differences: [MergeConflict.Difference] = []
            for (index, attribute) in object.entity.attributes.enumerated() where !attribute.isTransient {
                let difference = MergeConflict.Difference(
                    key: attribute.name, read: .attribute(read.attributes[index]),
                    stored: stored.map { .attribute($0.attributes[index]) },
                    inMemory: .attribute(current.attributes[index]))
                if difference.stored != difference.inMemory { differences.append(difference) }
            }
            for (index, relationship) in object.entity.relationships.enumerated() where !relationship.isTransient {
                if case .unloaded = current.relationships[index] { continue }
                func value(_ refs: [ObjectRef]) -> MergeConflict.PropertyValue {
                    let ids = refs.map { ObjectID(entity: $0.entity, key: $0.key) }
                    return relationship.isToMany ? .toMany(ids.sorted()) : .toOne(ids.first)
                }
                func value(_ slot: RelationshipStorage) -> MergeConflict.PropertyValue {
                    let ids = slot.objects.map(\.objectID)
                    return relationship.isToMany
                        ? .toMany(relationship.isOrdered ? ids : ids.sorted()) : .toOne(ids.first)
                }
                var storedValue: MergeConflict.PropertyValue?
                if let stored {
                    var refs = stored.relationships[index].refs
                    if case .unloaded = stored.relationships[index] {
                        refs = try store.relatedRefs(of: conflict.ref, relationship: index)
                    }
                    storedValue =
                        relationship.isOrdered
                        ? .toMany(refs.map { ObjectID(entity: $0.entity, key: $0.key) }) : value(refs)
                }
                let difference = MergeConflict.Difference(
                    key: relationship.name, read: value(read.relationships[index]), stored: storedValue,
                    inMemory: value(current.relationships[index]))
                if difference.stored != difference.inMemory { differences.append(difference) }
            }
            return MergeConflict(
                object: object, readVersion: conflict.expected, storedVersion: conflict.stored,
                differences: differences)
        }
    }

    /// The error for conflicts the error policy does not resolve: one entry per object.
    func mergeConflictError(_ conflicts: [MergeConflict]) -> GraftError {
        GraftError(
            .mergeConflict,
            "\(Wording.counted(conflicts.count, "object")) changed in the store since this context read "
                + "\(conflicts.count == 1 ? "it" : "them"); nothing was written (choose a merge policy, or "
                + "refresh the objects and save again)",
            underlying: conflicts.map { conflict in
                GraftError(
                    .mergeConflict,
                    (conflict.storedVersion == nil ? "deleted" : "changed") + " in the store since it was read "
                        + conflict.detail,
                    context: [.object(conflict.object.label)])
            })
    }

    /// Applies the merge policy to each conflict, so that saving again succeeds.
    func resolve(_ conflicts: [MergeConflict]) throws {
        for conflict in conflicts {
            let object = conflict.object
            guard let storedVersion = conflict.storedVersion else {
                try resolveDeletedInStore(object)
                continue
            }
            switch mergePolicy {
            case .error:
                throw mergeConflictError(conflicts)
            case .overwrite:
                if let snapshot = try store.snapshot(for: object.objectID.ref) {
                    try claimInverses(of: object, over: snapshot)
                }
                object.version = storedVersion
            case .mergeByPropertyObjectTrump where object.isDeletedFlag:
                object.version = storedVersion  // the deletion here stands
            case .mergeByPropertyStoreTrump, .mergeByPropertyObjectTrump, .rollback:
                guard let snapshot = try store.snapshot(for: object.objectID.ref) else {
                    try resolveDeletedInStore(object)
                    continue
                }
                if object.isDeletedFlag {
                    restoreDeleted(object)
                } else if mergePolicy == .rollback {
                    try discardChanges(of: object)
                }
                // Rolled back (or restored), the object has no changes left: it takes every stored value.
                try mergeStoredValues(
                    snapshot, into: object, keepingChanges: mergePolicy == .mergeByPropertyObjectTrump)
            }
        }
    }

    /// For an object this context writes over the store's: the objects on the other side of each
    /// relationship whose stored value differs from the one in memory are changed to agree with the
    /// object as it is here (read from the store first, so that they are changed as they are there), and
    /// are saved with it: the store's two sides never disagree.
    private func claimInverses(of object: ManagedObject, over snapshot: Snapshot) throws {
        guard !object.isDeletedFlag, let current = object.storage else { return }
        for (index, relationship) in object.entity.relationships.enumerated() where !relationship.isTransient {
            guard let inverse = relationship.inverseIndex else { continue }
            if case .unloaded = current.relationships[index] { continue }
            var storedRefs = snapshot.relationships[index].refs
            if case .unloaded = snapshot.relationships[index] {
                storedRefs = try store.relatedRefs(of: object.objectID.ref, relationship: index)
            }
            let stored = storedRefs.map { self.object(for: $0) }
            let mine = current.relationships[index].objects
            let leaving = stored.filter { target in !mine.contains { $0 === target } }
            let joining = mine.filter { target in !stored.contains { $0 === target } }
            try perform {
                for target in leaving + joining where !target.isDeletedFlag {
                    // A copy read before the other writer's save is read again.
                    // Its observers hear of the values read with the change made here, folded into one.
                    if target.storage != nil && !target.hasPersistentChanges {
                        try noteStoreValuesBeforeFaulting(target)
                        fault(target)
                    }
                    let joins = joining.contains { $0 === target }
                    if target.entity.relationships[inverse].isToMany {
                        try loadToMany(target, inverse)
                        if joins {
                            primitiveInsert(target, inverse, object)
                        } else {
                            primitiveRemove(target, inverse, object)
                        }
                    } else {
                        try fulfill(target)
                        guard case .toOne(let partner) = target.storage!.relationships[inverse] else { continue }
                        if joins {
                            primitiveSetToOne(target, inverse, object)
                        } else if partner === object {
                            primitiveSetToOne(target, inverse, nil)
                        }
                    }
                }
            }
        }
    }

    /// An object of the save that another writer deleted from the store.
    private func resolveDeletedInStore(_ object: ManagedObject) throws {
        object.isGoneFromStore = true
        object.version = nil
        if mergePolicy == .overwrite {
            // Written again, whole, under its key.
            if !object.isDeletedFlag { object.isInsertedFlag = true }
            return
        }
        if !object.isDeletedFlag { try delete(object) }
    }

    /// Takes back this context's deletion of an object (the store's version of it stands): the object
    /// gets its read values back, and the objects in memory that let go of it when it was deleted hold it
    /// again. (Objects its deletion cascaded to stay deleted.)
    private func restoreDeleted(_ object: ManagedObject) {
        takingStoreValues {
            noteStoreChange(.inserted(object))  // back in the graph, for change observers
            object.isDeletedFlag = false
            register(object)
            guard let read = object.committed else { return }
            if let current = object.storage {
                for index in object.entity.attributes.indices where current.attributes[index] != read.attributes[index]
                {
                    noteStoreChange(
                        .attribute(object, index, old: current.attributes[index], new: read.attributes[index]))
                }
                for index in object.entity.relationships.indices {
                    noteStoreChange(object, index, from: current.relationships[index], to: read.relationships[index])
                }
            }
            object.storage = read
            for (index, relationship) in object.entity.relationships.enumerated() {
                guard let inverse = relationship.inverseIndex else { continue }
                for target in read.relationships[index].objects where !target.isDeletedFlag {
                    guard target.storage != nil else { continue }
                    let before = target.storage!.relationships[inverse]
                    switch before {
                    case .toMany(var list):
                        if !list.contains(object) { _ = list.insert(object) }
                        target.storage!.relationships[inverse] = .toMany(list)
                    case .toOne(nil):
                        target.storage!.relationships[inverse] = .toOne(object)
                    default:
                        break
                    }
                    noteStoreChange(target, inverse, from: before, to: target.storage!.relationships[inverse])
                    if !target.hasPersistentChanges { pending[ObjectIdentifier(target)] = nil }
                }
            }
        }
    }
}
