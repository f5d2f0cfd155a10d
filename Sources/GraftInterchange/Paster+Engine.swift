import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// What the paste engine reads of the store it pastes into, besides identities: existing objects'
/// snapshots and to-manys, and keys for new objects.
protocol PasteStoreTarget: PasteTarget {
    /// The object's current snapshot, or nil when the target has no such object.
    func snapshot(for ref: ObjectRef) throws -> Snapshot?
    /// The objects a to-many the snapshot left `.unloaded` holds.
    func relatedRefs(of ref: ObjectRef, relationship: Int) throws -> [ObjectRef]
}

extension EmptyTarget: PasteStoreTarget {
    func snapshot(for ref: ObjectRef) throws -> Snapshot? { nil }
    func relatedRefs(of ref: ObjectRef, relationship: Int) throws -> [ObjectRef] { [] }
}

/// A store pasted into, read set-wise: identities are looked up one query per entity and batch of values
/// where the store answers predicates itself (SQLite), or through one index of the entity's objects
/// where it does not; the snapshots found are kept, so that a merge reads no object twice.
final class StoreTarget: PasteStoreTarget {
    let store: any PersistentStore
    /// Whether the store has no objects at all (then nothing is looked up).
    let isEmpty: Bool
    /// The objects read so far, in the order read, and where each is among them.
    private var read: [Snapshot] = []
    private var readAt: [ObjectRef: Int32] = [:]
    private var answersInSQL: [Int: Bool] = [:]
    private var indexes: [String: [IdentityKey: ObjectRef]] = [:]
    /// How many value combinations one query asks for.
    static let batchSize = 500

    let model: Model

    init(store: any PersistentStore) throws {
        self.store = store
        self.model = store.model
        self.isEmpty = try Self.isEmpty(store)
    }

    var identifier: String { store.identifier }

    /// Whether `store` has no objects at all.
    static func isEmpty(_ store: any PersistentStore) throws -> Bool {
        if let reader = store as? any StoreReader, let count = reader.objectCount { return count == 0 }
        for root in store.model.descriptions where root.superentityIndex == nil {
            let result = try store.fetch(StoreFetch(entities: [root.index] + root.descendantIndices, limit: 1))
            if !result.refs.isEmpty { return false }
        }
        return true
    }

    func exists(_ ref: ObjectRef) throws -> Bool {
        guard !isEmpty else { return false }
        return try snapshot(for: ref) != nil
    }

    func snapshot(for ref: ObjectRef) throws -> Snapshot? {
        if let at = readAt[ref] { return read[Int(at)] }
        guard !isEmpty, let snapshot = try store.snapshot(for: ref) else { return nil }
        keep(snapshot)
        return snapshot
    }

    /// Keeps an object read, unless it was read before.
    private func keep(_ snapshot: Snapshot) {
        if let earlier = readAt.updateValue(Int32(read.count), forKey: snapshot.ref) {
            readAt[snapshot.ref] = earlier
            return
        }
        read.append(snapshot)
    }

    func relatedRefs(of ref: ObjectRef, relationship: Int) throws -> [ObjectRef] {
        try store.relatedRefs(of: ref, relationship: relationship)
    }

    func find(_ entity: EntityDescription, attributes: [Int], among values: IdentityValues) throws -> [ObjectRef?] {
        guard !isEmpty, !values.isEmpty, !attributes.isEmpty else { return Array(repeating: nil, count: values.count) }
        // Each distinct combination once: its position among them, per value.
        var distinct: [IdentityKey] = []
        var positions: [IdentityKey: Int] = [:]
        positions.reserveCapacity(values.count)
        var distinctAt: [Int] = []
        distinctAt.reserveCapacity(values.count)
        for position in 0..<values.count {
            let key = values.key(at: position)
            if let known = positions.updateValue(distinct.count, forKey: key) {
                positions[key] = known
                distinctAt.append(known)
            } else {
                distinctAt.append(distinct.count)
                distinct.append(key)
            }
        }
        var refs = [ObjectRef?](repeating: nil, count: distinct.count)
        let (scope, isUnique) = lookupScope(of: entity, attributes: attributes)
        let entities = [scope.index] + scope.descendantIndices
        if answersInSQL[scope.index] == nil {
            let probe = try store.fetch(StoreFetch(entities: entities, predicate: .falsePredicate, limit: 1))
            answersInSQL[scope.index] = probe.predicateApplied
        }
        if answersInSQL[scope.index] == true {
            read.reserveCapacity(read.count + distinct.count)
            readAt.reserveCapacity(read.count + distinct.count)
            let size = attributes.count == 1 ? Self.batchSize : max(1, Self.batchSize / attributes.count)
            let fetches = stride(from: 0, to: distinct.count, by: size).map { start in
                // Under a uniqueness constraint at most one object has each combination, so the store may
                // return them in any order; else the first by key is the one found.
                let batch = distinct[start..<min(start + size, distinct.count)]
                var fetch = StoreFetch(entities: entities, predicate: Self.predicate(entity, attributes, batch))
                fetch.inAnyOrder = isUnique
                return fetch
            }
            try forEachFetched(fetches) { snapshots in
                for snapshot in snapshots {
                    // The first found for each combination, of the entity or a subentity.
                    if model.isKind(model.descriptions[snapshot.ref.entity], of: entity),
                        let key = IdentityKey(snapshot, attributes: attributes), let at = positions[key],
                        refs[at] == nil
                    {
                        refs[at] = snapshot.ref
                    }
                    keep(snapshot)
                }
            }
        } else {
            let index = try self.index(of: entity, attributes: attributes)
            for (at, key) in distinct.enumerated() { refs[at] = index[key] }
        }
        return distinctAt.map { refs[$0] }
    }

    /// The entity whose objects a lookup of `entity`'s `attributes` asks the store for, and whether the
    /// attributes are a uniqueness constraint's: then the highest ancestor that has its attributes, whose
    /// objects it keeps apart from each other too, so that the constraint's index (Core Data makes a unique
    /// index for each) serves the query alone; asked for a subentity's objects only, SQLite would rather go
    /// through the index of the entity column, and read every object of the subentity per batch. Objects
    /// of other entities are left out after the query. For other attributes, `entity` itself.
    private func lookupScope(of entity: EntityDescription, attributes: [Int]) -> (EntityDescription, isUnique: Bool) {
        let names = Set(attributes.map { entity.attributes[$0].name })
        guard entity.uniquenessConstraints.contains(where: { Set($0) == names }) else { return (entity, false) }
        for ancestor in entity.ancestorIndices.reversed().map({ model.descriptions[$0] })
        where names.allSatisfy({ ancestor.attributeIndexByName[$0] != nil }) {
            return (ancestor, true)
        }
        return (entity, true)
    }

    /// `attributes IN batch`: one `IN` for a single attribute, else one `AND` per combination.
    private static func predicate(
        _ entity: EntityDescription, _ attributes: [Int], _ batch: ArraySlice<IdentityKey>
    ) -> GraftPredicate {
        func path(_ attribute: Int) -> GraftPredicate.Expression {
            .keyPath(KeyValuePath(key: entity.attributes[attribute].name))
        }
        if attributes.count == 1 {
            return .comparison(
                GraftPredicate.Comparison(path(attributes[0]), .in, .aggregate(batch.map { .constant($0.values[0]) })))
        }
        return .or(
            batch.map { combination in
                .and(
                    zip(attributes, combination.values).map {
                        .comparison(GraftPredicate.Comparison(path($0.0), .equalTo, .constant($0.1)))
                    })
            })
    }

    /// Every object of `entity`, by its values of `attributes`, read once.
    private func index(of entity: EntityDescription, attributes: [Int]) throws -> [IdentityKey: ObjectRef] {
        let name = "\(entity.index):" + attributes.map(String.init).joined(separator: ",")
        if let index = indexes[name] { return index }
        var index: [IdentityKey: ObjectRef] = [:]
        let fetched = try store.fetch(StoreFetch(entities: [entity.index] + entity.descendantIndices))
        for snapshot in try snapshots(of: fetched) {
            if let key = IdentityKey(snapshot, attributes: attributes), index[key] == nil { index[key] = snapshot.ref }
        }
        indexes[name] = index
        return index
    }

    /// The fewest fetches worth sharing with a second thread.
    static let sharedFetches = 4

    /// Runs `fetches` and hands their snapshots to `body`, in the fetches' order. Many fetches of a store
    /// that can be read on two threads are shared: the later ones run on a sibling connection on another
    /// thread while the earlier ones run here.
    private func forEachFetched(_ fetches: [StoreFetch], _ body: ([Snapshot]) throws -> Void) throws {
        // Fewer here: this thread also takes in every snapshot read.
        let half = fetches.count * 3 / 8
        guard fetches.count >= Self.sharedFetches, let sibling else {
            for fetch in fetches { try body(try Self.snapshots(of: try store.fetch(fetch), in: store)) }
            return
        }
        let later = Array(fetches[half...])
        let elsewhere = BackgroundWork {
            try later.map { try Self.snapshots(of: try sibling.fetch($0), in: sibling) }
        }
        do {
            for fetch in fetches[..<half] { try body(try Self.snapshots(of: try store.fetch(fetch), in: store)) }
        } catch {
            _ = try? elsewhere.wait()  // the sibling is not used here until its thread is done with it
            throw error
        }
        for snapshots in try elsewhere.wait() { try body(snapshots) }
    }

    /// The sibling store that shares long lookups, made on first use; nil for a store without, or one
    /// whose sibling cannot be opened (the lookups then run here alone).
    private lazy var sibling: (any PersistentStore)? = (store as? any SiblingReading).flatMap {
        try? $0.readingSibling()
    }

    private func snapshots(of result: StoreFetchResult) throws -> [Snapshot] {
        try Self.snapshots(of: result, in: store)
    }

    /// A fetch's snapshots: those it gave, and those of the refs it gave alone, read from `store`.
    private static func snapshots(of result: StoreFetchResult, in store: any PersistentStore) throws -> [Snapshot] {
        if result.snapshots.count == result.refs.count { return result.snapshots }
        let given = Dictionary(result.snapshots.map { ($0.ref, $0) }, uniquingKeysWith: { first, _ in first })
        return try result.refs.compactMap { try given[$0] ?? store.snapshot(for: $0) }
    }
}

/// Carries out a plan as snapshots: the new objects, and the existing objects the paste changes (merged
/// ones, and those whose inverses change with the links), with both sides of every link kept, checked as a
/// whole. A new document, an empty store and a store with objects are pasted by this one engine; only
/// where the snapshots go differs.
struct PasteEngine {
    let plan: PastePlan

    /// What the engine made.
    struct Result {
        /// Per clipboard object, in document order: the object it became, was merged into or skipped for.
        var pasted: [(id: String, ref: ObjectRef)]
        var inserted: [Snapshot]
        /// Existing objects the paste changed.
        var updated: [Snapshot]
        /// Those objects as the target has them, by position in `updated`.
        var updatedFrom: [Snapshot?]
        /// The attributes of each of them whose values differ from `updatedFrom`'s, by position in `updated`.
        var changedAttributes: [[Int]?]
        /// The rules the objects break, when the paste goes ahead anyway (validation off).
        var violations: [RuleViolation]

        /// Clipboard id → the object it became, kept compactly (the URIs are made when asked).
        func idMap(model: Model, storeIdentifier: String) -> PasteReport.IDMapStorage {
            .compact(
                PasteReport.CompactIDMap(
                    ids: LocalIDList(pasted.map(\.id)), entities: pasted.map { Int32($0.ref.entity) },
                    keys: pasted.map(\.ref.key),
                    entityNames: model.descriptions.map(\.name), storeIdentifier: storeIdentifier))
        }

        var changes: StoreChanges {
            StoreChanges(
                inserted: inserted, updated: updated, updatedFrom: updatedFrom, changedAttributes: changedAttributes)
        }
    }

    /// Builds and checks the paste's snapshots.
    ///
    /// - Parameter allocateKeys: keys for `count` new objects of the tree rooted at an entity.
    /// - Throws: `validationFailed` listing every rule the result breaks, unless validation is off;
    ///   `malformedInput` when the clipboard's links contradict each other.
    func run(
        on target: some PasteStoreTarget, allocateKeys: (_ root: Int, _ count: Int) throws -> [Int64]
    ) throws -> Result {
        var work = Work(plan: plan, target: target)
        try work.placeObjects(allocateKeys: allocateKeys)
        try work.linkStated()
        try work.linkInverses()
        try work.releasePrevious()
        let violations = try work.check()
        var inserted: [Snapshot] = [], updated: [Snapshot] = [], updatedFrom: [Snapshot?] = []
        var changedAttributes: [[Int]?] = []
        inserted.reserveCapacity(work.newCount)
        for slot in work.slots.indices {
            if let stored = work.stored[slot] {
                guard work.dirty[slot] else { continue }
                updated.append(work.slots[slot])
                updatedFrom.append(stored)
                changedAttributes.append(work.changedAttributes[slot])
            } else {
                inserted.append(work.slots[slot])
            }
        }
        return Result(
            pasted: work.pasted, inserted: inserted, updated: updated, updatedFrom: updatedFrom,
            changedAttributes: changedAttributes, violations: violations)
    }

    /// The target index of the property `name`, looking first where the previous one left off (objects
    /// list their properties in the order the clipboard's entity does), then everywhere.
    static func match(_ name: String, in properties: [(name: String, index: Int?)], cursor: inout Int) -> Int? {
        if cursor < properties.count, properties[cursor].name == name {
            cursor += 1
            return properties[cursor - 1].index
        }
        guard let found = properties.firstIndex(where: { $0.name == name }) else { return nil }
        cursor = found + 1
        return properties[found].index
    }

    /// The engine's working state: one slot per object the paste writes or may change.
    private struct Work<Target: PasteStoreTarget>: InverseSides {
        let plan: PastePlan
        let target: Target
        var model: Model { plan.model }

        var slots: [Snapshot] = []
        /// Per slot, the object as the target has it (nil for a new one), while the slot changes.
        var stored: [Snapshot?] = []
        /// Whether the slot holds an object the paste creates.
        func isNew(_ slot: Int) -> Bool { created[slot] }
        /// Per slot, whether the paste creates its object (`stored` is nil), looked up without touching
        /// the snapshot.
        var created: [Bool] = []
        var dirty: [Bool] = []
        /// Per existing object's slot, the attributes whose values differ from the stored object's (only
        /// merging changes attributes; links change relationships).
        var changedAttributes: [[Int]] = []
        /// Per slot, the clipboard id it was pasted from (the first, when copies were merged into one).
        var clipboardIDs: [String?] = []
        var newCount = 0
        /// Existing objects' slots.
        var existing: [ObjectRef: Int32] = [:]
        /// Per clipboard object, by position: its slot (-1 for one whose entity the target lacks).
        var objectSlots: [Int32] = []
        var pasted: [(id: String, ref: ObjectRef)] = []
        /// The links the clipboard states, flat: source slot, relationship, end of its targets in `targets`.
        var links: [(from: Int32, relationship: Int32, end: Int32)] = []
        var targets: [Int32] = []
        /// Whether the clipboard states each to-one: bit slot × `relationshipStride` + relationship.
        var stated: [UInt64] = []
        /// The most relationships an entity has.
        let relationshipStride: Int

        /// Notes that the clipboard states the to-one `relationship` of `slot`.
        mutating func markStated(_ slot: Int, _ relationship: Int) {
            let bit = slot * relationshipStride + relationship
            if stated.count <= bit / 64 { stated += repeatElement(0, count: bit / 64 + 1 - stated.count) }
            stated[bit / 64] |= 1 << UInt64(bit % 64)
        }

        /// Whether the clipboard states the to-one `relationship` of `slot`.
        func isStated(_ slot: Int, _ relationship: Int) -> Bool {
            let bit = slot * relationshipStride + relationship
            return bit / 64 < stated.count && stated[bit / 64] & (1 << UInt64(bit % 64)) != 0
        }
        /// To-ones the paste moved away from an object: its slot, the relationship, the member that left.
        var released: [(owner: Int32, relationship: String, member: ObjectRef)] = []
        /// Membership of long to-manys, by slot << 16 | relationship.
        var largeLists: [Int: Set<ObjectRef>] = [:]

        /// What the links ask of each relationship.
        let facts: RelationshipFacts
        /// The links' contradictions, as they are found.
        var contradictions: [GraftError] = []

        init(plan: PastePlan, target: Target) {
            self.plan = plan
            self.target = target
            facts = RelationshipFacts(model: plan.model)
            relationshipStride = plan.model.descriptions.map(\.relationships.count).max() ?? 0
        }

        /// Per clipboard entity, by position (nil for one the target lacks).
        lazy var entries = PasteEntry.entries(of: plan)

        /// The entry of the clipboard object at `position`'s entity.
        mutating func entry(ofObject position: Int) -> PasteEntry? {
            let entity = Int(plan.mappingOfObject[position])
            return entity < 0 ? nil : entries[entity]
        }

        /// The slot of an existing object, its snapshot read on first use.
        mutating func slot(of ref: ObjectRef) throws -> Int32 {
            if let slot = existing[ref] { return slot }
            guard let snapshot = try target.snapshot(for: ref) else {
                throw GraftError(
                    .notFound, "the target has no object \(target.uri(ref)) any more",
                    context: [.object(target.uri(ref))])
            }
            let slot = Int32(slots.count)
            slots.append(snapshot)
            stored.append(snapshot)
            created.append(false)
            dirty.append(false)
            changedAttributes.append([])
            clipboardIDs.append(nil)
            existing[ref] = slot
            return slot
        }

        /// New objects with their values, merged objects with the copies' values, in document order.
        mutating func placeObjects(allocateKeys: (_ root: Int, _ count: Int) throws -> [Int64]) throws {
            let objects = plan.clipboard.objects
            let plan = self.plan
            var keys = try TreeKeys(
                roots: plan.actions.indices.lazy.compactMap { position in
                    guard case .insert = plan.actions[position] else { return nil }
                    return plan.mapping(ofObject: position)?.target.rootIndex
                },
                allocate: allocateKeys)
            slots.reserveCapacity(objects.count)
            stored.reserveCapacity(objects.count)
            created.reserveCapacity(objects.count)
            dirty.reserveCapacity(objects.count)
            changedAttributes.reserveCapacity(objects.count)
            clipboardIDs.reserveCapacity(objects.count)
            existing.reserveCapacity(objects.count - keys.count)
            objectSlots = Array(repeating: -1, count: objects.count)
            pasted.reserveCapacity(objects.count)
            // Per attribute, the position of the last merged copy that gives it a value.
            var given: [Int] = []
            // The attributes a merged copy wrote once it had changed one: the only ones that can differ.
            var written: [Int] = []
            // By position, each object's parts read where they are rather than the object copied out.
            for at in objects.indices {
                guard let entry = entry(ofObject: at) else { continue }
                let entity = entry.mapping.target
                let slot: Int32
                switch plan.actions[at] {
                case .insert:
                    var snapshot = Snapshot(entity: entity, key: keys.next(root: entity.rootIndex))
                    try entry.give(objects[at], to: &snapshot)
                    slot = Int32(slots.count)
                    slots.append(snapshot)
                    stored.append(nil)
                    created.append(true)
                    dirty.append(true)
                    changedAttributes.append([])
                    clipboardIDs.append(objects[at].id)
                    newCount += 1
                case .merge(let ref):
                    slot = try self.slot(of: ref)
                    let merged = Int(slot)
                    // Every attribute the clipboard's entity has, those the copy has no value for included;
                    // compared where they are, so that an object the copy leaves as it is copies nothing.
                    if given.count < entry.types.count { given += Array(repeating: -1, count: entry.types.count) }
                    // The slot's values, shared with it until one differs (then copied once); from then on
                    // every value written is noted, as a later one may put an earlier change back.
                    var values = slots[merged].attributes
                    var differs = false
                    written.removeAll(keepingCapacity: true)
                    var cursor = 0
                    let attributes = objects[at].attributes
                    for field in attributes.indices {
                        guard
                            let index = PasteEngine.match(
                                attributes[field].name, in: entry.attributes, cursor: &cursor)
                        else {
                            continue
                        }
                        given[index] = at
                        let type = entry.types[index]
                        // A value already as the attribute holds it is used as it is, not converted.
                        let value =
                            ValueConversion.holdsAsIs(attributes[field].value, type)
                            ? attributes[field].value
                            : try PastePlan.convert(
                                attributes[field].value, to: type, key: entry.name(of: index), object: objects[at].id)
                        if !differs, values[index] == value { continue }
                        values[index] = value
                        differs = true
                        written.append(index)
                    }
                    for index in entry.mapping.covered where given[index] != at && values[index] != nil {
                        values[index] = nil
                        differs = true
                        written.append(index)
                    }
                    if differs {
                        // The attributes that now differ from the stored object's: of those this copy wrote,
                        // and those an earlier copy changed (until then the slot holds the stored values).
                        let current = slots[merged].attributes
                        var differing = written.filter { !Self.same(values, current, at: $0) }
                        if !differing.isEmpty {
                            if !changedAttributes[merged].isEmpty {
                                let before = stored[merged]!.attributes
                                differing = Set(differing + changedAttributes[merged]).sorted().filter {
                                    !Self.same(values, before, at: $0)
                                }
                            }
                            changedAttributes[merged] = differing
                            slots[merged].attributes = values
                            dirty[merged] = true
                        }
                    }
                    if clipboardIDs[merged] == nil { clipboardIDs[merged] = objects[at].id }
                case .skip(let ref):
                    slot = try self.slot(of: ref)
                }
                objectSlots[at] = slot
                pasted.append((objects[at].id, slots[Int(slot)].ref))
            }
        }

        /// Whether `values` and `others` hold the same value at `index`, two missing ones included; looked
        /// at in place, so that nothing is copied unless both have one.
        @inline(__always)
        private static func same(_ values: [Value?], _ others: [Value?], at index: Int) -> Bool {
            switch (values[index] == nil, others[index] == nil) {
            case (true, true): return true
            case (false, false): return values[index]! == others[index]!
            default: return false
            }
        }

        /// The links the clipboard states, from every new and merged object.
        mutating func linkStated() throws {
            let objects = plan.clipboard.objects
            // By position, each object's links read where they are rather than copied out.
            for at in objects.indices {
                let source = objectSlots[at]
                guard source >= 0, let entry = entry(ofObject: at) else { continue }
                if case .skip = plan.actions[at] { continue }
                var cursor = 0
                let stated = objects[at].relationships
                for link in stated.indices {
                    guard let index = PasteEngine.match(stated[link].name, in: entry.relationships, cursor: &cursor)
                    else {
                        continue
                    }
                    let start = targets.count
                    var seen = stated[link].targets.count > 32 ? Set<Int32>() : nil
                    for id in stated[link].targets {
                        let other: Int32
                        switch plan.ids.position(of: id) {
                        case .object(let copied) where objectSlots[copied] >= 0: other = objectSlots[copied]
                        case .reference(let reference):
                            guard let ref = plan.references[reference] else { continue }
                            other = try slot(of: ref)
                        default: continue
                        }
                        if seen != nil {
                            if seen!.insert(other).inserted { targets.append(other) }
                        } else if !targets[start...].contains(other) {
                            targets.append(other)
                        }
                    }
                    guard targets.count > start else { continue }
                    try state(Int(source), index, targets: targets[start...])
                    links.append((source, Int32(index), Int32(targets.count)))
                }
            }
        }

        /// Sets a relationship of `slot` as the clipboard states it: a new object's as given; an existing
        /// object's to-many gains the targets, and its to-one moves (its previous object loses it).
        private mutating func state(_ slot: Int, _ index: Int, targets: ArraySlice<Int32>) throws {
            let facts = facts[slots[slot].ref.entity, index]
            if !facts.isToMany {
                markStated(slot, index)
            }
            if isNew(slot) {
                slots[slot].relationships[index] =
                    facts.isToMany
                    ? .toMany(targets.map { slots[Int($0)].ref }) : .toOne(slots[Int(targets[targets.startIndex])].ref)
                return
            }
            if facts.isToMany {
                if holdsAll(slot, index, facts, targets) { return }
                var current = try loaded(slot, index)
                var added = false
                for target in targets where !current.contains(slots[Int(target)].ref) {
                    current.append(slots[Int(target)].ref)
                    added = true
                }
                if added { change(slot, index, to: .toMany(current)) }
                return
            }
            let ref = slots[Int(targets[targets.startIndex])].ref
            guard case .toOne(let previous) = slots[slot].relationships[index], previous != ref else { return }
            change(slot, index, to: .toOne(ref))
            if let previous, facts.inverse >= 0 {
                released.append((try self.slot(of: previous), facts.inverseName, slots[slot].ref))
            }
        }

        /// Whether the target already holds every one of `targets` in an existing object's to-many that its
        /// snapshot left unloaded, as the targets' stored side shows it: a to-many whose inverse is a to-one
        /// holds exactly the objects whose to-one names its owner. So restating links the target has
        /// reads no to-many from it.
        private func holdsAll(
            _ slot: Int, _ index: Int, _ facts: RelationshipFacts.Entry, _ targets: ArraySlice<Int32>
        ) -> Bool {
            guard slots[slot].relationships[index] == .unloaded, facts.inverse >= 0, !facts.inverseIsToMany else {
                return false
            }
            let owner = RelationshipValue.toOne(slots[slot].ref)
            return targets.allSatisfy { target in
                let member = Int(target)
                guard !isNew(member), let inverse = self.facts.inverseIndex(facts, in: slots[member].ref.entity) else {
                    return false
                }
                return stored[member]!.relationships[inverse] == owner
            }
        }

        /// The to-many's objects, read from the target when the snapshot left it unloaded.
        private mutating func loaded(_ slot: Int, _ index: Int) throws -> [ObjectRef] {
            switch slots[slot].relationships[index] {
            case .toMany(let refs): return refs
            case .unloaded: return try target.relatedRefs(of: slots[slot].ref, relationship: index)
            case .toOne(let ref): return ref.map { [$0] } ?? []
            }
        }

        private mutating func change(_ slot: Int, _ index: Int, to value: RelationshipValue) {
            slots[slot].relationships[index] = value
            dirty[slot] = true
        }

        /// The other side of each stated link, where the clipboard did not state it.
        mutating func linkInverses() throws {
            let targets = self.targets
            var start = 0
            for link in links {
                defer { start = Int(link.end) }
                try linkInverses(
                    of: Int(link.from), Int(link.relationship), to: targets[start..<Int(link.end)].lazy.map(Int.init))
            }
            if !contradictions.isEmpty {
                throw GraftError(
                    .malformedInput, "the clipboard's links contradict each other", underlying: contradictions)
            }
        }

        func entity(of slot: Int) -> Int { slots[slot].ref.entity }

        mutating func side(_ index: Int, of slot: Int, toward source: Int) throws -> InverseSide {
            let ref = slots[source].ref
            switch slots[slot].relationships[index] {
            case .toMany(let refs):
                return contains(ref, in: refs, at: slot, index) ? .holds : .open
            case .unloaded:
                // The store keeps an unordered to-many from its members' rows, which the source's snapshot
                // writes; an ordered one's order is the paste's to set.
                guard facts[entity(of: slot), index].isOrdered else { return .holds }
                let refs = try loaded(slot, index)
                if refs.contains(ref) { return .holds }
                slots[slot].relationships[index] = .toMany(refs)
                return .open
            case .toOne(nil):
                return .open
            case .toOne(let current?):
                if current == ref { return .holds }
                return .namesAnother(movable: !isNew(slot) && !isStated(slot, index))
            }
        }

        mutating func add(_ source: Int, to index: Int, of slot: Int) throws {
            let ref = slots[source].ref
            guard case .toMany(var refs) = slots[slot].relationships[index] else {
                change(slot, index, to: .toOne(ref))
                return
            }
            slots[slot].relationships[index] = .unloaded  // so that `refs` grows in place
            refs.append(ref)
            change(slot, index, to: .toMany(refs))
            if largeLists[slot << 16 | index] != nil { largeLists[slot << 16 | index]!.insert(ref) }
        }

        mutating func move(_ index: Int, of slot: Int, to source: Int, leaving relationship: Int) throws {
            guard case .toOne(let current?) = slots[slot].relationships[index] else { return }
            change(slot, index, to: .toOne(slots[source].ref))
            let name = model.descriptions[entity(of: source)].relationships[relationship].name
            released.append((try self.slot(of: current), name, slots[slot].ref))
        }

        mutating func contradiction(_ source: Int, _ relationship: Int, names slot: Int) throws {
            let name = model.descriptions[entity(of: source)].relationships[relationship].name
            let inverse = facts[entity(of: source), relationship].inverseName
            contradictions.append(
                GraftError(
                    .malformedInput,
                    "\(label(source)).\(name) includes \(label(slot)), whose \(inverse) names another object",
                    context: [.object(id(source)), .key(name)]))
        }

        private mutating func contains(_ source: ObjectRef, in refs: [ObjectRef], at other: Int, _ index: Int) -> Bool {
            if refs.count <= 32 { return refs.contains(source) }
            let key = other << 16 | index
            if largeLists[key] == nil { largeLists[key] = Set(refs) }
            return largeLists[key]!.contains(source)
        }

        /// Objects a moved to-one left: they no longer hold the object that moved.
        mutating func releasePrevious() throws {
            for (owner, name, member) in released {
                let slot = Int(owner)
                guard let index = model.descriptions[slots[slot].ref.entity].relationshipIndexByName[name] else {
                    continue
                }
                let relationship = model.descriptions[slots[slot].ref.entity].relationships[index]
                switch slots[slot].relationships[index] {
                case .toOne(let current):
                    if current == member { change(slot, index, to: .toOne(nil)) }
                case .toMany(var refs):
                    guard let at = refs.firstIndex(of: member) else { continue }
                    refs.remove(at: at)
                    change(slot, index, to: .toMany(refs))
                case .unloaded:
                    // As above: the member's row no longer names this object; an order is rewritten.
                    guard relationship.isOrdered else { continue }
                    var refs = try loaded(slot, index)
                    refs.removeAll { $0 == member }
                    change(slot, index, to: .toMany(refs))
                }
            }
        }

        func id(_ slot: Int) -> String { clipboardIDs[slot] ?? label(slot) }

        /// `o3 (Employee)` for an object pasted from the clipboard, `Employee p12` for another.
        func label(_ slot: Int) -> String {
            let entity = model.descriptions[slots[slot].ref.entity].name
            if let id = clipboardIDs[slot] { return "\(id) (\(entity))" }
            return "\(entity) p\(slots[slot].ref.key)"
        }

        /// Every rule the written objects break, new objects' and changed ones' uniqueness included, settled
        /// by the plan.
        mutating func check() throws -> [RuleViolation] {
            let checked = slots.indices.filter { dirty[$0] }
            // Each object's own rules on another thread, while this one looks for clashes between them
            // and with the target's objects.
            let (rules, objects) = (RuleCheck(model: model), slots)
            let broken = BackgroundWork { checked.map { rules.violations(in: objects[$0], object: "") } }
            var uniqueness = UniquenessCheck(model: model)
            uniqueness.reserveCapacity(forObjectsOf: checked.map { objects[$0].ref.entity })
            let clashes = checked.map { uniqueness.add(slots[$0], at: $0) }
            let withStore: [PasteViolation]
            do {
                withStore = try storeClashes(checked)
            } catch {
                _ = try? broken.wait()
                throw error
            }
            var found: [PasteViolation] = []
            for (slot, (violations, clashes)) in zip(checked, zip(try broken.wait(), clashes)) {
                for violation in violations {
                    var violation = violation
                    violation.object = label(slot)
                    found.append(PasteViolation(violation, clipboardID: clipboardIDs[slot]))
                }
                for clash in clashes {
                    let earlier = model.descriptions[slots[clash.earlier].ref.entity].name
                    let kind = isNew(clash.earlier) ? "another new" : "a changed"
                    found.append(
                        PasteViolation(
                            clash.violation(
                                entity: model.descriptions[slots[slot].ref.entity].name, object: label(slot),
                                earlier: "\(kind) \(earlier) (\(label(clash.earlier)))"),
                            clipboardID: clipboardIDs[slot]))
                }
            }
            return try plan.settle(found + withStore)
        }

        /// Written objects whose constraint values an object of the target they leave unchanged already has:
        /// one set-based lookup per constraint and entity.
        private mutating func storeClashes(_ checked: [Int]) throws -> [PasteViolation] {
            // Per entity, its constraints made of its attributes, with their indices, worked out once.
            let constraints = model.descriptions.map { entity in
                entity.uniquenessConstraints.enumerated().compactMap { position, names in
                    let indices = names.compactMap { entity.attributeIndexByName[$0] }
                    return indices.count == names.count ? (position, indices) : nil
                }
            }
            // By entity << 16 | constraint position.
            var groups: [Int: (entity: EntityDescription, names: [String], slots: [Int])] = [:]
            for slot in checked {
                let entityIndex = slots[slot].ref.entity
                for (position, indices) in constraints[entityIndex] {
                    // An existing object that keeps its values cannot take them from another.
                    if !isNew(slot), !indices.contains(where: changedAttributes[slot].contains) { continue }
                    let entity = model.descriptions[entityIndex]
                    groups[entityIndex << 16 | position, default: (entity, entity.uniquenessConstraints[position], [])]
                        .slots.append(slot)
                }
            }
            var found: [PasteViolation] = []
            let ordered = groups.values.map { group in
                (key: "\(group.entity.index).\(group.names.joined(separator: ","))", group: group)
            }
            for (_, group) in ordered.sorted(by: { $0.key < $1.key }) {
                let root = model.descriptions[group.entity.rootIndex]
                let rootIndices = group.names.compactMap { root.attributeIndexByName[$0] }
                guard rootIndices.count == group.names.count else { continue }
                let indices = group.names.map { group.entity.attributeIndexByName[$0]! }
                var keyed: [Int] = []
                var keys = IdentityValues(width: indices.count)
                for slot in group.slots where indices.allSatisfy({ slots[slot].attributes[$0] != nil }) {
                    keyed.append(slot)
                    for index in indices { keys.append(slots[slot].attributes[index]!) }
                }
                let taken = try target.find(root, attributes: rootIndices, among: keys)
                for (position, (slot, other)) in zip(keyed, taken).enumerated() {
                    guard let other, other != slots[slot].ref else { continue }
                    let key = Array(keys[position])
                    // An object this paste changes is checked with its new values, above.
                    if let changed = existing[other], dirty[Int(changed)] { continue }
                    found.append(
                        PasteViolation(
                            UniquenessCheck.violation(
                                names: group.names, values: key, entity: group.entity.name, object: label(slot),
                                earlier: "an existing \(model.descriptions[other.entity].name) (\(target.uri(other)))"),
                            clipboardID: clipboardIDs[slot]))
                }
            }
            return found
        }
    }
}
