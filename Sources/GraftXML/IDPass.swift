internal import CLibXML2
import Foundation
@_spi(GraftInternal) import GraftCore

/// A SAX pass that collects every object's id and entity, and, when there is no model, what the
/// document says about its entities: their attributes with types, their relationships with counts and
/// destinations, and which entities' objects are referenced through which destinations.
///
/// It replaces the byte scan for documents in encodings other than UTF-8, and is the first pass when
/// a model must be inferred.
final class IDPass: SAXPass {
    let ids: ObjectIDTable
    /// Resolves a `type` to an entity number; `nil` leaves the pass to fail.
    private let resolve: (UnsafePointer<UInt8>, Int) -> Int32?
    let schema: SchemaCollector?
    private var depth = 0
    /// The entity of the object being read (in `schema`), or -1.
    private var currentEntity: Int32 = -1

    init(
        url: URL, path: String, ids: ObjectIDTable, schema: SchemaCollector?,
        resolve: @escaping (UnsafePointer<UInt8>, Int) -> Int32?
    ) {
        self.ids = ids
        self.schema = schema
        self.resolve = resolve
        super.init(url: url, path: path)
    }

    func run() throws {
        var handler = Self.baseHandler()
        handler.startElementNs = { context, localName, _, _, _, _, attributeCount, _, attributes in
            let pass = Unmanaged<IDPass>.fromOpaque(context!).takeUnretainedValue()
            pass.start(localName!, SAXAttributes(pointer: attributes, count: Int(attributeCount)))
        }
        handler.endElementNs = { context, _, _, _ in
            Unmanaged<IDPass>.fromOpaque(context!).takeUnretainedValue().depth -= 1
        }
        try run(handler)
    }

    private func start(_ name: UnsafePointer<UInt8>, _ attributes: SAXAttributes) {
        depth += 1
        if depth == 2 && Bytes.equal(name, "object") {
            guard let type = attributes.value("type"), let id = attributes.value("id") else {
                fail(error(.malformedInput, "an <object> without a type or an id"))
                return
            }
            guard let entity = resolve(type.bytePointer, type.count) else {
                fail(
                    error(
                        .modelMismatch, "the object's type '\(Bytes.excerpt(type))' is not an entity of the model",
                        [.object(Bytes.string(id))]))
                return
            }
            guard ids.insert(id.bytePointer, id.count, entity: entity) else {
                fail(
                    error(
                        .malformedInput, "the id '\(Bytes.excerpt(id))' is used by two objects",
                        [.object(Bytes.string(id))]))
                return
            }
            currentEntity = entity
            schema?.objectSeen(entity)
        } else if depth == 3, let schema, currentEntity >= 0 {
            do {
                if Bytes.equal(name, "attribute") {
                    try schema.attributeSeen(attributes, entity: currentEntity, line: line)
                } else if Bytes.equal(name, "relationship") {
                    try schema.relationshipSeen(attributes, entity: currentEntity, line: line, ids: ids)
                }
            } catch var failure as GraftError {
                failure.context = [.file(path), .line(line)] + failure.context
                fail(failure)
            } catch {
                fail(error)
            }
        }
    }
}

/// What a document says about its own model, gathered object by object.
final class SchemaCollector {
    struct AttributeInfo {
        var name: String
        var kind: XMLValueKind
        var line: Int
    }

    struct RelationshipInfo {
        var name: String
        var minCount: Int
        var maxCount: Int
        var destination: Int32
        var line: Int
    }

    final class EntityInfo {
        var name: String
        var objectCount = 0
        /// Properties by lower-case name, in the order first seen.
        var attributeOrder: [String] = []
        var attributes: [String: AttributeInfo] = [:]
        var relationshipOrder: [String] = []
        var relationships: [String: RelationshipInfo] = [:]

        init(name: String) { self.name = name }
    }

    private(set) var entities: [EntityInfo] = []
    private var entityByName: [String: Int32] = [:]
    /// (destination, entity) pairs: an object of `entity` is referenced through a relationship whose
    /// destination is `destination`.
    private(set) var references = Set<Pair>()
    /// References to objects not yet seen, resolved at the end: each the destination (4 bytes), the
    /// id's length (4 bytes) and the id's bytes, one after another — no string an id.
    private let pending = ByteBuffer()

    struct Pair: Hashable {
        var destination: Int32
        var entity: Int32
    }

    /// The entity number for a `type` or `destination` (case-insensitive), adding it when new. Names are
    /// kept as Core Data writes them: entities in capitals, properties in lower case.
    func entity(_ pointer: UnsafePointer<UInt8>, _ length: Int) -> Int32 {
        let name = Bytes.string(pointer, length)
        let key = name.uppercased()
        if let known = entityByName[key] { return known }
        let number = Int32(entities.count)
        entities.append(EntityInfo(name: key))
        entityByName[key] = number
        return number
    }

    func objectSeen(_ entity: Int32) {
        entities[Int(entity)].objectCount += 1
    }

    func attributeSeen(_ attributes: SAXAttributes, entity: Int32, line: Int) throws {
        let info = entities[Int(entity)]
        guard let nameBytes = attributes.value("name"), nameBytes.count > 0 else {
            throw GraftError(.malformedInput, "an <attribute> without a name", context: [.entity(info.name)])
        }
        let name = Bytes.string(nameBytes)
        let key = name.lowercased()
        guard let typeBytes = attributes.value("type"),
            let seen = XMLValueKind.named(typeBytes.bytePointer, typeBytes.count)
        else {
            let type = attributes.value("type").map { Bytes.excerpt($0) } ?? ""
            throw GraftError(
                .malformedInput, type.isEmpty ? "the attribute has no type" : "unknown attribute type '\(type)'",
                context: [.entity(info.name), .key(name)])
        }
        let kind = seen == .base64String ? .string : seen
        if info.relationships[key] != nil {
            throw GraftError(
                .malformedInput, "'\(name)' is written both as an attribute and as a relationship",
                context: [.entity(info.name), .key(name)])
        }
        guard var known = info.attributes[key] else {
            info.attributes[key] = AttributeInfo(name: key, kind: kind, line: line)
            info.attributeOrder.append(key)
            return
        }
        guard known.kind != kind else { return }
        guard let merged = Self.merge(known.kind, kind) else {
            throw GraftError(
                .malformedInput,
                "the attribute is written as \(kind.spelling) here but as \(known.kind.spelling) on line \(known.line)",
                context: [.entity(info.name), .key(name)])
        }
        known.kind = merged
        info.attributes[key] = known
    }

    /// The one kind that holds the values of both, when there is one.
    private static func merge(_ first: XMLValueKind, _ second: XMLValueKind) -> XMLValueKind? {
        let integers: [XMLValueKind] = [.int16, .int32, .int64]
        if let a = integers.firstIndex(of: first), let b = integers.firstIndex(of: second) {
            return integers[max(a, b)]
        }
        if Set([first, second]) == [.float, .double] { return .double }
        if Set([first, second]) == [.binary, .transformable] { return .binary }
        return nil
    }

    func relationshipSeen(_ attributes: SAXAttributes, entity: Int32, line: Int, ids: ObjectIDTable) throws {
        let info = entities[Int(entity)]
        guard let nameBytes = attributes.value("name"), nameBytes.count > 0 else {
            throw GraftError(.malformedInput, "a <relationship> without a name", context: [.entity(info.name)])
        }
        let name = Bytes.string(nameBytes)
        let key = name.lowercased()
        guard let destinationBytes = attributes.value("destination"), destinationBytes.count > 0 else {
            throw GraftError(
                .malformedInput, "the relationship has no destination", context: [.entity(info.name), .key(name)])
        }
        let type = attributes.value("type").map(Bytes.string) ?? ""
        let counts = type.split(separator: "/", omittingEmptySubsequences: false)
        guard counts.count == 2, let minCount = Int(counts[0]), let maxCount = Int(counts[1]), minCount >= 0,
            maxCount >= 0
        else {
            throw GraftError(
                .malformedInput, "the relationship's type '\(Bytes.excerpt(type))' is not of the form min/max",
                context: [.entity(info.name), .key(name)])
        }
        let destination = self.entity(destinationBytes.bytePointer, destinationBytes.count)
        if info.attributes[key] != nil {
            throw GraftError(
                .malformedInput, "'\(name)' is written both as an attribute and as a relationship",
                context: [.entity(info.name), .key(name)])
        }
        if let known = info.relationships[key] {
            if known.destination != destination || known.minCount != minCount || known.maxCount != maxCount {
                throw GraftError(
                    .malformedInput,
                    "the relationship is written as \(minCount)/\(maxCount) to \(entities[Int(destination)].name) here "
                        + "but as \(known.minCount)/\(known.maxCount) to \(entities[Int(known.destination)].name) on line \(known.line)",
                    context: [.entity(info.name), .key(name)])
            }
        } else {
            info.relationships[key] = RelationshipInfo(
                name: key, minCount: minCount, maxCount: maxCount, destination: destination, line: line)
            info.relationshipOrder.append(key)
        }
        // Which entities' objects the destination holds: evidence of inheritance.
        guard let idrefs = attributes.value("idrefs") else { return }
        var words = ByteText.Words(idrefs)
        while let (id, length) = words.next() {
            if let target = ids.lookup(id, length) {
                if Int32(target.entity) != destination {
                    references.insert(Pair(destination: destination, entity: Int32(target.entity)))
                }
            } else {
                appendPending(destination, id, length)
            }
        }
    }

    private func appendPending(_ destination: Int32, _ id: UnsafePointer<UInt8>, _ length: Int) {
        withUnsafeBytes(of: destination) { pending.append($0) }
        withUnsafeBytes(of: Int32(truncatingIfNeeded: length)) { pending.append($0) }
        pending.append(id, count: length)
    }

    /// Resolves references to objects that came after the reference.
    func resolvePending(_ ids: ObjectIDTable) {
        let bytes = pending.bytes
        var offset = 0
        while offset + 8 <= bytes.count {
            let destination = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
            let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 4, as: Int32.self))
            let id = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + offset + 8
            if let target = ids.lookup(id, length), Int32(target.entity) != destination {
                references.insert(Pair(destination: destination, entity: Int32(target.entity)))
            }
            offset += 8 + length
        }
        pending.removeAll()
    }
}
