import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// Pasting where nothing exists yet — a store with no objects, or a new document: the snapshots are
/// built directly and checked, with no context and no managed objects. The result is the one a paste
/// through a context gives (every object new, links as the clipboard states them with both sides kept,
/// defaults for attributes the clipboard's model lacked), at a fraction of the cost, which matters for
/// whole-store clipboards.
struct EmptyStorePaste {
    let plan: PastePlan

    /// Whether `store` has no objects at all.
    static func isEmpty(_ store: any PersistentStore) throws -> Bool {
        if let reader = store as? any StoreReader, let count = reader.objectCount { return count == 0 }
        for root in store.model.descriptions where root.superentityIndex == nil {
            let result = try store.fetch(StoreFetch(entities: [root.index] + root.descendantIndices, limit: 1))
            if !result.refs.isEmpty { return false }
        }
        return true
    }

    /// The pasted objects, in clipboard order, with the clipboard ids they came from.
    struct Result {
        var ids: [String]
        var snapshots: [Snapshot]
        /// The rules the objects break, when the paste goes ahead anyway (validation off).
        var violations: [RuleViolation]

        /// Clipboard id → the URI of the object it became.
        func idMap(model: Model, storeIdentifier: String) -> [(id: String, uri: String)] {
            zip(ids, snapshots).map { id, snapshot in
                (
                    id,
                    ObjectID(entity: snapshot.ref.entity, key: snapshot.ref.key).uri(
                        in: model, storeIdentifier: storeIdentifier)
                )
            }
        }
    }

    /// Builds and checks the objects.
    ///
    /// - Parameter allocateKeys: keys for `count` new objects of the tree rooted at an entity.
    /// - Throws: `validationFailed` listing every rule the objects break, unless validation is off;
    ///   `malformedInput` when the clipboard's links contradict each other.
    func build(allocateKeys: (_ root: Int, _ count: Int) throws -> [Int64]) throws -> Result {
        let model = plan.model
        // Per clipboard entity, resolved once: the mapping, and its properties in the clipboard's order.
        struct Entry {
            var mapping: PastePlan.EntityMapping
            var attributes: [(name: String, index: Int?)]
            var relationships: [(name: String, index: Int?)]
        }
        var entries: [String: Entry] = [:]
        for info in plan.clipboard.entities {
            guard let mapping = plan.mappings[info.name] else { continue }
            entries[info.name] = Entry(
                mapping: mapping, attributes: info.attributes.map { ($0.name, mapping.attributes[$0.name]) },
                relationships: info.relationships.map { ($0.name, mapping.relationships[$0.name]) })
        }
        let objects = plan.clipboard.objects
        var entryOf: [Int32] = []  // per clipboard object: its entry, or -1
        entryOf.reserveCapacity(objects.count)
        var entryNumber: [String: Int32] = [:]
        for (number, name) in entries.keys.sorted().enumerated() { entryNumber[name] = Int32(number) }
        let entryByNumber = entries.keys.sorted().map { entries[$0]! }
        var countPerRoot: [Int: Int] = [:]
        for object in objects {
            let number = entryNumber[object.entity] ?? -1
            entryOf.append(number)
            if number >= 0 { countPerRoot[entryByNumber[Int(number)].mapping.target.rootIndex, default: 0] += 1 }
        }
        var keys: [Int: IndexingIterator<[Int64]>] = [:]
        for (root, count) in countPerRoot.sorted(by: { $0.key < $1.key }) {
            keys[root] = try allocateKeys(root, count).makeIterator()
        }

        var snapshots: [Snapshot] = []
        var sourceOf: [Int] = []  // per snapshot: its clipboard object
        snapshots.reserveCapacity(objects.count)
        sourceOf.reserveCapacity(objects.count)
        var position: [String: Int] = [:]
        position.reserveCapacity(objects.count)
        for (offset, object) in objects.enumerated() where entryOf[offset] >= 0 {
            let entry = entryByNumber[Int(entryOf[offset])]
            let entity = entry.mapping.target
            var snapshot = Snapshot(entity: entity, key: keys[entity.rootIndex]!.next()!)
            for index in entry.mapping.newAttributes {
                snapshot.attributes[index] = entity.attributes[index].defaultValue
            }
            var cursor = 0
            for named in object.attributes {
                guard let index = Self.match(named.name, in: entry.attributes, cursor: &cursor) else { continue }
                snapshot.attributes[index] = try plan.convert(
                    named.value, to: entity.attributes[index], object: object.id)
            }
            position[object.id] = snapshots.count
            sourceOf.append(offset)
            snapshots.append(snapshot)
        }
        func id(_ at: Int) -> String { objects[sourceOf[at]].id }
        func label(_ at: Int) -> String { "\(objects[sourceOf[at]].id) (\(objects[sourceOf[at]].entity))" }

        // Links as stated, kept flat: each link's source, relationship and range of targets (by position).
        var links: [(from: Int32, relationship: Int32, end: Int32)] = []
        var targets: [Int32] = []
        for at in snapshots.indices {
            let object = objects[sourceOf[at]], entry = entryByNumber[Int(entryOf[sourceOf[at]])]
            var cursor = 0
            for link in object.relationships {
                guard let index = Self.match(link.name, in: entry.relationships, cursor: &cursor) else { continue }
                let start = targets.count
                // Each target once (a long list is checked through a set).
                if link.targets.count > 32 {
                    var seen = Set<Int32>()
                    for target in link.targets {
                        if let other = position[target], seen.insert(Int32(other)).inserted {
                            targets.append(Int32(other))
                        }
                    }
                } else {
                    for target in link.targets {
                        if let other = position[target], !targets[start...].contains(Int32(other)) {
                            targets.append(Int32(other))
                        }
                    }
                }
                guard targets.count > start else { continue }
                let refs = targets[start...].map { snapshots[Int($0)].ref }
                snapshots[at].relationships[index] =
                    entry.mapping.target.relationships[index].isToMany ? .toMany(refs) : .toOne(refs[0])
                links.append((Int32(at), Int32(index), Int32(targets.count)))
            }
        }

        // The other side of each link, where the clipboard did not state it.
        var errors: [GraftError] = []
        var largeLists: [Int: Set<ObjectRef>] = [:]  // membership of long to-manys, by position and relationship
        func contains(_ source: ObjectRef, in refs: [ObjectRef], at other: Int, _ index: Int) -> Bool {
            if refs.count <= 32 { return refs.contains(source) }
            let slot = other << 16 | index
            if largeLists[slot] == nil { largeLists[slot] = Set(refs) }
            return largeLists[slot]!.contains(source)
        }
        var start = 0
        for link in links {
            defer { start = Int(link.end) }
            let at = Int(link.from), index = Int(link.relationship)
            let entity = model.descriptions[snapshots[at].ref.entity]
            guard let inverse = model.inverse(of: entity.relationships[index]) else { continue }
            let source = snapshots[at].ref
            for other in targets[start..<Int(link.end)].map(Int.init) {
                guard
                    let inverseIndex = model.descriptions[snapshots[other].ref.entity].relationshipIndexByName[
                        inverse.name]
                else {
                    continue
                }
                switch snapshots[other].relationships[inverseIndex] {
                case .toMany(var refs):
                    guard !contains(source, in: refs, at: other, inverseIndex) else { continue }
                    snapshots[other].relationships[inverseIndex] = .unloaded  // so that `refs` grows in place
                    refs.append(source)
                    snapshots[other].relationships[inverseIndex] = .toMany(refs)
                    let slot = other << 16 | inverseIndex
                    if largeLists[slot] != nil { largeLists[slot]!.insert(source) }
                case .toOne(nil):
                    snapshots[other].relationships[inverseIndex] = .toOne(source)
                case .toOne(let current):
                    guard current != source else { continue }
                    let name = entity.relationships[index].name
                    errors.append(
                        GraftError(
                            .malformedInput,
                            "\(id(at)).\(name) includes \(id(other)), whose \(inverse.name) names another object",
                            context: [.object(id(at)), .key(name)]))
                case .unloaded: break
                }
            }
        }
        if !errors.isEmpty {
            throw GraftError(.malformedInput, "the clipboard's links contradict each other", underlying: errors)
        }

        // Every rule the objects break, each with the clipboard object it came from (labels are made only
        // for objects that break a rule).
        var found: [PasteViolation] = []
        var uniqueness = UniquenessCheck(model: model)
        for (at, snapshot) in snapshots.enumerated() {
            for violation in RuleViolation.find(in: snapshot, model: model, object: "") {
                var violation = violation
                violation.object = label(at)
                found.append(PasteViolation(violation, clipboardID: id(at)))
            }
            for clash in uniqueness.add(snapshot, at: at) {
                let earlier = model.descriptions[snapshots[clash.earlier].ref.entity].name
                found.append(
                    PasteViolation(
                        clash.violation(
                            entity: model.descriptions[snapshot.ref.entity].name, object: label(at),
                            earlier: "another new \(earlier) (\(label(clash.earlier)))"),
                        clipboardID: id(at)))
            }
        }
        let violations = try plan.settle(found)
        return Result(ids: sourceOf.map { objects[$0].id }, snapshots: snapshots, violations: violations)
    }

    /// The target index of the property `name`, looking first where the previous one left off (objects
    /// list their properties in the order the clipboard's entity does), then everywhere.
    private static func match(_ name: String, in properties: [(name: String, index: Int?)], cursor: inout Int) -> Int? {
        if cursor < properties.count, properties[cursor].name == name {
            cursor += 1
            return properties[cursor - 1].index
        }
        guard let found = properties.firstIndex(where: { $0.name == name }) else { return nil }
        cursor = found + 1
        return properties[found].index
    }
}
