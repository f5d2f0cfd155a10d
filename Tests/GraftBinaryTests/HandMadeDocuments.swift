import Foundation
import GraftBinary
import GraftCore
import GraftGraph
import GraftModel
import Testing

/// Binary stores put together in the tests with GraftCore's `KeyedArchiver`, independently of
/// `BinaryStoreWriter`: nodes in each form a reader may meet (Core Data's slots with `NSNull`, an
/// `NSAttributes` dictionary, Graft's first layout), and metadata as Core Data or Graft writes it.
enum HandMade {
    /// One attribute slot or dictionary value.
    enum Slot: Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
        case value(PropertyList)
        /// An archived `NSNull`, as Core Data writes in every slot without a value.
        case nsNull
        /// A `$null` reference, as Graft's first writer wrote for a missing value.
        case null

        init(stringLiteral value: String) { self = .value(.string(value)) }
        init(integerLiteral value: Int64) { self = .value(.integer(value)) }
    }

    /// A node's attributes.
    enum Attributes: Sendable {
        /// An array under `NSAttributeValues`.
        case slots([Slot])
        /// A dictionary by property name, under `key` (`NSAttributes`, or `NSAttributeValues`).
        case byName([(name: String, value: Slot)], key: String = BinaryStoreLayout.attributesByNameKey)
        /// No attribute field at all.
        case absent
    }

    struct Node: Sendable {
        var key: Int64
        var entity: String
        var attributes: Attributes
        /// `nil`: no `NSRelatedNodes` field (Core Data omits it when every relationship is empty).
        var related: [String: [Int64]]? = nil
        var filedUnder: Int64? = nil

        init(
            key: Int64, entity: String, attributes: Attributes, related: [String: [Int64]]? = nil,
            filedUnder: Int64? = nil
        ) {
            self.key = key
            self.entity = entity
            self.attributes = attributes
            self.related = related
            self.filedUnder = filedUnder
        }

        /// A node in Graft's first layout, with `$null` for a missing value and every relationship written.
        init(key: Int64, entity: String, values: [PropertyList?], related: [String: [Int64]] = [:]) {
            self.init(
                key: key, entity: entity, attributes: .slots(values.map { $0.map(Slot.value) ?? .null }),
                related: related)
        }
    }

    /// An object map of these nodes.
    static func map(_ nodes: [Node]) -> Data {
        var archiver = KeyedArchiver()
        // Foundation archives its one NSNull once.
        var nsNull: KeyedArchiver.UID?
        func encode(_ slot: Slot) -> KeyedArchiver.UID {
            switch slot {
            case .value(let value): return archiver.encodePropertyList(value)
            case .null: return .null
            case .nsNull:
                if let nsNull { return nsNull }
                let uid = archiver.encodeObject(classChain: BinaryStoreLayout.nullClassChain, fields: [:])
                nsNull = uid
                return uid
            }
        }
        var entries: [(key: KeyedArchiver.UID, value: KeyedArchiver.UID)] = []
        for node in nodes {
            var fields: PropertyList.Dictionary = [
                BinaryStoreLayout.NodeKey.primaryKey: .integer(node.key),
                BinaryStoreLayout.NodeKey.entityName: archiver.encode(node.entity).propertyList,
            ]
            switch node.attributes {
            case .slots(let slots):
                let elements = slots.map(encode)
                fields[BinaryStoreLayout.NodeKey.attributeValues] = archiver.encodeArray(elements).propertyList
            case .byName(let pairs, let key):
                let entries = pairs.map { (key: archiver.encode($0.name), value: encode($0.value)) }
                fields[key] = archiver.encodeDictionary(entries).propertyList
            case .absent:
                break
            }
            if let related = node.related {
                let entries = related.keys.sorted().map { name in
                    (
                        key: archiver.encode(name),
                        value: archiver.encodeArray(related[name]!.map { archiver.encode($0) })
                    )
                }
                fields[BinaryStoreLayout.NodeKey.relatedNodes] = archiver.encodeDictionary(entries).propertyList
            }
            let object = archiver.encodeObject(classChain: BinaryStoreLayout.nodeClassChain, fields: fields)
            entries.append((archiver.encode(node.filedUnder ?? node.key), object))
        }
        let map = archiver.encodeDictionary(entries)
        return archiver.finish(top: [BinaryStoreLayout.mapRootKey: map]).encode(format: .binary)
    }

    /// Who wrote a document, as its metadata tells.
    enum Writer: String, Sendable, CaseIterable, CustomTestStringConvertible {
        /// Core Data: its own keys only.
        case coreData
        /// Graft before Core Data's order was known: Graft's model (`GraftModelCache`), no layout mark.
        case firstGraft
        /// Graft now: the model and the layout mark.
        case graft

        var testDescription: String { rawValue }
    }

    /// A metadata archive for `model` as `writer` writes it.
    static func metadata(for model: Model, writer: Writer, extra: PropertyList.Dictionary = [:]) -> Data {
        var values = StoreMetadata.make(for: model, storeType: .binary).values
        switch writer {
        case .coreData:
            values[StoreMetadata.graftModelKey] = nil
            values[BinaryStoreLayout.layoutMetadataKey] = nil
        case .firstGraft:
            values[StoreMetadata.graftModelKey] = .data(Data([1]))
            values[BinaryStoreLayout.layoutMetadataKey] = nil
        case .graft:
            values[StoreMetadata.graftModelKey] = .data(Data([1]))
            values[BinaryStoreLayout.layoutMetadataKey] = .integer(BinaryStoreLayout.layoutVersion)
        }
        for key in extra.keys { values[key] = extra[key] }
        var archiver = KeyedArchiver()
        let root = archiver.encodePropertyList(.dictionary(values))
        return archiver.finish(top: [BinaryStoreLayout.metadataRootKey: root]).encode(format: .binary)
    }

    /// A file of a header, this map and this metadata.
    static func file(map: Data, metadata: Data) -> Data {
        let header = BinaryStoreHeader(
            metadataOffset: 64 + UInt64(map.count), metadataLength: UInt64(metadata.count),
            mapLength: UInt64(map.count), primaryKeyCounter: 1)
        return header.encoded + map + metadata
    }
}
