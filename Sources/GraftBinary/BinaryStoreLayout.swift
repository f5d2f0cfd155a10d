import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// Every decision about the binary store's layout, in one place.
///
/// No Apple-written binary store has been available to check against: the header, the key names and
/// the node layout follow the framework's own reading and node classes as their public decompiled text
/// shows them (`NSBinaryObjectStoreFile`, `NSStoreMapNode`, `NSDictionaryMapNode`, `NSDictionaryStoreMap`,
/// `-[NSEntityDescription _createCachesAndOptimizeState]`), and everything they leave open is decided
/// here (see `Formats/binary-store.md`, which marks each rule as known or decided). The reader and the writer take every constant, key name and value encoding from this
/// type, so a correction from a real sample is a change to this file.
///
/// For example:
///
/// ```swift
/// let slots = BinaryStoreLayout.AttributeSlots(entity: employee, model: model)  // which property each slot is
/// let form = BinaryStoreLayout.archivedForm(of: .decimal)       // .decimalNumber
/// ```
public enum BinaryStoreLayout {
    // MARK: Header

    /// The header's size in bytes; the object map follows it.
    public static let headerSize = 64
    /// Bytes 0–7.
    public static let magic: [UInt8] = Array("CoreData".utf8)
    /// Bytes 8–11: the only format version Graft reads and writes.
    public static let formatVersion: UInt32 = 1
    /// Bytes 12–15: the database version Graft writes (the same number the XML store's
    /// `<version>` holds). Any value is accepted when reading.
    public static let databaseVersion: UInt32 = 134_481_920

    /// Where each header field lies: offset and size in bytes, all big-endian.
    public enum HeaderField {
        public static let formatVersion = (offset: 8, size: 4)
        public static let databaseVersion = (offset: 12, size: 4)
        public static let metadataOffset = (offset: 16, size: 8)
        public static let metadataLength = (offset: 24, size: 8)
        public static let mapOffset = (offset: 32, size: 8)
        public static let mapLength = (offset: 40, size: 8)
        /// Graft's decision: the highest primary key in the document (0 when it is empty), as
        /// `Z_PRIMARYKEY.Z_MAX` is in a SQLite store.
        public static let primaryKeyCounter = (offset: 48, size: 8)
        /// Bytes 56–63 are written as zero and ignored when reading.
    }

    // MARK: The two archives

    /// The `$top` key of the object-map archive.
    public static let mapRootKey = "mapData"
    /// The `$top` key of the metadata archive.
    public static let metadataRootKey = "metadata"
    // The model a Graft-written document carries lives in the metadata under
    // `StoreMetadata.graftModelKey`, as for XML documents.

    /// The object map's class: a plain dictionary from primary key (`NSNumber`) to node.
    public static let mapClassChain = ["NSDictionary", "NSObject"]
    /// Graft's decision: the class name written for each node. Readers ignore node class names.
    public static let nodeClassChain = ["NSDictionaryMapNode", "NSStoreMapNode", "NSObject"]
    /// The class of `NSAttributeValues` and of each relationship's key list.
    public static let arrayClassChain = ["NSArray", "NSObject"]
    /// The class of `NSRelatedNodes`.
    public static let dictionaryClassChain = ["NSDictionary", "NSObject"]

    // MARK: Nodes

    /// The fields of one node.
    public enum NodeKey {
        /// The object's primary key, a 64-bit integer stored inline.
        public static let primaryKey = "NSPrimaryKey64"
        /// An older spelling of the primary key, accepted when reading.
        public static let legacyPrimaryKey = "NSKey"
        /// The name of the object's exact entity (a subentity's own name, never its parent's).
        public static let entityName = "NSEntityName"
        /// Relationship name → `NSArray` of the related objects' primary keys (`NSNumber`).
        public static let relatedNodes = "NSRelatedNodes"
        /// `NSArray` with one slot per property (``AttributeSlots``), `NSNull` where there is no value.
        public static let attributeValues = "NSAttributeValues"
    }

    /// The older node field Core Data reads when `NSAttributeValues` is absent: a dictionary from
    /// property name to value. Accepted when reading, never written.
    public static let attributesByNameKey = "NSAttributes"
    /// The class of the placeholder in every slot without a value: `NSNull`, one shared instance (as
    /// `-[NSDictionaryMapNode encodeWithCoder:]` puts `[NSNull null]` there). `$null` is read too.
    public static let nullClassChain = ["NSNull", "NSObject"]

    /// Which properties `NSAttributeValues` has slots for, and how a node's array is read.
    ///
    /// Known from Apple's node classes: `-[NSDictionaryStoreMap addObject:objectIDMap:]` makes the array
    /// as long as the entity's property search mapping (every property: attributes, transient ones
    /// included, relationships and fetched properties) and fills only the stored attributes;
    /// `-[NSDictionaryMapNode encodeWithCoder:]` writes `NSNull` in every other slot. The order is
    /// `Model.flattenedProperties(of:)`, in which the stored attributes come first.
    public struct AttributeSlots: Sendable {
        /// Core Data's slots: one per property, in property order.
        public let properties: [PropertyReference]
        /// The stored attributes, which are the first slots: attribute index and archived form.
        public let storedAttributes: [(index: Int, form: ArchivedForm)]
        /// The fewest slots Core Data writes for an entity of this version hash: the stored attributes and
        /// the stored relationships, which the hash covers. Transient properties and fetched properties
        /// are not covered, so a model with equal hashes may have more or fewer of them; their slots are
        /// always null, and the reader takes any number of them.
        public let minimumCount: Int
        /// Graft's first layout (documents written before Core Data's order was known): one slot per
        /// stored attribute, sorted by name (Unicode scalar order).
        public let legacyStoredAttributes: [(index: Int, form: ArchivedForm)]
        /// Whether an array with one slot per stored attribute may be either layout and the two orders
        /// differ (a subentity without stored relationships whose own attributes sort among the
        /// inherited ones); the document's layout (``documentLayout(metadata:)``) decides.
        public let isAmbiguous: Bool

        public init(entity: EntityDescription, model: Model) {
            properties = model.flattenedProperties(of: entity)
            storedAttributes = properties.compactMap { property in
                guard case .attribute(let index) = property, entity.group(of: property) == .storedAttributes else {
                    return nil
                }
                return (index, archivedForm(of: entity.attributes[index].type))
            }
            let storedRelationships = entity.relationships.filter { !$0.isTransient }.count
            minimumCount = storedAttributes.count + storedRelationships
            legacyStoredAttributes = entity.attributes.indices
                .filter { !entity.attributes[$0].isTransient }
                .sorted {
                    entity.attributes[$0].name.unicodeScalars.lexicographicallyPrecedes(
                        entity.attributes[$1].name.unicodeScalars)
                }
                .map { ($0, archivedForm(of: entity.attributes[$0].type)) }
            isAmbiguous =
                storedRelationships == 0
                && legacyStoredAttributes.map { $0.index } != storedAttributes.map { $0.index }
        }

        /// The layout of a node's `NSAttributeValues` array of `count` slots, or `nil` when it fits
        /// neither: `count` equal to the stored attributes is Graft's first layout when Core Data's needs
        /// more slots (for the stored relationships), and either when it does not (the document's layout
        /// decides only if the two orders differ); `count` of at least ``minimumCount`` is Core Data's.
        public func layout(forCount count: Int, document: AttributeValuesLayout) -> AttributeValuesLayout? {
            if count == legacyStoredAttributes.count
                && (count < minimumCount || (isAmbiguous && document == .storedAttributesByName))
            {
                return .storedAttributesByName
            }
            return count >= minimumCount ? .propertyOrder : nil
        }
    }

    /// The two layouts of `NSAttributeValues` that Graft reads.
    public enum AttributeValuesLayout: Sendable, Equatable {
        /// Core Data's: ``AttributeSlots/properties``. Graft writes this one.
        case propertyOrder
        /// Graft's first layout: ``AttributeSlots/legacyStoredAttributes``.
        case storedAttributesByName
    }

    /// Graft's decision: the metadata key marking a document Graft wrote in Core Data's layout, with the
    /// value ``layoutVersion``. Core Data ignores metadata keys it does not know (and keeps them).
    public static let layoutMetadataKey = "GraftBinaryLayout"
    /// 2: `NSAttributeValues` in property order (1, never written, would be Graft's first layout).
    public static let layoutVersion: Int64 = 2

    /// The layout of a document whose arrays could be either (see ``AttributeSlots/isAmbiguous``),
    /// from its metadata: Core Data's when Graft marked it so (``layoutMetadataKey``); Graft's first
    /// layout when it carries Graft's model (`GraftModelCache`, which every document Graft wrote before
    /// had and Core Data never writes) without the mark; otherwise Core Data's, whose documents carry
    /// neither.
    ///
    /// - Throws: `GraftError.unsupportedFormat` for a layout version Graft does not know.
    public static func documentLayout(metadata: PropertyList.Dictionary) throws -> AttributeValuesLayout {
        if let mark = metadata[layoutMetadataKey] {
            guard mark.int64Value == layoutVersion else {
                throw GraftError(
                    .unsupportedFormat,
                    "the document says its nodes have layout \(mark.int64Value.map(String.init) ?? "of another kind") "
                        + "(\(layoutMetadataKey)); this Graft reads "
                        + "layout \(layoutVersion)",
                    context: [.key(layoutMetadataKey)])
            }
            return .propertyOrder
        }
        return metadata[StoreMetadata.graftModelKey] != nil ? .storedAttributesByName : .propertyOrder
    }

    /// Which relationships `NSRelatedNodes` holds (known from `-[NSDictionaryStoreMap
    /// addObject:objectIDMap:]` and `-[NSStoreMapNode encodeWithCoder:]`): the stored relationships that
    /// hold something, a to-one as an array of its one key, a to-many as an array of its keys (an ordered
    /// one in order); an empty relationship has no entry, and a node without entries has no
    /// `NSRelatedNodes`. When reading, a missing entry is empty. Keys name no entity: a key is unique in
    /// the whole document, and the related node names its own entity.
    public static func storedRelationships(of entity: EntityDescription) -> [Int] {
        entity.relationships.indices.filter { !entity.relationships[$0].isTransient }
    }

    // MARK: Primary keys

    /// Graft's decision on primary keys: one key sequence for the whole document (there is one
    /// counter in the header, and the map is keyed by primary key alone), so no two objects share a
    /// key. Graft's snapshots keep keys unique per inheritance tree only; when two trees use the same
    /// key, the tree whose root comes first in entity order keeps it and the others' objects get new
    /// keys above the highest key in the document, in (entity, key) order.
    public static let keysAreUniquePerDocument = true

    // MARK: Values

    /// How an attribute value is archived: always as the Foundation object Core Data hands out for
    /// the attribute type.
    public enum ArchivedForm: Sendable, Equatable {
        /// `NSString`, archived as a plain string.
        case string
        /// `NSNumber` holding an integer, archived as a plain 64-bit integer (every Int64 exactly).
        case integer
        /// `NSNumber` holding a Boolean, archived as a plain Boolean.
        case boolean
        /// `NSNumber` holding a double (Float attributes too), archived as an 8-byte real, so NaN,
        /// ±infinity and every bit of the value survive.
        case real
        /// `NSDecimalNumber` with ``DecimalKey`` fields: the exact digits, not a rounded double.
        case decimalNumber
        /// `NSDate` with `NS.time`, seconds since 2001-01-01 00:00:00 UTC as a double (fractions,
        /// negative dates and NaN kept).
        case date
        /// `NSData`, archived as plain data (Binary, and the transformed bytes of Transformable).
        case data
        /// `NSUUID` with its 16 `NS.uuidbytes`.
        case uuid
        /// `NSURL` with `NS.base` `$null` and the absolute string as `NS.relative`.
        case url
        /// Undefined, ObjectID and Composite attributes: whichever of the above the value is.
        case byValue
    }

    /// The archived form of an attribute type's values.
    public static func archivedForm(of type: AttributeType) -> ArchivedForm {
        switch type {
        case .integer16, .integer32, .integer64: return .integer
        case .boolean: return .boolean
        case .double, .float: return .real
        case .decimal: return .decimalNumber
        case .string: return .string
        case .date: return .date
        case .binary, .transformable: return .data
        case .uuid: return .uuid
        case .uri: return .url
        case .undefined, .objectID, .composite: return .byValue
        }
    }

    public static let dateClassChain = ["NSDate", "NSObject"]
    public static let uuidClassChain = ["NSUUID", "NSObject"]
    public static let urlClassChain = ["NSURL", "NSObject"]
    public static let decimalClassChain = ["NSDecimalNumber", "NSNumber", "NSValue", "NSObject"]

    /// Field names of the Foundation objects values are archived as.
    public enum ValueKey {
        public static let time = "NS.time"
        public static let uuidBytes = "NS.uuidbytes"
        public static let urlBase = "NS.base"
        public static let urlRelative = "NS.relative"
        public static let string = "NS.string"
        public static let bytes = "NS.bytes"
        public static let data = "NS.data"
        public static let keys = "NS.keys"
        public static let objects = "NS.objects"
    }

    /// The fields of an archived `NSDecimalNumber`, as Foundation's keyed coding writes them.
    public enum DecimalKey {
        /// Int32: the power of ten.
        public static let exponent = "NS.exponent"
        /// Int32: how many of the eight 16-bit mantissa words are in use (0 with `negative` is NaN).
        public static let length = "NS.length"
        public static let negative = "NS.negative"
        public static let compact = "NS.compact"
        /// Int32: the byte order of `mantissa`, 1 = little-endian (the only order Graft writes).
        public static let mantissaByteOrder = "NS.mantissa.bo"
        /// 16 bytes: eight 16-bit words, least significant first.
        public static let mantissa = "NS.mantissa"
    }

    /// `NS.mantissa.bo` values (Foundation's `NSByteOrder`).
    public static let littleEndianByteOrder: Int64 = 1
    public static let bigEndianByteOrder: Int64 = 2
}
