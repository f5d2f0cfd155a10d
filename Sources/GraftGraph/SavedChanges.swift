/// What one save wrote, as did-save observers receive it (Core Data's did-save notification): the
/// objects inserted, updated and deleted, by their IDs after the save (new objects' permanent IDs), the
/// keys each updated object changed, and the snapshots written.
///
/// For example:
///
/// ```swift
/// let token = context.observeDidSave { saved in
///     print(saved.inserted.count, "inserted;", saved.changedKeys)
/// }
/// ```
public struct SavedChanges: Sendable {
    /// The store saved to (its UUID).
    public var storeIdentifier: String
    public var inserted: [ObjectID]
    public var updated: [ObjectID]
    public var deleted: [ObjectID]
    /// The keys each updated object changed (filled only while someone observes saves).
    public var changedKeys: [ObjectID: [String]]
    /// The snapshots the store was given.
    public var storeChanges: StoreChanges

    public init(
        storeIdentifier: String, inserted: [ObjectID], updated: [ObjectID], deleted: [ObjectID],
        changedKeys: [ObjectID: [String]], storeChanges: StoreChanges
    ) {
        self.storeIdentifier = storeIdentifier
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.changedKeys = changedKeys
        self.storeChanges = storeChanges
    }
}
