import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// Writes a Core Data binary store (`NSBinaryStoreType`) from a stream of snapshots.
///
/// Nodes are encoded as they arrive, straight into a temporary file beside the destination; primary
/// keys get their final numbers in ``finish()`` (see ``BinaryStoreLayout/keysAreUniquePerDocument``),
/// after which the metadata and the header are written, the file is flushed to disk and renamed into
/// place. ``cancel()``, or any error, removes the temporary file.
///
/// For example:
///
/// ```swift
/// var writer = try BinaryStoreWriter(
///     url: outputURL, model: model, metadata: StoreMetadata.make(for: model, storeType: .binary))
/// do {
///     for snapshot in snapshots { try writer.write(snapshot) }
///     try writer.finish()
/// } catch {
///     writer.cancel()
///     throw error
/// }
/// ```
public struct BinaryStoreWriter: StoreWriter {
    private let state: WriterState

    /// Starts writing a binary store.
    ///
    /// The metadata is written with Core Data's keys set for `model` and this store type (`Binary`),
    /// and every other key of `metadata` kept.
    ///
    /// - Parameter overwrite: when `false`, an existing file at `url` is an error.
    /// - Throws: `GraftError.alreadyExists` when `url` exists and `overwrite` is `false`;
    ///   `GraftError.io` when the temporary file cannot be created.
    public init(url: URL, model: Model, metadata: StoreMetadata, overwrite: Bool = false) throws {
        state = try WriterState(url: url, model: model, metadata: metadata, overwrite: overwrite)
    }

    /// Adds one object to the document.
    ///
    /// - Throws: `GraftError.malformedInput` for a snapshot that does not fit its entity or repeats
    ///   an object; `GraftError.typeMismatch` for a value or related object of the wrong kind. The
    ///   temporary file is removed before the error is thrown.
    public mutating func write(_ snapshot: Snapshot) throws {
        try state.guarded { try $0.write(snapshot) }
    }

    /// Numbers the keys, writes the metadata and the header, and renames the file into place.
    ///
    /// - Throws: `GraftError.malformedInput` when a relationship refers to an object that was never
    ///   written; `GraftError.alreadyExists` when the destination appeared meanwhile and `overwrite`
    ///   is `false`; `GraftError.io`. Nothing is left behind when it throws.
    public mutating func finish() throws {
        try state.guarded { try $0.finish() }
    }

    /// Abandons the document and removes the temporary file.
    public mutating func cancel() {
        state.discard()
    }
}

/// Where a writer keeps what it has written, and the bookkeeping of keys.
private final class WriterState {
    let url: URL
    let model: Model
    let metadata: StoreMetadata
    let overwrite: Bool
    let temporary: URL
    private var handle: FileHandle?
    private var stream: ArchiveStream
    private var done = false

    /// An object of the document, known from its node or from a reference to it.
    private struct TreeKey: Hashable {
        let root: Int32
        let key: Int64
    }
    private var entries: [TreeKey: Int32] = [:]
    private var keys: [Int64] = []
    /// The tree offsets the keys were written with.
    private var appliedOffsets: [Int: Int64] = [:]
    private var roots: [Int32] = []
    private var entities: [Int32] = []
    /// The node's UID reference, `none` until the node is written.
    private var nodes: [ArchiveStream.Ref] = []
    /// The reserved integer object that will hold the final key.
    private var keyIntegers: [ArchiveStream.Ref] = []
    /// The UID reference to that integer's `$objects` entry.
    private var keyReferences: [ArchiveStream.Ref] = []
    /// The first object that referred to each entry (for messages about missing objects).
    private var referrers: [ObjectRef] = []
    private static let none = ArchiveStream.Ref.max

    private let slots: [[Int]]
    private let storedRelationships: [[Int]]
    private var emptyArray: ArchiveStream.Ref?

    init(url: URL, model: Model, metadata: StoreMetadata, overwrite: Bool) throws {
        self.url = url
        self.model = model
        self.metadata = metadata
        self.overwrite = overwrite
        let path = url.relativePath
        if !overwrite && FileAccess.kind(of: url).exists {
            throw GraftError(.alreadyExists, "already exists (use --force to replace it)", context: [.file(path)])
        }
        let folder = url.deletingLastPathComponent()
        temporary = folder.appendingPathComponent(".\(url.lastPathComponent).graft-\(UUID().uuidString).tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw GraftError(.io, "cannot create a file in \(folder.relativePath)", context: [.file(path)])
        }
        var opened: FileHandle?
        do {
            let handle = try FileHandle(forWritingTo: temporary)
            opened = handle
            try handle.write(contentsOf: Data(count: BinaryStoreLayout.headerSize))
            stream = try ArchiveStream(handle: handle)
            self.handle = handle
        } catch {
            try? opened?.close()
            try? FileManager.default.removeItem(at: temporary)
            throw GraftError(.io, "cannot be written: \(error.localizedDescription)", context: [.file(path)])
        }
        slots = model.descriptions.map { BinaryStoreLayout.attributeSlots(of: $0) }
        storedRelationships = model.descriptions.map { BinaryStoreLayout.storedRelationships(of: $0) }
    }

    deinit {
        // A writer dropped without finish() or cancel() leaves nothing behind either.
        if !done { discard() }
    }

    /// Runs a step; on failure removes the temporary file and adds the destination to the error.
    func guarded(_ body: (WriterState) throws -> Void) throws {
        let path = url.relativePath
        guard !done else {
            throw GraftError(
                .invalidOperation, "the writer has already finished or been cancelled", context: [.file(path)])
        }
        do {
            try body(self)
        } catch {
            discard()
            let error = GraftError.wrap(error)
            throw error.context.first == .file(path) ? error : error.inFile(path)
        }
    }

    func discard() {
        done = true
        try? handle?.close()
        handle = nil
        try? FileManager.default.removeItem(at: temporary)
    }

    // MARK: Writing nodes

    func write(_ snapshot: Snapshot) throws {
        let ref = snapshot.ref
        guard model.descriptions.indices.contains(ref.entity) else {
            throw GraftError(.malformedInput, "a snapshot names entity #\(ref.entity), which the model does not have")
        }
        let entity = model.descriptions[ref.entity]
        func failure(_ code: GraftError.Code, _ message: String, key: String? = nil) -> GraftError {
            var context: [GraftError.Location] = [.entity(entity.name), .object("p\(ref.key)")]
            if let key { context.append(.key(key)) }
            return GraftError(code, message, context: context)
        }
        guard snapshot.attributes.count == entity.attributes.count,
            snapshot.relationships.count == entity.relationships.count
        else {
            throw failure(
                .malformedInput,
                "the snapshot has \(snapshot.attributes.count) attributes and \(snapshot.relationships.count) "
                    + "relationships; \(entity.name) has \(entity.attributes.count) and \(entity.relationships.count)")
        }
        guard !entity.isAbstract else {
            throw failure(.malformedInput, "\(entity.name) is abstract and cannot have objects")
        }
        let entry = try self.entry(for: ref, referrer: nil)
        guard nodes[entry] == Self.none else { throw failure(.malformedInput, "the object is written twice") }

        // NSAttributeValues.
        var values: [ArchiveStream.Ref] = []
        values.reserveCapacity(slots[ref.entity].count)
        for attributeIndex in slots[ref.entity] {
            let attribute = entity.attributes[attributeIndex]
            guard let value = snapshot.attributes[attributeIndex] else {
                values.append(try stream.null())
                continue
            }
            guard let encoded = try encode(value, as: BinaryStoreLayout.archivedForm(of: attribute.type)) else {
                throw failure(
                    .typeMismatch,
                    "holds the value \(value) (\(Self.kind(of: value))) where a \(attribute.type) value belongs",
                    key: attribute.name)
            }
            values.append(encoded)
        }
        let attributeValues = try stream.reference(
            to: stream.object(
                classChain: BinaryStoreLayout.arrayClassChain,
                fields: [(BinaryStoreLayout.ValueKey.objects, stream.array(values))]))

        // NSRelatedNodes.
        var names: [ArchiveStream.Ref] = []
        var lists: [ArchiveStream.Ref] = []
        for relationshipIndex in storedRelationships[ref.entity] {
            let relationship = entity.relationships[relationshipIndex]
            let value = snapshot.relationships[relationshipIndex]
            if value == .unloaded {
                throw failure(
                    .invalidOperation, "the relationship was not loaded, so it cannot be written",
                    key: relationship.name)
            }
            let targets = value.refs
            if !relationship.isToMany && targets.count > 1 {
                throw failure(
                    .malformedInput, "the to-one relationship holds \(targets.count) objects", key: relationship.name)
            }
            let destination = model.destination(of: relationship)
            var keys: [ArchiveStream.Ref] = []
            keys.reserveCapacity(targets.count)
            for target in targets {
                guard model.descriptions.indices.contains(target.entity),
                    model.isKind(model.descriptions[target.entity], of: destination)
                else {
                    let name =
                        model.descriptions.indices.contains(target.entity)
                        ? model.descriptions[target.entity].name : "entity #\(target.entity)"
                    throw failure(
                        .typeMismatch, "refers to \(name) p\(target.key) where a \(destination.name) belongs",
                        key: relationship.name)
                }
                keys.append(keyReferences[try self.entry(for: target, referrer: ref)])
            }
            names.append(try stream.sharedName(relationship.name))
            lists.append(keys.isEmpty ? try sharedEmptyArray() : try newArray(keys))
        }
        let related = try stream.reference(
            to: stream.object(
                classChain: BinaryStoreLayout.dictionaryClassChain,
                fields: [
                    (BinaryStoreLayout.ValueKey.keys, stream.array(names)),
                    (BinaryStoreLayout.ValueKey.objects, stream.array(lists)),
                ]))

        typealias Node = BinaryStoreLayout.NodeKey
        let node = try stream.object(
            classChain: BinaryStoreLayout.nodeClassChain,
            fields: [
                (Node.primaryKey, keyIntegers[entry]),
                (Node.entityName, stream.sharedName(entity.name)),
                (Node.relatedNodes, related),
                (Node.attributeValues, attributeValues),
            ])
        nodes[entry] = try stream.reference(to: node)
    }

    /// The entry for an object, created on first sight; checks that every mention agrees on its entity.
    private func entry(for ref: ObjectRef, referrer: ObjectRef?) throws -> Int {
        let entity = model.descriptions[ref.entity]
        let treeKey = TreeKey(root: Int32(entity.rootIndex), key: ref.key)
        if let existing = entries[treeKey] {
            let index = Int(existing)
            guard entities[index] == Int32(ref.entity) else {
                let other = model.descriptions[Int(entities[index])].name
                throw GraftError(
                    .typeMismatch,
                    "p\(ref.key) is given as a \(entity.name) here but as a \(other) elsewhere in the document",
                    context: [.entity(entity.name), .object("p\(ref.key)")])
            }
            return index
        }
        let integer = try stream.reserve()
        let reference = try stream.reference(to: stream.archive(integer))
        entries[treeKey] = Int32(keys.count)
        keys.append(ref.key)
        roots.append(treeKey.root)
        entities.append(Int32(ref.entity))
        nodes.append(Self.none)
        keyIntegers.append(integer)
        keyReferences.append(reference)
        referrers.append(referrer ?? ref)
        return keys.count - 1
    }

    private func sharedEmptyArray() throws -> ArchiveStream.Ref {
        if let emptyArray { return emptyArray }
        let ref = try newArray([])
        emptyArray = ref
        return ref
    }

    private func newArray(_ elements: [ArchiveStream.Ref]) throws -> ArchiveStream.Ref {
        try stream.reference(
            to: stream.object(
                classChain: BinaryStoreLayout.arrayClassChain,
                fields: [(BinaryStoreLayout.ValueKey.objects, stream.array(elements))]))
    }

    /// The reference to an archived value, or `nil` when the value is not of the form's kind.
    private func encode(_ value: Value, as form: BinaryStoreLayout.ArchivedForm) throws -> ArchiveStream.Ref? {
        typealias Key = BinaryStoreLayout.ValueKey
        let plain: ArchiveStream.Ref
        switch (form, value) {
        case (.string, .string(let string)), (.byValue, .string(let string)):
            plain = try stream.string(string)
        case (.integer, .integer(let integer)), (.byValue, .integer(let integer)):
            plain = try stream.integer(integer)
        case (.boolean, .bool(let bool)), (.byValue, .bool(let bool)):
            plain = try stream.bool(bool)
        case (.real, .double(let double)), (.byValue, .double(let double)):
            plain = try stream.real(double)
        case (.data, .data(let data)), (.byValue, .data(let data)):
            plain = try stream.data(data)
        case (.decimalNumber, .decimal(let decimal)), (.byValue, .decimal(let decimal)):
            typealias Field = BinaryStoreLayout.DecimalKey
            let fields = DecimalFields(decimal)
            let object = try stream.object(
                classChain: BinaryStoreLayout.decimalClassChain,
                fields: [
                    (Field.exponent, stream.integer(Int64(fields.exponent))),
                    (Field.length, stream.integer(Int64(fields.length))),
                    (Field.negative, stream.bool(fields.isNegative)),
                    (Field.compact, stream.bool(fields.isCompact)),
                    (Field.mantissaByteOrder, stream.integer(BinaryStoreLayout.littleEndianByteOrder)),
                    (Field.mantissa, stream.data(fields.mantissaBytes)),
                ])
            return try stream.reference(to: object)
        case (.date, .date(let date)), (.byValue, .date(let date)):
            let object = try stream.object(
                classChain: BinaryStoreLayout.dateClassChain,
                fields: [(Key.time, stream.real(date.timeIntervalSinceReferenceDate))])
            return try stream.reference(to: object)
        case (.uuid, .uuid(let uuid)), (.byValue, .uuid(let uuid)):
            let bytes = withUnsafeBytes(of: uuid.uuid) { Data($0) }
            let object = try stream.object(
                classChain: BinaryStoreLayout.uuidClassChain, fields: [(Key.uuidBytes, stream.data(bytes))])
            return try stream.reference(to: object)
        case (.url, .uri(let url)), (.byValue, .uri(let url)):
            let text = try stream.reference(to: stream.archive(stream.string(url.absoluteString)))
            let object = try stream.object(
                classChain: BinaryStoreLayout.urlClassChain,
                fields: [(Key.urlBase, stream.null()), (Key.urlRelative, text)])
            return try stream.reference(to: object)
        default:
            return nil
        }
        return try stream.reference(to: stream.archive(plain))
    }

    private static func kind(of value: Value) -> String {
        switch value {
        case .integer: return "an integer"
        case .double: return "a double"
        case .decimal: return "a decimal"
        case .string: return "a string"
        case .bool: return "a Boolean"
        case .date: return "a date"
        case .data: return "data"
        case .uuid: return "a UUID"
        case .uri: return "a URI"
        }
    }

    // MARK: Finishing

    func finish() throws {
        // Every object referred to must have been written.
        for index in nodes.indices where nodes[index] == Self.none {
            let referrer = referrers[index]
            let entity = model.descriptions[Int(entities[index])].name
            let from = model.descriptions[referrer.entity].name
            throw GraftError(
                .malformedInput,
                "\(from) p\(referrer.key) refers to \(entity) p\(keys[index]), which is not in the document",
                context: [.entity(from), .object("p\(referrer.key)")])
        }
        let finalKeys = try numberKeys()
        for index in keys.indices { try stream.writeInteger(finalKeys[index], at: keyIntegers[index]) }

        // The map, in key order.
        let order = keys.indices.sorted { finalKeys[$0] < finalKeys[$1] }
        let map = try stream.object(
            classChain: BinaryStoreLayout.mapClassChain,
            fields: [
                (BinaryStoreLayout.ValueKey.keys, stream.array(order.map { keyReferences[$0] })),
                (BinaryStoreLayout.ValueKey.objects, stream.array(order.map { nodes[$0] })),
            ])
        let mapLength = try stream.finish(top: [(BinaryStoreLayout.mapRootKey, map)])

        // The metadata.
        var finished = StoreMetadata.make(
            for: model, storeType: .binary, identifier: metadata.identifier, keeping: metadata.values)
        DocumentKeys.record(appliedOffsets, model: model, in: &finished)
        let values = finished.values
        var archiver = KeyedArchiver()
        let root = archiver.encodePropertyList(.dictionary(values))
        let metadataBytes = archiver.finish(top: [BinaryStoreLayout.metadataRootKey: root]).encode(format: .binary)

        guard let handle else { throw GraftError(.invalidOperation, "the writer has no open file") }
        let mapOffset = UInt64(BinaryStoreLayout.headerSize)
        let header = BinaryStoreHeader(
            metadataOffset: mapOffset + UInt64(mapLength), metadataLength: UInt64(metadataBytes.count),
            mapOffset: mapOffset, mapLength: UInt64(mapLength),
            primaryKeyCounter: UInt64(max(0, finalKeys.max() ?? 0)))
        do {
            try handle.write(contentsOf: metadataBytes)
            try handle.seek(toOffset: 0)
            try handle.write(contentsOf: header.encoded)
            try handle.synchronize()
            try handle.close()
            self.handle = nil
        } catch {
            throw GraftError(.io, "cannot be written: \(error.localizedDescription)")
        }
        if !overwrite && FileAccess.kind(of: url).exists {
            throw GraftError(.alreadyExists, "already exists (use --force to replace it)")
        }
        guard rename(temporary.path, url.path) == 0 else {
            throw GraftError(
                .io, "cannot rename the finished file into place: \(String(cString: strerror(errno)))")
        }
        done = true
    }

    /// The key each entry is written with: its own plus its tree's offset (see `DocumentKeys`). The
    /// offsets come from the metadata when the caller gave them (a conversion from a SQLite store), and
    /// are otherwise computed from the keys written: none when no key is used by two trees.
    private func numberKeys() throws -> [Int64] {
        var offsets = try DocumentKeys.offsets(in: metadata, model: model)
        if offsets.isEmpty {
            offsets = DocumentKeys.offsets(
                for: keys.indices.lazy.map { ObjectRef(entity: Int(self.entities[$0]), key: self.keys[$0]) },
                model: model)
        }
        appliedOffsets = offsets
        var finalKeys = keys
        var seen: [Int64: Int] = [:]
        seen.reserveCapacity(keys.count)
        for index in keys.indices {
            let (key, overflow) = keys[index].addingReportingOverflow(offsets[Int(roots[index])] ?? 0)
            guard !overflow else {
                throw GraftError(.malformedInput, "key \(keys[index]) is too large to give every object its own key")
            }
            finalKeys[index] = key
            if let other = seen.updateValue(index, forKey: key) {
                let first = model.descriptions[Int(entities[other])].name
                let second = model.descriptions[Int(entities[index])].name
                throw GraftError(
                    .malformedInput,
                    "\(first) p\(keys[other]) and \(second) p\(keys[index]) would share key \(key) in the document; the key offsets recorded in the metadata do not fit these objects"
                )
            }
        }
        return finalKeys
    }
}
