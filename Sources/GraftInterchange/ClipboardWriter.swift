import Foundation
@_spi(GraftInternal) import GraftCore
import GraftGraph
import GraftModel

/// Writes a clipboard document piece by piece: the header first, then the objects one at a time, then the
/// end, so that a document of any size is written in bounded memory.
///
/// The bytes are the same as ``ClipboardEncoding/encode(_:)`` writes for the same document (which is built
/// on this writer): the header's members up to `roots` before the first object, its `references` after
/// the last. They go to `sink` in chunks of about 256 KB.
///
/// For example:
///
/// ```swift
/// var writer = try ClipboardWriter(encoding: .json, header: header) { chunk in
///     try handle.write(contentsOf: Data(chunk))
/// }
/// for object in objects { try writer.write(object) }
/// try writer.finish()
/// ```
///
/// A binary property list fixes the width of its object references before its first object: give
/// `capacity` (what the objects will hold at most, see ``Capacity``) for the narrowest, which is what
/// `encode` writes; without it references take 4 bytes, enough for about four billion values.
public struct ClipboardWriter {
    /// The body for the encoding: a ``Body`` specialised for its sink (see ``SinkBody``), so that only
    /// each call for an object or a list of them goes through the protocol's table, never a token.
    private var body: any DocumentBody
    private var finished = false

    /// Begins a document: checks `header` and writes everything before the objects.
    ///
    /// - Parameters:
    ///   - encoding: the document's encoding.
    ///   - header: the document without its objects: its entity list must describe every object and
    ///     reference to be written.
    ///   - capacity: for binary property lists, at most what the objects will hold.
    ///   - sink: called with each chunk, in order; the bytes are valid only during the call. An error it
    ///     throws is rethrown by the call that wrote the chunk.
    /// - Throws: `GraftError.malformedInput` when the header does not hold together (an entity listed
    ///   twice, a reference that does not fit the entity list, a name an XML encoding cannot carry); what
    ///   `sink` throws.
    public init(
        encoding: ClipboardEncoding, header: Clipboard.Header, capacity: Capacity? = nil,
        sink: @escaping (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        try self.init(encoding: encoding, header: header, capacity: capacity, output: ByteBuffer(sink: sink))
    }

    init(encoding: ClipboardEncoding, header: Clipboard.Header, capacity: Capacity?, output: ByteBuffer) throws {
        let schema = try ClipboardSchema(entities: header.entities)
        let headerOnly = Clipboard(header: header, objects: [])
        try schema.validate(headerOnly)
        if encoding == .xml || encoding == .plist {
            try ClipboardSchema.validateXMLText(headerOnly, versionIdentifiers: encoding == .plist)
        }
        switch encoding {
        case .json:
            body = JSONBody(
                body: try Body(ClipboardJSONSink(schema: schema, output: output), encoding, header, schema, output))
        case .plist:
            body = PlistBody(
                body: try Body(ClipboardPlistSink(schema: schema, output: output), encoding, header, schema, output))
        case .xml:
            body = XMLBody(
                body: try Body(ClipboardXMLSink(schema: schema, output: output), encoding, header, schema, output))
        case .binaryPlist:
            let bound = (capacity ?? .large).bound + Capacity.headerBound(header)
            let sink = ClipboardBinaryPlistSink(schema: schema, output: output, objectBound: bound)
            body = BinaryPlistBody(body: try Body(sink, encoding, header, schema, output))
        }
    }

    /// Writes one object, after the ones written before. The object is checked at once; its bytes may
    /// be handed on later (text encodings write objects in rounds, on several threads).
    ///
    /// - Throws: `GraftError.malformedInput` naming the object and key when the object does not fit the
    ///   header's entity list (nothing of it is written then); what `sink` throws.
    public mutating func write(_ object: Clipboard.Object) throws {
        try requireOpen()
        try body.write(object, checked: false)
    }

    /// Writes an object made to fit the header's entity list (a copy of a store's object, read with the
    /// model the list was made from), without checking it again.
    mutating func write(fitting object: Clipboard.Object) throws {
        try body.write(object, checked: true)
    }

    /// Writes a store's object straight from its snapshot, as ``write(fitting:)`` writes
    /// `layout.object(snapshot)`: for an entity that ``SnapshotLayout/fits`` the entity list made from
    /// `layout`'s model (every write of a document must use the same layout).
    mutating func write(_ snapshot: Snapshot, layout: SnapshotLayout) throws {
        try requireOpen()
        try body.write(snapshot, layout: layout)
    }

    /// Writes store objects straight from their snapshots, in order, as ``write(_:layout:)`` writes each:
    /// the text encodings write them in rounds on several threads, the snapshots read where they are
    /// (batches of ``roundSize`` fill whole rounds). Every snapshot's entity must fit as there.
    mutating func write(_ snapshots: [Snapshot], layout: SnapshotLayout) throws {
        try requireOpen()
        try body.write(snapshots, layout: layout)
    }

    /// How many objects one round of writing on several threads takes.
    static var roundSize: Int { WritingRounds.parts * WritingRounds.partSize }

    /// Writes the references and the document's end, and hands on the last bytes.
    public mutating func finish() throws {
        try requireOpen()
        finished = true
        try body.finish()
    }

    private func requireOpen() throws {
        if finished { throw GraftError(.invalidOperation, "the clipboard writer has finished its document") }
    }

    /// At most what the objects of a document hold, for binary property lists, whose object references
    /// are as wide as the number of values a document can need.
    ///
    /// For example:
    ///
    /// ```swift
    /// var capacity = ClipboardWriter.Capacity()
    /// for object in objects { capacity.add(object) }
    /// ```
    public struct Capacity: Hashable, Sendable {
        public var objects = 0
        /// Attribute values, over all objects.
        public var values = 0
        /// Relationships with targets, over all objects.
        public var links = 0
        /// Targets, over all relationships.
        public var targets = 0

        public init(objects: Int = 0, values: Int = 0, links: Int = 0, targets: Int = 0) {
            self.objects = objects
            self.values = values
            self.links = links
            self.targets = targets
        }

        /// The capacity of these objects.
        public init<Objects: Sequence<Clipboard.Object>>(of objects: Objects) {
            for object in objects { add(object) }
        }

        /// Counts one more object.
        public mutating func add(_ object: Clipboard.Object) {
            objects += 1
            values += object.attributes.count
            links += object.relationships.count
            for link in object.relationships { targets += link.targets.count }
        }

        /// Counts one more object: `layout.object(snapshot)`, without making it.
        mutating func add(_ snapshot: Snapshot, layout: SnapshotLayout) {
            objects += 1
            for (index, _) in layout.attributes[snapshot.ref.entity] where snapshot.attributes[index] != nil {
                values += 1
            }
            for (index, _) in layout.relationships[snapshot.ref.entity] {
                let count: Int
                switch snapshot.relationships[index] {
                case .toOne(let target): count = target == nil ? 0 : 1
                case .toMany(let targets): count = targets.count
                case .unloaded: count = 0
                }
                if count > 0 {
                    links += 1
                    targets += count
                }
            }
        }

        /// The property-list objects these objects take at most, nothing shared.
        var bound: Int { 9 * objects + 2 * values + 2 * links + targets }

        /// What references of 4 bytes can tell apart.
        static let large = Capacity(targets: 1 << 31)

        /// The property-list objects the header takes at most.
        static func headerBound(_ header: Clipboard.Header) -> Int {
            var bound = 64 + header.versionIdentifiers.count + header.roots.count
            for entity in header.entities {
                bound += 12 + 6 * entity.attributes.count + 8 * entity.relationships.count
            }
            for reference in header.references { bound += 10 + 2 * reference.identity.count }
            return bound
        }
    }
}

// MARK: - Objects from a store's snapshots

/// How a store's snapshots become a document's objects, resolved once per entity of the store's model:
/// the attributes and relationships a clipboard carries (the non-transient ones, in the model's order, as
/// ``Copier``'s entity list has them), and the local ids (``localID(_:)``).
struct SnapshotLayout {
    let model: Model
    /// Per entity: the index in the snapshot and the name of each attribute a clipboard carries.
    let attributes: [[(index: Int, name: String)]]
    /// Per entity: the index in the snapshot and the name of each relationship a clipboard carries.
    let relationships: [[(index: Int, name: String)]]
    /// Per entity: its inheritance tree's key offset in the document (see `StoreReader.keyOffsets`).
    let rootOffsets: [Int64]
    /// Per entity, whether its objects fit the entity list as they are (every attribute of a type
    /// clipboards carry; a store reader gives values of their attributes' types), so that writers need
    /// not check them again.
    let fits: [Bool]

    /// - Parameter keyOffsets: the key offset of each root entity whose keys are moved up.
    init(model: Model, keyOffsets: [Int: Int64]) {
        self.model = model
        rootOffsets = model.descriptions.map { keyOffsets[$0.rootIndex] ?? 0 }
        attributes = model.descriptions.map { entity in
            entity.attributes.enumerated().filter { !$0.element.isTransient }.map { ($0.offset, $0.element.name) }
        }
        relationships = model.descriptions.map { entity in
            entity.relationships.filter { !$0.isTransient }.map { ($0.index, $0.name) }
        }
        fits = model.descriptions.map { entity in
            entity.attributes.allSatisfy { $0.isTransient || ClipboardSchema.carries($0.type) }
        }
    }

    /// The number of the object's local id: its key, moved up by the document's key offset for its
    /// inheritance tree, so that a link can name an object before it is read.
    ///
    /// - Throws: `GraftError.malformedInput` when that passes `Int64.max`.
    @inline(__always)
    func localID(_ ref: ObjectRef) throws -> Int64 {
        let (id, overflow) = rootOffsets[ref.entity].addingReportingOverflow(ref.key)
        guard !overflow else {
            throw GraftError(
                .malformedInput,
                "\(model.descriptions[ref.entity].name) p\(ref.key) cannot be given a local id: its key, moved up by "
                    + "its tree's offset \(rootOffsets[ref.entity]) to keep the document's keys apart, passes \(Int64.max)"
            )
        }
        return id
    }

    /// The document's object for a snapshot.
    func object(_ snapshot: Snapshot) throws -> Clipboard.Object {
        let entity = snapshot.ref.entity
        var values: [Clipboard.NamedValue] = []
        values.reserveCapacity(attributes[entity].count)
        for (index, name) in attributes[entity] {
            if let value = snapshot.attributes[index] { values.append(.init(name, value)) }
        }
        var links: [Clipboard.Link] = []
        for (index, name) in relationships[entity] {
            let targets = snapshot.relationships[index].refs
            if !targets.isEmpty {
                links.append(.init(name, try targets.map { ClipboardLocalID.text(try localID($0)) }))
            }
        }
        return Clipboard.Object(
            id: ClipboardLocalID.text(try localID(snapshot.ref)), entity: model.descriptions[entity].name,
            attributes: values, relationships: links)
    }
}

/// The local ids of a whole-store copy: `o` and a number.
enum ClipboardLocalID {
    /// `o` and the number's digits, written straight into the string: a whole-store copy makes one for
    /// every object, and interpolation costs several times as much.
    static func text(_ number: Int64) -> String {
        guard number >= 0 else { return "o\(number)" }
        let digits = NumberText.digitCount(UInt64(number))
        return String(unsafeUninitializedCapacity: digits + 1) { buffer in
            buffer[0] = UInt8(ascii: "o")
            NumberText.writeDigits(UInt64(number), count: digits, to: buffer.baseAddress! + 1)
            return digits + 1
        }
    }
}

extension ClipboardEncoding {
    /// Writes a whole document through the streaming writer.
    func writeDocument(_ clipboard: Clipboard, into output: ByteBuffer) throws {
        // Everything is checked before the first byte, so that an error never leaves half a document; a
        // document checked as it is (``Clipboard/check()``, which `decode` runs) has passed these rules.
        let schema = try ClipboardSchema(entities: clipboard.entities)
        if !clipboard.verification.isChecked { try schema.validate(clipboard) }
        if self == .xml || self == .plist {
            try ClipboardSchema.validateXMLText(clipboard, versionIdentifiers: self == .plist)
        }
        var writer = try ClipboardWriter(
            encoding: self, header: clipboard.header, capacity: ClipboardWriter.Capacity(of: clipboard.objects),
            output: output)
        try writer.writeChecked(clipboard.objects)
        try writer.finish()
    }
}

extension ClipboardWriter {
    /// Objects already checked against the schema.
    mutating func writeChecked(_ objects: [Clipboard.Object]) throws {
        try body.writeChecked(objects)
    }
}

/// Where a store entity's objects go in the schema: the entity's position, and per attribute and
/// relationship a clipboard carries, its index in the snapshot and its position in the schema's entity.
///
/// Outside the generic writer, so that its type is known once: nested, its metadata was looked up at run
/// time for each object a writer that is not specialised wrote.
struct SnapshotPlacement {
    var entity: Int
    var attributes: [(index: Int, name: String, position: Int)]
    var relationships: [(index: Int, position: Int, isToMany: Bool)]
}

/// Walks a document in its one order and hands each token to a sink.
struct ClipboardDocumentWriter<Sink: ClipboardTokenSink> {
    var sink: Sink
    let schema: ClipboardSchema
    /// Where the sink writes, handed on in chunks between entries of long lists.
    let output: ByteBuffer
    private var last = -1
    /// Per entity of the store model snapshots come from (see ``place(_:)``), where its objects go in
    /// the schema; `nil` for an entity the schema does not list.
    private var placements: [SnapshotPlacement?] = []

    init(sink: Sink, schema: ClipboardSchema, output: ByteBuffer) {
        self.sink = sink
        self.schema = schema
        self.output = output
    }

    /// The writer in its present state, writing into `output` (see ``ClipboardTokenSink/copy(writingInto:)``).
    ///
    /// The copy shares no storage with this writer (its schema and placements are copies of their own):
    /// each thread of a round then counts references to its own objects only, instead of both bouncing
    /// the same counters between their processors' caches.
    func copy(writingInto output: ByteBuffer) -> Self? {
        let schema = schema.unshared()
        guard let sink = sink.copy(writingInto: output, schema: schema) else { return nil }
        var copy = ClipboardDocumentWriter(sink: sink, schema: schema, output: output)
        copy.placements = placements.map { placement in
            placement.map {
                SnapshotPlacement(
                    entity: $0.entity, attributes: $0.attributes.map { $0 },
                    relationships: $0.relationships.map { $0 })
            }
        }
        return copy
    }

    /// The document up to its first object.
    mutating func begin(_ header: Clipboard.Header, encoding: ClipboardEncoding) throws {
        try sink.begin(.document)
        try sink.key(.format)
        try sink.string(Clipboard.formatName)
        try sink.key(.version)
        try sink.integer(Int64(Clipboard.formatVersion))
        try sink.key(.encoding)
        try sink.begin(.encoding)
        for entry in ClipboardDeclaration.entries(encoding) {
            try sink.declarationKey(entry.key)
            try sink.string(entry.value)
        }
        try sink.end(.encoding)
        try sink.key(.model)
        try sink.begin(.model)
        try sink.key(.entities)
        try sink.begin(.entities)
        for (index, entity) in header.entities.enumerated() { try writeEntity(entity, index) }
        try sink.end(.entities)
        try sink.key(.versionIdentifiers)
        try sink.begin(.versionIdentifiers)
        for identifier in header.versionIdentifiers {
            try sink.versionIdentifier(identifier)
            try output.flushIfFull()
        }
        try sink.end(.versionIdentifiers)
        if let contents = header.modelContents {
            try sink.key(.contents)
            try sink.data(contents)
        }
        try sink.end(.model)
        if let store = header.sourceStore {
            try sink.key(.source)
            try sink.begin(.source)
            try sink.key(.store)
            try sink.string(store)
            try sink.end(.source)
        }
        try sink.key(.roots)
        try sink.begin(.roots)
        for root in header.roots {
            try sink.target(root)
            try output.flushIfFull()
        }
        try sink.end(.roots)
        try sink.key(.objects)
        try sink.begin(.objects)
    }

    private mutating func writeEntity(_ entity: Clipboard.EntityInfo, _ index: Int) throws {
        try sink.begin(.entity)
        try sink.key(.name)
        try sink.entityName(index)
        try sink.key(.versionHash)
        try sink.data(entity.versionHash)
        try sink.key(.attributes)
        try sink.begin(.attributeInfos)
        for attribute in entity.attributes {
            try sink.begin(.attributeInfo)
            try sink.key(.name)
            try sink.string(attribute.name)
            try sink.key(.type)
            try sink.typeName(ClipboardValues.typeName(attribute.type))
            try sink.end(.attributeInfo)
        }
        try sink.end(.attributeInfos)
        try sink.key(.relationships)
        try sink.begin(.relationshipInfos)
        for relationship in entity.relationships {
            try sink.begin(.relationshipInfo)
            try sink.key(.name)
            try sink.string(relationship.name)
            try sink.key(.toMany)
            try sink.bool(relationship.isToMany)
            try sink.key(.ordered)
            try sink.bool(relationship.isOrdered)
            try sink.end(.relationshipInfo)
        }
        try sink.end(.relationshipInfos)
        try sink.end(.entity)
    }

    /// One object, checked already: its entity is in the schema, its values and links are declared.
    @inline(__always)
    mutating func write(_ object: Clipboard.Object) throws {
        let index = schema.entity(named: object.entity, last: last)!
        last = index
        let entity = schema.entities[index]
        try sink.begin(.object)
        try sink.key(.id)
        try sink.string(object.id)
        try sink.key(.entity)
        try sink.entityName(index)
        try sink.key(.attributes)
        try writeValues(object.attributes, part: .attributes, entity: index)
        try sink.key(.relationships)
        try sink.begin(.relationships)
        var hint = 0
        for link in object.relationships {
            let position = entity.relationship(named: link.name, hint: &hint)!
            try writeLink(
                entity: index, relationship: position, isToMany: entity.relationships[position].isToMany,
                count: link.targets.count
            ) { try $0.target(link.targets[$1]) }
        }
        try sink.end(.relationships)
        try sink.end(.object)
    }

    /// Resolves, once, where the objects of `layout`'s model go in the schema, for ``write(_:_:)``.
    mutating func place(_ layout: SnapshotLayout) {
        placements = layout.model.descriptions.map { entity -> SnapshotPlacement? in
            guard let index = schema.entity(named: entity.name, last: -1) else { return nil }
            let listed = schema.entities[index]
            var placement = SnapshotPlacement(entity: index, attributes: [], relationships: [])
            var hint = 0
            for (attribute, name) in layout.attributes[entity.index] {
                guard let position = listed.attribute(named: name, hint: &hint) else { return nil }
                placement.attributes.append((attribute, name, position))
            }
            hint = 0
            for (relationship, name) in layout.relationships[entity.index] {
                guard let position = listed.relationship(named: name, hint: &hint) else { return nil }
                placement.relationships.append((relationship, position, listed.relationships[position].isToMany))
            }
            return placement
        }
    }

    /// One store object straight from its snapshot: the same tokens as ``write(_:)`` writes for
    /// `layout.object(snapshot)`, without making that object. The entity must fit the schema as
    /// ``SnapshotLayout/fits`` says, and ``place(_:)`` have been given `layout`.
    ///
    /// - Throws: `GraftError.malformedInput` for an object whose local id overflows (see
    ///   ``SnapshotLayout/localID(_:)``); `.invalidOperation` for an entity the schema does not list.
    @inline(__always)
    mutating func write(_ snapshot: Snapshot, _ layout: SnapshotLayout) throws {
        guard snapshot.ref.entity < placements.count, let placement = placements[snapshot.ref.entity] else {
            throw GraftError(
                .invalidOperation,
                "the document's entity list does not describe \(layout.model.descriptions[snapshot.ref.entity].name)",
                context: [.object("p\(snapshot.ref.key)")])
        }
        let index = placement.entity
        try sink.begin(.object)
        try sink.key(.id)
        try sink.localID(layout.localID(snapshot.ref))
        try sink.key(.entity)
        try sink.entityName(index)
        try sink.key(.attributes)
        try sink.begin(.attributes)
        for slot in placement.attributes {
            guard let value = snapshot.attributes[slot.index] else { continue }
            try sink.attributeKey(slot.name, entity: index, attribute: slot.position)
            try sink.value(value)
        }
        try sink.end(.attributes)
        try sink.key(.relationships)
        try sink.begin(.relationships)
        for slot in placement.relationships {
            switch snapshot.relationships[slot.index] {
            case .toOne(let target?):
                try writeLink(entity: index, relationship: slot.position, isToMany: slot.isToMany, count: 1) {
                    sink, _ in try sink.localTarget(layout.localID(target))
                }
            case .toMany(let targets) where !targets.isEmpty:
                try writeLink(
                    entity: index, relationship: slot.position, isToMany: slot.isToMany, count: targets.count
                ) { try $0.localTarget(layout.localID(targets[$1])) }
            default:
                continue
            }
        }
        try sink.end(.relationships)
        try sink.end(.object)
    }

    /// A link of `count` targets, each written by `target` (given the sink and the target's position): a
    /// to-one is its target's id; a to-many, or a to-one without one target, a list of ids.
    @inline(__always)
    private mutating func writeLink(
        entity: Int, relationship: Int, isToMany: Bool, count: Int, _ target: (inout Sink, Int) throws -> Void
    ) throws {
        try sink.relationshipKey(entity: entity, relationship: relationship)
        if !isToMany && count == 1 { return try target(&sink, 0) }
        try sink.begin(.targets)
        for position in 0..<count { try target(&sink, position) }
        try sink.end(.targets)
    }

    /// The references and the document's end.
    mutating func finish(_ references: [Clipboard.Reference]) throws {
        try sink.end(.objects)
        try sink.key(.references)
        try sink.begin(.references)
        for reference in references {
            let index = schema.entity(named: reference.entity, last: last)!
            last = index
            try sink.begin(.reference)
            try sink.key(.id)
            try sink.string(reference.id)
            try sink.key(.entity)
            try sink.entityName(index)
            try sink.key(.identity)
            try writeValues(reference.identity, part: .identity, entity: index)
            if let uri = reference.uri {
                try sink.key(.uri)
                try sink.string(uri)
            }
            try sink.end(.reference)
            try output.flushIfFull()
        }
        try sink.end(.references)
        try sink.end(.document)
        try sink.finish()
    }

    @inline(__always)
    private mutating func writeValues(_ values: [Clipboard.NamedValue], part: ClipboardPart, entity index: Int) throws {
        let entity = schema.entities[index]
        try sink.begin(part)
        var hint = 0
        for named in values {
            // Checked already: the attribute exists.
            let position = Sink.needsAttributePositions ? entity.attribute(named: named.name, hint: &hint)! : -1
            try sink.attributeKey(named.name, entity: index, attribute: position)
            try sink.value(named.value)
        }
        try sink.end(part)
    }
}

// MARK: - The writer's body, specialised per sink

/// How the text encodings share out objects between threads: in rounds of `parts` parts, each of
/// `partSize` objects written by a thread of its own.
private enum WritingRounds {
    static let parts = min(ProcessInfo.processInfo.activeProcessorCount, 8)
    static let partSize = 8192
}

/// What ``ClipboardWriter`` asks of its body, whatever the sink.
private protocol DocumentBody {
    mutating func write(_ object: Clipboard.Object, checked: Bool) throws
    mutating func writeChecked(_ objects: [Clipboard.Object]) throws
    mutating func write(_ snapshot: Snapshot, layout: SnapshotLayout) throws
    mutating func write(_ snapshots: [Snapshot], layout: SnapshotLayout) throws
    mutating func finish() throws
}

/// A ``Body`` for one sink type, named: the protocol's witnesses for a generic type run unspecialised,
/// each token a call through the sink's table and its type looked up at run time; a named type's
/// witnesses call its body specialised for the sink.
private protocol SinkBody: DocumentBody {
    associatedtype Sink: ClipboardTokenSink
    var body: Body<Sink> { get set }
}

extension SinkBody {
    mutating func write(_ object: Clipboard.Object, checked: Bool) throws { try body.write(object, checked: checked) }
    mutating func writeChecked(_ objects: [Clipboard.Object]) throws { try body.writeChecked(objects) }
    mutating func write(_ snapshot: Snapshot, layout: SnapshotLayout) throws {
        try body.write(snapshot, layout: layout)
    }
    mutating func write(_ snapshots: [Snapshot], layout: SnapshotLayout) throws {
        try body.write(snapshots, layout: layout)
    }
    mutating func finish() throws { try body.finish() }
}

private struct JSONBody: SinkBody { var body: Body<ClipboardJSONSink> }
private struct PlistBody: SinkBody { var body: Body<ClipboardPlistSink> }
private struct XMLBody: SinkBody { var body: Body<ClipboardXMLSink> }
private struct BinaryPlistBody: SinkBody { var body: Body<ClipboardBinaryPlistSink> }

/// The writing for one sink: objects and snapshots alike are items that one path writes, one at a time
/// or in rounds on several threads.
private struct Body<Sink: ClipboardTokenSink> {
    /// Writes one item with the document writer.
    typealias WriteItem<Item> = @Sendable (inout ClipboardDocumentWriter<Sink>, Item) throws -> Void

    var writer: ClipboardDocumentWriter<Sink>
    let encoding: ClipboardEncoding
    let references: [Clipboard.Reference]
    let output: ByteBuffer
    /// Objects checked and waiting to be written, in a round, on several threads.
    private var batch: [Clipboard.Object] = []
    /// Whether the writer has been given the layout snapshots are written with (by the first).
    private var placed = false
    private var written = 0
    private let parts = WritingRounds.parts
    /// Whether objects are written in rounds on several threads (text encodings, on more than one core).
    private let inRounds: Bool
    /// How many objects each thread writes in a round.
    private static var partSize: Int { WritingRounds.partSize }
    /// The buffers the threads of a round write into, kept from round to round.
    private var partBuffers: [ByteBuffer] = []
    private static var writeObject: WriteItem<Clipboard.Object> { { writer, object in try writer.write(object) } }

    init(
        _ sink: Sink, _ encoding: ClipboardEncoding, _ header: Clipboard.Header, _ schema: ClipboardSchema,
        _ output: ByteBuffer
    ) throws {
        writer = ClipboardDocumentWriter(sink: sink, schema: schema, output: output)
        self.encoding = encoding
        self.references = header.references
        self.output = output
        inRounds = parts > 1 && sink.copy(writingInto: output, schema: schema) != nil
        try writer.begin(header, encoding: encoding)
        try output.flushIfFull()
    }

    mutating func write(_ object: Clipboard.Object, checked: Bool) throws {
        if !checked {
            // The object alone, checked as `encode` checks a whole document.
            let single = Clipboard(entities: [], roots: [], objects: [object])
            try writer.schema.validate(single)
            if encoding == .xml || encoding == .plist {
                try ClipboardSchema.validateXMLText(single, versionIdentifiers: false)
            }
        }
        guard written > 0 && inRounds else {
            try writeOne(object, Self.writeObject)
            return
        }
        batch.append(object)
        if batch.count == parts * Self.partSize { try writeBatch() }
    }

    mutating func writeChecked(_ objects: [Clipboard.Object]) throws { try write(objects[...], Self.writeObject) }

    /// Writes a store's object from its snapshot (see ``ClipboardDocumentWriter/write(_:_:)``).
    mutating func write(_ snapshot: Snapshot, layout: SnapshotLayout) throws {
        try prepare(layout)
        try writeOne(snapshot) { writer, snapshot in try writer.write(snapshot, layout) }
    }

    /// Writes store objects from their snapshots, in rounds when the encoding allows.
    mutating func write(_ snapshots: [Snapshot], layout: SnapshotLayout) throws {
        try prepare(layout)
        try write(snapshots[...]) { writer, snapshot in try writer.write(snapshot, layout) }
    }

    /// Before snapshots: the layout placed (once), the objects waiting written.
    private mutating func prepare(_ layout: SnapshotLayout) throws {
        if !placed {
            writer.place(layout)
            placed = true
        }
        try writeBatch()
    }

    private mutating func writeBatch() throws {
        guard !batch.isEmpty else { return }
        try write(batch[...], Self.writeObject)
        batch.removeAll(keepingCapacity: true)
    }

    @inline(__always)
    private mutating func writeOne<Item>(_ item: Item, _ write: WriteItem<Item>) throws {
        try write(&writer, item)
        written += 1
        try output.flushIfFull()
    }

    /// Items in order: the first of the document alone (it sets the state, a separator written or a list
    /// opened, the others share), the rest in rounds when the encoding allows and they fill one part.
    private mutating func write<Item>(_ items: ArraySlice<Item>, _ write: WriteItem<Item>) throws {
        var rest = items
        if written == 0, let first = rest.popFirst() { try writeOne(first, write) }
        guard inRounds && rest.count >= Self.partSize else {
            for item in rest { try writeOne(item, write) }
            return
        }
        try writeInRounds(rest, write)
    }

    /// The items in rounds: each round's items are split between the processors, each part written
    /// into a buffer of its own by a copy of the writer at the same time, and the buffers appended in
    /// order. The output is the same as one thread writes; memory stays bounded by a round.
    private mutating func writeInRounds<Item>(_ items: ArraySlice<Item>, _ write: WriteItem<Item>) throws {
        let parts = self.parts
        let partSize = Self.partSize
        if partBuffers.isEmpty { partBuffers = (0..<parts).map { _ in ByteBuffer(capacity: 1 << 20) } }
        nonisolated(unsafe) let buffers = partBuffers
        nonisolated(unsafe) let writers = buffers.map { writer.copy(writingInto: $0)! }
        nonisolated(unsafe) let items = items
        var start = items.startIndex
        while start < items.endIndex {
            let round = start..<min(items.endIndex, start + parts * partSize)
            // Each part writes only its own buffer; errors are gathered under the lock, and the one from
            // the earliest part is thrown, as one thread would have.
            nonisolated(unsafe) var failures: [(part: Int, error: Error)] = []
            let lock = NSLock()
            DispatchQueue.concurrentPerform(iterations: parts) { part in
                let lower = min(round.upperBound, round.lowerBound + part * partSize)
                var partWriter = writers[part]
                buffers[part].removeAll()
                do {
                    for item in items[lower..<min(round.upperBound, lower + partSize)] {
                        try write(&partWriter, item)
                    }
                } catch {
                    lock.withLock { failures.append((part, error)) }
                }
            }
            if let first = failures.min(by: { $0.part < $1.part }) { throw first.error }
            for buffer in buffers {
                // In slices, so that the chunks handed on stay of their usual size.
                var offset = 0
                while offset < buffer.count {
                    let slice = min(buffer.count - offset, ByteBuffer.chunkSize)
                    output.append(UnsafeRawBufferPointer(rebasing: buffer.bytes[offset..<(offset + slice)]))
                    try output.flushIfFull()
                    offset += slice
                }
            }
            written += round.count
            start = round.upperBound
        }
    }

    mutating func finish() throws {
        try writeBatch()
        try writer.finish(references)
        try output.flush()
    }
}
