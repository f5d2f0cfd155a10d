import Foundation

/// Finds the model in anything a user may point Graft at: model files (`ModelFile.load`) and stores
/// that carry their model.
public enum ModelLoading {
    /// Loads the model at `url`: an `.xcdatamodeld`, `.xcdatamodel`, `.mom`, `.momd`, or a SQLite store
    /// with a model cache (its version hashes recorded in the store's metadata come along).
    ///
    /// - Throws: `GraftError.fileNotFound`, `GraftError.unsupportedFormat`, `GraftError.malformedInput`,
    ///   or `GraftError.notFound` for a store without a model cache.
    public static func load(_ url: URL) throws -> ModelFile {
        if SQLiteStoreFile.isSQLite(url) {
            return try SQLiteStoreFile.modelFile(at: url)
        }
        return try ModelFile.load(url)
    }

    /// The model to read a store with, from a model file the user named (`--model`).
    public struct StoreModel: Sendable {
        public let model: Model
        /// The file the model came from.
        public let file: ModelFile
        /// The version used.
        public let versionName: String
        /// Whether that version was chosen because its version hashes are the store's (rather than being
        /// the file's current version).
        public let chosenByHashes: Bool
    }

    /// Loads `modelURL` for reading the store at `storeURL`: for a file with several versions (an
    /// `.xcdatamodeld`, a `.momd`), the version whose hashes are the ones the store records (the current
    /// version when it is that one, or when none is); for any other file, its model.
    ///
    /// For example:
    ///
    /// ```swift
    /// let chosen = try ModelLoading.model(at: modelsURL, forStoreAt: storeURL)
    /// print(chosen.versionName, chosen.chosenByHashes)   // "Company 1", true
    /// ```
    ///
    /// - Throws: as ``load(_:)``; errors reading the store are left to the reader that opens it.
    public static func model(at modelURL: URL, forStoreAt storeURL: URL) throws -> StoreModel {
        let file = try load(modelURL)
        let current =
            file.versions.first { $0.name == file.currentVersionName } ?? file.versions[file.versions.count - 1]
        guard file.versions.count > 1,
            let recorded = try? StoreFormat.recordedVersionHashes(of: storeURL),
            !recorded.isEmpty, current.model.versionHashes != recorded,
            let matching = file.versions.reversed().first(where: { $0.model.versionHashes == recorded })
        else {
            return StoreModel(model: current.model, file: file, versionName: current.name, chosenByHashes: false)
        }
        return StoreModel(model: matching.model, file: file, versionName: matching.name, chosenByHashes: true)
    }
}
