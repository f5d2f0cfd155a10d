import Foundation
@_spi(GraftInternal) import GraftCore
import GraftGraph
import GraftModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes a Core Data XML store from a stream of snapshots, in the layout Apple's framework writes.
///
/// The document goes into a temporary file beside the destination as it is written (in 1 MiB
/// pieces), and `finish()` flushes it to disk and renames it into place. `cancel()`, a failed
/// `write(_:)` or `finish()`, or dropping the writer unfinished removes the temporary file, so nothing
/// is left behind. After a failure the writer accepts nothing more.
///
/// Object ids are `z<key>`; when two inheritance trees use the same key, the later one's objects get
/// `z<key>-<ROOT ENTITY>` (see `Formats/xml-store.md`). Attributes without a value are left out; every
/// persistent relationship is written, empty ones too.
///
/// For example:
///
/// ```swift
/// var writer = try XMLStoreWriter(
///     url: URL(fileURLWithPath: "Company.xml"), model: model,
///     metadata: StoreMetadata.make(for: model, storeType: .xml), overwrite: false)
/// for snapshot in snapshots { try writer.write(snapshot) }
/// try writer.finish()
/// ```
public struct XMLStoreWriter: StoreFileWriter {
    private let engine: WriterEngine

    /// Starts a document at `url`.
    ///
    /// - Parameters:
    ///   - model: the model every snapshot follows.
    ///   - metadata: written as `<UUID>` (its `identifier`) and the `<metadata>` property list (every
    ///     key but `NSStoreUUID` and `NSStoreType`, which the `<UUID>` element and the format itself say;
    ///     the reader puts them back). Make it with `StoreMetadata.make(for:storeType:keeping:)` to record
    ///     the model's version hashes.
    ///   - overwrite: whether an existing file at `url` may be replaced (when `finish()` renames).
    /// - Throws: `GraftError.alreadyExists` when `url` exists and `overwrite` is `false`;
    ///   `GraftError.io` when the temporary file cannot be made; `GraftError.malformedInput` for metadata
    ///   XML cannot carry.
    public init(url: URL, model: Model, metadata: StoreMetadata, overwrite: Bool) throws {
        engine = try WriterEngine(url: url, model: model, metadata: metadata, overwrite: overwrite)
    }

    /// Adds one object.
    ///
    /// - Throws: `GraftError.typeMismatch` for a value of the wrong type or out of its attribute's range,
    ///   or a reference to an object of an entity the relationship cannot hold;
    ///   `GraftError.malformedInput` for a snapshot that does not fit its entity;
    ///   `GraftError.invalidOperation` for an unloaded to-many or a writer that is finished or failed;
    ///   `GraftError.io` when the file cannot be written. The temporary file is removed on any error.
    public mutating func write(_ snapshot: Snapshot) throws {
        try engine.write(snapshot)
    }

    /// Completes the document and renames it into place.
    public mutating func finish() throws {
        try engine.finish()
        engine.takePlacedFile()?.release()
    }

    /// Finishes, and returns the lock on the document now in place, held until released (see
    /// ``FileReplacement/commit()``), for a store that keeps its document locked.
    public mutating func finishHoldingLock() throws -> FileLock {
        try engine.finish()
        guard let lock = engine.takePlacedFile() else {
            throw GraftError(
                .invalidOperation, "the document was not placed", context: [.file(engine.url.relativePath)])
        }
        return lock
    }

    /// Abandons the document and removes the temporary file.
    public mutating func cancel() {
        engine.abandon()
    }

    /// The temporary file the document is written to before `finish()` (for tests and diagnostics).
    public var temporaryURL: URL { engine.temporaryURL }
}

/// The writer's state: the open temporary file, the output buffer, the id map and the precomputed
/// text of each entity's tags.
final class WriterEngine {
    let url: URL
    let temporaryURL: URL
    /// The temporary file and how it replaces the destination.
    private let replacement: FileReplacement
    /// The lock on the finished document, until the writer hands it over or goes away.
    private var placedFile: FileLock?
    let model: Model
    let overwrite: Bool
    private var path: String { url.relativePath }
    private var descriptor: Int32
    private enum State { case open, finished, abandoned }
    @exclusivity(unchecked) private var state = State.open
    /// The document on its way to the file, handed on in chunks.
    private let output: ByteBuffer
    /// Where the `<nextObjectID>` element starts in the file, and how many bytes it may take.
    private var nextObjectIDOffset = 0
    private static let nextObjectIDWidth = "<nextObjectID></nextObjectID>".utf8.count + 19
    // The writer is used from one thread at a time; the per-object state skips dynamic exclusivity checks.
    @exclusivity(unchecked) private var ids: ObjectIDWriter
    @exclusivity(unchecked) private var tally: ObjectTally
    private let tags: WriterTags

    init(url: URL, model: Model, metadata: StoreMetadata, overwrite: Bool) throws {
        self.url = url
        self.model = model
        self.overwrite = overwrite
        let replacement = try FileReplacement(replacing: url, overwrite: overwrite)
        self.replacement = replacement
        temporaryURL = replacement.temporaryURL
        descriptor = replacement.descriptor
        output = ByteBuffer(capacity: 1 << 21) { bytes in try replacement.append(bytes) }
        ids = ObjectIDWriter(model: model)
        tally = ObjectTally(model: model)
        tags = WriterTags(model: model)
        do {
            try writeHeader(metadata)
        } catch {
            abandon()
            throw error
        }
    }

    deinit {
        if state == .open { abandon() }
    }

    // MARK: Header and end

    private func writeHeader(_ metadata: StoreMetadata) throws {
        output.append(XMLStoreFormat.declaration)
        output.append(XMLStoreFormat.doctype)
        output.append("<database>\n    <databaseInfo>\n        <version>")
        output.append(decimal: XMLStoreFormat.databaseVersion)
        output.append("</version>\n        <UUID>")
        guard XMLText.appendEscaped(metadata.identifier, to: output) else {
            throw GraftError(
                .malformedInput, "the store UUID holds a character XML cannot carry", context: [.file(path)])
        }
        output.append("</UUID>\n        ")
        nextObjectIDOffset = output.count
        appendNextObjectID(XMLStoreFormat.firstNextObjectID)
        output.append("\n        <metadata>\n")
        var values = metadata.values
        values["NSStoreUUID"] = nil
        values["NSStoreType"] = nil
        do {
            try MetadataWriter(output: output).appendPlist(values, level: 3)
        } catch let error as GraftError {
            throw error.at(.other("metadata")).inFile(path)
        }
        output.append("        </metadata>\n    </databaseInfo>\n")
    }

    /// `<nextObjectID>n</nextObjectID>`, padded with spaces to a fixed width so that the final value
    /// can be put in place when the document is complete. A document still in the buffer then gets the
    /// element without padding; a larger one keeps the padding (trailing spaces on that line, which XML
    /// ignores).
    private func appendNextObjectID(_ value: Int64) {
        let start = output.count
        output.append("<nextObjectID>")
        output.append(decimal: value)
        output.append("</nextObjectID>")
        output.appendSpaces(Self.nextObjectIDWidth - (output.count - start))
    }

    func finish() throws {
        try requireOpen()
        do {
            let missing = tally.missing(limit: 5)
            if !missing.isEmpty {
                let names = missing.map { "\(model.descriptions[$0.root].name) \($0.key)" }.joined(separator: ", ")
                throw GraftError(
                    .malformedInput,
                    "the document refers to objects that were not written (entity tree and key): \(names)",
                    context: [.file(path)])
            }
            output.append("</database>\n")
            // The last id handed out, as Core Data records it (at least 101: its first object is z102).
            let element = ByteBuffer(capacity: Self.nextObjectIDWidth)
            element.append("<nextObjectID>")
            element.append(decimal: max(ids.largestKey, XMLStoreFormat.firstNextObjectID))
            element.append("</nextObjectID>")
            if output.flushed == 0 {
                // The header is still in the buffer (a document under 1 MiB): put the element in exactly.
                output.replace(start: nextObjectIDOffset, length: Self.nextObjectIDWidth, with: element.bytes)
                try flush()
            } else {
                // Overwrite the reserved room, padding with spaces after the element.
                try flush()
                element.appendSpaces(Self.nextObjectIDWidth - element.count)
                try written { try ByteBuffer.write(element.bytes, to: descriptor, at: nextObjectIDOffset) }
            }
            descriptor = -1
            placedFile = try replacement.commit()
            state = .finished
        } catch {
            abandon()
            throw error
        }
    }

    /// The lock on the finished document, handed over to the caller.
    func takePlacedFile() -> FileLock? {
        defer { placedFile = nil }
        return placedFile
    }

    func abandon() {
        guard state == .open else { return }
        state = .abandoned
        descriptor = -1
        replacement.discard()
    }

    private func requireOpen() throws {
        switch state {
        case .open: return
        case .finished:
            throw GraftError(.invalidOperation, "the document is already finished", context: [.file(path)])
        case .abandoned:
            throw GraftError(
                .invalidOperation, "the document was abandoned after a failure or cancel", context: [.file(path)])
        }
    }

    // MARK: File output

    private func flush() throws {
        try written { try output.flush() }
    }

    /// Runs a write, naming the file in its error.
    private func written(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as GraftError {
            throw error.inFile(path)
        }
    }

    // MARK: Objects

    func write(_ snapshot: Snapshot) throws {
        try requireOpen()
        do {
            try append(snapshot)
            try written { try output.flushIfFull() }
        } catch {
            abandon()
            throw error
        }
    }

    private func append(_ snapshot: Snapshot) throws {
        do {
            _ = try snapshot.entity(checkedIn: model)
        } catch let error as GraftError {
            throw error.inFile(path)
        }
        let entityIndex = snapshot.ref.entity
        let table = tags.entities[entityIndex]
        guard tally.write(entity: entityIndex, key: snapshot.ref.key) else {
            throw GraftError(
                .malformedInput, "the object is written twice",
                context: [
                    .file(path), .entity(model.descriptions[entityIndex].name), .object("key \(snapshot.ref.key)"),
                ])
        }
        let objectStart = output.count
        tags.append(table.objectOpen, to: output)
        ids.append(entity: entityIndex, key: snapshot.ref.key, to: output)
        let attributes = tags.attributes(of: table)
        let relationships = tags.relationships(of: table)
        var hasContent = !relationships.isEmpty
        if !hasContent {
            for slot in attributes where snapshot.attributes[Int(slot.index)] != nil {
                hasContent = true
                break
            }
        }
        guard hasContent else {
            output.append("\"></object>\n")
            return
        }
        output.append("\">\n")
        for slot in attributes {
            guard let value = snapshot.attributes[Int(slot.index)] else { continue }
            do {
                try append(value, slot: slot)
            } catch var error as GraftError {
                let id = objectID(start: objectStart, table: table)
                let entity = model.descriptions[entityIndex]
                error.context =
                    [.file(path), .entity(entity.name), .object(id), .key(entity.attributes[Int(slot.index)].name)]
                    + error.context
                throw error
            }
        }
        for slot in relationships {
            tags.append(slot.open, to: output)
            switch snapshot.relationships[Int(slot.index)] {
            case .toOne(let ref) where !slot.isToMany:
                if let ref {
                    output.append(" idrefs=\"")
                    try appendReference(ref, slot: slot, snapshot: snapshot, start: objectStart, table: table)
                    output.append(UInt8(ascii: "\""))
                }
            case .toMany(let refs) where slot.isToMany:
                if !refs.isEmpty {
                    output.append(" idrefs=\"")
                    var first = true
                    for ref in refs {
                        if !first { output.append(UInt8(ascii: " ")) }
                        first = false
                        try appendReference(ref, slot: slot, snapshot: snapshot, start: objectStart, table: table)
                    }
                    output.append(UInt8(ascii: "\""))
                }
            case .unloaded:
                throw relationshipError(
                    "the to-many relationship is not loaded; give the writer complete snapshots", snapshot, slot,
                    objectStart, table, code: .invalidOperation)
            default:
                throw relationshipError(
                    slot.isToMany
                        ? "a to-many relationship holds a to-one value" : "a to-one relationship holds a to-many value",
                    snapshot, slot, objectStart, table, code: .typeMismatch)
            }
            output.append("></relationship>\n")
        }
        output.append("    </object>\n")
    }

    /// Appends the id of a related object, after checking that the relationship may hold it.
    @inline(__always)
    private func appendReference(
        _ ref: ObjectRef, slot: WriterTags.RelationshipSlot, snapshot: Snapshot, start: Int,
        table: WriterTags.EntitySlot
    ) throws {
        guard ref.entity >= 0, ref.entity < tags.entityCount, tags.accepts(ref.entity, in: slot) else {
            let name =
                ref.entity >= 0 && ref.entity < tags.entityCount
                ? model.descriptions[ref.entity].name : "#\(ref.entity)"
            throw relationshipError(
                "refers to an object of entity \(name), which is not a kind of \(model.descriptions[Int(slot.destination)].name)",
                snapshot, slot, start, table, code: .typeMismatch)
        }
        ids.append(entity: ref.entity, key: ref.key, to: output)
        tally.refer(entity: ref.entity, key: ref.key)
    }

    /// The id written for the object whose `<object` tag starts at `start` in the buffer.
    private func objectID(start: Int, table: WriterTags.EntitySlot) -> String {
        let idStart = start + Int(table.objectOpen.length)
        var end = idStart
        while end < output.count && output.base[end] != UInt8(ascii: "\"") { end += 1 }
        return Bytes.string(UnsafeRawBufferPointer(start: output.base + idStart, count: end - idStart))
    }

    private func relationshipError(
        _ message: String, _ snapshot: Snapshot, _ slot: WriterTags.RelationshipSlot, _ start: Int,
        _ table: WriterTags.EntitySlot, code: GraftError.Code
    ) -> GraftError {
        let id = objectID(start: start, table: table)
        let entity = model.descriptions[snapshot.ref.entity]
        return GraftError(
            code, message,
            context: [.file(path), .entity(entity.name), .object(id), .key(entity.relationships[Int(slot.index)].name)])
    }

    private func append(_ value: Value, slot: WriterTags.AttributeSlot) throws {
        switch slot.kind {
        case .int16, .int32, .int64:
            guard case .integer(let integer) = value else { throw mismatch(value, slot) }
            if let range = slot.type.integerRange, !range.contains(integer) {
                throw GraftError(.typeMismatch, "\(integer) does not fit an \(slot.type) attribute")
            }
            tags.append(slot.open, to: output)
            output.append(decimal: integer)
        case .decimal:
            switch value {
            case .decimal(let decimal):
                tags.append(slot.open, to: output)
                ValueText.appendDecimal(decimal, to: output)
            case .integer(let integer):
                tags.append(slot.open, to: output)
                output.append(decimal: integer)
            default: throw mismatch(value, slot)
            }
        case .double, .float:
            let number: Double
            switch value {
            case .double(let double): number = double
            case .integer(let integer): number = Double(integer)
            default: throw mismatch(value, slot)
            }
            tags.append(slot.open, to: output)
            if slot.kind == .float {
                ValueText.appendFloat(number, to: output)
            } else {
                ValueText.appendDouble(number, to: output)
            }
        case .string, .base64String:
            guard case .string(let string) = value else { throw mismatch(value, slot) }
            tags.append(slot.open, to: output)
            let start = output.count
            if !XMLText.appendEscaped(string, to: output) {
                // Characters XML 1.0 cannot carry: base64 of the UTF-8, under Graft's own type name.
                output.truncate(to: start - Int(slot.open.length))
                tags.append(slot.base64Open, to: output)
                ValueText.appendBase64(Data(string.utf8), to: output)
            }
        case .bool:
            guard case .bool(let bool) = value else { throw mismatch(value, slot) }
            tags.append(slot.open, to: output)
            output.append(bool ? UInt8(ascii: "1") : UInt8(ascii: "0"))
        case .date:
            guard case .date(let date) = value else { throw mismatch(value, slot) }
            tags.append(slot.open, to: output)
            ValueText.appendDate(date.timeIntervalSinceReferenceDate, to: output)
        case .binary, .transformable:
            guard case .data(let data) = value else { throw mismatch(value, slot) }
            tags.append(slot.open, to: output)
            ValueText.appendBase64(data, to: output)
        case .uuid:
            guard case .uuid(let uuid) = value else { throw mismatch(value, slot) }
            tags.append(slot.open, to: output)
            output.append(string: uuid.uuidString)
        case .uri:
            guard case .uri(let uri) = value else { throw mismatch(value, slot) }
            tags.append(slot.open, to: output)
            guard XMLText.appendEscaped(uri.absoluteString, to: output) else {
                throw GraftError(.typeMismatch, "the URI holds a character XML cannot carry")
            }
        case .objectID:
            throw GraftError(.unsupportedFormat, "the XML store cannot hold Object ID attribute values")
        }
        output.append("</attribute>\n")
    }

    private func mismatch(_ value: Value, _ slot: WriterTags.AttributeSlot) -> GraftError {
        GraftError(.typeMismatch, "a \(slot.type) attribute cannot hold \(Self.describe(value))")
    }

    private static func describe(_ value: Value) -> String {
        switch value {
        case .integer(let integer): return "the integer \(integer)"
        case .double(let double): return "the number \(double)"
        case .decimal(let decimal): return "the decimal \(decimal)"
        case .string(let string): return "the string '\(Bytes.excerpt(string))'"
        case .bool(let bool): return "the Boolean \(bool ? "YES" : "NO")"
        case .date(let date): return "the date \(date)"
        case .data(let data): return "\(data.count) bytes of data"
        case .uuid(let uuid): return "the UUID \(uuid.uuidString)"
        case .uri(let uri): return "the URI \(uri.absoluteString)"
        }
    }
}

/// The text of every entity's tags, computed once per document and kept in flat buffers, so that
/// writing an object copies no strings and counts no references.
final class WriterTags {
    /// A run of bytes in `text`.
    struct Text {
        var start: Int32
        var length: Int32
    }

    struct AttributeSlot {
        /// Position in the entity's `attributes` (and the snapshot's).
        var index: Int32
        var type: AttributeType
        var kind: XMLValueKind
        /// `        <attribute name="…" type="…">`
        var open: Text
        /// The same with `type="string-base64"`.
        var base64Open: Text
    }

    struct RelationshipSlot {
        /// Position in the entity's `relationships` (and the snapshot's).
        var index: Int32
        var isToMany: Bool
        var destination: Int32
        /// Where this relationship's row of `accepted` starts: whether an object of each entity may be
        /// referenced (the destination and its subentities).
        var accepts: Int32
        /// `        <relationship name="…" type="min/max" destination="…"`
        var open: Text
    }

    struct EntitySlot {
        /// `    <object type="…" id="`
        var objectOpen: Text
        var firstAttribute: Int32
        var attributeSlots: Int32
        var firstRelationship: Int32
        var relationshipSlots: Int32
        /// The entity's own counts (transient properties included), which a snapshot must match.
        var attributeCount: Int32
        var relationshipCount: Int32
    }

    let entityCount: Int
    let text: UnsafeMutableBufferPointer<UInt8>
    let entities: UnsafeMutableBufferPointer<EntitySlot>
    private let attributeSlots: UnsafeMutableBufferPointer<AttributeSlot>
    private let relationshipSlots: UnsafeMutableBufferPointer<RelationshipSlot>
    private let accepted: UnsafeMutableBufferPointer<Bool>

    init(model: Model) {
        var bytes: [UInt8] = []
        func text(_ parts: [UInt8]...) -> Text {
            let start = bytes.count
            for part in parts { bytes.append(contentsOf: part) }
            return Text(start: Int32(start), length: Int32(bytes.count - start))
        }
        // Core Data writes entity names in capitals and property names in lower case; where that would
        // make two names the same, Graft writes them as they are.
        var upperCount: [String: Int] = [:]
        for entity in model.descriptions { upperCount[entity.name.uppercased(), default: 0] += 1 }
        func written(_ entity: EntityDescription) -> String {
            let upper = entity.name.uppercased()
            return upperCount[upper]! > 1 ? entity.name : upper
        }
        func quoted(_ text: String) -> [UInt8] {
            let buffer = ByteBuffer(capacity: text.utf8.count + 8)
            var text = text
            _ = text.withUTF8 { XMLText.appendEscaped(UnsafeRawBufferPointer($0), to: buffer, inAttribute: true) }
            return Array(buffer.bytes)
        }
        var entitySlots: [EntitySlot] = []
        var attributeSlots: [AttributeSlot] = []
        var relationshipSlots: [RelationshipSlot] = []
        var accepted: [Bool] = []
        for entity in model.descriptions {
            var lowerCount: [String: Int] = [:]
            for name in entity.attributes.map(\.name) + entity.relationships.map(\.name) {
                lowerCount[name.lowercased(), default: 0] += 1
            }
            func property(_ name: String) -> String {
                lowerCount[name.lowercased()]! > 1 ? name : name.lowercased()
            }
            let objectOpen = text(Array("    <object type=\"".utf8), quoted(written(entity)), Array("\" id=\"".utf8))
            let firstAttribute = attributeSlots.count
            for (index, attribute) in entity.attributes.enumerated() where !attribute.isTransient {
                let kind = XMLValueKind(attribute.type) ?? .string
                let head =
                    Array("        <attribute name=\"".utf8) + quoted(property(attribute.name))
                    + Array("\" type=\"".utf8)
                attributeSlots.append(
                    AttributeSlot(
                        index: Int32(index), type: attribute.type, kind: kind,
                        open: text(head, Array("\(kind.spelling)\">".utf8)),
                        base64Open: text(head, Array("\(XMLValueKind.base64String.spelling)\">".utf8))))
            }
            let firstRelationship = relationshipSlots.count
            for (index, relationship) in entity.relationships.enumerated() where !relationship.isTransient {
                let destination = model.destination(of: relationship)
                let row = accepted.count
                accepted.append(contentsOf: repeatElement(false, count: model.descriptions.count))
                accepted[row + destination.index] = true
                for descendant in destination.descendantIndices { accepted[row + descendant] = true }
                let counts = "\(relationship.minCount)/\(relationship.isToMany ? relationship.maxCount : 1)"
                relationshipSlots.append(
                    RelationshipSlot(
                        index: Int32(index), isToMany: relationship.isToMany, destination: Int32(destination.index),
                        accepts: Int32(row),
                        open: text(
                            Array("        <relationship name=\"".utf8), quoted(property(relationship.name)),
                            Array("\" type=\"\(counts)\" destination=\"".utf8), quoted(written(destination)),
                            [UInt8(ascii: "\"")])))
            }
            entitySlots.append(
                EntitySlot(
                    objectOpen: objectOpen, firstAttribute: Int32(firstAttribute),
                    attributeSlots: Int32(attributeSlots.count - firstAttribute),
                    firstRelationship: Int32(firstRelationship),
                    relationshipSlots: Int32(relationshipSlots.count - firstRelationship),
                    attributeCount: Int32(entity.attributes.count), relationshipCount: Int32(entity.relationships.count)
                ))
        }
        func buffer<T>(_ array: [T]) -> UnsafeMutableBufferPointer<T> {
            let buffer = UnsafeMutableBufferPointer<T>.allocate(capacity: max(array.count, 1))
            _ = buffer.initialize(from: array)
            return UnsafeMutableBufferPointer(rebasing: buffer[0..<array.count])
        }
        entityCount = entitySlots.count
        self.text = buffer(bytes)
        entities = buffer(entitySlots)
        self.attributeSlots = buffer(attributeSlots)
        self.relationshipSlots = buffer(relationshipSlots)
        self.accepted = buffer(accepted)
    }

    deinit {
        text.deallocate()
        entities.deallocate()
        attributeSlots.deallocate()
        relationshipSlots.deallocate()
        accepted.deallocate()
    }

    /// The persistent attributes of an entity.
    @inline(__always)
    func attributes(of entity: EntitySlot) -> UnsafeMutableBufferPointer<AttributeSlot> {
        UnsafeMutableBufferPointer(
            start: attributeSlots.baseAddress! + Int(entity.firstAttribute), count: Int(entity.attributeSlots))
    }

    /// The persistent relationships of an entity.
    @inline(__always)
    func relationships(of entity: EntitySlot) -> UnsafeMutableBufferPointer<RelationshipSlot> {
        UnsafeMutableBufferPointer(
            start: relationshipSlots.baseAddress! + Int(entity.firstRelationship), count: Int(entity.relationshipSlots))
    }

    /// Whether the relationship may refer to an object of `entity` (a valid entity index).
    @inline(__always)
    func accepts(_ entity: Int, in slot: RelationshipSlot) -> Bool {
        accepted[Int(slot.accepts) + entity]
    }

    @inline(__always)
    func append(_ piece: Text, to output: ByteBuffer) {
        output.append(text.baseAddress! + Int(piece.start), count: Int(piece.length))
    }
}
