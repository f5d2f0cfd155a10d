import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// Core Data's binary store (`NSBinaryStoreType`) as a driver: a whole document with one key sequence,
/// read into memory to be edited and rewritten atomically on every save.
public struct BinaryStoreDriver: StoreDriver {
    public init() {}

    public var name: String { "binary" }
    public var storeType: StoreMetadata.StoreType { .binary }
    public var fileExtensions: [String] { ["binary", "bin", "cdbinary"] }
    public var hasOneKeySequence: Bool { true }

    public func recognizes(prefix: Data) -> Bool { BinaryStore.isBinaryStore(prefix) }

    public func reader(at url: URL, model: Model?, options: StoreReadOptions) throws -> any StoreReader {
        try BinaryStoreReader(url: url, model: model, valueReading: options.valueReading)
    }

    public func recordedVersionHashes(at url: URL) throws -> [String: Data] {
        try BinaryStoreReader.recordedMetadata(at: url).versionHashes
    }

    public func writer(
        at url: URL, model: Model, metadata: StoreMetadata, overwrite: Bool
    ) throws -> any StoreFileWriter {
        try BinaryStoreWriter(url: url, model: model, metadata: metadata, overwrite: overwrite)
    }

    public func open(_ url: URL, model: Model?, wait: TimeInterval, exclusive: Bool) throws -> any PersistentStore {
        try BinaryStore.open(url: url, model: model, wait: wait, exclusive: exclusive)
    }

    public func openForReading(_ url: URL, model: Model?, options: StoreReadOptions) throws -> any PersistentStore {
        try InMemoryStore.readOnly(reader(at: url, model: model, options: options), at: url)
    }
}
