/// What one save wrote to its store: the objects it inserted, updated and deleted, named by their
/// permanent IDs, and the keys each updated object changed. (Core Data carries the same in the
/// user info of `NSManagedObjectContextDidSaveNotification`: `inserted`, `updated`, `deleted`.)
///
/// ``ObjectContext/save(validating:)`` returns it, did-save observers receive it, and another context
/// on the same store takes it in ``ObjectContext/merge(changesFrom:)`` to see the saved changes.
///
/// For example:
///
/// ```swift
/// let saved = try editor.save()
/// try viewer.merge(changesFrom: saved)   // viewer's objects now show the editor's changes
/// ```
public struct SaveChanges: Hashable, Sendable {
    /// The store the changes were saved to (its ``PersistentStore/identifier``).
    public var storeIdentifier: String
    /// New objects, by the permanent IDs the save gave them.
    public var inserted: [ObjectID]
    /// Objects whose stored values the save changed.
    public var updated: [ObjectID]
    /// Objects the save removed from the store.
    public var deleted: [ObjectID]
    /// For each updated object, the names of the attributes and relationships whose values changed.
    public var changedKeys: [ObjectID: Set<String>]

    public init(
        storeIdentifier: String, inserted: [ObjectID] = [], updated: [ObjectID] = [], deleted: [ObjectID] = [],
        changedKeys: [ObjectID: Set<String>] = [:]
    ) {
        self.storeIdentifier = storeIdentifier
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.changedKeys = changedKeys
    }

    /// Whether the save changed nothing (a save without pending changes).
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}
