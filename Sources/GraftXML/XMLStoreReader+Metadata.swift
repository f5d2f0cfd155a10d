import Foundation
import GraftCore
import GraftGraph

extension XMLStoreReader {
    /// The metadata a document records in its `<databaseInfo>`, read without reading its objects.
    ///
    /// - Throws: `GraftError.fileNotFound`, `.malformedInput` for a document that is not an XML store.
    public static func recordedMetadata(at url: URL) throws -> PropertyList.Dictionary {
        try HeaderPass.read(url: url, path: url.relativePath).metadata
    }
}
