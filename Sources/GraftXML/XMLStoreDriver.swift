import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// Core Data's XML store as a driver: a whole document, read into memory to be edited and rewritten
/// atomically on every save.
public struct XMLStoreDriver: StoreDriver {
    public init() {}

    public var name: String { "xml" }
    public var storeType: StoreMetadata.StoreType { .xml }
    public var fileExtensions: [String] { ["xml"] }

    public func recognizes(prefix: Data) -> Bool { XMLStore.isXMLStore(prefix) }

    public func reader(at url: URL, model: Model?, options: StoreReadOptions) throws -> any StoreReader {
        try XMLStoreReader(
            url: url, model: model, valueReading: options.valueReading, readsOnceInAnyOrder: options.readsOnceInAnyOrder
        )
    }

    public func recordedVersionHashes(at url: URL) throws -> [String: Data] {
        StoreMetadata(identifier: "", values: try XMLStoreReader.recordedMetadata(at: url)).versionHashes
    }

    public func writer(
        at url: URL, model: Model, metadata: StoreMetadata, overwrite: Bool
    ) throws -> any StoreFileWriter {
        try XMLStoreWriter(url: url, model: model, metadata: metadata, overwrite: overwrite)
    }

    public func open(_ url: URL, model: Model?, wait: TimeInterval, exclusive: Bool) throws -> any PersistentStore {
        try XMLStore.open(url: url, model: model, wait: wait, exclusive: exclusive)
    }
}
