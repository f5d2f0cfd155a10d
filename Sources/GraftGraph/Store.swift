import GraftCore
import GraftModel

/// A store that a context reads objects from and saves changes to.
///
/// Each store format (SQLite, XML, binary, and `InMemoryStore` for tests) implements it. A store hands
/// out snapshots; the context turns them into managed objects and hands back the changes to save.
public protocol PersistentStore: AnyObject {
    /// The model the store's objects follow.
    var model: Model { get }
    /// The store's UUID, as written in its metadata (`NSStoreUUID`); part of every object URI.
    var identifier: String { get }

    /// The snapshot of one object, or `nil` when the store has no such object.
    func snapshot(for ref: ObjectRef) throws -> Snapshot?

    /// The objects a to-many relationship holds, for stores whose snapshots leave to-manys `.unloaded`.
    func relatedRefs(of ref: ObjectRef, relationship: Int) throws -> [ObjectRef]

    /// Candidates for a fetch: the store may apply the predicate, the sort and the limit (and says so in
    /// the result), or return a superset that the context narrows in memory.
    func fetch(_ request: StoreFetch) throws -> StoreFetchResult

    /// Reserves `count` new primary keys in the key sequence of `rootEntity`'s inheritance tree.
    func allocateKeys(rootEntity: Int, count: Int) throws -> [Int64]

    /// Applies a context's changes all at once: every change is written, or none is.
    ///
    /// A store that keeps versions (see `Snapshot.version`) first checks, as part of the same all-or-
    /// nothing step, that every object in `changes.expectedVersions` still has that version, and throws
    /// ``StoreVersionConflicts`` listing every object that does not, writing nothing. A saved object's
    /// version then counts the save: 1 for a new object, one more for an updated one.
    func save(_ changes: StoreChanges) throws

    /// Things worth telling the user that did not stop the store from opening or a value from being read
    /// (how its model was found, values read as no value under `ValueReading.lenient`, …).
    var warnings: [String] { get }

    /// The snapshots of several objects, in the order asked, leaving out those the store does not have
    /// (a batch of faults filled at once).
    func snapshots(for refs: [ObjectRef]) throws -> [Snapshot]

    /// How many objects match a fetch's entities and predicate, leaving out the objects `excluding`
    /// names (the context judges those itself); `nil` when the store cannot count without handing the
    /// objects out (a predicate it does not apply whole). The request's sort and limit are ignored.
    func count(_ request: StoreFetch, excluding: [ObjectRef]) throws -> Int?
}

extension PersistentStore {
    public var warnings: [String] { [] }

    /// Stores count by fetching, by default.
    public func count(_ request: StoreFetch, excluding: [ObjectRef]) throws -> Int? { nil }

    /// One snapshot at a time, by default.
    public func snapshots(for refs: [ObjectRef]) throws -> [Snapshot] {
        try refs.compactMap { try snapshot(for: $0) }
    }
}

/// What a context asks a store for when it fetches.
public struct StoreFetch: Sendable {
    /// The entities whose objects are wanted (an entity and, usually, its subentities).
    public var entities: [Int]
    public var predicate: GraftPredicate?
    public var sortDescriptors: [GraftSortDescriptor]
    /// At most this many results, when the store applies predicate and sort itself.
    public var limit: Int?
    /// Whether the result should carry the objects' snapshots; when false, a store that applies the
    /// whole predicate itself may return only references (the context makes faults of them).
    public var includesValues: Bool
    /// Whether the objects may come in any order when no sort descriptors are given (by default they come
    /// in key order), so that a store need not sort them: for a caller that looks for objects by values
    /// that at most one object has.
    public var inAnyOrder = false

    public init(
        entities: [Int], predicate: GraftPredicate? = nil, sortDescriptors: [GraftSortDescriptor] = [],
        limit: Int? = nil, includesValues: Bool = true
    ) {
        self.entities = entities
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.limit = limit
        self.includesValues = includesValues
    }
}

/// A store's answer to a fetch.
public struct StoreFetchResult: Sendable {
    /// The matching objects' snapshots, or only their references when `snapshots` is empty.
    public var refs: [ObjectRef]
    /// Snapshots for some or all of `refs`, so the context need not ask for them one by one.
    public var snapshots: [Snapshot]
    /// Whether `refs` already satisfies the predicate (else the context evaluates it).
    public var predicateApplied: Bool
    /// Whether `refs` is already in the requested order and within the limit.
    public var sortedAndLimited: Bool

    public init(refs: [ObjectRef], snapshots: [Snapshot] = [], predicateApplied: Bool, sortedAndLimited: Bool) {
        self.refs = refs
        self.snapshots = snapshots
        self.predicateApplied = predicateApplied
        self.sortedAndLimited = sortedAndLimited
    }
}

/// Everything one save changes.
public struct StoreChanges: Sendable {
    public var inserted: [Snapshot]
    /// Full snapshots of changed objects.
    public var updated: [Snapshot]
    public var deleted: [ObjectRef]
    /// For optimistic locking: the version (see `Snapshot.version`) each updated or deleted object had
    /// when it was read. A store that keeps versions refuses the save when one has changed; objects not
    /// listed are not checked. `nil` for a save that checks no versions at all: a whole-document store
    /// then refuses it if the document changed since it was read, where a save that checks versions
    /// takes the other writer's work in and conflicts only over the objects both changed.
    public var expectedVersions: [ObjectRef: Int64]?
    /// The updated objects as the saver read them, where it kept them, by position in `updated` (nil, or
    /// past the end, where it did not): a store may then write only the values that differ from these.
    /// Every value of an updated object without one is written.
    public var updatedFrom: [Snapshot?]
    /// By position in `updated`, the indices of the attributes whose values differ from those of the
    /// object in `updatedFrom`, where the saver knows them (nil, or past the end, where it does not): a
    /// store may then write those attributes without comparing values. To-ones are compared all the same.
    public var changedAttributes: [[Int]?]

    public init(
        inserted: [Snapshot] = [], updated: [Snapshot] = [], deleted: [ObjectRef] = [],
        expectedVersions: [ObjectRef: Int64]? = nil, updatedFrom: [Snapshot?] = [], changedAttributes: [[Int]?] = []
    ) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.expectedVersions = expectedVersions
        self.updatedFrom = updatedFrom
        self.changedAttributes = changedAttributes
    }

    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}

/// What a store throws from `save` when objects changed in the store since they were read: the
/// optimistic-locking check failed and nothing was written. ``ObjectContext`` resolves it by its
/// ``ObjectContext/mergePolicy`` or reports it as a `GraftError.mergeConflict`.
public struct StoreVersionConflicts: Error, Sendable, Hashable {
    /// One object whose stored version is not the one it was read at.
    public struct Conflict: Hashable, Sendable {
        public var ref: ObjectRef
        /// The version the object had when it was read.
        public var expected: Int64
        /// The version the store has now; `nil` when the store no longer has the object.
        public var stored: Int64?

        public init(ref: ObjectRef, expected: Int64, stored: Int64?) {
            self.ref = ref
            self.expected = expected
            self.stored = stored
        }
    }

    public var conflicts: [Conflict]
    /// Keys the save gave new objects that another writer has used meanwhile for its own (a whole-
    /// document store, whose keys are handed out in memory): the context gives those objects new keys and
    /// saves again.
    public var takenKeys: [ObjectRef]

    public init(_ conflicts: [Conflict], takenKeys: [ObjectRef] = []) {
        self.conflicts = conflicts
        self.takenKeys = takenKeys
    }

    /// The conflicts among `expected` given each object's version in the store now (`nil`: gone), in
    /// reference order: what a store's save checks first.
    public static func check(
        _ expected: [ObjectRef: Int64], stored: (ObjectRef) throws -> Int64?
    ) rethrows -> StoreVersionConflicts? {
        var conflicts: [Conflict] = []
        for ref in expected.keys.sorted() {
            let now = try stored(ref)
            if now != expected[ref] { conflicts.append(Conflict(ref: ref, expected: expected[ref]!, stored: now)) }
        }
        return conflicts.isEmpty ? nil : StoreVersionConflicts(conflicts)
    }
}

/// Reads a whole document as a stream of snapshots (used by conversion, which builds no context).
///
/// Every `ObjectRef` in the snapshots names the referenced object's exact entity (not the relationship's
/// declared destination when the object belongs to a subentity), and keys are unique within each
/// inheritance tree, so writers can place references without seeing the referenced object first.
public protocol StoreReader {
    var model: Model { get }
    /// The store's UUID and metadata dictionary.
    var metadata: StoreMetadata { get }
    /// How many objects the document holds, when the reader knows it cheaply (for progress).
    var objectCount: Int? { get }
    /// Offsets that make the document's keys distinct across inheritance trees, for writers of formats
    /// with one key sequence (see `DocumentKeys`); empty when the keys already are distinct.
    var keyOffsets: [Int: Int64] { get }
    /// Calls `body` with every object in the document, each exactly once.
    func forEachSnapshot(_ body: (Snapshot) throws -> Void) throws
    /// Calls `body` with every object in the document, each exactly once, in whatever order is cheapest
    /// for the reader (by default `forEachSnapshot`'s): an XML store's reader opened with
    /// `StoreReadOptions.readsOnceInAnyOrder` reads its file once, handing on last the objects that
    /// refer to objects further on in relationships `body` reads.
    ///
    /// - Parameter relationships: the relationships `body` reads (see
    ///   ``StoreWriter/relationshipsRead``); the reader may leave the others `.unloaded`, though it still
    ///   checks the objects they name.
    /// - Throws: ``OrderedReadNeeded`` when the reader finds, part way, that the document cannot be read
    ///   this way: what it handed on is to be discarded, and the document read with `forEachSnapshot`.
    func forEachSnapshotInAnyOrder(
        reading relationships: RelationshipSelection, _ body: (Snapshot) throws -> Void)
        throws
    /// Calls `body` with the ref of every object `forEachSnapshot` gives, in the same order, without
    /// reading the objects, when the reader can do that at a fraction of the cost of reading them (a
    /// SQLite store reads only its tables' keys); returns `false`, having called nothing, when it cannot.
    /// By default it cannot.
    func forEachRef(_ body: (ObjectRef) throws -> Void) throws -> Bool
    /// Where `model` came from.
    var modelSource: ModelSource { get }
    /// Things worth telling the user that did not stop the read (how the model was found, values read as
    /// no value under `ValueReading.lenient`, …); complete once `forEachSnapshot` has returned.
    var warnings: [String] { get }
    /// Objects per entity, each counted under its own entity (not its parents'); every concrete entity is
    /// listed, with 0 when it has none. By default every object is read and counted; a reader that can
    /// count without reading (SQLite) does.
    func counts() throws -> [String: Int]
}

extension StoreReader {
    public var objectCount: Int? { nil }
    public var modelSource: ModelSource { .given }
    public var warnings: [String] { [] }

    public func forEachSnapshotInAnyOrder(
        reading relationships: RelationshipSelection, _ body: (Snapshot) throws -> Void
    ) throws {
        try forEachSnapshot(body)
    }

    /// Every object in the order cheapest for the reader, with every relationship read (see
    /// ``forEachSnapshotInAnyOrder(reading:_:)``).
    public func forEachSnapshotInAnyOrder(_ body: (Snapshot) throws -> Void) throws {
        try forEachSnapshotInAnyOrder(reading: .all, body)
    }

    public func forEachRef(_ body: (ObjectRef) throws -> Void) throws -> Bool { false }

    public func counts() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for entity in model.descriptions where !entity.isAbstract { counts[entity.name] = 0 }
        try forEachSnapshot { counts[model.descriptions[$0.ref.entity].name, default: 0] += 1 }
        return counts
    }
}

/// Thrown by ``StoreReader/forEachSnapshotInAnyOrder(_:)`` when the document cannot be read in the
/// reader's cheaper order after all (an XML document whose ids contradict the keys given to earlier
/// ones): the snapshots it handed on are to be discarded, and the document read again in order.
public struct OrderedReadNeeded: Error, Sendable {
    public init() {}
}

/// A store reader that can hand its snapshots over instead of lending them, so that a consumer that keeps
/// them (a writer on another thread) need not copy them.
package protocol SnapshotExchangingReader: StoreReader {
    /// Calls `body` with every object in the document, as ``StoreReader/forEachSnapshot(_:)`` does; `body`
    /// may exchange the snapshot for another of the same entity that it holds alone and no longer needs
    /// (one this call gave it earlier), whose storage the reader then fills with a later object.
    func handOverEachSnapshot(_ body: (inout Snapshot) throws -> Void) throws
}

/// Keys for new objects of one inheritance tree.
package enum KeyAllocation {
    /// `count` keys after `last` (`last + 1`, `last + 2`, …), checked against the end of Int64.
    ///
    /// - Parameters:
    ///   - entity: the tree's root entity, and `recorded`, where `last` comes from ("Z_MAX is 12"), for the
    ///     error.
    /// - Throws: `GraftError.malformedInput` when the keys would pass Int64's largest value.
    package static func keys(after last: Int64, count: Int, entity: String, recorded: String) throws -> [Int64] {
        guard count > 0 else { return [] }
        let (end, overflow) = last.addingReportingOverflow(Int64(count))
        guard !overflow else {
            throw GraftError(
                .malformedInput,
                "no keys left for \(entity): \(recorded), so \(Wording.counted(count, "new key")) would pass "
                    + "\(Int64.max), the largest a key can be")
        }
        return Array((end - Int64(count) + 1)...end)
    }
}

/// Where a store reader's model came from.
public enum ModelSource: String, Sendable, Equatable {
    /// Given by the caller (`--model`).
    case given
    /// The model the store keeps of itself: a SQLite store's `Z_MODELCACHE`, or the compiled model Graft
    /// keeps in an XML or binary document's metadata.
    case modelCache
    /// Inferred from the store's own layout, as its warnings say.
    case inferred
}

/// Writes a whole document from a stream of snapshots.
///
/// Snapshots may arrive in any order and may refer to objects that come later. A writer writes into a
/// temporary file beside its destination and renames it into place in `finish()`; `cancel()` (or a
/// failure) removes the temporary file, so a failed write leaves nothing behind.
public protocol StoreWriter {
    /// Adds one object to the document.
    mutating func write(_ snapshot: Snapshot) throws
    /// Completes the document; nothing is visible at the destination before this returns.
    mutating func finish() throws
    /// Abandons the document, removing anything written so far.
    mutating func cancel()
    /// Things worth telling the user that did not stop the write.
    var warnings: [String] { get }
    /// Whether the document written is the same whatever the order of the objects (see
    /// `StoreDriver.writesSnapshotsInAnyOrder`); `false` by default.
    var acceptsSnapshotsInAnyOrder: Bool { get }
    /// The relationships whose contents the writer takes from the snapshots it is given; every one by
    /// default. A SQLite store keeps a to-many whose inverse is a to-one in the inverse's column, so its
    /// writer reads the to-one only, and a reader need not resolve the to-many (see
    /// ``StoreReader/forEachSnapshotInAnyOrder(reading:_:)``).
    var relationshipsRead: RelationshipSelection { get }
}

extension StoreWriter {
    public var warnings: [String] { [] }
    public var acceptsSnapshotsInAnyOrder: Bool { false }
    public var relationshipsRead: RelationshipSelection { .all }
}

/// Which relationships of a model a consumer of snapshots reads: every one, or all but some, named by
/// entity index and relationship index (an inherited relationship is named under each entity that has
/// it).
///
/// For example:
///
/// ```swift
/// let reports = employee.relationshipIndexByName["directReports"]!
/// let selection = RelationshipSelection(model: model) { entity, index in index != reports || entity != employee.index }
/// selection.includes(entity: employee.index, relationship: reports)  // false
/// ```
public struct RelationshipSelection: Sendable, Equatable {
    /// By entity index, then relationship index: whether the relationship is left out. Empty when every
    /// relationship is read.
    private var leftOut: [[Bool]]

    /// Every relationship.
    public static let all = RelationshipSelection(leftOut: [])

    private init(leftOut: [[Bool]]) { self.leftOut = leftOut }

    /// The relationships of `model` for which `reads(entity, relationship)` is true.
    public init(model: Model, reads: (_ entity: Int, _ relationship: Int) -> Bool) {
        let leftOut = model.descriptions.map { entity in entity.relationships.indices.map { !reads(entity.index, $0) } }
        self.leftOut = leftOut.contains { $0.contains(true) } ? leftOut : []
    }

    /// Whether the relationship at `relationship` of entity `entity` is read.
    public func includes(entity: Int, relationship: Int) -> Bool {
        guard entity < leftOut.count, relationship < leftOut[entity].count else { return true }
        return !leftOut[entity][relationship]
    }

    /// Whether every relationship is read.
    public var isAll: Bool { leftOut.isEmpty }
}

/// A store that takes new objects as a stream, all or nothing, without being handed them at once: a
/// paste into an empty store streams into it.
public protocol StreamingInserts: PersistentStore {
    /// A writer whose snapshots are inserted into the store; `finish()` commits them all at once, and
    /// `cancel()` (or a failure) leaves the store as it was.
    func inserter() throws -> any StoreWriter
}

/// A store that can be read on two threads at once: a sibling over a connection of its own fetches on
/// another thread while this store is used on its own.
public protocol SiblingReading: PersistentStore {
    /// Another store over the same document, for reading only, to be used on one other thread. It sees
    /// what is saved: changes this store has written but not yet committed are not among what it reads.
    func readingSibling() throws -> any PersistentStore
}

/// A writer of a document file, written beside its destination and placed when finished: what a
/// ``StoreDriver`` makes.
public protocol StoreFileWriter: StoreWriter {
    /// Completes the document as `finish()` does, and returns the lock on the file now in place, held
    /// until released: for a store that keeps its document locked once it has saved it.
    mutating func finishHoldingLock() throws -> FileLock
}
