import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// Core Data's binary store (`NSBinaryStoreType`) as a whole document: recognised by its first bytes,
/// opened into memory, and written back whole on every save.
///
/// For example:
///
/// ```swift
/// let store = try BinaryStore.open(url: documentURL, model: model)
/// let context = ObjectContext(store: store)
/// // … edit …
/// try context.save()   // rewrites documentURL atomically
/// ```
public enum BinaryStore {
    /// Whether a file starting with these bytes is a binary store (its first eight bytes are
    /// `CoreData`). Eight bytes are enough; fewer never match.
    public static func isBinaryStore(_ prefix: Data) -> Bool {
        prefix.count >= BinaryStoreLayout.magic.count
            && prefix.prefix(BinaryStoreLayout.magic.count).elementsEqual(BinaryStoreLayout.magic)
    }

    /// Opens a binary store as an in-memory store whose saves rewrite the file.
    ///
    /// Each save writes the whole document to a temporary file beside `url` and renames it over
    /// `url`; a failed save leaves the file as it was. Saves never discard another writer's work: the
    /// document is locked (see ``FileLock``) while a save writes, waiting up to `wait` seconds for
    /// another writer, and a save fails if the document changed since it was read; with `exclusive`, it
    /// is locked from before it is read until the store goes away, so other writers wait for this one.
    ///
    /// - Parameters:
    ///   - model: the store's model; `nil` uses the model the store carries.
    ///   - wait: how long to wait for another writer's lock, in seconds.
    ///   - exclusive: whether to lock the document now, for the store's whole life.
    /// - Throws: what ``BinaryStoreReader/init(url:model:)`` throws; `GraftError.busy` when `exclusive`
    ///   and another writer holds the document longer than `wait`.
    public static func open(
        url: URL, model: Model? = nil, wait: TimeInterval = FileLock.defaultWait, exclusive: Bool = false
    ) throws -> InMemoryStore {
        let guarding = try DocumentGuard(url: url, wait: wait, exclusive: exclusive)
        let reader = try BinaryStoreReader(url: url, model: model)
        let store = try BinaryStoreDriver().documentStore(url, model: reader.model, reader: reader, guarding: guarding)
        // A binary document has one key sequence: new objects continue it.
        store.sharedKeyOffsets = try DocumentKeys.offsets(in: reader.metadata, model: reader.model)
        return store
    }

    /// Writes a whole document: every snapshot, then finishes; nothing is left behind on failure.
    ///
    /// For example:
    ///
    /// ```swift
    /// try BinaryStore.write(store.allSnapshots, to: url, model: model,
    ///                       metadata: StoreMetadata.make(for: model, storeType: .binary))
    /// ```
    public static func write<S: Sequence>(
        _ snapshots: S, to url: URL, model: Model, metadata: StoreMetadata, overwrite: Bool = false
    ) throws where S.Element == Snapshot {
        try BinaryStoreDriver().write(snapshots, to: url, model: model, metadata: metadata, overwrite: overwrite)
    }
}
