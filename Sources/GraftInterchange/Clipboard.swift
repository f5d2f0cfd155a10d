import Foundation
import GraftCore
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
    public var entities: [EntityInfo]
    /// The source model's version identifiers.
    public var versionIdentifiers: [String]
    /// The source store's UUID, if the objects came from a store.
    public var sourceStore: String?
    /// The local ids of the objects that were chosen (the rest came along by the selection's rules).
    public var roots: [String]
    /// Every copied object, roots first, then in the order the selection reached them.
    public var objects: [Object]
    /// Objects left out of the copy but pointed to by copied objects.
    public var references: [Reference]
    /// The whole source model in Xcode's `contents` format (see `Formats/models.md`), so that a paste can
    /// create a new store with it; nil when the copy left it out.
    public var modelContents: Data?

    public init(
        entities: [EntityInfo], versionIdentifiers: [String] = [], sourceStore: String? = nil, roots: [String] = [],
        objects: [Object] = [], references: [Reference] = [], modelContents: Data? = nil
    ) {
        self.entities = entities
        self.versionIdentifiers = versionIdentifiers
        self.sourceStore = sourceStore
        self.roots = roots
        self.objects = objects
        self.references = references
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
    /// the document's own entity list declares, values of the declared types, targets that exist, roots
    /// that are objects.
    ///
    /// - Throws: `GraftError.malformedInput` naming the object and property.
    public func check() throws {
        var entityInfo: [String: EntityInfo] = [:]
        for entity in entities {
            guard entityInfo.updateValue(entity, forKey: entity.name) == nil else {
                throw GraftError(.malformedInput, "the entity \(entity.name) is listed twice")
            }
        }
        var ids = LocalIDTable(objects: objects.map(\.id), references: references.map(\.id))
        for object in objects {
            guard ids.insert(object.id, isObject: true) else {
                throw GraftError(.malformedInput, "the id is used twice", context: [.object(object.id)])
            }
        }
        for reference in references {
            guard ids.insert(reference.id, isObject: false) else {
                throw GraftError(.malformedInput, "the id is used twice", context: [.object(reference.id)])
            }
            guard entityInfo[reference.entity] != nil else {
                throw GraftError(
                    .malformedInput,
                    "the reference names entity \(reference.entity), which the document does not describe",
                    context: [.object(reference.id)])
            }
        }
        // Objects usually come entity by entity: the last entity looked up is tried first.
        var last: EntityInfo?
        for object in objects {
            guard let info = last?.name == object.entity ? last : entityInfo[object.entity] else {
                throw GraftError(
                    .malformedInput, "the object names entity \(object.entity), which the document does not describe",
                    context: [.object(object.id)])
            }
            last = info
            for attribute in object.attributes {
                guard let declared = info.attributes.first(where: { $0.name == attribute.name }) else {
                    throw GraftError(
                        .malformedInput,
                        "\(object.entity) has no attribute '\(attribute.name)' in the document's entity list",
                        context: [.object(object.id), .key(attribute.name)])
                }
                guard ClipboardValues.fits(attribute.value, declared.type) else {
                    throw GraftError(
                        .malformedInput, "the value does not fit the declared type \(declared.type.modelName)",
                        context: [.object(object.id), .key(attribute.name)])
                }
            }
            for link in object.relationships {
                guard let declared = info.relationships.first(where: { $0.name == link.name }) else {
                    throw GraftError(
                        .malformedInput,
                        "\(object.entity) has no relationship '\(link.name)' in the document's entity list",
                        context: [.object(object.id), .key(link.name)])
                }
                if !declared.isToMany && link.targets.count > 1 {
                    throw GraftError(
                        .malformedInput, "a to-one relationship has \(link.targets.count) targets",
                        context: [.object(object.id), .key(link.name)])
                }
                for target in link.targets where !ids.contains(target) {
                    throw GraftError(
                        .malformedInput, "refers to '\(target)', which the document does not have",
                        context: [.object(object.id), .key(link.name)])
                }
            }
        }
        for root in roots where !ids.containsObject(root) {
            throw GraftError(.malformedInput, "the root '\(root)' is not an object of the document")
        }
    }
}

/// The ids of a document, for `Clipboard.check()`: ids of the form Graft writes (`o` or `r` and a
/// number) are kept in a table indexed by their number, so that checking the millions of links of a
/// large document hashes no strings; any other id goes in a set.
struct LocalIDTable {
    private enum Role: UInt8 {
        case object = 1, reference = 2
    }
    /// Per number, two bits per prefix (`o` in the low pair, `r` in the next): the role of that id.
    private var numbered: [UInt8]
    private var others: [String: Role] = [:]

    init(objects: [String], references: [String]) {
        var highest = 0
        for id in objects { highest = max(highest, Self.parse(id)?.number ?? 0) }
        for id in references { highest = max(highest, Self.parse(id)?.number ?? 0) }
        // A table only when the numbers are not spread too thin.
        let limit = 8 * (objects.count + references.count) + 1024
        numbered = highest <= limit ? Array(repeating: 0, count: highest + 1) : []
    }

    /// `o12` → (shift 0, 12), `r3` → (shift 2, 3); nil for ids of another form.
    private static func parse(_ id: String) -> (shift: UInt8, number: Int)? {
        var utf8 = id.utf8.makeIterator()
        let shift: UInt8
        switch utf8.next() {
        case UInt8(ascii: "o"): shift = 0
        case UInt8(ascii: "r"): shift = 2
        default: return nil
        }
        var number = 0, digits = 0
        while let byte = utf8.next() {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 15,
                digits > 0 || byte != UInt8(ascii: "0")
            else { return nil }
            number = number * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
        }
        return digits > 0 ? (shift, number) : nil
    }

    private func slot(_ id: String) -> (shift: UInt8, number: Int)? {
        guard let found = Self.parse(id), found.number < numbered.count else { return nil }
        return found
    }

    private func role(of id: String) -> Role? {
        if let (shift, number) = slot(id) { return Role(rawValue: (numbered[number] >> shift) & 3) }
        return others[id]
    }

    /// Adds an id; false when it is already there.
    mutating func insert(_ id: String, isObject: Bool) -> Bool {
        let role: Role = isObject ? .object : .reference
        if let (shift, number) = slot(id) {
            guard (numbered[number] >> shift) & 3 == 0 else { return false }
            numbered[number] |= role.rawValue << shift
            return true
        }
        return others.updateValue(role, forKey: id) == nil
    }

    func contains(_ id: String) -> Bool { role(of: id) != nil }

    func containsObject(_ id: String) -> Bool { role(of: id) == .object }
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
