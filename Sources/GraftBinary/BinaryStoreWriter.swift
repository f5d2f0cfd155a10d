import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// Writes a Core Data binary store (`NSBinaryStoreType`) from a stream of snapshots.
///
/// Nodes are encoded as they arrive, straight into a temporary file beside the destination; primary
/// keys get their final numbers as they are met when the metadata records the trees' key offsets, and
/// in ``finish()`` otherwise (see ``BinaryStoreLayout/keysAreUniquePerDocument``), after which the
/// object map, the metadata and the header are written, the file is flushed to disk and renamed into
/// place. ``cancel()``, or any error, removes the temporary file. Per object the writer keeps two
/// object numbers (its key's and its node's, which the object map lists), and the offset of each
/// property-list object for the offset table; the `$objects` list waits in a temporary file.
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

    /// Every object of the document, met as a node or as a related object.
    @exclusivity(unchecked) private var table: NodeTable
    /// The tree offsets the keys were written with.
    private var appliedOffsets: [Int: Int64] = [:]
    /// By tree ordinal, the offsets the metadata records, when it records any: each object's final key
    /// is then known when the object is first met, and written at once. Otherwise the key objects are
    /// reserved and written in ``finish()``, once the keys show whether trees share keys.
    private var knownOffsets: [Int64]?

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
            stream = try ArchiveStream(
                writingTo: replacement, folder: replacement.temporaryURL.deletingLastPathComponent())
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
        table = NodeTable(model: model)
        // Offsets the metadata cannot give are reported by finish().
        if let offsets = try? DocumentKeys.offsets(in: metadata, model: model), !offsets.isEmpty {
            knownOffsets = table.trees.map { offsets[$0.root] ?? 0 }
        }
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
        let entry = try self.entry(for: ref, referrer: 0)
        guard !entry.isWritten else { throw failure(.malformedInput, "the object is written twice") }

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
                if let target {
                    try appendTargetKey(target, of: ref, referrer: entry.keyObject, slot: slot, entity: entity)
                }
            case .toMany(let targets):
                if !slot.isToMany && targets.count > 1 {
                    throw failure(
                        .malformedInput, "the to-one relationship holds \(targets.count) objects",
                        key: entity.relationships[slot.index].name)
                }
                for target in targets {
                    try appendTargetKey(target, of: ref, referrer: entry.keyObject, slot: slot, entity: entity)
                }
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

        let primaryKey = entry.keyObject
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
        table.setNode(try stream.reference(to: node), of: ref)
    }

    /// Adds the key reference of a related object to `targetKeys`, after checking its entity.
    @inline(__always)
    private func appendTargetKey(
        _ target: ObjectRef, of ref: ObjectRef, referrer: UInt32, slot: (index: Int, isToMany: Bool, accepts: Int),
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
        targetKeys.append(try self.entry(for: target, referrer: referrer).keyObject &+ 1)
    }

    /// The key object of an object (the reserved integer that will hold its final key; the reference
    /// to it follows it), reserved on first sight, and whether its node is written; checks that every
    /// mention agrees on its entity.
    ///
    /// - Parameter referrer: the key object of the node being written that refers to the object, or 0
    ///   for the node itself.
    @inline(__always)
    private func entry(for ref: ObjectRef, referrer: UInt32) throws -> (keyObject: UInt32, isWritten: Bool) {
        if let record = table.record(of: ref) {
            guard record.entity == ref.entity else {
                let entity = model.descriptions[ref.entity]
                let other = model.descriptions[record.entity].name
                throw GraftError(
                    .typeMismatch,
                    "p\(ref.key) is given as a \(entity.name) here but as a \(other) elsewhere in the document",
                    context: [.entity(entity.name), .object("p\(ref.key)")])
            }
            return (record.slot.keyObject, record.isWritten)
        }
        let integer: ArchiveStream.Ref
        if let knownOffsets {
            // A key the offset makes overflow is reported by finish(), which removes the document.
            let (key, overflow) = ref.key.addingReportingOverflow(knownOffsets[table.treeOfEntity[ref.entity]])
            integer = try stream.integer(overflow ? 0 : key)
        } else {
            integer = try stream.reserve()
        }
        let reference = try stream.reference(to: stream.archive(integer))
        // The map and the relationships refer to the key through `reference`, which is the object after
        // the integer: only the integer's number is kept.
        guard reference == integer &+ 1 else {
            throw GraftError(.invalidOperation, "the key of p\(ref.key) was not numbered as the writer expects")
        }
        table.add(ref, keyObject: integer, referrer: referrer == 0 ? integer : referrer)
        return (integer, false)
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
        try checkEveryObjectWritten()
        let (offsets, largest) = try numberKeys()
        if knownOffsets == nil {
            for ordinal in table.trees.indices {
                let offset = offsets[ordinal]
                // numberKeys() found no key that overflows.
                try table.forEach(inTree: ordinal) { try stream.writeInteger($0.key &+ offset, at: $0.slot.keyObject) }
            }
        }

        // The map, in key order: each node's key (the reference after its integer), then the nodes.
        let (table, count) = (self.table, self.table.count)
        let keyArray = try stream.array(count: count) { append in
            try table.forEachInFinalKeyOrder(offsets: offsets) { record, _ in try append(record.slot.keyObject &+ 1) }
        }
        let nodeArray = try stream.array(count: count) { append in
            try table.forEachInFinalKeyOrder(offsets: offsets) { record, _ in try append(record.slot.node) }
        }
        let map = try stream.object(
            classChain: BinaryStoreLayout.mapClassChain,
            fields: [(BinaryStoreLayout.ValueKey.keys, keyArray), (BinaryStoreLayout.ValueKey.objects, nodeArray)])
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
            primaryKeyCounter: UInt64(largest))
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

    /// Throws for the first object, in order of first sight, that was referred to but never written.
    private func checkEveryObjectWritten() throws {
        var first: NodeTable.Record?
        table.forEach { record in
            if !record.isWritten && record.slot.keyObject < first?.slot.keyObject ?? .max { first = record }
        }
        guard let first else { return }
        // An unwritten object's slot holds the key object of the first object that referred to it.
        var referrer = ObjectRef(entity: first.entity, key: first.key)
        table.forEach { record in
            if record.slot.keyObject == first.slot.node { referrer = ObjectRef(entity: record.entity, key: record.key) }
        }
        let entity = model.descriptions[first.entity].name
        let from = model.descriptions[referrer.entity].name
        throw GraftError(
            .malformedInput, "\(from) p\(referrer.key) refers to \(entity) p\(first.key), which is not in the document",
            context: [.entity(from), .object("p\(referrer.key)")])
    }

    /// The offset each tree's keys are written with (by tree ordinal): its own key plus the offset (see
    /// `DocumentKeys`). The offsets come from the metadata when the caller gave them (a conversion from
    /// a SQLite store), and are otherwise computed from the keys written: none when no key is used by
    /// two trees.
    ///
    /// - Throws: `GraftError.malformedInput` for the first problem a pass over the objects in order of
    ///   first sight meets: two objects sharing a key (the shared key whose second object comes first),
    ///   unless an object whose key the offset makes overflow comes before it.
    ///
    /// - Returns: the offsets, and the largest final key (at least 0).
    private func numberKeys() throws -> (offsets: [Int64], largest: Int64) {
        var offsets = try DocumentKeys.offsets(in: metadata, model: model)
        var check = keyCheck(offsets)
        if offsets.isEmpty && check.clash != nil {
            // Two trees use one key: move them apart.
            offsets = DocumentKeys.offsets(maxKeys: check.maxKeys, collide: true)
            check = keyCheck(offsets)
        }
        appliedOffsets = offsets
        if let clash = check.clash {
            let first = model.descriptions[clash.first.entity].name
            let second = model.descriptions[clash.second.entity].name
            throw GraftError(
                .malformedInput,
                "\(first) p\(clash.first.key) and \(second) p\(clash.second.key) would share key \(clash.key) in the document; the key offsets recorded in the metadata do not fit these objects"
            )
        }
        if let overflow = check.overflow {
            throw GraftError(.malformedInput, "key \(overflow.key) is too large to give every object its own key")
        }
        return (table.trees.map { offsets[$0.root] ?? 0 }, check.largest)
    }

    /// What the keys give with these offsets: the first object (in order of first sight) whose key
    /// overflows; among the objects before it, the pair sharing a final key whose second object comes
    /// first; each tree's highest key (at least 0); the largest final key (at least 0).
    private func keyCheck(
        _ given: [Int: Int64]
    ) -> (
        clash: (first: NodeTable.Record, second: NodeTable.Record, key: Int64)?, overflow: NodeTable.Record?,
        maxKeys: [Int: Int64], largest: Int64
    ) {
        let offsets = table.trees.map { given[$0.root] ?? 0 }
        var overflow: NodeTable.Record?
        var maxKeys: [Int: Int64] = [:]
        var largest: Int64 = 0
        for (ordinal, tree) in table.trees.enumerated() where tree.count > 0 {
            var highest: Int64 = 0
            table.forEach(inTree: ordinal) { record in
                highest = max(highest, record.key)
                let (final, overflows) = record.key.addingReportingOverflow(offsets[ordinal])
                if !overflows {
                    largest = max(largest, final)
                } else if record.slot.keyObject < overflow?.slot.keyObject ?? .max {
                    overflow = record
                }
            }
            maxKeys[tree.root] = highest
        }
        var clash: (first: NodeTable.Record, second: NodeTable.Record, key: Int64)?
        var previous: (record: NodeTable.Record, key: Int64)?
        table.forEachInFinalKeyOrder(offsets: offsets, below: overflow?.slot.keyObject ?? .max) { record, key in
            if let previous, previous.key == key, record.slot.keyObject < clash?.second.slot.keyObject ?? .max {
                clash = (previous.record, record, key)
            }
            previous = (record, key)
        }
        return (clash, overflow, maxKeys, largest)
    }
}
