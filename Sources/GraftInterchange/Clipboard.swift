import Foundation
@_spi(GraftInternal) import GraftCore
import GraftGraph
import GraftModel

/// A clipboard document: a chosen part of an object graph, self-describing, ready to be pasted as new
/// objects into another store.
///
/// It carries the source model's entity names and version hashes, the source store's UUID, the roots
/// that were chosen, every copied object under a local id (`o1`, `o2`, …) with its attribute values and
/// its relationships, and a *reference* (`r1`, …) for each object the selection left out but a copied
/// object points to: its entity, its identity (the values that identify it in any store) and its source
/// URI, so that a paste can link to it.
///
/// Four encodings carry the same document (see `ClipboardEncoding` and `Formats/clipboard.md`).
///
/// For example:
///
/// ```swift
/// let clipboard = try Copier(source: store).copy(Selection(roots: .predicate(entity: "Department", format: "name == 'Sales'")))
/// let json = try ClipboardEncoding.json.encode(clipboard)
/// ```
public struct Clipboard: Hashable, Sendable {
    /// The format's name, written in every encoding.
    public static let formatName = "graft-clipboard"
    /// The version of the format this code writes and reads.
    public static let formatVersion = 1

    /// The model the objects were copied from: entity name → version hash, in name order.
    public var entities: [EntityInfo] { didSet { verification = ClipboardVerification() } }
    /// The source model's version identifiers.
    public var versionIdentifiers: [String] { didSet { verification = ClipboardVerification() } }
    /// The source store's UUID, if the objects came from a store.
    public var sourceStore: String? { didSet { verification = ClipboardVerification() } }
    /// The local ids of the objects that were chosen (the rest came along by the selection's rules).
    public var roots: [String] {
        get { storage.roots }
        // In place, so that changing one object does not copy the others.
        _modify {
            verification = ClipboardVerification()
            yield &storage.roots
        }
        set {
            verification = ClipboardVerification()
            storage.roots = newValue
        }
    }
    /// Every copied object, roots first, then in the order the selection reached them.
    public var objects: [Object] {
        get { storage.objects }
        // In place, so that changing one object does not copy the others.
        _modify {
            verification = ClipboardVerification()
            yield &storage.objects
        }
        set {
            verification = ClipboardVerification()
            storage.objects = newValue
        }
    }
    /// Objects left out of the copy but pointed to by copied objects.
    public var references: [Reference] {
        get { storage.references }
        // In place, so that changing one object does not copy the others.
        _modify {
            verification = ClipboardVerification()
            yield &storage.references
        }
        set {
            verification = ClipboardVerification()
            storage.references = newValue
        }
    }
    /// The whole source model in Xcode's `contents` format (see `Formats/models.md`), so that a paste can
    /// create a new store with it; nil when the copy left it out.
    public var modelContents: Data? { didSet { verification = ClipboardVerification() } }
    /// Whether the document, as it is, has passed `check()` (set when it is decoded, cleared by a change).
    var verification = ClipboardVerification()
    /// The document's long members; each property above clears `verification` when it changes.
    private var storage: Storage

    /// The arrays that can be long, changed in place through their properties' `_modify`.
    private struct Storage: Hashable, Sendable {
        var roots: [String]
        var objects: [Object]
        var references: [Reference]
    }

    public init(
        entities: [EntityInfo], versionIdentifiers: [String] = [], sourceStore: String? = nil, roots: [String] = [],
        objects: [Object] = [], references: [Reference] = [], modelContents: Data? = nil
    ) {
        storage = Storage(roots: roots, objects: objects, references: references)
        self.entities = entities
        self.versionIdentifiers = versionIdentifiers
        self.sourceStore = sourceStore
        self.modelContents = modelContents
    }

    /// The source model the document carries, if any.
    ///
    /// - Throws: `GraftError.malformedInput` when it does not parse, or when its entities' version hashes
    ///   differ from the document's entity list (the two must describe the same model).
    public func model() throws -> Model? {
        guard let modelContents else { return nil }
        let model: Model
        do {
            model = try XcdatamodelReader.read(modelContents, path: "the clipboard's model")
        } catch let error as GraftError {
            throw GraftError(.malformedInput, "the model the clipboard carries cannot be read", underlying: [error])
        }
        for info in entities {
            guard let entity = model.entity(named: info.name), entity.versionHash == info.versionHash else {
                throw GraftError(
                    .malformedInput,
                    "the model the clipboard carries does not match its entity list: \(info.name) differs",
                    context: [.entity(info.name)])
            }
        }
        return model
    }

    /// One entity of the source model, with what a paste needs to read values: the type of each attribute
    /// and the kind of each relationship. Only entities that objects or references use are listed.
    public struct EntityInfo: Hashable, Sendable {
        public var name: String
        /// SHA-256 version hash of the entity in the source model.
        public var versionHash: Data
        /// Attribute name → type, in the entity's attribute order.
        public var attributes: [AttributeInfo]
        /// Relationship name → to-many or not, ordered or not.
        public var relationships: [RelationshipInfo]

        public init(
            name: String, versionHash: Data, attributes: [AttributeInfo] = [], relationships: [RelationshipInfo] = []
        ) {
            self.name = name
            self.versionHash = versionHash
            self.attributes = attributes
            self.relationships = relationships
        }
    }

    public struct AttributeInfo: Hashable, Sendable {
        public var name: String
        public var type: AttributeType
        public init(name: String, type: AttributeType) {
            self.name = name
            self.type = type
        }
    }

    public struct RelationshipInfo: Hashable, Sendable {
        public var name: String
        public var isToMany: Bool
        public var isOrdered: Bool
        public init(name: String, isToMany: Bool, isOrdered: Bool = false) {
            self.name = name
            self.isToMany = isToMany
            self.isOrdered = isOrdered
        }
    }

    /// A copied object.
    public struct Object: Hashable, Sendable {
        /// The local id (`o1`, …), unique in the document.
        public var id: String
        public var entity: String
        /// Attribute values by name; attributes without a value are left out.
        public var attributes: [NamedValue]
        /// Relationship targets by name: local ids of objects (`o…`) or references (`r…`); to-ones have at
        /// most one, ordered to-manys are in order. Empty relationships are left out.
        public var relationships: [Link]

        public init(id: String, entity: String, attributes: [NamedValue] = [], relationships: [Link] = []) {
            self.id = id
            self.entity = entity
            self.attributes = attributes
            self.relationships = relationships
        }

        /// The value of the attribute `name`, if the object has one.
        public subscript(attribute name: String) -> Value? {
            attributes.first { $0.name == name }?.value
        }

        /// The targets of the relationship `name`.
        public subscript(relationship name: String) -> [String] {
            relationships.first { $0.name == name }?.targets ?? []
        }
    }

    /// An object the copy points to but did not take: pasting links to the object with the same identity
    /// in the target store.
    public struct Reference: Hashable, Sendable {
        /// The reference's id (`r1`, …), unique in the document.
        public var id: String
        public var entity: String
        /// The values that identify the object: a uniqueness constraint's attributes, or the ones named
        /// with `--identity`. Empty when the entity has no identity (the reference then cannot be resolved).
        public var identity: [NamedValue]
        /// The object's URI in the source store.
        public var uri: String?

        public init(id: String, entity: String, identity: [NamedValue] = [], uri: String? = nil) {
            self.id = id
            self.entity = entity
            self.identity = identity
            self.uri = uri
        }
    }

    /// An attribute's name and value.
    public struct NamedValue: Hashable, Sendable {
        public var name: String
        public var value: Value
        public init(_ name: String, _ value: Value) {
            self.name = name
            self.value = value
        }
    }

    /// A relationship's name and targets.
    public struct Link: Hashable, Sendable {
        public var name: String
        public var targets: [String]
        public init(_ name: String, _ targets: [String]) {
            self.name = name
            self.targets = targets
        }
    }

    /// The entity info for `name`.
    public func entity(named name: String) -> EntityInfo? {
        entities.first { $0.name == name }
    }

    /// Objects per entity.
    public var counts: [String: Int] {
        var counts: [String: Int] = [:]
        for object in objects { counts[object.entity, default: 0] += 1 }
        return counts
    }

    /// Checks that the document holds together: unique ids, known entities, attributes and relationships
    /// the document's own entity list declares (each once), values of the declared types, targets that
    /// exist, roots that are objects.
    ///
    /// A document ``ClipboardEncoding/decode(_:)`` returns has been checked while it was read; as long as
    /// it is not changed, checking it again returns at once.
    ///
    /// - Throws: `GraftError.malformedInput` naming the object and property.
    public func check() throws {
        if verification.isChecked { return }
        // The rules of each object are the ones the encoders check before writing.
        try ClipboardSchema(entities: entities).validate(self)
        var ids = ClipboardIDs(expected: objects.count + references.count)
        try ids.add(references: references)
        for object in objects { try ids.add(object) }
        if ids.hasMissingTargets {
            for object in objects { try ids.checkTargets(of: object) }
        }
        try ids.checkRoots(roots)
    }

    /// Records that the document, as it is, has passed `check()`.
    mutating func markChecked() { verification.isChecked = true }
}

/// Whether a clipboard has been checked as it is. It is no part of the document's value: two documents
/// are equal whether or not either has been checked.
struct ClipboardVerification: Hashable, Sendable {
    var isChecked = false

    static func == (lhs: Self, rhs: Self) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}

/// The rules of a document that need its ids: no id used twice, every target an object's or a
/// reference's id, every root an object's. Objects can be added one at a time, as a streaming reader
/// reads them; targets that name ids not seen yet are remembered and checked once all are known.
struct ClipboardIDs {
    private var table: LocalIDTable

    /// Ids for a document of about `expected` objects and references (0 when not known).
    init(expected: Int = 0) {
        table = LocalIDTable(expected: expected)
    }

    /// Adds the references' ids.
    mutating func add(references: [Clipboard.Reference]) throws {
        for reference in references {
            guard table.insert(reference.id, isObject: false) else {
                throw GraftError(.malformedInput, "the id is used twice", context: [.object(reference.id)])
            }
        }
    }

    /// Adds an object's id and notes its targets.
    @inline(__always)
    mutating func add(_ object: Clipboard.Object) throws {
        guard table.insert(object.id, isObject: true) else {
            throw GraftError(.malformedInput, "the id is used twice", context: [.object(object.id)])
        }
        for link in object.relationships {
            for target in link.targets { table.refer(target) }
        }
    }

    /// Whether a target names an id no object or reference added so far has.
    var hasMissingTargets: Bool { table.hasMissingTargets }

    /// Checks that every target of `object` is an id added.
    func checkTargets(of object: Clipboard.Object) throws {
        for link in object.relationships {
            for target in link.targets where !table.contains(target) {
                throw GraftError(
                    .malformedInput, "refers to '\(target)', which the document does not have",
                    context: [.object(object.id), .key(link.name)])
            }
        }
    }

    /// Checks that every root is an object's id.
    func checkRoots(_ roots: [String]) throws {
        for root in roots where !table.containsObject(root) {
            throw GraftError(.malformedInput, "the root '\(root)' is not an object of the document")
        }
    }
}

/// The ids of a document: ids of the form Graft writes (`o` or `r` and a number) are kept in a table
/// indexed by their number, so that checking the millions of links of a large document hashes no
/// strings; any other id, and numbers too far beyond the ids seen so far, go in a dictionary. The table
/// grows as ids come, so a streaming reader needs no count up front.
struct LocalIDTable {
    /// Per number, a nibble per prefix (`o` in the low one, `r` in the high one): the role (1 object, 2
    /// reference) in its low two bits, and whether a target names the id in the next.
    private var numbered: [UInt8] = []
    private var others: [String: UInt8] = [:]
    private var inserted = 0
    private var referredAhead = false
    /// How many ids the document is expected to have, so that targets far ahead of the ids read so far
    /// still find their place in the table.
    private let expected: Int

    init(expected: Int = 0) {
        self.expected = expected
    }

    private static let object: UInt8 = 1
    private static let reference: UInt8 = 2
    private static let roles: UInt8 = 3
    private static let referred: UInt8 = 4

    /// `o12` → (shift 0, 12), `r3` → (shift 4, 3); nil for ids of another form.
    @inline(__always)
    static func parse(_ id: String) -> (shift: UInt8, number: Int)? {
        // Over the string's own bytes (a native string, small ones too, has them contiguous).
        if let found = id.utf8.withContiguousStorageIfAvailable({ parse(UnsafeRawBufferPointer($0)) }) {
            return found
        }
        return Array(id.utf8).withUnsafeBytes { parse($0) }
    }

    /// `o12` → (shift 0, 12), `r3` → (shift 4, 3), from an id's UTF-8 bytes; nil for ids of another form.
    @inline(__always)
    static func parse(_ bytes: UnsafeRawBufferPointer) -> (shift: UInt8, number: Int)? {
        guard bytes.count >= 2, bytes.count <= 16 else { return nil }
        let shift: UInt8
        switch bytes[0] {
        case UInt8(ascii: "o"): shift = 0
        case UInt8(ascii: "r"): shift = 4
        default: return nil
        }
        // Digits without a leading zero, at most 15 of them.
        guard bytes[1] != UInt8(ascii: "0") else { return nil }
        var number = 0
        for index in 1..<bytes.count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            number = number * 10 + Int(digit)
        }
        return (shift, number)
    }

    /// `o12` → 12; nil for ids of any other form (so that `"o\(number)"` gives the id back).
    static func objectNumber(_ id: String) -> Int64? {
        guard let found = parse(id), found.shift == 0 else { return nil }
        return Int64(found.number)
    }

    /// The slot of a numbered id, growing the table when the number is not spread too thin.
    @inline(__always)
    private mutating func slot(_ id: String) -> (shift: UInt8, number: Int)? {
        guard let found = Self.parse(id) else { return nil }
        if found.number < numbered.count { return found }
        guard found.number <= 8 * max(inserted, expected) + 1024 else { return nil }
        grow(to: found.number)
        return found
    }

    private mutating func grow(to number: Int) {
        let size = max(number + 1, numbered.count * 2, expected + 1, 1024)
        numbered.append(contentsOf: repeatElement(0, count: size - numbered.count))
        // Ids kept aside while their numbers were beyond the table move in.
        for (id, bits) in others {
            guard let (shift, number) = Self.parse(id), number < numbered.count else { continue }
            numbered[number] |= bits << shift
            others[id] = nil
        }
    }

    @inline(__always)
    private func bits(_ id: String) -> UInt8 {
        if let (shift, number) = Self.parse(id), number < numbered.count {
            return (numbered[number] >> shift) & 0x0F
        }
        return others[id] ?? 0
    }

    /// Adds an id; false when it is already there.
    @inline(__always)
    mutating func insert(_ id: String, isObject: Bool) -> Bool {
        let role = isObject ? Self.object : Self.reference
        inserted += 1
        if let (shift, number) = slot(id) {
            guard (numbered[number] >> shift) & Self.roles == 0 else { return false }
            numbered[number] |= role << shift
            return true
        }
        let bits = others[id] ?? 0
        guard bits & Self.roles == 0 else { return false }
        others[id] = bits | role
        return true
    }

    /// Notes that a target names `id`, which may not have been added yet.
    @inline(__always)
    mutating func refer(_ id: String) {
        if let (shift, number) = slot(id) {
            if (numbered[number] >> shift) & Self.roles == 0 {
                numbered[number] |= Self.referred << shift
                referredAhead = true
            }
            return
        }
        let bits = others[id] ?? 0
        if bits & Self.roles == 0 {
            others[id] = bits | Self.referred
            referredAhead = true
        }
    }

    /// Whether some id a target names has not been added.
    var hasMissingTargets: Bool {
        guard referredAhead else { return false }
        let missing = Self.referred | Self.referred << 4
        for bits in numbered where bits & missing != 0 {
            if bits & Self.referred != 0 && bits & Self.roles == 0 { return true }
            if bits & (Self.referred << 4) != 0 && (bits >> 4) & Self.roles == 0 { return true }
        }
        return others.values.contains { $0 & Self.referred != 0 && $0 & Self.roles == 0 }
    }

    func contains(_ id: String) -> Bool { bits(id) & Self.roles != 0 }

    func containsObject(_ id: String) -> Bool { bits(id) & Self.roles == Self.object }
}

/// A document's object ids in order, each kept as its number when it has Graft's form (`o12` → 12) and as
/// text otherwise: no string per object for the ids Graft writes.
struct LocalIDList: Sendable {
    /// Per id, its number (≥ 0), else -1 - an index in `otherIDs`.
    private var numbers: [Int64] = []
    private var otherIDs: [String] = []

    init() {}

    init(_ ids: [String]) {
        numbers.reserveCapacity(ids.count)
        for id in ids {
            if let number = LocalIDTable.objectNumber(id) { append(number: number) } else { append(other: id) }
        }
    }

    var count: Int { numbers.count }

    /// Appends the id `o<number>`.
    mutating func append(number: Int64) { numbers.append(number) }

    /// Appends an id kept as its text.
    mutating func append(other id: String) {
        numbers.append(-1 - Int64(otherIDs.count))
        otherIDs.append(id)
    }

    subscript(position: Int) -> String {
        let number = numbers[position]
        return number >= 0 ? ClipboardLocalID.text(number) : otherIDs[Int(-1 - number)]
    }

    /// Appends the UTF-8 bytes of the id at `position` to `buffer`, without making its string.
    func write(_ position: Int, to buffer: ByteBuffer) {
        let number = numbers[position]
        if number >= 0 {
            buffer.append(UInt8(ascii: "o"))
            buffer.append(decimal: number)
        } else {
            buffer.append(string: otherIDs[Int(-1 - number)])
        }
    }
}

/// Where each id of a document is: the position of its object or reference, found without hashing for
/// ids of the usual form (`o12`, `r3`, numbered as ``LocalIDTable`` reads them), through a dictionary for
/// others. Built once, so that a paste follows links by position.
struct LocalIDPositions {
    /// Where an id is.
    enum Position: Equatable {
        case object(Int)
        case reference(Int)
    }

    /// Per number, the position + 1 of the object (`o…`) or reference (`r…`) so numbered; 0 for none.
    private var objects: [Int32] = []
    private var references: [Int32] = []
    private var others: [String: Position] = [:]

    init(objects: [Clipboard.Object], references: [Clipboard.Reference]) {
        let limit = 8 * (objects.count + references.count) + 1024
        // By position, only the ids read: a copy of each object would touch its every part.
        for offset in objects.indices {
            if let (shift, number) = LocalIDTable.parse(objects[offset].id), shift == 0, number <= limit {
                Self.set(&self.objects, number, offset)
            } else if others[objects[offset].id] == nil {
                others[objects[offset].id] = .object(offset)
            }
        }
        for (offset, reference) in references.enumerated() {
            if let (shift, number) = LocalIDTable.parse(reference.id), shift != 0, number <= limit {
                Self.set(&self.references, number, offset)
            } else if others[reference.id] == nil {
                others[reference.id] = .reference(offset)
            }
        }
    }

    /// Notes `offset` for `number`, unless an earlier one has it.
    private static func set(_ table: inout [Int32], _ number: Int, _ offset: Int) {
        if number >= table.count { table.append(contentsOf: repeatElement(0, count: number + 1 - table.count)) }
        if table[number] == 0 { table[number] = Int32(offset + 1) }
    }

    /// The position of the object or reference with the id `id`, nil when the document has none.
    @inline(__always)
    func position(of id: String) -> Position? {
        if let (shift, number) = LocalIDTable.parse(id) {
            if shift == 0, number < objects.count, objects[number] != 0 { return .object(Int(objects[number] - 1)) }
            if shift != 0, number < references.count, references[number] != 0 {
                return .reference(Int(references[number] - 1))
            }
        }
        return others.isEmpty ? nil : others[id]
    }
}

/// How attribute values are written in clipboard documents, whatever the encoding.
public enum ClipboardValues {
    /// The name each type has in every encoding (`"integer64"`, `"date"`, …).
    public static func typeName(_ type: AttributeType) -> String {
        switch type {
        case .undefined: return "undefined"
        case .integer16: return "integer16"
        case .integer32: return "integer32"
        case .integer64: return "integer64"
        case .decimal: return "decimal"
        case .double: return "double"
        case .float: return "float"
        case .string: return "string"
        case .boolean: return "boolean"
        case .date: return "date"
        case .binary: return "binary"
        case .uuid: return "uuid"
        case .uri: return "uri"
        case .transformable: return "transformable"
        case .objectID: return "objectID"
        case .composite: return "composite"
        }
    }

    /// The type a name stands for.
    public static func type(named name: String) -> AttributeType? {
        AttributeType.allCases.first { typeName($0) == name }
    }

    /// Whether a value has the form a type holds (integers for integer types, doubles for Float and
    /// Double, data for Binary and Transformable, …).
    public static func fits(_ value: Value, _ type: AttributeType) -> Bool {
        switch (type, value) {
        case (.integer16, .integer), (.integer32, .integer), (.integer64, .integer): return true
        case (.double, .double), (.float, .double), (.decimal, .decimal), (.string, .string), (.boolean, .bool),
            (.date, .date), (.binary, .data), (.transformable, .data), (.uuid, .uuid), (.uri, .uri):
            return true
        case (.undefined, _), (.objectID, _), (.composite, _): return true
        default: return false
        }
    }
}
