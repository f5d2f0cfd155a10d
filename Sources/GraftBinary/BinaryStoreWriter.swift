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
public struct BinaryStoreWriter: StoreFileWriter {
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
        state.takePlacedFile()?.release()
    }

    /// Finishes, and returns the lock on the document now in place, held until released (see
    /// ``FileReplacement/commit()``), for a store that keeps its document locked.
    public mutating func finishHoldingLock() throws -> FileLock {
        try state.guarded { try $0.finish() }
        guard let lock = state.takePlacedFile() else {
            throw GraftError(.invalidOperation, "the document was not placed", context: [.file(state.url.relativePath)])
        }
        return lock
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
    /// The temporary file and how it replaces the destination.
    private let replacement: FileReplacement
    private var handle: FileHandle?
    /// The lock on the finished document, until the writer hands it over or goes away.
    private(set) var placedFile: FileLock?
    // The writer is used from one thread at a time; its per-node state skips dynamic exclusivity checks.
    @exclusivity(unchecked) private var stream: ArchiveStream
    private var done = false

    /// An object of the document, known from its node or from a reference to it.
    private struct TreeKey: Hashable {
        let root: Int32
        let key: Int64
    }
    /// Entry + 1 by key, per inheritance tree (by root ordinal), while keys stay dense; 0 for none.
    @exclusivity(unchecked) private var denseEntries: [[Int32]]
    @exclusivity(unchecked) private var entries: [TreeKey: Int32] = [:]
    /// Root ordinal by entity index.
    private let rootOrdinal: [Int]
    @exclusivity(unchecked) private var keys: [Int64] = []
    /// The tree offsets the keys were written with.
    private var appliedOffsets: [Int: Int64] = [:]
    @exclusivity(unchecked) private var roots: [Int32] = []
    @exclusivity(unchecked) private var entities: [Int32] = []
    /// The node's UID reference, `none` until the node is written.
    @exclusivity(unchecked) private var nodes: [ArchiveStream.Ref] = []
    /// The reserved integer object that will hold the final key.
    @exclusivity(unchecked) private var keyIntegers: [ArchiveStream.Ref] = []
    /// The UID reference to that integer's `$objects` entry.
    @exclusivity(unchecked) private var keyReferences: [ArchiveStream.Ref] = []
    /// The first object that referred to each entry (for messages about missing objects).
    @exclusivity(unchecked) private var referrers: [ObjectRef] = []
    private static let none = ArchiveStream.Ref.max

    /// How each entity's nodes are written, resolved once.
    private final class EntityPlan {
        /// `NSAttributeValues`: the attribute index and archived form of each of the first slots (the
        /// stored attributes), and how many null slots follow (every other property).
        let attributes: [(index: Int, form: BinaryStoreLayout.ArchivedForm)]
        let nullSlots: Int
        /// `NSRelatedNodes`: each stored relationship, and where its row of `accepted` starts.
        let relationships: [(index: Int, isToMany: Bool, accepts: Int)]
        /// The shared name references, made on first use (the entity's, then each relationship's).
        var nameRef: ArchiveStream.Ref?
        var relationshipNameRefs: [ArchiveStream.Ref?]

        init(slots: BinaryStoreLayout.AttributeSlots, relationships: [(index: Int, isToMany: Bool, accepts: Int)]) {
            attributes = slots.storedAttributes
            nullSlots = slots.properties.count - slots.storedAttributes.count
            self.relationships = relationships
            relationshipNameRefs = Array(repeating: nil, count: relationships.count)
        }
    }

    private let plans: [EntityPlan]
    /// Whether a relationship may hold an object of each entity (the destination and its subentities).
    private let accepted: [Bool]
    /// The reference to the one archived `NSNull`, made on first use.
    @exclusivity(unchecked) private var nullObject: ArchiveStream.Ref?
    /// Scratch lists reused node to node.
    @exclusivity(unchecked) private var values: [ArchiveStream.Ref] = []
    @exclusivity(unchecked) private var names: [ArchiveStream.Ref] = []
    @exclusivity(unchecked) private var lists: [ArchiveStream.Ref] = []
    @exclusivity(unchecked) private var targetKeys: [ArchiveStream.Ref] = []

    // The shapes of the archived objects written per node (their key references belong to this
    // writer's archive).
    private let arrayLayout = ArchiveStream.Layout(
        classChain: BinaryStoreLayout.arrayClassChain, fieldNames: [BinaryStoreLayout.ValueKey.objects])
    private let dictionaryLayout = ArchiveStream.Layout(
        classChain: BinaryStoreLayout.dictionaryClassChain,
        fieldNames: [BinaryStoreLayout.ValueKey.keys, BinaryStoreLayout.ValueKey.objects])
    private let nodeLayout = ArchiveStream.Layout(
        classChain: BinaryStoreLayout.nodeClassChain,
        fieldNames: [
            BinaryStoreLayout.NodeKey.primaryKey, BinaryStoreLayout.NodeKey.entityName,
            BinaryStoreLayout.NodeKey.relatedNodes, BinaryStoreLayout.NodeKey.attributeValues,
        ])
    /// A node whose relationships are all empty, which has no `NSRelatedNodes`.
    private let unrelatedNodeLayout = ArchiveStream.Layout(
        classChain: BinaryStoreLayout.nodeClassChain,
        fieldNames: [
            BinaryStoreLayout.NodeKey.primaryKey, BinaryStoreLayout.NodeKey.entityName,
            BinaryStoreLayout.NodeKey.attributeValues,
        ])
    private let decimalLayout = ArchiveStream.Layout(
        classChain: BinaryStoreLayout.decimalClassChain,
        fieldNames: [
            BinaryStoreLayout.DecimalKey.exponent, BinaryStoreLayout.DecimalKey.length,
            BinaryStoreLayout.DecimalKey.negative, BinaryStoreLayout.DecimalKey.compact,
            BinaryStoreLayout.DecimalKey.mantissaByteOrder, BinaryStoreLayout.DecimalKey.mantissa,
        ])
    private let dateLayout = ArchiveStream.Layout(
        classChain: BinaryStoreLayout.dateClassChain, fieldNames: [BinaryStoreLayout.ValueKey.time])
    private let uuidLayout = ArchiveStream.Layout(
        classChain: BinaryStoreLayout.uuidClassChain, fieldNames: [BinaryStoreLayout.ValueKey.uuidBytes])
    private let urlLayout = ArchiveStream.Layout(
        classChain: BinaryStoreLayout.urlClassChain,
        fieldNames: [BinaryStoreLayout.ValueKey.urlBase, BinaryStoreLayout.ValueKey.urlRelative])

    init(url: URL, model: Model, metadata: StoreMetadata, overwrite: Bool) throws {
        self.url = url
        self.model = model
        self.metadata = metadata
        self.overwrite = overwrite
        let path = url.relativePath
        let replacement = try FileReplacement(replacing: url, overwrite: overwrite)
        self.replacement = replacement
        do {
            let handle = replacement.handle
            try handle.write(contentsOf: Data(count: BinaryStoreLayout.headerSize))
            stream = try ArchiveStream(handle: handle)
            self.handle = handle
        } catch {
            replacement.discard()
            throw GraftError(.io, "cannot be written: \(error.localizedDescription)", context: [.file(path)])
        }
        var accepted: [Bool] = []
        plans = model.descriptions.map { entity in
            let slots = BinaryStoreLayout.AttributeSlots(entity: entity, model: model)
            let relationships = BinaryStoreLayout.storedRelationships(of: entity).map { index in
                let relationship = entity.relationships[index]
                let destination = model.destination(of: relationship)
                let row = accepted.count
                accepted += model.descriptions.map { model.isKind($0, of: destination) }
                return (index: index, isToMany: relationship.isToMany, accepts: row)
            }
            return EntityPlan(slots: slots, relationships: relationships)
        }
        self.accepted = accepted
        var ordinals: [Int: Int] = [:]
        rootOrdinal = model.descriptions.map { entity in
            if let ordinal = ordinals[entity.rootIndex] { return ordinal }
            ordinals[entity.rootIndex] = ordinals.count
            return ordinals.count - 1
        }
        denseEntries = Array(repeating: [], count: ordinals.count)
    }

    deinit {
        // A writer dropped without finish() or cancel() leaves nothing behind either.
        if !done { discard() }
    }

    /// The lock on the finished document, handed over to the caller.
    func takePlacedFile() -> FileLock? {
        defer { placedFile = nil }
        return placedFile
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
        handle = nil
        replacement.discard()
    }

    // MARK: Writing nodes

    func write(_ snapshot: Snapshot) throws {
        let ref = snapshot.ref
        let entity = try snapshot.entity(checkedIn: model)
        func failure(_ code: GraftError.Code, _ message: String, key: String? = nil) -> GraftError {
            var context: [GraftError.Location] = [.entity(entity.name), .object("p\(ref.key)")]
            if let key { context.append(.key(key)) }
            return GraftError(code, message, context: context)
        }
        guard !entity.isAbstract else {
            throw failure(.malformedInput, "\(entity.name) is abstract and cannot have objects")
        }
        let plan = plans[ref.entity]
        let entry = try self.entry(for: ref, referrer: nil)
        guard nodes[entry] == Self.none else { throw failure(.malformedInput, "the object is written twice") }

        // NSAttributeValues.
        values.removeAll(keepingCapacity: true)
        for slot in plan.attributes {
            guard let value = snapshot.attributes[slot.index] else {
                values.append(try null())
                continue
            }
            guard let encoded = try encode(value, as: slot.form) else {
                let attribute = entity.attributes[slot.index]
                throw failure(
                    .typeMismatch,
                    "holds the value \(value) (\(Self.kind(of: value))) where a \(attribute.type) value belongs",
                    key: attribute.name)
            }
            values.append(encoded)
        }
        if plan.nullSlots > 0 {
            let null = try null()
            values.append(contentsOf: repeatElement(null, count: plan.nullSlots))
        }
        let valueArray = try stream.array(values)
        let attributeValues = try stream.reference(to: stream.object(arrayLayout, valueArray))

        // NSRelatedNodes.
        names.removeAll(keepingCapacity: true)
        lists.removeAll(keepingCapacity: true)
        for (position, slot) in plan.relationships.enumerated() {
            targetKeys.removeAll(keepingCapacity: true)
            switch snapshot.relationships[slot.index] {
            case .unloaded:
                throw failure(
                    .invalidOperation, "the relationship was not loaded, so it cannot be written",
                    key: entity.relationships[slot.index].name)
            case .toOne(let target):
                if let target { try appendTargetKey(target, of: ref, slot: slot, entity: entity) }
            case .toMany(let targets):
                if !slot.isToMany && targets.count > 1 {
                    throw failure(
                        .malformedInput, "the to-one relationship holds \(targets.count) objects",
                        key: entity.relationships[slot.index].name)
                }
                for target in targets { try appendTargetKey(target, of: ref, slot: slot, entity: entity) }
            }
            if targetKeys.isEmpty { continue }
            if let name = plan.relationshipNameRefs[position] {
                names.append(name)
            } else {
                let name = try stream.sharedName(entity.relationships[slot.index].name)
                plan.relationshipNameRefs[position] = name
                names.append(name)
            }
            lists.append(try newArray(targetKeys))
        }
        var related: ArchiveStream.Ref?
        if !names.isEmpty {
            let nameArray = try stream.array(names)
            let listArray = try stream.array(lists)
            related = try stream.reference(to: stream.object(dictionaryLayout) { $0 == 0 ? nameArray : listArray })
        }

        let primaryKey = keyIntegers[entry]
        let entityName: ArchiveStream.Ref
        if let name = plan.nameRef {
            entityName = name
        } else {
            entityName = try stream.sharedName(entity.name)
            plan.nameRef = entityName
        }
        let node: ArchiveStream.UID
        if let related {
            node = try stream.object(nodeLayout) { field in
                switch field {
                case 0: return primaryKey
                case 1: return entityName
                case 2: return related
                default: return attributeValues
                }
            }
        } else {
            node = try stream.object(unrelatedNodeLayout) { field in
                switch field {
                case 0: return primaryKey
                case 1: return entityName
                default: return attributeValues
                }
            }
        }
        nodes[entry] = try stream.reference(to: node)
    }

    /// Adds the key reference of a related object to `targetKeys`, after checking its entity.
    @inline(__always)
    private func appendTargetKey(
        _ target: ObjectRef, of ref: ObjectRef, slot: (index: Int, isToMany: Bool, accepts: Int),
        entity: EntityDescription
    ) throws {
        guard target.entity >= 0 && target.entity < model.descriptions.count,
            accepted[slot.accepts + target.entity]
        else {
            let relationship = entity.relationships[slot.index]
            let destination = model.destination(of: relationship)
            let name =
                model.descriptions.indices.contains(target.entity)
                ? model.descriptions[target.entity].name : "entity #\(target.entity)"
            throw GraftError(
                .typeMismatch, "refers to \(name) p\(target.key) where a \(destination.name) belongs",
                context: [.entity(entity.name), .object("p\(ref.key)"), .key(relationship.name)])
        }
        targetKeys.append(keyReferences[try self.entry(for: target, referrer: ref)])
    }

    /// The entry for an object, created on first sight; checks that every mention agrees on its entity.
    private func entry(for ref: ObjectRef, referrer: ObjectRef?) throws -> Int {
        let ordinal = rootOrdinal[ref.entity]
        let key = ref.key
        var found: Int32 = 0
        let isDense = key >= 0 && key < denseEntries[ordinal].count
        if isDense { found = denseEntries[ordinal][Int(key)] }
        if found == 0 && !entries.isEmpty {
            // A key seen while it lay beyond the dense table is in the dictionary, even once the table
            // has grown past it.
            found =
                entries[TreeKey(root: Int32(model.descriptions[ref.entity].rootIndex), key: key)].map { $0 + 1 } ?? 0
        }
        if found != 0 {
            let index = Int(found - 1)
            guard entities[index] == Int32(ref.entity) else {
                let entity = model.descriptions[ref.entity]
                let other = model.descriptions[Int(entities[index])].name
                throw GraftError(
                    .typeMismatch,
                    "p\(ref.key) is given as a \(entity.name) here but as a \(other) elsewhere in the document",
                    context: [.entity(entity.name), .object("p\(ref.key)")])
            }
            return index
        }
        let root = Int32(model.descriptions[ref.entity].rootIndex)
        let integer = try stream.reserve()
        let reference = try stream.reference(to: stream.archive(integer))
        let index = keys.count
        if isDense {
            denseEntries[ordinal][Int(key)] = Int32(index + 1)
        } else if key >= 0 && key < 1 << 28 && key <= 4 * Int64(keys.count) + (1 << 20) {
            // Grow the dense table to cover the key (keys in a store are mostly dense).
            let count = max(Int(key) + 1, denseEntries[ordinal].count * 2)
            denseEntries[ordinal].append(
                contentsOf: repeatElement(0, count: count - denseEntries[ordinal].count))
            denseEntries[ordinal][Int(key)] = Int32(index + 1)
        } else {
            entries[TreeKey(root: root, key: key)] = Int32(index)
        }
        keys.append(key)
        roots.append(root)
        entities.append(Int32(ref.entity))
        nodes.append(Self.none)
        keyIntegers.append(integer)
        keyReferences.append(reference)
        referrers.append(referrer ?? ref)
        return index
    }

    /// The reference to the document's one `NSNull`, archived on first use.
    private func null() throws -> ArchiveStream.Ref {
        if let nullObject { return nullObject }
        let ref = try stream.reference(to: stream.object(classChain: BinaryStoreLayout.nullClassChain, fields: []))
        nullObject = ref
        return ref
    }

    private func newArray(_ elements: [ArchiveStream.Ref]) throws -> ArchiveStream.Ref {
        let array = try stream.array(elements)
        return try stream.reference(to: stream.object(arrayLayout, array))
    }

    /// The reference to an archived value, or `nil` when the value is not of the form's kind.
    private func encode(_ value: Value, as form: BinaryStoreLayout.ArchivedForm) throws -> ArchiveStream.Ref? {
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
            let fields = DecimalFields(decimal)
            let exponent = try stream.integer(Int64(fields.exponent))
            let length = try stream.integer(Int64(fields.length))
            let negative = try stream.bool(fields.isNegative)
            let compact = try stream.bool(fields.isCompact)
            let byteOrder = try stream.integer(BinaryStoreLayout.littleEndianByteOrder)
            let mantissa = try fields.withMantissaBytes { try stream.data(bytes: $0) }
            let object = try stream.object(decimalLayout) { field in
                switch field {
                case 0: return exponent
                case 1: return length
                case 2: return negative
                case 3: return compact
                case 4: return byteOrder
                default: return mantissa
                }
            }
            return try stream.reference(to: object)
        case (.date, .date(let date)), (.byValue, .date(let date)):
            let time = try stream.real(date.timeIntervalSinceReferenceDate)
            return try stream.reference(to: stream.object(dateLayout, time))
        case (.uuid, .uuid(let uuid)), (.byValue, .uuid(let uuid)):
            let bytes = try withUnsafeBytes(of: uuid.uuid) { try stream.data(bytes: $0) }
            return try stream.reference(to: stream.object(uuidLayout, bytes))
        case (.url, .uri(let url)), (.byValue, .uri(let url)):
            let text = try stream.reference(to: stream.archive(stream.string(url.absoluteString)))
            let base = try stream.null()
            return try stream.reference(to: stream.object(urlLayout) { $0 == 0 ? base : text })
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
        let (finalKeys, order) = try numberKeys()
        for index in keys.indices { try stream.writeInteger(finalKeys[index], at: keyIntegers[index]) }

        // The map, in key order.
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
        finished.values[BinaryStoreLayout.layoutMetadataKey] = .integer(BinaryStoreLayout.layoutVersion)
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
            self.handle = nil
        } catch {
            throw GraftError(.io, "cannot be written: \(error.localizedDescription)")
        }
        placedFile = try replacement.commit()
        done = true
    }

    /// The key each entry is written with: its own plus its tree's offset (see `DocumentKeys`). The
    /// offsets come from the metadata when the caller gave them (a conversion from a SQLite store), and
    /// are otherwise computed from the keys written: none when no key is used by two trees.
    ///
    /// - Returns: the keys, and the entries in key order.
    private func numberKeys() throws -> (keys: [Int64], order: [Int]) {
        var offsets = try DocumentKeys.offsets(in: metadata, model: model)
        if offsets.isEmpty {
            offsets = DocumentKeys.offsets(
                for: keys.indices.lazy.map { ObjectRef(entity: Int(self.entities[$0]), key: self.keys[$0]) },
                model: model)
        }
        appliedOffsets = offsets
        var finalKeys = keys
        var overflowAt = keys.count
        for index in keys.indices {
            let (key, overflow) = keys[index].addingReportingOverflow(offsets[Int(roots[index])] ?? 0)
            if overflow {
                overflowAt = index
                break
            }
            finalKeys[index] = key
        }
        // Entries in key order (ties by entry), so that entries sharing a key are side by side. The
        // failure reported is the one a pass in entry order meets first: the shared key whose second
        // entry comes first, unless an overflowing key comes before it.
        let order = finalKeys.indices.prefix(overflowAt).sorted {
            finalKeys[$0] != finalKeys[$1] ? finalKeys[$0] < finalKeys[$1] : $0 < $1
        }
        var clash: (first: Int, second: Int)?
        for position in order.indices.dropFirst() where finalKeys[order[position]] == finalKeys[order[position - 1]] {
            let pair = (first: order[position - 1], second: order[position])
            if pair.second < clash?.second ?? Int.max { clash = pair }
        }
        if let clash {
            let first = model.descriptions[Int(entities[clash.first])].name
            let second = model.descriptions[Int(entities[clash.second])].name
            throw GraftError(
                .malformedInput,
                "\(first) p\(keys[clash.first]) and \(second) p\(keys[clash.second]) would share key \(finalKeys[clash.second]) in the document; the key offsets recorded in the metadata do not fit these objects"
            )
        }
        if overflowAt < keys.count {
            throw GraftError(.malformedInput, "key \(keys[overflowAt]) is too large to give every object its own key")
        }
        return (finalKeys, order)
    }
}
