import Foundation
import GraftCore
import GraftGraph
@_spi(GraftInternal) import GraftModel

/// What a Core Data SQLite store says about itself: its UUID, its metadata, and the model it keeps in
/// its model cache.
public struct SQLiteStoreFile {
    public let url: URL
    /// The store's UUID (`Z_METADATA.Z_UUID`).
    public let identifier: String
    /// The metadata dictionary (`Z_METADATA.Z_PLIST`), every key kept.
    public let metadata: PropertyList.Dictionary
    /// The compiled model in `Z_MODELCACHE`, raw-deflate compressed, if the store has one.
    public let modelCache: Data?

    /// Whether the file at `url` starts with SQLite's header.
    public static func isSQLite(_ url: URL) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return false }
        defer { try? handle.close() }
        let header = (try? handle.read(upToCount: 16)) ?? Data()
        return header == SQLiteStoreDriver.header
    }

    /// Reads a store's bookkeeping without changing the store, its `-wal` or its `-shm`.
    ///
    /// - Throws: `GraftError.malformedInput` for a SQLite file that is not a Core Data store.
    public static func read(_ url: URL) throws -> SQLiteStoreFile {
        try read(SQLiteDatabase.openForReading(url), url: url)
    }

    static func read(_ database: SQLiteDatabase, url: URL) throws -> SQLiteStoreFile {
        guard try database.hasTable("Z_METADATA") else {
            throw GraftError(
                .malformedInput, "is a SQLite database but not a Core Data store (no Z_METADATA table)",
                context: [.file(url.relativePath)])
        }
        let statement = try database.prepare("SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1")
        guard try statement.step() else {
            throw GraftError(.malformedInput, "the Z_METADATA table is empty", context: [.file(url.relativePath)])
        }
        var identifier = statement.text(0) ?? ""
        if !identifier.isEmpty {
            do {
                identifier = try StoreMetadata.checkedIdentifier(identifier, field: "Z_METADATA.Z_UUID")
            } catch let error as GraftError {
                throw error.inFile(url.relativePath)
            }
        }
        var metadata = PropertyList.Dictionary()
        if let blob = statement.data(1), !blob.isEmpty {
            do {
                guard let dictionary = try PropertyList.decode(blob).dictionaryValue else {
                    throw GraftError(.malformedInput, "the metadata is not a dictionary")
                }
                metadata = dictionary
            } catch let error as GraftError {
                throw error.at(.other("Z_METADATA.Z_PLIST")).inFile(url.relativePath)
            }
        }
        var cache: Data?
        if try database.hasTable("Z_MODELCACHE") {
            let row = try database.prepare("SELECT Z_CONTENT FROM Z_MODELCACHE LIMIT 1")
            if try row.step() { cache = row.data(0) }
        }
        return SQLiteStoreFile(url: url, identifier: identifier, metadata: metadata, modelCache: cache)
    }

    /// The model a store is read with, where it came from, and what the reader should say about it.
    struct ChosenModel {
        var metadata: StoreMetadata
        var model: Model
        var source: ModelSource
        var warnings: [String] = []
    }

    /// The store's metadata and the model to read it with: `model` when given (checked against the
    /// store's version hashes, when it records any); else the store's model cache; else, when the store
    /// has none or it cannot be decoded, a model inferred from the store's tables.
    func chooseModel(_ model: Model?, database: SQLiteDatabase) throws -> ChosenModel {
        let metadata = StoreMetadata(identifier: identifier, values: self.metadata)
        if let model {
            var chosen = ChosenModel(metadata: metadata, model: model, source: .given)
            if metadata.versionHashes.isEmpty {
                // Core Data 1.0 documents record none: only the tables can tell whether the model fits.
                chosen.warnings.append(
                    "the store records no version hashes, so the model given cannot be checked against them; it is "
                        + "checked against the store's tables only")
            } else {
                try metadata.check(against: model, path: url.relativePath)
            }
            return chosen
        }
        var warnings: [String] = []
        if let modelCache, !modelCache.isEmpty {
            do {
                let (cached, cacheWarnings) = try decodeModelCache(modelCache)
                return ChosenModel(metadata: metadata, model: cached, source: .modelCache, warnings: cacheWarnings)
            } catch let error as GraftError {
                warnings.append(
                    "the store's model cache cannot be read (\(error.message)); the model was inferred from its tables instead"
                )
            }
        }
        let inferred = try SQLiteModelInference.infer(
            database: database, path: url.relativePath, metadata: self.metadata)
        return ChosenModel(
            metadata: metadata, model: inferred.model, source: .inferred, warnings: warnings + inferred.warnings)
    }

    /// The version hashes the metadata records (`NSStoreModelVersionHashes`), by entity name.
    public var recordedVersionHashes: [String: Data] {
        guard let hashes = metadata["NSStoreModelVersionHashes"]?.dictionaryValue else { return [:] }
        var result: [String: Data] = [:]
        for (name, value) in hashes {
            if case .data(let data) = value { result[name] = data }
        }
        return result
    }

    /// The model in the store's model cache.
    ///
    /// - Throws: `GraftError.notFound` when the store has no model cache (stores written before about
    ///   framework version 640 have none), `GraftError.malformedInput` when it cannot be read.
    public func cachedModel() throws -> Model {
        guard let modelCache, !modelCache.isEmpty else {
            throw GraftError(
                .notFound, "the store has no model cache (Z_MODELCACHE); give its model with --model",
                context: [.file(url.relativePath)])
        }
        return try decodeModelCache(modelCache).model
    }

    /// Inflates and reads a model cache, with what the reader had to overlook.
    private func decodeModelCache(_ cache: Data) throws -> (model: Model, warnings: [String]) {
        let path = "\(url.relativePath) (Z_MODELCACHE)"
        do {
            let archive = try RawDeflate.inflate(cache)
            var warnings: [String] = []
            let model = try CompiledModelReader.read(archive, path: path, warnings: &warnings)
            return (model, warnings)
        } catch let error as GraftError {
            throw error.context.isEmpty ? error.inFile(path) : error
        }
    }

    /// The store's model as a `ModelFile`, with the hashes its metadata records.
    public static func modelFile(at url: URL) throws -> ModelFile {
        let store = try read(url)
        _ = try store.cachedModel()  // the error for a store without a cache
        let (model, warnings) = try store.decodeModelCache(store.modelCache ?? Data())
        let name =
            model.versionIdentifiers.first(where: { !$0.isEmpty }) ?? url.deletingPathExtension().lastPathComponent
        var checksums: [String: String] = [:]
        if let checksum = store.metadata["NSStoreModelVersionChecksumKey"]?.stringValue { checksums[name] = checksum }
        return ModelFile(
            url: url, format: .storeModelCache, versions: [ModelFile.Version(name: name, model: model)],
            currentVersionName: name, recordedVersionHashes: [name: store.recordedVersionHashes],
            recordedVersionChecksums: checksums, warnings: warnings)
    }
}
