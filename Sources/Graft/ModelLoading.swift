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
}
