import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// A store reader that hands on another reader's objects as objects of a newer model, through a
/// mapping: a migration is this reader written by a store writer, as a conversion is, so it streams in
/// bounded memory and keeps every object's key.
///
/// Keys stay as they were, so the objects' URIs stay valid, except where the new model puts entities of
/// two inheritance trees into one (whose keys could then collide): the keys of each tree after the first
/// are then moved above the highest key of the trees before it, and a warning says so.
///
/// For example:
///
/// ```swift
/// let source = try StoreFormat.sqlite.driver.reader(at: url, model: version1, options: StoreReadOptions())
/// let reader = try MigratingReader(source, mapping: step.mapping)
/// _ = try Conversion.write(reader, to: output, format: .sqlite)
/// ```
public final class MigratingReader: StoreReader {
    public let source: any StoreReader
    public let mapping: ModelMapping
    public var model: Model { mapping.destination }
    public let metadata: StoreMetadata
    /// By source entity: the amount its objects' keys move up (0 for almost every store).
    private let keyShifts: [Int64]
    private var notes: [String] = []
    private var droppedReferences = 0

    /// - Throws: `GraftError.invalidOperation` when `source` was not read with the mapping's source model.
    public init(_ source: any StoreReader, mapping: ModelMapping) throws {
        guard source.model == mapping.source else {
            throw GraftError(.invalidOperation, "the store was read with another model than the migration's source")
        }
        self.source = source
        self.mapping = mapping
        metadata = StoreMetadata.make(
            for: mapping.destination,
            storeType: source.metadata.storeType.flatMap(StoreMetadata.StoreType.init(rawValue:)) ?? .sqlite,
            identifier: source.metadata.identifier, keeping: source.metadata.values)
        // Source trees whose objects end up in one destination tree: all but the first move up.
        var feeding: [Int: [Int]] = [:]
        for entity in mapping.source.descriptions where entity.superentityIndex == nil {
            let roots = Set(
                ([entity.index] + entity.descendantIndices).compactMap { mapping.destinationEntity(ofSourceEntity: $0) }
                    .map { mapping.destination.descriptions[$0].rootIndex })
            for root in roots { feeding[root, default: []].append(entity.index) }
        }
        var shifts = [Int64](repeating: 0, count: mapping.source.descriptions.count)
        let shared = feeding.filter { $0.value.count > 1 }
        if !shared.isEmpty {
            let maxKeys = try Self.maxKeys(of: source)
            for (root, sourceRoots) in shared.sorted(by: { $0.key < $1.key }) {
                var next: Int64 = 0
                for sourceRoot in sourceRoots.sorted() {
                    let tree = [sourceRoot] + mapping.source.descriptions[sourceRoot].descendantIndices
                    for entity in tree { shifts[entity] = next }
                    if next > 0 {
                        notes.append(
                            "the keys of \(mapping.source.descriptions[sourceRoot].name) and its subentities move up by "
                                + "\(next), as they now share \(mapping.destination.descriptions[root].name)'s key "
                                + "sequence: their objects' URIs change")
                    }
                    next += maxKeys[sourceRoot] ?? 0
                }
            }
        }
        keyShifts = shifts
    }

    /// The highest key of each inheritance tree of the store (by root entity index).
    private static func maxKeys(of reader: any StoreReader) throws -> [Int: Int64] {
        var maxKeys: [Int: Int64] = [:]
        let note = { (ref: ObjectRef) in
            let root = reader.model.descriptions[ref.entity].rootIndex
            maxKeys[root] = max(maxKeys[root] ?? 0, ref.key)
        }
        if try !reader.forEachRef(note) {
            try reader.forEachSnapshot { note($0.ref) }
        }
        return maxKeys
    }

    public var objectCount: Int? { source.objectCount }
    public var modelSource: ModelSource { .given }

    public var warnings: [String] {
        var warnings = source.warnings + notes
        if droppedReferences > 0 {
            warnings.append(
                "\(Wording.counted(droppedReferences, "reference")) to objects the new model does not keep left out")
        }
        return warnings
    }

    /// Keys of the new document's trees made distinct, for writers of one key sequence (binary).
    public var keyOffsets: [Int: Int64] {
        var refs: [ObjectRef] = []
        let note = { (ref: ObjectRef) in
            if let target = self.mapping.destinationEntity(ofSourceEntity: ref.entity) {
                refs.append(ObjectRef(entity: target, key: ref.key + self.keyShifts[ref.entity]))
            }
        }
        if (try? source.forEachRef(note)) != true {
            refs.removeAll()
            try? source.forEachSnapshot { note($0.ref) }
        }
        return DocumentKeys.offsets(for: refs, model: model)
    }

    public func forEachSnapshot(_ body: (Snapshot) throws -> Void) throws {
        try source.forEachSnapshot { snapshot in
            if let migrated = try migrate(snapshot) { try body(migrated) }
        }
    }

    public func forEachSnapshotInAnyOrder(
        reading relationships: RelationshipSelection, _ body: (Snapshot) throws -> Void
    ) throws {
        // A source relationship is read when a destination relationship that is read comes from it.
        let selection = RelationshipSelection(model: mapping.source) { entity, index in
            guard let object = self.mapping.objects[entity] else { return false }
            return object.relationships.indices.contains { destination in
                guard case .source(let from, _) = object.relationships[destination], from == index else { return false }
                return relationships.includes(entity: object.destinationEntity, relationship: destination)
            }
        }
        try source.forEachSnapshotInAnyOrder(reading: selection) { snapshot in
            if let migrated = try migrate(snapshot) { try body(migrated) }
        }
    }

    public func forEachRef(_ body: (ObjectRef) throws -> Void) throws -> Bool {
        try source.forEachRef { ref in
            if let target = mapping.destinationEntity(ofSourceEntity: ref.entity) {
                try body(ObjectRef(entity: target, key: ref.key + keyShifts[ref.entity]))
            }
        }
    }

    public func counts() throws -> [String: Int] {
        let counts = try source.counts()
        var migrated: [String: Int] = [:]
        for entity in model.descriptions where !entity.isAbstract { migrated[entity.name] = 0 }
        for (name, count) in counts {
            guard let entity = mapping.source.entity(named: name),
                let target = mapping.destinationEntity(ofSourceEntity: entity.index)
            else { continue }
            migrated[model.descriptions[target].name, default: 0] += count
        }
        return migrated
    }

    /// The object `snapshot` becomes, or `nil` when its entity is not carried.
    func migrate(_ snapshot: Snapshot) throws -> Snapshot? {
        guard let object = mapping.objects[snapshot.ref.entity] else { return nil }
        let entity = model.descriptions[object.destinationEntity]
        let key = snapshot.ref.key + keyShifts[snapshot.ref.entity]
        var migrated = Snapshot(entity: entity, key: key)
        migrated.version = snapshot.version
        func failure(_ message: String, _ property: String) -> GraftError {
            GraftError(.migrationBlocked, message, context: [.entity(entity.name), .object("p\(key)"), .key(property)])
        }
        for (index, fill) in object.attributes.enumerated() {
            switch fill {
            case .value(let value):
                migrated.attributes[index] = value
            case .fail(let message):
                throw failure(message, entity.attributes[index].name)
            case .source(let from, let conversions, let whenNil):
                guard var value = snapshot.attributes[from] else {
                    switch whenNil {
                    case .keep: break
                    case .value(let value): migrated.attributes[index] = value
                    case .fail(let message): throw failure(message, entity.attributes[index].name)
                    }
                    continue
                }
                for type in conversions {
                    guard let converted = ValueConversion.coerce(value, to: type) else {
                        throw failure(
                            "the value \(value) cannot be held by the new \(type.modelName) attribute",
                            entity.attributes[index].name)
                    }
                    value = converted
                }
                migrated.attributes[index] = value
            }
        }
        for (index, fill) in object.relationships.enumerated() {
            guard case .source(let from, let toMany) = fill else { continue }
            switch snapshot.relationships[from] {
            case .unloaded:
                migrated.relationships[index] = .unloaded
            case .toOne(let ref):
                let target = ref.flatMap(carried)
                migrated.relationships[index] = toMany ? .toMany(target.map { [$0] } ?? []) : .toOne(target)
            case .toMany(let refs):
                var targets: [ObjectRef] = []
                targets.reserveCapacity(refs.count)
                for ref in refs {
                    if let target = carried(ref) { targets.append(target) }
                }
                if toMany {
                    migrated.relationships[index] = .toMany(targets)
                } else {
                    guard targets.count <= 1 else {
                        throw failure(
                            "the relationship becomes a to-one, but the object names \(targets.count) objects in it",
                            entity.relationships[index].declaration.name)
                    }
                    migrated.relationships[index] = .toOne(targets.first)
                }
            }
        }
        return migrated
    }

    /// The reference `ref` becomes, or `nil` (counted) when its object is not carried.
    private func carried(_ ref: ObjectRef) -> ObjectRef? {
        guard mapping.source.descriptions.indices.contains(ref.entity),
            let target = mapping.destinationEntity(ofSourceEntity: ref.entity)
        else {
            droppedReferences += 1
            return nil
        }
        return ObjectRef(entity: target, key: ref.key + keyShifts[ref.entity])
    }
}
