import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// Core Data's SQLite store as a driver: a store is edited in place, a row at a time, and read on
/// demand; it may hold references to rows it does not have, and its values can be compared as SQLite
/// holds them.
public struct SQLiteStoreDriver: StoreDriver {
    public init() {}

    public var name: String { "sqlite" }
    public var storeType: StoreMetadata.StoreType { .sqlite }
    public var fileExtensions: [String] { ["sqlite", "sqlite3", "db", "store", "wiredatabase"] }
    public var holdsDanglingReferences: Bool { true }
    public var writesSnapshotsInAnyOrder: Bool { true }
    public var sideFileSuffixes: [String] { SQLiteStore.sideFileSuffixes }

    /// The 16 bytes every SQLite 3 database starts with.
    public static let header = Data("SQLite format 3\0".utf8)

    public func recognizes(prefix: Data) -> Bool { prefix.starts(with: Self.header) }

    public func reader(at url: URL, model: Model?, options: StoreReadOptions) throws -> any StoreReader {
        try SQLiteStoreReader(
            url: url, model: model, missingExternalData: options.missingExternalData,
            danglingReferences: options.danglingReferences, valueReading: options.valueReading)
    }

    public func recordedVersionHashes(at url: URL) throws -> [String: Data] {
        try SQLiteStoreFile.read(url).recordedVersionHashes
    }

    public func writer(
        at url: URL, model: Model, metadata: StoreMetadata, overwrite: Bool
    ) throws -> any StoreFileWriter {
        try SQLiteStoreWriter(url: url, model: model, metadata: metadata, overwrite: overwrite)
    }

    /// The store opened in place; with `exclusive`, a write transaction is held from now until the first
    /// save commits it (see ``SQLiteStore/beginExclusiveAccess()``).
    public func open(_ url: URL, model: Model?, wait: TimeInterval, exclusive: Bool) throws -> any PersistentStore {
        let store = try SQLiteStore.open(url, model: model, wait: wait)
        if exclusive { try store.beginExclusiveAccess() }
        return store
    }

    /// A write transaction on the store (SQLite's own lock, which Core Data respects too), held by a
    /// store that reads no object.
    public func holdAgainstWriters(_ url: URL, model: Model, wait: TimeInterval) throws -> AnyObject {
        let store = try SQLiteStore.open(url, model: model, wait: wait)
        try store.beginExclusiveAccess()
        return store
    }

    public func openForReading(_ url: URL, model: Model?, options: StoreReadOptions) throws -> any PersistentStore {
        try SQLiteStore.openForReading(
            url, model: model, missingExternalData: options.missingExternalData, valueReading: options.valueReading)
    }

    public func storedValueCheck(
        of stored: any StoreReader, readWith read: any StoreReader
    ) -> (
        (Snapshot) throws -> [String]
    )? {
        guard let stored = stored as? SQLiteStoreReader else { return nil }
        let check = SQLiteStoredValueCheck(
            reader: stored, refused: (read as? SQLiteStoreReader)?.refusedValues ?? stored.refusedValues)
        return { try check.differences(of: $0) }
    }
}
