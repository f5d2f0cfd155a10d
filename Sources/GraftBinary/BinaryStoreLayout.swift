import Foundation
import GraftModel

/// Every decision about the binary store's layout, in one place.
///
/// No Apple-written binary store has been available to check against: the header, the key names and
/// the node layout follow what is known of Apple's framework behaviour, and everything the known facts
/// leave open is decided here (see `Formats/binary-store.md`, which marks each rule as known or
/// decided). The reader and the writer take every constant, key name and value encoding from this
/// type, so a correction from a real sample is a change to this file.
///
/// For example:
///
/// ```swift
/// let slots = BinaryStoreLayout.attributeSlots(of: employee)   // which attribute each value is
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
        /// `NSArray` of attribute values in ``attributeSlots(of:)`` order, `$null` where empty.
        public static let attributeValues = "NSAttributeValues"
    }

    /// Graft's decision on which attributes `NSAttributeValues` holds and in what order: every
    /// non-transient attribute of the entity, inherited ones included, sorted by name (Unicode
    /// scalar order). Models with equal version hashes have the same slots, because the hash covers
    /// exactly the non-transient attributes and their names.
    ///
    /// - Returns: indexes into `entity.attributes`, one per slot.
    public static func attributeSlots(of entity: EntityDescription) -> [Int] {
        entity.attributes.indices.filter { !entity.attributes[$0].isTransient }
            .sorted {
                entity.attributes[$0].name.unicodeScalars.lexicographicallyPrecedes(
                    entity.attributes[$1].name.unicodeScalars)
            }
    }

    /// Graft's decision on which relationships `NSRelatedNodes` holds: every non-transient
    /// relationship, empty ones included (as an empty array), in `entity.relationships` order. A
    /// to-one is an array of zero or one key; an ordered to-many lists its keys in order. Keys name
    /// no entity: a key is unique in the whole document, and the related node names its own entity.
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
