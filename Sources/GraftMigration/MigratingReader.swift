import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// One pass of a migration: a mapping (several steps composed), and the Swift policies that run on its
/// objects, by source entity index.
struct MigrationStage: Sendable {
    var mapping: ModelMapping
    var policies: [Int: MigrationPolicy]
}

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
/// let reader = try MigratingReader(source, plan: plan)
/// _ = try Conversion.write(reader, to: output, format: .sqlite)
/// ```
public final class MigratingReader: StoreReader {
    public let source: any StoreReader
    /// Every stage's mapping as one: which entity each source entity becomes, and where each destination
    /// property's value comes from.
    public let mapping: ModelMapping
    let stages: [MigrationStage]
    /// By stage: the objects its policies made, handed on after the store's.
    private let created: [CreatedObjects?]
    public var model: Model { mapping.destination }
    public let metadata: StoreMetadata
    /// By source entity: the amount its objects' keys move up (0 for almost every store).
    private let keyShifts: [Int64]
    private var notes: [String] = []
    private var droppedReferences = 0
    /// Rules of the new model, checked on every object as it is migrated, and the old model's, to tell
    /// a rule the store already broke from one the migration breaks.
    private let rules: RuleCheck
    private let sourceRules: RuleCheck
    /// Uniqueness, checked only where the new model constrains what the old one did not.
    private var uniqueness: UniquenessCheck?
    private var firstOfPosition: [ObjectRef] = []
    /// Rules the migrated objects break that the store's objects did not (the migration fails), and
    /// those they broke already (carried, with a warning).
    private var broken: [RuleViolation] = []
    private var brokenCount = 0
    private var brokenBefore = 0

    /// A reader of `source` migrated through `mapping` (one inferred mapping, or several composed).
    ///
    /// - Throws: `GraftError.invalidOperation` when `source` was not read with the mapping's source model.
    public convenience init(_ source: any StoreReader, mapping: ModelMapping) throws {
        try self.init(source, stages: [MigrationStage(mapping: mapping, policies: [:])])
    }

    /// A reader of `source` migrated through every step of `plan`, its Swift policies and its mapping
    /// models' expressions included (those that read through relationships read the related objects
    /// through `lookup`).
    ///
    /// - Throws: `GraftError.invalidOperation` when `source` was not read with the plan's source model.
    public convenience init(
        _ source: any StoreReader, plan: MigrationPlan, lookup: ((ObjectRef) throws -> Snapshot?)? = nil
    ) throws {
        try self.init(source, stages: plan.stages, lookup: lookup)
    }

    /// Reads an object of the store by its ref, for expressions that read through relationships.
    private let lookup: ((ObjectRef) throws -> Snapshot?)?
    /// The objects a mapping model's filter leaves out (by source ref): references to them are left out too.
    private var filteredOut = Set<ObjectRef>()
    /// Objects handed on per destination entity, once a read has handed them all on.
    private var counted: [Int]?
    private var counting: [Int] = []

    /// - Parameter lookup: reads an object of the store by its ref, for the expressions of a mapping
    ///   model that read through relationships (`$source.owner.name`); without it, they fail.
    init(
        _ source: any StoreReader, stages: [MigrationStage], lookup: ((ObjectRef) throws -> Snapshot?)? = nil
    ) throws {
        self.lookup = lookup
        let mapping = stages.dropFirst().reduce(stages[0].mapping) { $0.then($1.mapping) }
        guard source.model == mapping.source else {
            throw GraftError(.invalidOperation, "the store was read with another model than the migration's source")
        }
        self.source = source
        self.mapping = mapping
        self.stages = stages
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
        let hasPolicies = stages.contains { !$0.policies.isEmpty }
        let maxKeys = shared.isEmpty && !hasPolicies ? [:] : try Self.maxKeys(of: source)
        if !shared.isEmpty {
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
        // Objects policies make take keys above every key of the store (moved up as above).
        let firstKey = (maxKeys.values.reduce(0, +)) + 1
        created = stages.map { stage in
            stage.policies.isEmpty ? nil : CreatedObjects(model: stage.mapping.destination, firstKey: firstKey)
        }
        rules = RuleCheck(model: mapping.destination)
        sourceRules = RuleCheck(model: mapping.source)
        // Filters: only on the store's own objects (the first stage), found before any object is handed
        // on, so that references to the objects they leave out are left out too.
        if stages.dropFirst().contains(where: { $0.mapping.objects.contains { $0?.filter != nil } }) {
            throw GraftError(
                .migrationBlocked,
                "a mapping model's filter in a step after one that changed the objects: Graft runs filters only "
                    + "on the store's objects (migrate to the version before that step first)")
        }
        if stages[0].mapping.objects.contains(where: { $0?.filter != nil }) {
            var excluded = Set<ObjectRef>()
            try source.forEachSnapshot { snapshot in
                guard let filter = stages[0].mapping.objects[snapshot.ref.entity]?.filter else { return }
                let view = SourceObjectView(snapshot, model: stages[0].mapping.source, lookup: lookup)
                if try !filter.evaluate(with: view) { excluded.insert(snapshot.ref) }
                if let failure = view.failure { throw failure }
            }
            filteredOut = excluded
        }
        if Self.addsUniqueness(mapping) { uniqueness = UniquenessCheck(model: mapping.destination) }
    }

    /// Whether the destination model constrains uniqueness where the source did not (a new constraint,
    /// or trees merged under one root).
    private static func addsUniqueness(_ mapping: ModelMapping) -> Bool {
        func constraints(_ model: Model, root: (EntityDescription) -> String) -> Set<String> {
            Set(
                model.descriptions.flatMap { entity in
                    entity.declaration.uniquenessConstraints.map {
                        "\(root(entity)):\($0.sorted().joined(separator: ","))"
                    }
                })
        }
        let old = constraints(mapping.source) { entity in
            mapping.destinationEntity(ofSourceEntity: entity.rootIndex).map {
                mapping.destination.descriptions[$0].rootIndex
            }
            .map { mapping.destination.descriptions[$0].name } ?? "-"
        }
        let new = constraints(mapping.destination) { mapping.destination.descriptions[$0.rootIndex].name }
        return !new.isSubset(of: old)
    }

    /// Checks a migrated object against the new model's rules, noting what it breaks.
    private func check(_ migrated: Snapshot, from snapshot: Snapshot, object: ObjectMapping) {
        let label = "\(model.descriptions[migrated.ref.entity].name) p\(migrated.ref.key)"
        var found = rules.violations(in: migrated, object: label)
        if var uniqueness {
            for clash in uniqueness.add(migrated, at: firstOfPosition.count) {
                let earlier = firstOfPosition[clash.earlier]
                found.append(
                    clash.violation(
                        entity: model.descriptions[migrated.ref.entity].name, object: label,
                        earlier: "another \(model.descriptions[earlier.entity].name) (p\(earlier.key))"))
            }
            firstOfPosition.append(migrated.ref)
            self.uniqueness = uniqueness
        }
        guard !found.isEmpty else { return }
        // What the object broke before, by rule and by the old name of each property.
        let before = Set(
            sourceRules.violations(in: snapshot, object: label).map { "\($0.rule):\($0.property)" })
        let entity = model.descriptions[migrated.ref.entity]
        let source = mapping.source.descriptions[snapshot.ref.entity]
        for violation in found {
            var oldName = violation.property
            if let index = entity.attributeIndexByName[violation.property],
                case .source(let from, _, _) = object.attributes[index]
            {
                oldName = source.attributes[from].name
            } else if let index = entity.relationshipIndexByName[violation.property],
                case .source(let from, _) = object.relationships[index]
            {
                oldName = source.relationships[from].declaration.name
            }
            if before.contains("\(violation.rule):\(oldName)") {
                brokenBefore += 1
            } else {
                brokenCount += 1
                if broken.count < 50 { broken.append(violation) }
            }
        }
    }

    /// Throws when the migrated objects break rules the store's did not.
    private func finishChecks() throws {
        guard broken.isEmpty else {
            throw GraftError(
                .validationFailed,
                "the migrated objects would break \(Wording.counted(brokenCount, "rule")) the store's objects did not "
                    + "break\(brokenCount > broken.count ? " (the first \(broken.count) are listed)" : ""); nothing was written",
                underlying: broken.map { GraftError(.validationFailed, $0.description) })
        }
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
        if brokenBefore > 0 {
            warnings.append(
                "\(Wording.counted(brokenBefore, "rule")) the store's objects broke already still broken after the migration"
            )
        }
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
        counting = [Int](repeating: 0, count: model.descriptions.count)
        func handOn(_ snapshot: Snapshot) throws {
            counting[snapshot.ref.entity] += 1
            try body(snapshot)
        }
        try source.forEachSnapshot { snapshot in
            if let migrated = try migrate(snapshot) { try handOn(migrated) }
        }
        try handOnCreatedObjects(handOn)
        try finishChecks()
        counted = counting
    }

    public func forEachSnapshotInAnyOrder(
        reading relationships: RelationshipSelection, _ body: (Snapshot) throws -> Void
    ) throws {
        // A source relationship is read when a destination relationship that is read comes from it.
        let selection = RelationshipSelection(model: mapping.source) { entity, index in
            guard let object = self.mapping.objects[entity] else { return false }
            return object.relationships.indices.contains { destination in
                guard case .source(let from, _) = object.relationships[destination], from == index else { return false }
                // Read where the writer needs it, and where the new model counts it (for the checks).
                let rule = self.model.descriptions[object.destinationEntity].relationships[destination].declaration
                return relationships.includes(entity: object.destinationEntity, relationship: destination)
                    || !rule.isOptional || rule.minCount > 0 || rule.isToMany && rule.maxCount > 0
            }
        }
        counting = [Int](repeating: 0, count: model.descriptions.count)
        func handOn(_ snapshot: Snapshot) throws {
            counting[snapshot.ref.entity] += 1
            try body(snapshot)
        }
        try source.forEachSnapshotInAnyOrder(reading: selection) { snapshot in
            if let migrated = try migrate(snapshot) { try handOn(migrated) }
        }
        try handOnCreatedObjects(handOn)
        try finishChecks()
        counted = counting
    }

    /// The objects policies made, through the stages after theirs, checked like the others.
    private func handOnCreatedObjects(_ body: (Snapshot) throws -> Void) throws {
        for (index, made) in created.enumerated() {
            guard let made else { continue }
            for ref in made.order {
                guard var snapshot = made.snapshots[ref] else { continue }
                var carried = true
                for stage in stages[(index + 1)...] {
                    guard let next = try apply(stage.mapping, to: snapshot, shifting: false) else {
                        carried = false
                        break
                    }
                    snapshot = next
                }
                guard carried else { continue }
                let label = "\(model.descriptions[snapshot.ref.entity].name) p\(snapshot.ref.key)"
                for violation in rules.violations(in: snapshot, object: label) {
                    brokenCount += 1
                    if broken.count < 50 { broken.append(violation) }
                }
                try body(snapshot)
            }
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
        // Filters leave objects out and policies make new ones: then only reading them all counts them.
        if stages.contains(where: { !$0.policies.isEmpty })
            || stages[0].mapping.objects.contains(where: { $0?.filter != nil })
        {
            guard let counted else {
                throw GraftError(
                    .invalidOperation,
                    "a migration with filters or Swift policies counts its objects as it hands them on: read them first"
                )
            }
            var counts: [String: Int] = [:]
            for entity in model.descriptions where !entity.isAbstract { counts[entity.name] = 0 }
            for (index, count) in counted.enumerated() where count > 0 {
                counts[model.descriptions[index].name] = count
            }
            return counts
        }
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

    /// The object `snapshot` becomes, through every stage, or `nil` when its entity is not carried.
    func migrate(_ snapshot: Snapshot) throws -> Snapshot? {
        guard let object = mapping.objects[snapshot.ref.entity] else { return nil }
        var current = snapshot
        for (index, stage) in stages.enumerated() {
            guard var next = try apply(stage.mapping, to: current, shifting: index == 0) else { return nil }
            if let policy = stage.policies[current.ref.entity], let made = created[index] {
                var view = PolicyObject(
                    source: current, sourceEntity: stage.mapping.source.descriptions[current.ref.entity],
                    destination: next, destinationEntity: stage.mapping.destination.descriptions[next.ref.entity],
                    created: made)
                do {
                    try policy.body(&view)
                } catch let error as GraftError {
                    throw GraftError(
                        .migrationBlocked, "the policy \(policy.className) failed: \(error.message)",
                        context: [.entity(view.sourceEntity.name), .object("p\(current.ref.key)")])
                }
                next = view.destination
            }
            current = next
        }
        check(current, from: snapshot, object: object)
        return current
    }

    /// The object `snapshot` (of `mapping`'s source model) becomes in `mapping`'s destination model, or
    /// `nil` when its entity is not carried; `shifting` moves keys as ``keyShifts`` says (the first stage).
    private func apply(_ mapping: ModelMapping, to snapshot: Snapshot, shifting: Bool) throws -> Snapshot? {
        guard let object = mapping.objects[snapshot.ref.entity] else { return nil }
        if shifting, object.filter != nil, filteredOut.contains(snapshot.ref) { return nil }
        var view: SourceObjectView?
        let entity = mapping.destination.descriptions[object.destinationEntity]
        let key = snapshot.ref.key + (shifting ? keyShifts[snapshot.ref.entity] : 0)
        guard !entity.isAbstract else {
            throw GraftError(
                .migrationBlocked,
                "\(entity.name) is abstract in the new version, so this object of "
                    + "\(mapping.source.descriptions[snapshot.ref.entity].name) cannot become one; a mapping model "
                    + "would make it an object of one of \(entity.name)'s subentities",
                context: [.entity(entity.name), .object("p\(key)")])
        }
        var migrated = Snapshot(entity: entity, key: key)
        migrated.version = snapshot.version
        func failure(_ message: String, _ property: String) -> GraftError {
            GraftError(.migrationBlocked, message, context: [.entity(entity.name), .object("p\(key)"), .key(property)])
        }
        for (index, fill) in object.attributes.enumerated() {
            switch fill {
            case .value(let value):
                migrated.attributes[index] = value
            case .expression(let expression, let text):
                let source =
                    view ?? SourceObjectView(snapshot, model: mapping.source, lookup: shifting ? lookup : nil)
                view = source
                let attribute = entity.attributes[index]
                let result: Any?
                do {
                    result = try expression.evaluate(with: nil, variables: ["source": source])
                } catch let error as GraftError {
                    throw failure("\(text) cannot be evaluated: \(error.message)", attribute.name)
                }
                if let failed = source.failure { throw failure(failed.message, attribute.name) }
                guard let result, !(result is NSNull) else {
                    migrated.attributes[index] = attribute.isOptional ? nil : attribute.defaultValue
                    continue
                }
                guard let value = Value(any: result).flatMap({ AttributeFill.convert($0, to: attribute.type) }) else {
                    throw failure(
                        "\(text) gives \(result), which a \(attribute.type.modelName) attribute cannot hold",
                        attribute.name)
                }
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
                    guard let converted = AttributeFill.convert(value, to: type) else {
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
                let target = ref.flatMap { carried($0, mapping, shifting) }
                migrated.relationships[index] = toMany ? .toMany(target.map { [$0] } ?? []) : .toOne(target)
            case .toMany(let refs):
                var targets: [ObjectRef] = []
                targets.reserveCapacity(refs.count)
                for ref in refs {
                    if let target = carried(ref, mapping, shifting) { targets.append(target) }
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
    private func carried(_ ref: ObjectRef, _ mapping: ModelMapping, _ shifting: Bool) -> ObjectRef? {
        guard mapping.source.descriptions.indices.contains(ref.entity),
            let target = mapping.destinationEntity(ofSourceEntity: ref.entity), !(shifting && filteredOut.contains(ref))
        else {
            droppedReferences += 1
            return nil
        }
        return ObjectRef(entity: target, key: ref.key + (shifting ? keyShifts[ref.entity] : 0))
    }
}
