import Foundation
import GraftCore
import GraftModel

/// One store format, as everything above the store modules sees it: how its documents are recognised,
/// read, written, opened for editing and created. Each store module (`GraftSQLite`, `GraftXML`,
/// `GraftBinary`) implements one; `GraftInterchange`'s `StoreFormat` lists them, and nothing else
/// needs to know which formats there are.
///
/// For example, counting the objects of whatever store a file holds:
///
/// ```swift
/// let driver = try StoreFormat.detect(url).driver
/// let reader = try driver.reader(at: url, model: nil, options: StoreReadOptions())
/// print(try reader.counts())
/// ```
public protocol StoreDriver: Sendable {
    /// The format's name in commands and messages: `sqlite`, `xml`, `binary`.
    var name: String { get }
    /// `NSStoreType` for documents of the format.
    var storeType: StoreMetadata.StoreType { get }
    /// File extensions (lowercase, without the dot) that name the format for a file that does not exist
    /// yet, the usual one first.
    var fileExtensions: [String] { get }
    /// Whether a document can hold a reference to an object it does not have (a SQLite store can: SQLite
    /// enforces nothing; XML and binary documents cannot), so that a conversion into the format may keep
    /// such references rather than leave them out.
    var holdsDanglingReferences: Bool { get }
    /// Whether a document numbers all its objects with one key sequence (a binary store does), so that a
    /// writer needs `StoreReader.keyOffsets` to keep keys of different inheritance trees apart.
    var hasOneKeySequence: Bool { get }
    /// Whether the format's writers may take objects in any order (a SQLite store's rows do not depend
    /// on it), so that a conversion into the format may read its input in the order cheapest for the
    /// reader; each writer says for its model (`StoreWriter.acceptsSnapshotsInAnyOrder`).
    var writesSnapshotsInAnyOrder: Bool { get }
    /// Suffixes of the files the format keeps beside a document while it is open (SQLite's `-wal`,
    /// `-shm` and `-journal`), which belong to the document.
    var sideFileSuffixes: [String] { get }

    /// Whether a document starting with these bytes (up to the first 4 KB of a file) is of this format.
    func recognizes(prefix: Data) -> Bool

    /// A streaming reader of the document at `url`.
    ///
    /// - Parameter model: the model to read with; `nil` uses the model the document carries, or one
    ///   inferred from it, as the format allows.
    func reader(at url: URL, model: Model?, options: StoreReadOptions) throws -> any StoreReader

    /// The version hashes the document records (by entity name), read without its objects: empty when
    /// it records none.
    func recordedVersionHashes(at url: URL) throws -> [String: Data]

    /// A writer of a new document at `url`, written beside it and placed when finished.
    ///
    /// - Parameter overwrite: whether an existing file at `url` may be replaced (only regular files ever
    ///   are).
    func writer(at url: URL, model: Model, metadata: StoreMetadata, overwrite: Bool) throws -> any StoreFileWriter

    /// A store to edit through a context. Saves never discard another writer's work: each waits up to
    /// `wait` seconds for another writer's lock and fails if the document changed since it was read.
    /// With `exclusive`, no other writer can change the document until the store is saved or goes away
    /// (for a read-check-write such as a paste); readers are never held up.
    func open(_ url: URL, model: Model?, wait: TimeInterval, exclusive: Bool) throws -> any PersistentStore

    /// A store to read and fetch from, never changed: nothing is locked or written, nothing needs write
    /// access, and saving fails.
    func openForReading(_ url: URL, model: Model?, options: StoreReadOptions) throws -> any PersistentStore

    /// A check of written objects against the values the document `stored` holds *as stored*, without
    /// its reader's decoding, for verifying a conversion whose input it is: `nil` when the format has no
    /// such check (its reader is the only way to its values). `read` is the reader the conversion read
    /// with, whose values read as no value (leniently) must be absent from what is compared.
    func storedValueCheck(
        of stored: any StoreReader, readWith read: any StoreReader
    ) -> (
        (Snapshot) throws -> [String]
    )?

    /// Keeps every other writer from changing the document at `url` until the returned object goes away,
    /// without reading the document's objects: a writer's lock on an XML or binary document, a write
    /// transaction on a SQLite store (readers are never held up). For work that reads the document and
    /// then replaces it (an in-place migration).
    ///
    /// - Throws: `GraftError.busy` when another writer holds it longer than `wait` seconds; the format's
    ///   errors opening it.
    func holdAgainstWriters(_ url: URL, model: Model, wait: TimeInterval) throws -> AnyObject

    /// Adds attributes to the objects of the document at `url` where they are, in one transaction, and
    /// records `destination` as the document's model (metadata and model cache): a migration whose only
    /// changes are new attributes and attributes become required, without rewriting the objects (a
    /// SQLite store's `ALTER TABLE … ADD COLUMN`). `check` runs once no other writer can change the
    /// document, before anything is changed; its error cancels the whole.
    ///
    /// - Returns: `false`, having changed nothing, when the format cannot, or the document's layout does
    ///   not allow it (the migration then rewrites the document).
    func addAttributes(
        _ additions: [AttributeAddition], at url: URL, from source: Model, to destination: Model,
        metadata: StoreMetadata, check: () throws -> Void
    ) throws -> Bool
}

/// An attribute a migration gives the objects of an entity (and its subentities) in place.
public struct AttributeAddition: Sendable, Hashable {
    /// The entity that declares the attribute, by name (the same in both versions).
    public var entity: String
    public var attribute: String
    /// The value objects get; `nil` for none.
    public var value: Value?
    /// Whether the attribute exists already and only objects without a value get `value` (an attribute
    /// become required, with its default).
    public var onlyWhereNil: Bool

    public init(entity: String, attribute: String, value: Value?, onlyWhereNil: Bool = false) {
        self.entity = entity
        self.attribute = attribute
        self.value = value
        self.onlyWhereNil = onlyWhereNil
    }
}

extension StoreDriver {
    public var holdsDanglingReferences: Bool { false }
    public var hasOneKeySequence: Bool { false }
    public var writesSnapshotsInAnyOrder: Bool { false }
    public var sideFileSuffixes: [String] { [] }

    /// By default, the whole document read into memory through ``reader(at:model:options:)``, its saves
    /// failing: right for whole-document formats (XML, binary).
    public func openForReading(_ url: URL, model: Model?, options: StoreReadOptions) throws -> any PersistentStore {
        try InMemoryStore.readOnly(reader(at: url, model: model, options: options), at: url)
    }

    public func storedValueCheck(
        of stored: any StoreReader, readWith read: any StoreReader
    ) -> (
        (Snapshot) throws -> [String]
    )? { nil }

    /// By default, a writer's lock on the document file (see `FileLock`), as XML and binary stores take.
    public func holdAgainstWriters(_ url: URL, model: Model, wait: TimeInterval) throws -> AnyObject {
        try FileLock(url, wait: wait)
    }

    /// By default a format cannot: the document is rewritten.
    public func addAttributes(
        _ additions: [AttributeAddition], at url: URL, from source: Model, to destination: Model,
        metadata: StoreMetadata, check: () throws -> Void
    ) throws -> Bool { false }

    /// Writes a whole document from `snapshots`: atomically, so that on any error nothing is left at
    /// `url` or beside it.
    ///
    /// - Parameter progress: called every 10,000 objects, and at the end, with the objects written so far.
    public func write<S: Sequence<Snapshot>>(
        _ snapshots: S, to url: URL, model: Model, metadata: StoreMetadata, overwrite: Bool,
        progress: ((_ done: Int) -> Void)? = nil
    ) throws {
        try writeHoldingLock(
            snapshots, to: url, model: model, metadata: metadata, overwrite: overwrite, progress: progress
        ).release()
    }

    /// Writes a whole document as ``write(_:to:model:metadata:overwrite:progress:)`` does, and returns the
    /// lock on the file written, held until released (for a store that keeps its document locked).
    public func writeHoldingLock<S: Sequence<Snapshot>>(
        _ snapshots: S, to url: URL, model: Model, metadata: StoreMetadata, overwrite: Bool,
        progress: ((_ done: Int) -> Void)? = nil
    ) throws -> FileLock {
        var writer = try self.writer(at: url, model: model, metadata: metadata, overwrite: overwrite)
        do {
            var done = 0
            for snapshot in snapshots {
                try writer.write(snapshot)
                done += 1
                if done % 10_000 == 0 { progress?(done) }
            }
            progress?(done)
            return try writer.finishHoldingLock()
        } catch {
            writer.cancel()
            throw error
        }
    }

    /// A new, empty store in memory that writes itself to `url` (atomically, in this format) when saved.
    ///
    /// Nothing is written until the first save, so a failed paste into a new store leaves no file. The
    /// first save creates the file only if nothing has appeared at `url` meanwhile; later saves replace it
    /// as ``open(_:model:wait:exclusive:)``'s document stores do (locked, and only if no one else changed
    /// it).
    ///
    /// - Throws: `GraftError.alreadyExists` when something is at `url`.
    public func create(_ url: URL, model: Model, wait: TimeInterval = FileLock.defaultWait) throws -> InMemoryStore {
        guard !FileAccess.kind(of: url).exists else {
            throw GraftError(.alreadyExists, "the store already exists", context: [.file(url.relativePath)])
        }
        return try documentStore(
            url, model: model, reader: nil, guarding: DocumentGuard(url: url, wait: wait, exclusive: false))
    }

    /// A whole document held in memory, read through `reader` (a new, empty one when `nil`), that
    /// rewrites the document on every save under `guarding`: what XML and binary stores are when opened
    /// for editing.
    package func documentStore(
        _ url: URL, model: Model, reader: (any StoreReader)?, guarding: DocumentGuard
    ) throws -> InMemoryStore {
        let persist: (_ snapshots: [Snapshot], _ metadata: StoreMetadata) throws -> Void = { snapshots, metadata in
            try guarding.save { overwrite in
                try writeHoldingLock(snapshots, to: url, model: model, metadata: metadata, overwrite: overwrite)
            }
        }
        // The document as another writer saved it, read again with the same model (see `documentReload`).
        let reload = { () throws -> [Snapshot]? in
            try guarding.readIfChanged {
                var snapshots: [Snapshot] = []
                try self.reader(at: url, model: model, options: StoreReadOptions()).forEachSnapshot {
                    snapshots.append($0)
                }
                return snapshots
            }
        }
        guard let reader else {
            let store = InMemoryStore(model: model)
            store.metadata = StoreMetadata.make(for: model, storeType: storeType, identifier: store.identifier)
            store.persist = persist
            store.documentReload = reload
            return store
        }
        let store = try InMemoryStore(reading: reader, persist: persist)
        store.documentReload = reload
        return store
    }
}

/// What every format's reader does with what it finds missing or wrong in a document.
public struct StoreReadOptions: Sendable, Equatable {
    /// What to do with a stored value that is not of its attribute's type or range: an error naming the
    /// object, attribute and value (`.strict`), or no value and a warning per attribute (`.lenient`).
    public var valueReading: ValueReading
    /// What to do with a binary value kept in an external file that is not there (SQLite stores keep
    /// large values in `.<store>_SUPPORT/_EXTERNAL_DATA`, and copies of stores often leave that folder
    /// behind).
    public var missingExternalData: MissingExternalData
    /// What to do with references to objects the document does not have.
    public var danglingReferences: DanglingReferences
    /// Whether the document will be read once, through ``StoreReader/forEachSnapshotInAnyOrder(_:)``,
    /// with no need of an object count beforehand: a reader may then leave out what only other uses
    /// need (an XML store's reader reads its file once instead of scanning it for ids first, and its
    /// `objectCount` is `nil`). Any other use still works, at the usual cost.
    public var readsOnceInAnyOrder: Bool

    public init(
        valueReading: ValueReading = .strict, missingExternalData: MissingExternalData = .fail,
        danglingReferences: DanglingReferences = .keep, readsOnceInAnyOrder: Bool = false
    ) {
        self.valueReading = valueReading
        self.missingExternalData = missingExternalData
        self.danglingReferences = danglingReferences
        self.readsOnceInAnyOrder = readsOnceInAnyOrder
    }

    /// What to do with a value whose external file is missing.
    public enum MissingExternalData: Sendable {
        /// Stop with an error naming the object, the attribute and the file.
        case fail
        /// Read the value as absent and add a warning.
        case omit
    }

    /// What to do with references to objects a document does not have (a to-one column or join row
    /// naming a deleted row: SQLite enforces nothing, and stores in the wild have them).
    public enum DanglingReferences: Sendable {
        /// Read them as they are.
        case keep
        /// Leave them out and add a warning naming each.
        case drop
    }
}
