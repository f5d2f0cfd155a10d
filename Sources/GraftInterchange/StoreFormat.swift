import Foundation
import GraftBinary
import GraftCore
import GraftGraph
import GraftModel
import GraftSQLite
import GraftXML

/// The three store formats Core Data writes, recognised by content.
public enum StoreFormat: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite
    case xml
    case binary

    public var description: String { rawValue }

    /// `NSStoreType` for the format.
    public var storeType: StoreMetadata.StoreType {
        switch self {
        case .sqlite: return .sqlite
        case .xml: return .xml
        case .binary: return .binary
        }
    }

    /// The format of an existing file, from its first bytes.
    ///
    /// - Throws: `GraftError.fileNotFound`, or `GraftError.unsupportedFormat` for a file that is none of
    ///   the three.
    public static func detect(_ url: URL) throws -> StoreFormat {
        let kind = FileAccess.kind(of: url)
        guard kind.exists else { throw GraftError(.fileNotFound, "no such file", context: [.file(url.relativePath)]) }
        guard !kind.isDirectory else {
            throw GraftError(.unsupportedFormat, "is a folder, not a store", context: [.file(url.relativePath)])
        }
        let prefix: Data
        do {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            prefix = try handle.read(upToCount: 4096) ?? Data()
        } catch {
            throw GraftError(.io, "cannot be read: \(error.localizedDescription)", context: [.file(url.relativePath)])
        }
        if let format = detect(prefix: prefix) { return format }
        throw GraftError(
            .unsupportedFormat, "is not a Core Data store (SQLite, XML or binary)", context: [.file(url.relativePath)])
    }

    /// The format whose signature starts `prefix`, if any.
    public static func detect(prefix: Data) -> StoreFormat? {
        if prefix.starts(with: Data("SQLite format 3\0".utf8)) { return .sqlite }
        for format in allCases where format != .sqlite {
            if StoreFormats.recognizes(format, prefix: prefix) { return format }
        }
        return nil
    }

    /// The format a file name suggests (`.sqlite`, `.xml`, `.binary`, …), for outputs that do not exist yet.
    public static func forExtension(_ url: URL) -> StoreFormat? {
        switch url.pathExtension.lowercased() {
        case "sqlite", "sqlite3", "db", "store", "wiredatabase": return .sqlite
        case "xml": return .xml
        case "binary", "bin", "cdbinary": return .binary
        default: return nil
        }
    }
}

/// Opens readers, writers and stores of every format.
public enum StoreFormats {
    /// Whether `prefix` starts a document of `format`.
    static func recognizes(_ format: StoreFormat, prefix: Data) -> Bool {
        switch format {
        case .sqlite: return prefix.starts(with: Data("SQLite format 3\0".utf8))
        case .xml: return XMLStore.isXMLStore(prefix)
        case .binary: return BinaryStore.isBinaryStore(prefix)
        }
    }

    /// A streaming reader for a document.
    ///
    /// - Parameters:
    ///   - model: the model to read with; `nil` uses the model the document carries.
    ///   - valueReading: what every format's reader does with a stored value that is not of its
    ///     attribute's type or range: an error (`.strict`), or no value and a warning per attribute
    ///     (`.lenient`, in the reader's `warnings`).
    public static func reader(
        for url: URL, format: StoreFormat, model: Model?,
        missingExternalData: SQLiteStoreReader.MissingExternalData = .fail,
        danglingReferences: SQLiteStoreReader.DanglingReferences = .keep, valueReading: ValueReading = .strict
    ) throws -> any StoreReader {
        switch format {
        case .sqlite:
            return try SQLiteStoreReader(
                url: url, model: model, missingExternalData: missingExternalData,
                danglingReferences: danglingReferences,
                valueReading: valueReading)
        case .binary: return try BinaryStoreReader(url: url, model: model, valueReading: valueReading)
        case .xml: return try XMLStoreReader(url: url, model: model, valueReading: valueReading)
        }
    }

    /// The version hashes a document records (by entity name), read without its objects: empty when it
    /// records none.
    public static func recordedVersionHashes(of url: URL) throws -> [String: Data] {
        switch try StoreFormat.detect(url) {
        case .sqlite: return try SQLiteStoreFile.read(url).recordedVersionHashes
        case .xml:
            return StoreMetadata(identifier: "", values: try XMLStoreReader.recordedMetadata(at: url)).versionHashes
        case .binary: return try BinaryStoreReader.recordedMetadata(at: url).versionHashes
        }
    }

    /// A writer for a new document.
    public static func writer(
        for url: URL, format: StoreFormat, model: Model, metadata: StoreMetadata, overwrite: Bool
    ) throws -> any StoreWriter {
        switch format {
        case .sqlite: return try SQLiteStoreWriter(url: url, model: model, metadata: metadata, overwrite: overwrite)
        case .binary: return try BinaryStoreWriter(url: url, model: model, metadata: metadata, overwrite: overwrite)
        case .xml: return try XMLStoreWriter(url: url, model: model, metadata: metadata, overwrite: overwrite)
        }
    }

    /// A store to edit through a context: SQLite saves incrementally; XML and binary documents are read
    /// whole and rewritten atomically on save.
    ///
    /// Saves never discard another writer's work: a SQLite save waits up to `wait` seconds for another
    /// connection's lock; an XML or binary document is locked while a save writes (waiting as long), and
    /// a save fails if the document changed since it was read. For a read-check-write that other writers
    /// must wait for, use ``openExclusively(_:model:wait:)``.
    ///
    /// - Throws: what the format's store throws; `GraftError.busy`.
    public static func open(
        _ url: URL, model: Model?, wait: TimeInterval = FileLock.defaultWait
    ) throws
        -> any PersistentStore
    {
        switch try StoreFormat.detect(url) {
        case .sqlite: return try SQLiteStore.open(url, model: model, wait: wait)
        case .binary: return try BinaryStore.open(url: url, model: model, wait: wait)
        case .xml: return try XMLStore.open(url: url, model: model, wait: wait)
        }
    }

    /// A store to edit that no other writer can change until it is saved or goes away: an XML or binary
    /// document is locked before it is read, until the store goes away; a SQLite store holds a write
    /// transaction from now until the first save commits it (see ``SQLiteStore/beginExclusiveAccess()``).
    /// Another writer waits for it (up to its own wait), and this one waits up to `wait` seconds for
    /// another. Readers are never held up.
    ///
    /// For example:
    ///
    /// ```swift
    /// let store = try StoreFormats.openExclusively(url, model: nil)   // waits up to 5 s for another writer
    /// let context = ObjectContext(store: store)
    /// // … read, check, change …
    /// try context.save()
    /// ```
    ///
    /// - Throws: what ``open(_:model:wait:)`` throws; `GraftError.busy` when another writer holds the store
    ///   longer than `wait`.
    public static func openExclusively(
        _ url: URL, model: Model?, wait: TimeInterval = FileLock.defaultWait
    ) throws
        -> any PersistentStore
    {
        switch try StoreFormat.detect(url) {
        case .sqlite:
            let store = try SQLiteStore.open(url, model: model, wait: wait)
            try store.beginExclusiveAccess()
            return store
        case .binary: return try BinaryStore.open(url: url, model: model, wait: wait, exclusive: true)
        case .xml: return try XMLStore.open(url: url, model: model, wait: wait, exclusive: true)
        }
    }
}

extension StoreFormats {
    /// A store to read and fetch from, never changed: SQLite stores are opened read-only (or read from a
    /// private copy when they have a `-wal`); XML and binary documents are read whole. Nothing is locked,
    /// nothing needs write access, and saving fails.
    ///
    /// - Parameters:
    ///   - missingExternalData: for a SQLite store, what to do with a value whose external file is missing
    ///     (an error when it is read, or no value and a warning in ``warnings(of:)-swift.type.method``).
    ///   - valueReading: what to do with a stored value that is not of its attribute's type or range (an
    ///     error when it is read, or no value and a warning per attribute).
    public static func openForReading(
        _ url: URL, model: Model?, missingExternalData: SQLiteStoreReader.MissingExternalData = .fail,
        valueReading: ValueReading = .strict
    ) throws -> any PersistentStore {
        switch try StoreFormat.detect(url) {
        case .sqlite:
            return try SQLiteStore.openForReading(
                url, model: model, missingExternalData: missingExternalData, valueReading: valueReading)
        // Read whole into memory; never written back.
        case .binary:
            return try readOnly(
                InMemoryStore(reading: BinaryStoreReader(url: url, model: model, valueReading: valueReading)), url)
        case .xml:
            return try readOnly(
                InMemoryStore(reading: XMLStoreReader(url: url, model: model, valueReading: valueReading)), url)
        }
    }

    /// A document read into memory whose saves fail, as a SQLite store's opened for reading do.
    private static func readOnly(_ store: InMemoryStore, _ url: URL) -> InMemoryStore {
        store.persist = { _, _ in
            throw GraftError(
                .invalidOperation, "the store was opened for reading; it cannot be saved",
                context: [.file(url.relativePath)])
        }
        return store
    }

    /// A new, empty store in memory that writes itself to `url` (atomically, in `format`) when saved.
    ///
    /// Nothing is written until the first save, so a failed paste into a new store leaves no file. The
    /// first save creates the file only if nothing has appeared at `url` meanwhile; later saves replace it
    /// as ``open(_:model:wait:)``'s XML and binary stores do (locked, and only if no one else changed it).
    ///
    /// - Throws: `GraftError.alreadyExists` when something is at `url`.
    public static func create(
        _ url: URL, format: StoreFormat, model: Model, wait: TimeInterval = FileLock.defaultWait
    ) throws -> InMemoryStore {
        guard !FileAccess.kind(of: url).exists else {
            throw GraftError(.alreadyExists, "the store already exists", context: [.file(url.relativePath)])
        }
        let guarding = try DocumentGuard(url: url, wait: wait, exclusive: false)
        let store = InMemoryStore(model: model)
        store.metadata = StoreMetadata.make(for: model, storeType: format.storeType, identifier: store.identifier)
        store.persist = { snapshots, metadata in
            try guarding.save { overwrite in
                try writeHoldingLock(
                    snapshots, to: url, format: format, model: model, metadata: metadata, overwrite: overwrite)
            }
        }
        return store
    }

    /// Writes a whole document: atomically, so that on any error nothing is left at `url` or beside it.
    public static func write<S: Sequence<Snapshot>>(
        _ snapshots: S, to url: URL, format: StoreFormat, model: Model, metadata: StoreMetadata, overwrite: Bool
    ) throws {
        try writeHoldingLock(
            snapshots, to: url, format: format, model: model, metadata: metadata, overwrite: overwrite
        ).release()
    }

    /// Writes a whole document, and returns the lock on the file written, held until released.
    static func writeHoldingLock<S: Sequence<Snapshot>>(
        _ snapshots: S, to url: URL, format: StoreFormat, model: Model, metadata: StoreMetadata, overwrite: Bool
    ) throws -> FileLock {
        switch format {
        case .xml:
            return try XMLStore.writeHoldingLock(
                snapshots, model: model, metadata: metadata, to: url, overwrite: overwrite)
        case .binary:
            return try BinaryStore.writeHoldingLock(
                snapshots, to: url, model: model, metadata: metadata, overwrite: overwrite)
        case .sqlite:
            let writer = try SQLiteStoreWriter(url: url, model: model, metadata: metadata, overwrite: overwrite)
            do {
                for snapshot in snapshots { try writer.write(snapshot) }
                return try writer.finishHoldingLock()
            } catch {
                writer.cancel()
                throw error
            }
        }
    }

    /// What a reader had to say that did not stop it: values whose external file is missing, values read
    /// as no value under `ValueReading.lenient`, references left out, what a model inferred from an XML
    /// document could not know.
    public static func warnings(of store: any PersistentStore) -> [String] {
        if let sqlite = store as? SQLiteStore { return sqlite.warnings }
        if let document = store as? InMemoryStore { return document.warnings }
        return []
    }

    /// What a reader had to say that did not stop it: how its model was found, values it read as absent.
    public static func warnings(of reader: any StoreReader) -> [String] { reader.warnings }
}

/// The files that make up a store document.
public enum StoreFiles {
    /// Whether `url` names the store at `store`, or one of the files SQLite keeps beside it (`-wal`,
    /// `-shm`, `-journal`), by device and inode: through symbolic links, hard links and other spellings
    /// of the path too. An output for which this is true must not be written while the store is read.
    public static func isPart(_ url: URL, ofStoreAt store: URL) -> Bool {
        guard let identity = FileAccess.identity(of: url) else { return false }
        return ([""] + SQLiteStore.sideFileSuffixes).contains {
            FileAccess.identity(of: URL(fileURLWithPath: store.path + $0)) == identity
        }
    }
}

/// Facts about a store document for `graft inspect`.
public enum StoreInspection {
    /// Objects per entity, each counted under its own entity (not its parents'); every concrete entity is
    /// listed, with 0 when it has none.
    public static func counts(_ reader: any StoreReader) throws -> [String: Int] {
        if let sqlite = reader as? SQLiteStoreReader { return try sqlite.counts() }
        var counts: [String: Int] = [:]
        for entity in reader.model.descriptions where !entity.isAbstract { counts[entity.name] = 0 }
        try reader.forEachSnapshot { counts[reader.model.descriptions[$0.ref.entity].name, default: 0] += 1 }
        return counts
    }
}
