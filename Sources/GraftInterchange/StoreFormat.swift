import Foundation
import GraftBinary
import GraftCore
import GraftGraph
import GraftModel
import GraftSQLite
import GraftXML

/// A store format Core Data writes, and the driver that reads and writes it: the one list of formats
/// (``allCases``), which everything that has to find, open or create a store goes through.
///
/// For example:
///
/// ```swift
/// let format = try StoreFormat.detect(url)                    // by content: .sqlite, .xml or .binary
/// let reader = try format.driver.reader(at: url, model: nil, options: StoreReadOptions())
/// try StoreFormat.xml.driver.write(snapshots, to: output, model: reader.model, metadata: metadata,
///                                  overwrite: false)
/// ```
public struct StoreFormat: Hashable, Sendable, CustomStringConvertible, CaseIterable, RawRepresentable {
    /// What reads and writes the format.
    public let driver: any StoreDriver

    private init(_ driver: any StoreDriver) { self.driver = driver }

    public static let sqlite = StoreFormat(SQLiteStoreDriver())
    public static let xml = StoreFormat(XMLStoreDriver())
    public static let binary = StoreFormat(BinaryStoreDriver())

    /// Every format, in the order their signatures are tried.
    public static let allCases: [StoreFormat] = [.sqlite, .xml, .binary]

    /// The format's name: `sqlite`, `xml`, `binary`.
    public var rawValue: String { driver.name }
    public var description: String { rawValue }

    public init?(rawValue: String) {
        guard let format = Self.allCases.first(where: { $0.rawValue == rawValue }) else { return nil }
        self = format
    }

    public static func == (lhs: StoreFormat, rhs: StoreFormat) -> Bool { lhs.rawValue == rhs.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    /// `NSStoreType` for the format.
    public var storeType: StoreMetadata.StoreType { driver.storeType }

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
        allCases.first { $0.driver.recognizes(prefix: prefix) }
    }

    /// The format a file name suggests (`.sqlite`, `.xml`, `.binary`, …), for outputs that do not exist yet.
    public static func forExtension(_ url: URL) -> StoreFormat? {
        let suffix = url.pathExtension.lowercased()
        return allCases.first { $0.driver.fileExtensions.contains(suffix) }
    }

    /// A store to edit through a context, in whatever format `url` holds (see
    /// ``StoreDriver/open(_:model:wait:exclusive:)``): SQLite saves incrementally; XML and binary
    /// documents are read whole and rewritten atomically on save. Saves never discard another writer's
    /// work: each waits up to `wait` seconds for another writer's lock, and a document store's save fails
    /// if the document changed since it was read.
    ///
    /// - Throws: what the format's store throws; `GraftError.busy`.
    public static func open(
        _ url: URL, model: Model?, wait: TimeInterval = FileLock.defaultWait
    ) throws
        -> any PersistentStore
    {
        try detect(url).driver.open(url, model: model, wait: wait, exclusive: false)
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
    /// let store = try StoreFormat.openExclusively(url, model: nil)   // waits up to 5 s for another writer
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
        try detect(url).driver.open(url, model: model, wait: wait, exclusive: true)
    }

    /// A store to read and fetch from, never changed, in whatever format `url` holds: SQLite stores are
    /// opened read-only (or read from a private copy when they have a `-wal`); XML and binary documents
    /// are read whole. Nothing is locked, nothing needs write access, and saving fails.
    public static func openForReading(
        _ url: URL, model: Model?, options: StoreReadOptions = StoreReadOptions()
    )
        throws -> any PersistentStore
    {
        try detect(url).driver.openForReading(url, model: model, options: options)
    }

    /// The version hashes the document at `url` records (by entity name), read without its objects:
    /// empty when it records none.
    public static func recordedVersionHashes(of url: URL) throws -> [String: Data] {
        try detect(url).driver.recordedVersionHashes(at: url)
    }
}

/// The files that make up a store document.
package enum StoreFiles {
    /// Whether `url` names the store at `store`, or one of the files SQLite keeps beside it (`-wal`,
    /// `-shm`, `-journal`), by device and inode: through symbolic links, hard links and other spellings
    /// of the path too. An output for which this is true must not be written while the store is read.
    package static func isPart(_ url: URL, ofStoreAt store: URL) -> Bool {
        guard let identity = FileAccess.identity(of: url) else { return false }
        return ([""] + StoreFormat.allCases.flatMap(\.driver.sideFileSuffixes)).contains {
            FileAccess.identity(of: URL(fileURLWithPath: store.path + $0)) == identity
        }
    }
}
