import Foundation
import GraftCore
@_spi(GraftInternal) import GraftModel

/// A store's metadata: its UUID, its type, and the metadata dictionary Core Data keeps with every store
/// (store type, model version hashes, digest and checksum, version identifiers, framework version).
///
/// Applications add keys of their own to the same dictionary; `values` keeps every key, understood or
/// not, so a store rewritten by Graft keeps them.
///
/// For example:
///
/// ```swift
/// var metadata = StoreMetadata.make(for: model, storeType: .sqlite)
/// metadata.values["MyAppSchemaRevision"] = 7
/// ```
public struct StoreMetadata: Hashable, Sendable {
    /// The store's UUID (`NSStoreUUID`).
    public var identifier: String
    /// The whole metadata dictionary.
    public var values: PropertyList.Dictionary

    public init(identifier: String, values: PropertyList.Dictionary) {
        self.identifier = identifier
        self.values = values
    }

    /// Checks the UUID a store records for itself (an XML store's `<UUID>`, a binary store's
    /// `NSStoreUUID`, a SQLite store's `Z_METADATA.Z_UUID`) and returns it as written.
    ///
    /// Core Data writes `NSUUID`'s `UUIDString`: 32 hexadecimal digits in groups of 8-4-4-4-12, upper
    /// case (every store in the corpus). Lower case is accepted too, as `NSUUID` reads it; braces, white
    /// space or any other text are not a UUID. Object IDs carry the UUID in their URIs
    /// (`x-coredata://<UUID>/…`), so it is kept exactly as written.
    ///
    /// - Parameter field: where the text was found, for the message (`"Z_METADATA.Z_UUID"`).
    /// - Throws: `GraftError.malformedInput` naming the field and the text.
    public static func checkedIdentifier(_ text: String, field: String) throws -> String {
        guard UUID(uuidString: text) != nil else {
            throw GraftError(
                .malformedInput,
                "the store's UUID '\(Wording.excerpt(text))' is not a UUID (32 hexadecimal digits as 8-4-4-4-12)",
                context: [.key(field)])
        }
        return text
    }

    /// The store types Core Data names in `NSStoreType`.
    public enum StoreType: String, Sendable, CaseIterable {
        case sqlite = "SQLite"
        case xml = "XML"
        case binary = "Binary"
        case inMemory = "InMemory"
    }

    /// The metadata key under which XML and binary documents written by Graft carry their model: the
    /// compiled model, raw-deflate compressed, as a SQLite store's `Z_MODELCACHE` holds it. Core Data
    /// ignores keys it does not know.
    public static let graftModelKey = "GraftModelCache"

    /// The model the document carries (see `graftModelKey`), if any.
    ///
    /// - Throws: `GraftError.malformedInput` when the carried model cannot be read.
    public func carriedModel() throws -> Model? {
        guard let data = values[Self.graftModelKey]?.dataValue else { return nil }
        do {
            return try CompiledModelReader.read(RawDeflate.inflate(data))
        } catch let error as GraftError {
            throw error.at(.key(Self.graftModelKey))
        }
    }

    /// `NSStoreType`.
    public var storeType: String? { values["NSStoreType"]?.stringValue }

    /// `NSStoreModelVersionHashes`: entity name → 32-byte hash.
    public var versionHashes: [String: Data] {
        var hashes: [String: Data] = [:]
        for (name, value) in values["NSStoreModelVersionHashes"]?.dictionaryValue ?? [:] {
            if let data = value.dataValue { hashes[name] = data }
        }
        return hashes
    }

    /// `NSStoreModelVersionIdentifiers`.
    public var versionIdentifiers: [String] {
        (values["NSStoreModelVersionIdentifiers"]?.arrayValue ?? []).compactMap(\.stringValue)
    }

    /// The framework version number recorded by the writer (`NSPersistenceFrameworkVersion`).
    public var frameworkVersion: Int64? { values["NSPersistenceFrameworkVersion"]?.int64Value }

    /// The framework version Graft writes: that of Core Data in macOS 14 / iOS 17, whose stores the corpus
    /// holds (`SampleModel3_V1.sqlite`: 1344).
    public static let graftFrameworkVersion: Int64 = 1344

    /// Metadata describing `model` for a new store: Core Data's keys, with `keeping`'s other keys kept.
    ///
    /// - Parameters:
    ///   - identifier: the store UUID; a new one by default.
    ///   - keeping: metadata of a store being rewritten (converted, saved): keys Graft does not set are
    ///     copied from it unchanged.
    public static func make(
        for model: Model, storeType: StoreType, identifier: String = UUID().uuidString,
        keeping existing: PropertyList.Dictionary = [:]
    ) -> StoreMetadata {
        var values = existing
        let hashes = model.versionHashes
        var hashDictionary = PropertyList.Dictionary()
        for name in hashes.keys.sorted() { hashDictionary[name] = .data(hashes[name]!) }
        values["NSStoreType"] = .string(storeType.rawValue)
        values["NSStoreModelVersionHashes"] = .dictionary(hashDictionary)
        values["NSStoreModelVersionHashesVersion"] = .integer(3)
        values["NSStoreModelVersionHashesDigest"] = .string(model.versionHashesDigest)
        values["NSStoreModelVersionChecksumKey"] = .string(model.versionChecksum)
        values["NSStoreModelVersionIdentifiers"] = .array(model.versionIdentifiers.map(PropertyList.string))
        values["NSPersistenceFrameworkVersion"] = .integer(graftFrameworkVersion)
        if storeType == .sqlite {
            values["_NSAutoVacuumLevel"] = .string("2")
            values[graftModelKey] = nil  // a SQLite store keeps its model in Z_MODELCACHE
        } else {
            values["_NSAutoVacuumLevel"] = nil
            if storeType == .xml || storeType == .binary {
                values[graftModelKey] = (try? CompiledModelWriter.modelCache(model)).map(PropertyList.data)
            }
        }
        values["NSStoreUUID"] = .string(identifier)
        return StoreMetadata(identifier: identifier, values: values)
    }

    /// The entities whose recorded version hash differs from `model`'s (or that only one side has).
    public func entitiesDiffering(from model: Model) -> [String] {
        let recorded = versionHashes
        let computed = model.versionHashes
        return Set(recorded.keys).union(computed.keys).filter { recorded[$0] != computed[$0] }.sorted()
    }

    /// Checks that the store was written with `model`, when it records version hashes.
    ///
    /// - Throws: `GraftError.modelMismatch` naming every entity whose hash differs.
    public func check(against model: Model, path: String) throws {
        // A store that records no hashes (a Core Data 1.0 document) cannot be checked this way.
        guard !versionHashes.isEmpty else { return }
        let differing = entitiesDiffering(from: model)
        guard !differing.isEmpty else { return }
        let recorded = versionHashes
        let described = differing.map { name -> String in
            if recorded[name] == nil { return "\(name) (not in the store's model)" }
            if model.entity(named: name) == nil { return "\(name) (not in the given model)" }
            return name
        }
        throw GraftError(
            .modelMismatch,
            "the store was written with a different model; entities that differ: \(described.joined(separator: ", ")) "
                + "(migrating between model versions is not supported yet)",
            context: [.file(path)])
    }
}
