import Foundation
@_spi(GraftInternal) import GraftCore
import GraftGraph
import GraftModel

/// Core Data's XML store: a whole document held in memory while open and rewritten on every save.
///
/// For example:
///
/// ```swift
/// let store = try XMLStore.open(url: URL(fileURLWithPath: "Company.xml"), model: model)
/// let context = ObjectContext(store: store)
/// // … insert and edit objects …
/// try context.save()   // rewrites Company.xml atomically
/// ```
public enum XMLStore {
    /// The `<version>` Core Data writes in every XML store.
    public static let databaseVersion: Int64 = XMLStoreFormat.databaseVersion

    /// The metadata key under which a store may carry its compiled model (raw-deflate data of a `.mom`
    /// archive), read when no model is given.
    public static let modelCacheKey: String = XMLStoreFormat.modelCacheKey

    /// Opens an XML store as a `PersistentStore` that rewrites the whole file, atomically, on every save.
    ///
    /// When no file is at `url`, the store starts empty and the first save creates the file (unless one
    /// has appeared there meanwhile). Saves never discard another writer's work: the document is locked
    /// (see ``FileLock``) while a save writes, waiting up to `wait` seconds for another writer, and a save
    /// fails if the document changed since it was read; with `exclusive`, it is locked from before it is
    /// read until the store goes away, so that other writers wait for this one (a paste).
    ///
    /// - Parameters:
    ///   - model: the model; `nil` to use the one the document carries or to infer one (see
    ///     `XMLStoreReader`). Required for a new store.
    ///   - wait: how long to wait for another writer's lock, in seconds.
    ///   - exclusive: whether to lock the document now, for the store's whole life.
    /// - Throws: what `XMLStoreReader` throws; `GraftError.invalidOperation` for a new store without a
    ///   model; `GraftError.busy` when `exclusive` and another writer holds the document longer than `wait`.
    public static func open(
        url: URL, model: Model?, wait: TimeInterval = FileLock.defaultWait, exclusive: Bool = false
    ) throws -> InMemoryStore {
        let guarding = try DocumentGuard(url: url, wait: wait, exclusive: exclusive)
        guard FileAccess.kind(of: url).exists else {
            guard let model else {
                throw GraftError(
                    .invalidOperation, "no such file, and no model to make a new store with",
                    context: [.file(url.relativePath)])
            }
            return try XMLStoreDriver().documentStore(url, model: model, reader: nil, guarding: guarding)
        }
        let reader = try XMLStoreReader(url: url, model: model)
        return try XMLStoreDriver().documentStore(url, model: reader.model, reader: reader, guarding: guarding)
    }

    /// Whether `prefix`, the first bytes of a file (a few hundred are plenty), look like an XML store:
    /// an XML declaration, then (past comments, processing instructions and a document type) a
    /// `<database>` root element.
    ///
    /// For example:
    ///
    /// ```swift
    /// let head = try FileHandle(forReadingFrom: url).read(upToCount: 1024) ?? Data()
    /// if XMLStore.isXMLStore(head) { … }
    /// ```
    public static func isXMLStore(_ prefix: Data) -> Bool {
        // Core Data writes the XML declaration; the root is <database>.
        let bytes = prefix.prefix(64 * 1024)
        let declaration = Array("<?xml".utf8)
        let start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        guard bytes.dropFirst(start).starts(with: declaration),
            bytes.count > start + declaration.count,
            ByteText.isSpace(bytes[bytes.startIndex + start + declaration.count])
        else { return false }
        return bytes.withUnsafeBytes { XMLScanner.rootElementName(ofPrefix: $0) } == "database"
    }
}
