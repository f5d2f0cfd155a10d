import GraftModel

/// The fixed parts of Core Data's XML store format, and the spellings of attribute types.
///
/// See `Formats/xml-store.md` for the evidence behind each rule.
enum XMLStoreFormat {
    /// `<version>` in `<databaseInfo>`: the same in every Apple-written file, framework versions 251
    /// and 977.
    static let databaseVersion: Int64 = 134_481_920

    /// The XML declaration Graft writes (as in `atomlib/orig/template.mslice`, framework version 977).
    static let declaration: StaticString = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\" ?>\n"

    /// The document type every Apple-written file names. Graft never reads the DTD.
    static let doctype: StaticString =
        "<!DOCTYPE database SYSTEM \"file:///System/Library/DTDs/CoreData.dtd\">\n\n"

    /// Core Data hands out ids after 101 (the first object is `z102`); `nextObjectID` holds the last id
    /// handed out, so an empty store says 101.
    static let firstNextObjectID: Int64 = 101

    /// The metadata key under which Graft keeps a compiled model (raw deflate of a `.mom` archive).
    static let modelCacheKey = "GraftModelCache"
}

/// How an `<attribute>`'s text is written, named by its `type`.
enum XMLValueKind: UInt8, Sendable {
    case int16, int32, int64, decimal, double, float, string, bool, date, binary, transformable, uuid, uri
    /// A string holding characters XML 1.0 cannot carry, written as base64 of its UTF-8 (Graft's own).
    case base64String
    /// An Object ID attribute (a spelling Graft chose; such attributes hold no value Graft can write).
    case objectID

    /// The spelling in `type="…"`.
    var spelling: String {
        switch self {
        case .int16: return "int16"
        case .int32: return "int32"
        case .int64: return "int64"
        case .decimal: return "decimal"
        case .double: return "double"
        case .float: return "float"
        case .string: return "string"
        case .bool: return "bool"
        case .date: return "date"
        case .binary: return "binary"
        case .transformable: return "transformable"
        case .uuid: return "uuid"
        case .uri: return "uri"
        case .base64String: return "string-base64"
        case .objectID: return "objectID"
        }
    }

    static let all: [XMLValueKind] = [
        .int16, .int32, .int64, .decimal, .double, .float, .string, .bool, .date, .binary, .transformable, .uuid,
        .uri, .base64String, .objectID,
    ]

    private static let spellings: [(bytes: [UInt8], kind: XMLValueKind)] = all.map { (Array($0.spelling.utf8), $0) }

    /// The kind a `type` spelling names (exact bytes first, then ignoring case).
    static func named(_ pointer: UnsafePointer<UInt8>, _ length: Int) -> XMLValueKind? {
        for entry in spellings where Bytes.equal(pointer, length, entry.bytes) { return entry.kind }
        let lowered = Bytes.string(pointer, length).lowercased()
        return all.first { $0.spelling.lowercased() == lowered }
    }

    static func named(_ text: String) -> XMLValueKind? {
        all.first { $0.spelling == text } ?? all.first { $0.spelling.lowercased() == text.lowercased() }
    }

    /// The kind Core Data writes for an attribute type, or `nil` for types the store cannot hold.
    init?(_ type: AttributeType) {
        switch type {
        case .integer16: self = .int16
        case .integer32: self = .int32
        case .integer64: self = .int64
        case .decimal: self = .decimal
        case .double: self = .double
        case .float: self = .float
        case .string: self = .string
        case .boolean: self = .bool
        case .date: self = .date
        case .binary: self = .binary
        case .transformable: self = .transformable
        case .uuid: self = .uuid
        case .uri: self = .uri
        case .objectID: self = .objectID
        case .undefined, .composite: return nil
        }
    }

    /// The attribute type a model inferred from a document gives this kind.
    var attributeType: AttributeType {
        switch self {
        case .int16: return .integer16
        case .int32: return .integer32
        case .int64: return .integer64
        case .decimal: return .decimal
        case .double: return .double
        case .float: return .float
        case .string, .base64String: return .string
        case .bool: return .boolean
        case .date: return .date
        case .binary: return .binary
        case .transformable: return .transformable
        case .uuid: return .uuid
        case .uri: return .uri
        case .objectID: return .objectID
        }
    }

    /// Families of kinds whose text a reader may decode as another member's: a document written with
    /// `int32` read with a model that says Integer 64, say.
    var family: Int {
        switch self {
        case .int16, .int32, .int64, .decimal, .double, .float, .bool: return 0
        case .string, .base64String: return 1
        case .date: return 2
        case .binary, .transformable: return 3
        case .uuid: return 4
        case .uri: return 5
        case .objectID: return 6
        }
    }
}
