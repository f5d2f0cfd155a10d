import Foundation
@_spi(GraftInternal) import GraftCore
import GraftGraph
import GraftModel

/// Reads a Core Data binary store (`NSBinaryStoreType`) as a stream of snapshots.
///
/// The file is mapped into memory; opening it checks the header against the file size, reads the
/// metadata, checks the model's version hashes and reads every entry of the object map, keeping each
/// node's entity by key (two bytes a key), so that a relationship's keys can be turned into exact
/// references. ``forEachSnapshot(_:)`` then reads the map again and decodes one node at a time. Pages of the mapping already read are handed back to the kernel as the
/// reader moves on (`MappedFile`), so memory stays bounded whatever the file's size.
///
/// For example:
///
/// ```swift
/// let reader = try BinaryStoreReader(url: storeURL, model: model)
/// try reader.forEachSnapshot { snapshot in print(snapshot.ref) }
/// ```
public struct BinaryStoreReader: StoreReader {
    public let url: URL
    public let model: Model
    public let modelSource: ModelSource
    public let metadata: StoreMetadata
    public let header: BinaryStoreHeader
    private let data: Data
    private let mapping: MappedFile
    private let index: NodeIndex
    private let offsets: [Int: Int64]
    /// The layout of attribute arrays that could be read either way (see `BinaryStoreLayout`).
    private let layout: BinaryStoreLayout.AttributeValuesLayout
    /// Values that are not of their attribute's type or range: an error, or no value and a warning.
    private let refusals: ValueRefusals
    /// Values read as no value under `ValueReading.lenient` (one line per entity and attribute).
    public var warnings: [String] { refusals.warnings }
    /// The values read as no value under `ValueReading.lenient`, by object and attribute.
    package var refusedValues: Set<ValueRefusals.Slot> { refusals.slots }

    /// Every node's entity by key, to turn a relationship's keys into exact references. The map's
    /// keys and nodes are read again from the file as the nodes are read; only the entities are kept.
    private struct NodeIndex {
        /// The number of nodes.
        var count = 0
        /// Entity + 1 by key for keys from 0 up to `denseLimit` (0: no node), in 16 bits when the model
        /// has fewer than 65535 entities, else in 32 (one of the two is used); other keys in `sparse`.
        var dense16: [UInt16] = []
        var dense32: [UInt32] = []
        let isWide: Bool
        var denseLimit: Int64 = 0
        var sparse: [Int64: Int32] = [:]

        init(entityCount: Int) { isWide = entityCount >= Int(UInt16.max) }

        /// The entity of the node with this key.
        @inline(__always)
        func entity(of key: Int64) -> Int? {
            if key >= 0 && key < denseLimit {
                let stored: Int
                if isWide {
                    stored = key < dense32.count ? Int(dense32[Int(key)]) : 0
                } else {
                    stored = key < dense16.count ? Int(dense16[Int(key)]) : 0
                }
                return stored == 0 ? nil : stored - 1
            }
            return sparse[key].map(Int.init)
        }

        /// Files a node under its key; `false` when the key is taken.
        mutating func insert(key: Int64, entity: Int) -> Bool {
            if key >= 0 && key < denseLimit {
                let denseCount = isWide ? dense32.count : dense16.count
                if key >= denseCount {
                    let count = min(max(Int(key) + 1, denseCount * 2), Int(denseLimit))
                    if isWide {
                        dense32.append(contentsOf: repeatElement(0, count: count - denseCount))
                    } else {
                        dense16.append(contentsOf: repeatElement(0, count: count - denseCount))
                    }
                }
                if isWide {
                    if dense32[Int(key)] != 0 { return false }
                    dense32[Int(key)] = UInt32(entity + 1)
                } else {
                    if dense16[Int(key)] != 0 { return false }
                    dense16[Int(key)] = UInt16(entity + 1)
                }
                return true
            }
            return sparse.updateValue(Int32(entity), forKey: key) == nil
        }
    }

    public var objectCount: Int? { index.count }

    /// Opens a binary store.
    ///
    /// - Parameters:
    ///   - model: the store's model; when `nil`, the model the store carries in its metadata
    ///     (`GraftModelCache`) is used.
    ///   - valueReading: what to do with a value that is not of its attribute's type or range (a string
    ///     for an integer, 70000 for an Integer 16, 2 for a Boolean): an error naming the object,
    ///     attribute and value, or no value and one warning per attribute.
    /// - Throws: `GraftError.fileNotFound`; `GraftError.malformedInput` naming the byte offset, node or
    ///   field that is wrong; `GraftError.unsupportedFormat` for another format version;
    ///   `GraftError.notFound` when `model` is `nil` and the store carries no model;
    ///   `GraftError.modelMismatch` when the store was written with a different model.
    public init(url: URL, model: Model?, valueReading: ValueReading = .strict) throws {
        self.url = url
        refusals = ValueRefusals(valueReading)
        let path = url.relativePath
        do {
            (data, mapping) = try Self.readFile(url)
            header = try BinaryStoreHeader(decoding: data.prefix(BinaryStoreLayout.headerSize), fileSize: data.count)
            var metadata = try Self.readMetadata(
                data.subdata(in: header.metadataRange), offset: header.metadataRange.lowerBound)
            layout = try BinaryStoreLayout.documentLayout(metadata: metadata.values)
            // The mark describes this file's nodes, not the store: it is not handed on.
            metadata.values[BinaryStoreLayout.layoutMetadataKey] = nil
            self.metadata = metadata
            if let model {
                self.model = model
                modelSource = .given
            } else {
                guard let carried = try metadata.carriedModel() else {
                    throw GraftError(
                        .notFound,
                        "the store carries no model of its own (no \(StoreMetadata.graftModelKey) in its metadata); "
                            + "give its model with --model")
                }
                self.model = carried
                modelSource = .modelCache
            }
            try metadata.check(against: self.model, path: path)
            offsets = try DocumentKeys.offsets(in: metadata, model: self.model)
            let (header, model, mapping, offsets) = (header, self.model, mapping, offsets)
            index = try data.withUnsafeBytes { raw in
                let archive = try Self.mapArchive(raw, header: header)
                return try Self.buildIndex(archive, model: model, mapping: mapping, offsets: offsets)
            }
        } catch let error as GraftError {
            throw error.context.first == .file(path) ? error : error.inFile(path)
        }
    }

    /// The metadata a binary store records, read without its object map.
    ///
    /// - Throws: as ``init(url:model:)`` for the file, its header and its metadata archive.
    public static func recordedMetadata(at url: URL) throws -> StoreMetadata {
        do {
            let (data, mapping) = try readFile(url)
            defer { withExtendedLifetime(mapping) {} }
            let header = try BinaryStoreHeader(
                decoding: data.prefix(BinaryStoreLayout.headerSize), fileSize: data.count)
            return try readMetadata(data.subdata(in: header.metadataRange), offset: header.metadataRange.lowerBound)
        } catch let error as GraftError {
            throw error.context.first == .file(url.relativePath) ? error : error.inFile(url.relativePath)
        }
    }

    private static func readFile(_ url: URL) throws -> (Data, MappedFile) {
        let kind = FileAccess.kind(of: url)
        guard kind.exists else { throw GraftError(.fileNotFound, "no such file") }
        guard !kind.isDirectory else { throw GraftError(.io, "is a folder, not a binary store") }
        return try MappedFile.map(url)
    }

    private static func readMetadata(_ bytes: Data, offset: Int) throws -> StoreMetadata {
        do {
            let archive = try KeyedArchive(data: bytes)
            guard let root = try archive.topObject(forKey: BinaryStoreLayout.metadataRootKey) else {
                throw GraftError(.malformedInput, "the archive has no '\(BinaryStoreLayout.metadataRootKey)' object")
            }
            guard let values = try root.decodePropertyList().dictionaryValue else {
                throw GraftError(
                    .malformedInput, "the metadata is \(root.kindDescriptionForMessages), not a dictionary")
            }
            let identifier: String
            switch values["NSStoreUUID"] {
            case nil: identifier = UUID().uuidString
            case .string(let text)?: identifier = try StoreMetadata.checkedIdentifier(text, field: "NSStoreUUID")
            case let other?:
                throw GraftError(
                    .malformedInput, "the store's UUID is \(Wording.withArticle(other.typeName)), not a string",
                    context: [.key("NSStoreUUID")])
            }
            return StoreMetadata(identifier: identifier, values: values)
        } catch let error as GraftError {
            var error = error
            error.message = "metadata (bytes from \(offset)): " + error.message
            throw error
        }
    }

    private static func mapArchive(_ raw: UnsafeRawBufferPointer, header: BinaryStoreHeader) throws -> ArchiveView {
        let bytes = UnsafeRawBufferPointer(rebasing: raw[header.mapRange])
        return try ArchiveView(BinaryPlistView(bytes, name: "object map", baseOffset: header.mapRange.lowerBound))
    }

    // MARK: Index

    /// The object map's two arrays: keys and nodes.
    private struct Map {
        let keys: Int
        let objects: Int
        let count: Int
    }

    private static func map(_ archive: ArchiveView) throws -> Map {
        let plist = archive.plist
        let key = BinaryStoreLayout.mapRootKey
        guard let root = try archive.topObject(key) else {
            throw GraftError(.malformedInput, "object map: the archive has no '\(key)' object")
        }
        guard let rootFields = try archive.fields(of: root), let keysField = try archive.field(.keys, in: rootFields),
            let objectsField = try archive.field(.objects, in: rootFields),
            case .array(let keysStart, let count) = try plist.object(keysField),
            case .array(let objectsStart, let objectCount) = try plist.object(objectsField)
        else {
            throw GraftError(.malformedInput, "object map: '\(key)' is not a dictionary (no NS.keys and NS.objects)")
        }
        guard count == objectCount else {
            throw GraftError(.malformedInput, "object map: '\(key)' has \(count) keys but \(objectCount) nodes")
        }
        return Map(keys: keysStart, objects: objectsStart, count: count)
    }

    /// The key and node of one entry of the map, checked: the key an integer, the node an archived
    /// object that gives the same primary key.
    private static func entry(
        _ position: Int, of map: Map, in archive: ArchiveView
    ) throws -> (
        key: Int64, node: Int, fields: ArchiveView.Fields
    ) {
        let plist = archive.plist
        let where_ = "\(BinaryStoreLayout.mapRootKey) entry \(position)"
        guard let keyObject = try archive.follow(plist.element(position, from: map.keys), context: where_),
            case .integer(let primaryKey) = try plist.object(keyObject)
        else {
            throw GraftError(.malformedInput, "object map: the key of \(where_) is not an integer")
        }
        let place = "node p\(primaryKey)"
        guard let node = try archive.follow(plist.element(position, from: map.objects), context: place),
            let fields = try archive.fields(of: node)
        else {
            throw GraftError(.malformedInput, "object map: \(place) is not an archived object")
        }
        let keyField = try archive.field(.primaryKey, in: fields) ?? archive.field(.legacyPrimaryKey, in: fields)
        guard let keyField, let keyValue = try archive.follow(keyField, context: place),
            case .integer(let nodeKey) = try plist.object(keyValue)
        else {
            throw GraftError(
                .malformedInput, "object map: \(place) has no integer \(BinaryStoreLayout.NodeKey.primaryKey)")
        }
        guard nodeKey == primaryKey else {
            throw GraftError(
                .malformedInput,
                "object map: \(place) says its primary key is \(nodeKey), but the map files it under \(primaryKey)")
        }
        return (primaryKey, node, fields)
    }

    private static func buildIndex(
        _ archive: ArchiveView, model: Model, mapping: MappedFile, offsets: [Int: Int64]
    ) throws -> NodeIndex {
        let plist = archive.plist
        let map = try map(archive)
        var index = NodeIndex(entityCount: model.descriptions.count)
        // Keys are dense in a document Core Data or Graft wrote: a table by key, a dictionary beyond.
        index.denseLimit = min(4 * Int64(map.count) + (1 << 20), 1 << 28)
        var entityByName: [Int: Int] = [:]
        /// The first key (in map order) that its tree's offset cannot move back.
        var unmovable: (key: Int64, offset: Int64)?
        for position in 0..<map.count {
            let (primaryKey, _, fields) = try entry(position, of: map, in: archive)
            let place = "node p\(primaryKey)"
            guard let nameField = try archive.field(.entityName, in: fields),
                let nameObject = try archive.follow(nameField, context: place)
            else {
                throw GraftError(
                    .malformedInput, "object map: \(place) has no \(BinaryStoreLayout.NodeKey.entityName)")
            }
            let entityIndex: Int
            if let known = entityByName[nameObject] {
                entityIndex = known
            } else {
                guard let name = plist.string(try plist.object(nameObject)) else {
                    throw GraftError(.malformedInput, "object map: the entity name of \(place) is not a string")
                }
                guard let entity = model.entity(named: name) else {
                    throw GraftError(
                        .malformedInput,
                        "object map: \(place) names the entity '\(name)', which the model does not have",
                        context: [.entity(name)])
                }
                guard !entity.isAbstract else {
                    throw GraftError(
                        .malformedInput, "object map: \(place) belongs to the abstract entity '\(name)'",
                        context: [.entity(name)])
                }
                entityIndex = entity.index
                entityByName[nameObject] = entityIndex
            }
            if position % MappedFile.releaseInterval == 0 { mapping.releasePages(in: archive.plist.bytes) }
            guard index.insert(key: primaryKey, entity: entityIndex) else {
                throw GraftError(.malformedInput, "object map: the primary key \(primaryKey) appears twice")
            }
            index.count += 1
            if unmovable == nil, !offsets.isEmpty {
                // A key that the offset would move past Int64's smallest value has no original key.
                let offset = offsets[model.descriptions[entityIndex].rootIndex] ?? 0
                if primaryKey.subtractingReportingOverflow(offset).overflow { unmovable = (primaryKey, offset) }
            }
        }
        if let (key, offset) = unmovable {
            throw GraftError(
                .malformedInput,
                "object map: the primary key \(key) cannot be moved back by the offset \(offset) that "
                    + "\(DocumentKeys.metadataKey) records for its entity's tree (it would pass \(Int64.min))")
        }
        return index
    }

    // MARK: Snapshots

    public func forEachSnapshot(_ body: (Snapshot) throws -> Void) throws {
        let path = url.relativePath
        let index = self.index
        let (model, offsets, mapping) = (self.model, self.offsets, self.mapping)
        /// The exact reference of the object with this key, if the document has it.
        func resolve(_ key: Int64) -> ObjectRef? {
            guard let entity = index.entity(of: key) else { return nil }
            return ObjectRef(
                entity: entity, key: DocumentKeys.originalKey(key, entity: entity, model: model, offsets: offsets))
        }
        do {
            try data.withUnsafeBytes { raw in
                let archive = try Self.mapArchive(raw, header: header)
                let map = try Self.map(archive)
                var decoder = NodeDecoder(archive: archive, model: model, layout: layout, refusals: refusals)
                // One snapshot per entity, its storage reused node to node.
                var snapshots: [Snapshot?] = Array(repeating: nil, count: model.descriptions.count)
                for position in 0..<map.count {
                    if position % MappedFile.releaseInterval == 0 { mapping.releasePages(in: decoder.plist.bytes) }
                    let (documentKey, node, _) = try Self.entry(position, of: map, in: archive)
                    guard let entity = index.entity(of: documentKey) else {
                        throw GraftError(.malformedInput, "object map: node p\(documentKey) changed while it was read")
                    }
                    let key = DocumentKeys.originalKey(documentKey, entity: entity, model: model, offsets: offsets)
                    var snapshot = snapshots[entity] ?? Snapshot(entity: model.descriptions[entity], key: key)
                    snapshots[entity] = nil
                    try decoder.read(into: &snapshot, key: key, entity: entity, node: node, resolve: resolve)
                    try body(snapshot)
                    snapshots[entity] = snapshot
                }
            }
        } catch let error as GraftError {
            throw error.context.first == .file(path) ? error : error.inFile(path)
        }
    }

    /// The tree offsets the document was written with (see `DocumentKeys`); a conversion onwards keeps them.
    public var keyOffsets: [Int: Int64] { offsets }
}

extension ArchivedObject {
    fileprivate var kindDescriptionForMessages: String { className.map { "an \($0)" } ?? "a \(rawValue.typeName)" }
}

/// Decodes nodes of the object map into snapshots.
private struct NodeDecoder {
    let archive: ArchiveView
    let model: Model
    /// Name string objects (property and relationship names) already read.
    var names: [Int: String] = [:]
    /// Per entity: `NSAttributeValues` slots, resolved once.
    let slots: [BinaryStoreLayout.AttributeSlots]
    /// The document's layout, for arrays that could be read either way.
    let layout: BinaryStoreLayout.AttributeValuesLayout
    /// Per entity: the relationship index each relationship-name object names (and the name), found on
    /// first sight.
    var relationshipByName: [[Int: (index: Int, name: String)]]
    /// Per entity and relationship: where its row of `accepted` starts.
    let acceptRows: [[Int]]
    /// Whether a relationship may hold an object of each entity (the destination and its subentities).
    let accepted: [Bool]
    let refusals: ValueRefusals

    var plist: BinaryPlistView { archive.plist }

    init(
        archive: ArchiveView, model: Model, layout: BinaryStoreLayout.AttributeValuesLayout, refusals: ValueRefusals
    ) {
        self.archive = archive
        self.model = model
        self.layout = layout
        self.refusals = refusals
        slots = model.descriptions.map { BinaryStoreLayout.AttributeSlots(entity: $0, model: model) }
        relationshipByName = Array(repeating: [:], count: model.descriptions.count)
        var accepted: [Bool] = []
        acceptRows = model.descriptions.map { entity in
            entity.relationships.map { relationship in
                let destination = model.destination(of: relationship)
                let row = accepted.count
                accepted += model.descriptions.map { model.isKind($0, of: destination) }
                return row
            }
        }
        self.accepted = accepted
    }

    /// Reads a node into `snapshot`, an object of `entityIndex` (made by `Snapshot(entity:key:)`, then
    /// perhaps filled from an earlier node: every value is replaced, storage reused where unshared).
    mutating func read(
        into snapshot: inout Snapshot, key: Int64, entity entityIndex: Int, node: Int, resolve: (Int64) -> ObjectRef?
    ) throws {
        let entity = model.descriptions[entityIndex]
        snapshot.reset(to: ObjectRef(entity: entityIndex, key: key), entity: entity)
        func place() -> String { "\(entity.name) p\(key)" }
        func failure(_ message: String, key name: String? = nil, code: GraftError.Code = .malformedInput) -> GraftError
        {
            var context: [GraftError.Location] = [.entity(entity.name), .object("p\(key)")]
            if let name { context.append(.key(name)) }
            return GraftError(code, message, context: context)
        }
        guard let fields = try archive.fields(of: node) else { throw failure("the node is not an archived object") }

        // Attributes: an array of slots (NSAttributeValues), or a dictionary by name (NSAttributes).
        if let valuesField = try archive.field(.attributeValues, in: fields)
            ?? archive.field(
                .attributesByName, in: fields),
            let values = try archive.follow(valuesField, context: place())
        {
            if let entries = try archive.entries(of: values) {
                try readAttributes(byName: entries, into: &snapshot, entity: entity, failure: failure)
            } else {
                try readAttributes(
                    slots: values, into: &snapshot, entity: entityIndex, place: place(), failure: failure)
            }
        }

        // Relationships.
        if let relatedField = try archive.field(.relatedNodes, in: fields),
            let related = try archive.follow(relatedField, context: place())
        {
            guard let (keysStart, objectsStart, count) = try archive.entries(of: related) else {
                throw failure("NSRelatedNodes is not a dictionary", key: BinaryStoreLayout.NodeKey.relatedNodes)
            }
            for entry in 0..<count {
                guard let nameObject = try archive.follow(plist.element(entry, from: keysStart), context: place())
                else {
                    throw failure("NSRelatedNodes has a $null key", key: BinaryStoreLayout.NodeKey.relatedNodes)
                }
                let relationshipIndex: Int
                let name: String
                if let known = relationshipByName[entityIndex][nameObject] {
                    (relationshipIndex, name) = known
                } else {
                    name = try string(nameObject) {
                        failure(
                            "NSRelatedNodes has a key that is not a string",
                            key: BinaryStoreLayout.NodeKey.relatedNodes)
                    }
                    guard let found = entity.relationshipIndexByName[name] else {
                        throw failure(
                            "the node has the relationship '\(name)', which \(entity.name) does not have", key: name,
                            code: .modelMismatch)
                    }
                    relationshipIndex = found
                    relationshipByName[entityIndex][nameObject] = (found, name)
                }
                let isToMany = entity.relationships[relationshipIndex].isToMany
                let acceptRow = acceptRows[entityIndex][relationshipIndex]
                // A to-many's refs go into its own array (taken out of the snapshot, so unshared).
                var refs = isToMany ? snapshot.takeToMany(at: relationshipIndex) : []
                var single: ObjectRef?
                var found = 0
                if let list = try archive.follow(plist.element(entry, from: objectsStart), context: place()) {
                    let (start, elementCount) = try archive.elements(of: list, context: "\(place()) \(name)")
                    if isToMany { refs.reserveCapacity(elementCount) }
                    for position in 0..<elementCount {
                        guard let element = try archive.follow(plist.element(position, from: start), context: place()),
                            case .integer(let target) = try plist.object(element)
                        else {
                            throw failure("element \(position) is not a primary key", key: name)
                        }
                        guard let ref = resolve(target) else {
                            throw failure(
                                "refers to the primary key \(target), which no object in the document has", key: name)
                        }
                        guard accepted[acceptRow + ref.entity] else {
                            let targetEntity = model.descriptions[ref.entity]
                            let destination = model.destination(of: entity.relationships[relationshipIndex])
                            throw failure(
                                "refers to p\(target), a \(targetEntity.name), where a \(destination.name) belongs",
                                key: name)
                        }
                        if isToMany { refs.append(ref) } else if found == 0 { single = ref }
                        found += 1
                    }
                }
                if isToMany {
                    snapshot.relationships[relationshipIndex] = .toMany(refs)
                } else {
                    guard found <= 1 else {
                        throw failure("the to-one relationship holds \(found) objects", key: name)
                    }
                    snapshot.relationships[relationshipIndex] = .toOne(single)
                }
            }
        }
    }

    /// Reads `NSAttributeValues` as an array: in Core Data's layout the stored attributes are the
    /// first slots and every other slot is null; in Graft's first layout every slot is a stored
    /// attribute, by name.
    private func readAttributes(
        slots values: Int, into snapshot: inout Snapshot, entity entityIndex: Int, place: String,
        failure: (String, String?, GraftError.Code) -> GraftError
    ) throws {
        let entity = model.descriptions[entityIndex]
        let slots = self.slots[entityIndex]
        let key = BinaryStoreLayout.NodeKey.attributeValues
        let (start, count) = try archive.elements(of: values, context: "\(place) \(key)")
        guard let layout = slots.layout(forCount: count, document: self.layout) else {
            throw failure(
                "\(key) has \(count) values; \(entity.name) has \(slots.properties.count) properties, so Core Data "
                    + "writes one slot for each (at least \(slots.minimumCount) for its stored attributes and "
                    + "relationships), and Graft's first layout had \(slots.legacyStoredAttributes.count), one per "
                    + "stored attribute", key, .malformedInput)
        }
        let stored = layout == .propertyOrder ? slots.storedAttributes : slots.legacyStoredAttributes
        for (position, slot) in stored.enumerated() {
            guard let value = try archive.follow(plist.element(position, from: start), context: place),
                try !archive.isNull(value)
            else { continue }
            snapshot.attributes[slot.index] = try decodeAttribute(
                value, slot: slot, entity: entity, key: snapshot.ref.key, failure: failure)
        }
        for position in stored.count..<count {
            guard let value = try archive.follow(plist.element(position, from: start), context: place),
                try !archive.isNull(value)
            else { continue }
            let owner =
                position < slots.properties.count
                ? "is the slot of \(Self.describe(slots.properties[position], of: entity))"
                : "is beyond the \(slots.properties.count) properties of \(entity.name)"
            throw failure(
                "slot \(position) holds a value, but it \(owner); Core Data fills only the first "
                    + "\(stored.count) slots (the stored attributes) and leaves the others null", key, .malformedInput)
        }
    }

    /// Reads attribute values given by property name (`NSAttributes`, or a dictionary under
    /// `NSAttributeValues`): names the entity does not have are a model mismatch, and only stored
    /// attributes may hold a value.
    private mutating func readAttributes(
        byName entries: (keys: Int, objects: Int, count: Int), into snapshot: inout Snapshot,
        entity: EntityDescription, failure: (String, String?, GraftError.Code) -> GraftError
    ) throws {
        let key = BinaryStoreLayout.attributesByNameKey
        for entry in 0..<entries.count {
            guard let nameObject = try archive.follow(plist.element(entry, from: entries.keys), context: key) else {
                throw failure("the attribute dictionary has a $null key", key, .malformedInput)
            }
            let name = try string(nameObject) {
                failure("the attribute dictionary has a key that is not a string", key, .malformedInput)
            }
            guard let property = entity.property(named: name) else {
                throw failure(
                    "the node has a value for '\(name)', which \(entity.name) does not have", name, .modelMismatch)
            }
            guard let value = try archive.follow(plist.element(entry, from: entries.objects), context: name),
                try !archive.isNull(value)
            else { continue }
            guard case .attribute(let index) = property, entity.group(of: property) == .storedAttributes else {
                throw failure(
                    "holds a value for \(Self.describe(property, of: entity)), which Core Data does not store in "
                        + "a node's attributes", name, .malformedInput)
            }
            let slot = (index: index, form: BinaryStoreLayout.archivedForm(of: entity.attributes[index].type))
            snapshot.attributes[index] = try decodeAttribute(
                value, slot: slot, entity: entity, key: snapshot.ref.key, failure: failure)
        }
    }

    /// Decodes a stored attribute's value, checked against the attribute's type and range: a mismatch is
    /// an error naming the attribute, or (reading leniently) no value.
    private func decodeAttribute(
        _ value: Int, slot: (index: Int, form: BinaryStoreLayout.ArchivedForm), entity: EntityDescription,
        key: Int64, failure: (String, String?, GraftError.Code) -> GraftError
    ) throws -> Value? {
        let attribute = entity.attributes[slot.index]
        do {
            return try Self.checked(decodeValue(value, form: slot.form, depth: 0), as: attribute.type)
        } catch let error as ValueMismatch {
            return try refuse(.notA(attribute.type, found: error.found), attribute: slot.index, of: entity, key: key) {
                failure(
                    "holds \(error.found) where \(Wording.withArticle("\(attribute.type)")) value belongs",
                    attribute.name, .typeMismatch
                ).with(ValueRefusals.remedy)
            }
        } catch let refused as UnreadableValue {
            return try refuse(refused, attribute: slot.index, of: entity, key: key) {
                failure(refused.message, attribute.name, .typeMismatch).with(ValueRefusals.remedy)
            }
        }
    }

    /// Throws the error (strict reading) or records the value and gives no value (lenient).
    private func refuse(
        _ refused: UnreadableValue, attribute index: Int, of entity: EntityDescription, key: Int64,
        error: () -> GraftError
    ) throws -> Value? {
        try refusals.refuse(
            refused, entity: entity.name, attribute: entity.attributes[index].name,
            type: entity.attributes[index].type, object: "p\(key)",
            slot: .init(entity: entity.index, attribute: index, key: key), error: error)
        return nil
    }

    /// A decoded value checked against the range of its attribute's type: integers within their width,
    /// Booleans 0 or 1, Floats within single precision's range.
    private static func checked(_ value: Value, as type: AttributeType) throws -> Value {
        switch (type, value) {
        case (.integer16, .integer(let number)), (.integer32, .integer(let number)):
            guard type.integerRange?.contains(number) != false else {
                throw UnreadableValue.outOfRange(type, found: "\(number)")
            }
        case (.float, .double(let number)):
            if number.isFinite, number.magnitude > Double(Float.greatestFiniteMagnitude) {
                throw UnreadableValue.outOfRange(type, found: "\(number)")
            }
        default: break
        }
        return value
    }

    /// "the relationship 'department'", "the transient attribute 'cache'", … for messages.
    private static func describe(_ property: PropertyReference, of entity: EntityDescription) -> String {
        let kind: String
        switch entity.group(of: property) {
        case .storedAttributes: kind = "the attribute"
        case .transientAttributes: kind = "the transient attribute"
        case .storedToOnes, .storedToManys, .storedOrderedToManys: kind = "the relationship"
        case .transientToOnes, .transientToManys, .transientOrderedToManys: kind = "the transient relationship"
        case .fetchedProperties: kind = "the fetched property"
        }
        return "\(kind) '\(entity.name(of: property))'"
    }

    private mutating func string(_ object: Int, failure: () -> GraftError) throws -> String {
        if let known = names[object] { return known }
        guard let name = plist.string(try plist.object(object)) else { throw failure() }
        names[object] = name
        return name
    }

    /// A value of the wrong kind for its attribute.
    struct ValueMismatch: Error {
        let found: String
    }

    /// Decodes one attribute value (already followed from its UID).
    func decodeValue(_ reference: Int, form: BinaryStoreLayout.ArchivedForm, depth: Int) throws -> Value {
        let object = try plist.object(reference)
        func mismatch() -> ValueMismatch {
            if case .dictionary(let start, let count) = object,
                let name = try? archive.className(of: ArchiveView.Fields(start: start, count: count))
            {
                return ValueMismatch(found: "an \(name)")
            }
            let article = "aeiouAEIOU".contains(object.typeName.first ?? "x") ? "an" : "a"
            return ValueMismatch(found: "\(article) \(object.typeName)")
        }
        func field(_ key: ArchiveKey) throws -> Int? {
            guard case .dictionary(let start, let count) = object,
                let value = try archive.field(key, in: ArchiveView.Fields(start: start, count: count))
            else { return nil }
            return try archive.follow(value, context: key.name)
        }
        switch form {
        case .string:
            if let string = plist.validatedString(object) { return .string(string) }
            if case .utf16String = object { throw ValueMismatch(found: "a string that is not valid UTF-16") }
            if let inner = try field(.string), let string = plist.validatedString(try plist.object(inner)) {
                return .string(string)
            }
            if let inner = try field(.bytes), case .data(let start, let count) = try plist.object(inner),
                let string = String(validating: plist.data(start, count), as: UTF8.self)
            {
                return .string(string)
            }
            throw mismatch()
        case .integer:
            switch object {
            case .integer(let value): return .integer(value)
            case .bool(let value): return .integer(value ? 1 : 0)
            default: throw mismatch()
            }
        case .boolean:
            switch object {
            case .bool(let value): return .bool(value)
            case .integer(let value) where value == 0 || value == 1: return .bool(value == 1)
            case .integer(let value): throw UnreadableValue("\(value)", "is not a Boolean value (0 or 1)")
            default: throw mismatch()
            }
        case .real:
            switch object {
            case .real(let value): return .double(value)
            case .integer(let value):
                guard let number = Double(exactly: value) else {
                    throw UnreadableValue("\(value)", "cannot be held exactly by a Double")
                }
                return .double(number)
            default: throw mismatch()
            }
        case .decimalNumber:
            switch object {
            case .integer(let value): return .decimal(Decimal(value))
            case .real(let value):
                guard let decimal = Decimal(shortestOf: value) else {
                    throw UnreadableValue.outOfRange(.decimal, found: "\(value)")
                }
                return .decimal(decimal)
            case .dictionary:
                return .decimal(try decodeDecimal(field: field, mismatch: mismatch))
            default: throw mismatch()
            }
        case .date:
            if case .date(let seconds) = object { return .date(Date(timeIntervalSinceReferenceDate: seconds)) }
            guard let time = try field(.time) else { throw mismatch() }
            switch try plist.object(time) {
            case .real(let seconds): return .date(Date(timeIntervalSinceReferenceDate: seconds))
            case .integer(let seconds):
                guard let number = Double(exactly: seconds) else {
                    throw UnreadableValue("\(seconds) seconds", "cannot be held exactly by a Date")
                }
                return .date(Date(timeIntervalSinceReferenceDate: number))
            default: throw mismatch()
            }
        case .data:
            if case .data(let start, let count) = object { return .data(plist.data(start, count)) }
            if let inner = try field(.data), case .data(let start, let count) = try plist.object(inner) {
                return .data(plist.data(start, count))
            }
            throw mismatch()
        case .uuid:
            guard let inner = try field(.uuidBytes), case .data(let start, let count) = try plist.object(inner),
                count == 16
            else { throw mismatch() }
            let b = [UInt8](plist.data(start, count))
            return .uuid(
                UUID(
                    uuid: (
                        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                        b[15]
                    )))
        case .url:
            guard depth < 8, let relative = try field(.urlRelative),
                let text = plist.string(try plist.object(relative))
            else { throw mismatch() }
            var base: URL?
            if let baseObject = try field(.urlBase) {
                guard case .uri(let url) = try decodeValue(baseObject, form: .url, depth: depth + 1) else {
                    throw mismatch()
                }
                base = url
            }
            guard let url = URL(string: text, relativeTo: base) else {
                throw ValueMismatch(found: "the URL text '\(text)'")
            }
            return .uri(base == nil ? url : url.absoluteURL)
        case .byValue:
            switch object {
            case .integer(let value): return .integer(value)
            case .real(let value): return .double(value)
            case .bool(let value): return .bool(value)
            case .date(let seconds): return .date(Date(timeIntervalSinceReferenceDate: seconds))
            case .data(let start, let count): return .data(plist.data(start, count))
            case .asciiString, .utf16String:
                guard let string = plist.validatedString(object) else {
                    throw ValueMismatch(found: "a string that is not valid UTF-16")
                }
                return .string(string)
            case .dictionary:
                if try field(.time) != nil { return try decodeValue(reference, form: .date, depth: depth) }
                if try field(.uuidBytes) != nil { return try decodeValue(reference, form: .uuid, depth: depth) }
                if try field(.urlRelative) != nil { return try decodeValue(reference, form: .url, depth: depth) }
                if try field(.decimalMantissa) != nil {
                    return try decodeValue(reference, form: .decimalNumber, depth: depth)
                }
                if try field(.data) != nil { return try decodeValue(reference, form: .data, depth: depth) }
                return try decodeValue(reference, form: .string, depth: depth)
            default: throw mismatch()
            }
        }
    }

    private func decodeDecimal(field: (ArchiveKey) throws -> Int?, mismatch: () -> ValueMismatch) throws -> Decimal {
        func integer(_ key: ArchiveKey) throws -> Int64? {
            guard let reference = try field(key) else { return nil }
            switch try plist.object(reference) {
            case .integer(let value): return value
            case .bool(let value): return value ? 1 : 0
            default: throw mismatch()
            }
        }
        guard let mantissaReference = try field(.decimalMantissa),
            case .data(let start, let count) = try plist.object(mantissaReference),
            let exponent = try integer(.decimalExponent), let length = try integer(.decimalLength),
            let mantissa = DecimalFields.mantissa(
                from: UnsafeRawBufferPointer(rebasing: plist.bytes[start..<(start + count)]),
                bigEndian: try integer(.decimalByteOrder) == BinaryStoreLayout.bigEndianByteOrder),
            let exponent32 = Int32(exactly: exponent), let length32 = UInt32(exactly: length)
        else { throw mismatch() }
        let fields = DecimalFields(
            exponent: exponent32, length: length32, isNegative: try integer(.decimalNegative) ?? 0 != 0,
            isCompact: try integer(.decimalCompact) ?? 0 != 0, mantissa: mantissa)
        guard let decimal = fields.decimal else { throw ValueMismatch(found: "an NSDecimalNumber out of range") }
        return decimal
    }
}
