import Foundation
import GraftCore
import GraftModel

/// A store that keeps its objects in memory: the deterministic test double for every other store, the
/// default store of a context built from a model alone, and the working copy of whole-document stores
/// (XML and binary), which read a document into it and write the whole document back on every save
/// through `persist`.
///
/// For example:
///
/// ```swift
/// let store = InMemoryStore(model: model)
/// let context = ObjectContext(store: store)
/// ```
public final class InMemoryStore: PersistentStore, StoreReader {
    public let model: Model
    public let identifier: String
    /// The metadata a document written from this store carries.
    public var metadata: StoreMetadata
    private var objects: [ObjectRef: Snapshot] = [:]
    /// The last key used per root entity.
    private var lastKeys: [Int: Int64] = [:]
    /// When set, the next save fails with this error (for testing failure paths).
    public var failNextSave: GraftError?

    public init(model: Model, identifier: String = UUID().uuidString) {
        self.model = model
        self.identifier = identifier
        self.metadata = StoreMetadata.make(for: model, storeType: .inMemory, identifier: identifier)
    }

    /// Writes the whole document after each save; when it throws, the save fails and the store keeps its
    /// previous contents.
    public var persist: ((_ snapshots: [Snapshot], _ metadata: StoreMetadata) throws -> Void)?

    /// A store holding every object of a document, read through `reader`.
    ///
    /// - Parameter persist: writes the whole document back after each save (see `persist`).
    public convenience init(
        reading reader: any StoreReader,
        persist: ((_ snapshots: [Snapshot], _ metadata: StoreMetadata) throws -> Void)? = nil
    ) throws {
        self.init(model: reader.model, identifier: reader.metadata.identifier)
        metadata = reader.metadata
        try reader.forEachSnapshot { try add($0) }
        warnings = reader.warnings
        self.persist = persist
    }

    /// A store holding every object of a document, read through `reader`, whose saves fail: a document
    /// opened for reading, as a SQLite store opened for reading is.
    public static func readOnly(_ reader: any StoreReader, at url: URL) throws -> InMemoryStore {
        let store = try InMemoryStore(reading: reader)
        store.persist = { _, _ in
            throw GraftError(
                .invalidOperation, "the store was opened for reading; it cannot be saved",
                context: [.file(url.relativePath)])
        }
        return store
    }

    /// What the reader the store was read through had to say (see ``StoreReader/warnings``).
    public private(set) var warnings: [String] = []

    /// A store holding the given snapshots.
    ///
    /// - Throws: `GraftError.malformedInput` for snapshots whose shape does not fit their entity.
    public convenience init(model: Model, identifier: String = UUID().uuidString, snapshots: [Snapshot]) throws {
        self.init(model: model, identifier: identifier)
        for snapshot in snapshots { try add(snapshot) }
    }

    /// Adds (or replaces) one object.
    public func add(_ snapshot: Snapshot) throws {
        guard model.descriptions.indices.contains(snapshot.ref.entity) else {
            throw GraftError(
                .malformedInput, "snapshot names entity #\(snapshot.ref.entity), which the model does not have")
        }
        let entity = model.descriptions[snapshot.ref.entity]
        guard snapshot.attributes.count == entity.attributes.count,
            snapshot.relationships.count == entity.relationships.count
        else {
            throw GraftError(
                .malformedInput, "snapshot does not fit entity \(entity.name)", context: [.entity(entity.name)])
        }
        var snapshot = snapshot
        // Versions count saves from 1 (Core Data's Z_OPT does the same), for optimistic locking.
        snapshot.version = max(snapshot.version ?? 1, 1)
        objects[snapshot.ref] = snapshot
        lastKeys[entity.rootIndex] = max(lastKeys[entity.rootIndex] ?? 0, snapshot.ref.key)
    }

    /// How many objects the store holds.
    public var count: Int { objects.count }

    /// Every snapshot, in reference order.
    public var allSnapshots: [Snapshot] { objects.keys.sorted().map { objects[$0]! } }

    public func snapshot(for ref: ObjectRef) throws -> Snapshot? { objects[ref] }

    public func relatedRefs(of ref: ObjectRef, relationship: Int) throws -> [ObjectRef] {
        objects[ref]?.relationships[relationship].refs ?? []
    }

    public func fetch(_ request: StoreFetch) throws -> StoreFetchResult {
        let wanted = Set(request.entities)
        let refs = objects.keys.filter { wanted.contains($0.entity) }.sorted()
        return StoreFetchResult(
            refs: refs, snapshots: refs.map { objects[$0]! }, predicateApplied: false, sortedAndLimited: false)
    }

    /// For a document with one key sequence shared by every inheritance tree (a binary store): each
    /// root entity's offset into it (0 where none is recorded). New keys then continue the document's
    /// sequence, so that no two objects share a key in it; otherwise each tree counts on from its own
    /// highest key.
    public var sharedKeyOffsets: [Int: Int64]?

    public func allocateKeys(rootEntity: Int, count: Int) throws -> [Int64] {
        var last = lastKeys[rootEntity] ?? 0
        if let offsets = sharedKeyOffsets {
            // The highest key in the document, and the local key just below the next one for this tree.
            var highest: Int64 = 0
            for (root, key) in lastKeys {
                let (document, overflow) = key.addingReportingOverflow(offsets[root] ?? 0)
                highest = overflow ? .max : max(highest, document)
            }
            last = max(last, highest - (offsets[rootEntity] ?? 0))
        }
        let keys = try KeyAllocation.keys(
            after: last, count: count, entity: model.descriptions[rootEntity].name,
            recorded: "its highest key is \(last)")
        if let end = keys.last { lastKeys[rootEntity] = end }
        return keys
    }

    public func save(_ changes: StoreChanges) throws {
        if let error = failNextSave {
            failNextSave = nil
            throw error
        }
        if let expected = changes.expectedVersions {
            // A document another writer saved since it was read: its objects are the store's now, and the
            // version of each one that writer changed has moved on. (A save that checks no versions fails
            // instead, as the document's guard finds it changed.)
            if let reload = documentReload, let current = try reload() { adopt(current) }
            var failure = StoreVersionConflicts.check(expected, stored: { objects[$0]?.version })
            // Keys another writer has used meanwhile for its own new objects.
            let taken = changes.inserted.map(\.ref).filter { objects[$0] != nil }
            if failure != nil || !taken.isEmpty {
                if failure == nil { failure = StoreVersionConflicts([]) }
                failure!.takenKeys = taken
                throw failure!
            }
        }
        var next = objects
        for ref in changes.deleted { next[ref] = nil }
        for var snapshot in changes.inserted + changes.updated {
            // A to-many the context never loaded keeps the store's contents.
            if let existing = next[snapshot.ref] {
                for (index, value) in snapshot.relationships.enumerated() where value == .unloaded {
                    snapshot.relationships[index] = existing.relationships[index]
                }
            }
            snapshot.version = (next[snapshot.ref]?.version ?? 0) + 1
            next[snapshot.ref] = snapshot
        }
        if let persist {
            try persist(next.keys.sorted().map { next[$0]! }, metadata)
        }
        objects = next
    }

    /// For a document store (XML, binary): called first by every save; returns the document's objects
    /// when another writer has saved the document since this store read (or last saved) it, and `nil`
    /// when it has not. The store then takes them as its contents, so that the save keeps the other
    /// writer's work and its version check sees which objects that writer changed.
    public var documentReload: (() throws -> [Snapshot]?)?

    /// Takes a document's objects as the store's contents: an object whose values differ from the ones
    /// held gets the next version, one that is new gets version 1.
    private func adopt(_ snapshots: [Snapshot]) {
        var next: [ObjectRef: Snapshot] = [:]
        for var snapshot in snapshots {
            if let held = objects[snapshot.ref] {
                snapshot.version = (held.version ?? 1) + (held == snapshot ? 0 : 1)
            } else {
                snapshot.version = 1
            }
            next[snapshot.ref] = snapshot
            let root = model.descriptions[snapshot.ref.entity].rootIndex
            lastKeys[root] = max(lastKeys[root] ?? 0, snapshot.ref.key)
        }
        objects = next
    }

    public var objectCount: Int? { objects.count }

    public var keyOffsets: [Int: Int64] { DocumentKeys.offsets(for: objects.keys, model: model) }

    public func forEachSnapshot(_ body: (Snapshot) throws -> Void) throws {
        for ref in objects.keys.sorted() { try body(objects[ref]!) }
    }
}
