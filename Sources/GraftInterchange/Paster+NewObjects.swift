import GraftGraph
import GraftModel

// What both ways of carrying out a plan (the engine, the streaming paste) make new objects with.

/// A clipboard entity as a paste meets it: its mapping, and its properties in the clipboard's order with
/// their indices in the target entity (a class, so that taking one per object copies nothing).
final class PasteEntry {
    let mapping: PastePlan.EntityMapping
    let attributes: [(name: String, index: Int?)]
    let relationships: [(name: String, index: Int?)]
    /// Per attribute of the target entity: its type.
    let types: [AttributeType]

    init(mapping: PastePlan.EntityMapping, info: Clipboard.EntityInfo) {
        self.mapping = mapping
        attributes = info.attributes.map { ($0.name, mapping.attributes[$0.name]) }
        relationships = info.relationships.map { ($0.name, mapping.relationships[$0.name]) }
        types = mapping.target.attributes.map(\.type)
    }

    /// Per clipboard entity of the plan, by position: its entry (nil for one the target lacks).
    static func entries(of plan: PastePlan) -> [PasteEntry?] {
        zip(plan.clipboard.entities, plan.entityMappings).map { info, mapping in
            mapping.map { PasteEntry(mapping: $0, info: info) }
        }
    }

    /// The name of the target entity's attribute at `index`, for errors.
    func name(of index: Int) -> String { mapping.target.attributes[index].name }

    /// Gives a new object's snapshot, its attributes empty, the copy's values: each converted to its
    /// attribute's type, and the default of each attribute the clipboard's entity lacks.
    func give(_ object: Clipboard.Object, to snapshot: inout Snapshot) throws {
        let entity = mapping.target
        for index in mapping.newAttributes { snapshot.attributes[index] = entity.attributes[index].defaultValue }
        var cursor = 0
        for named in object.attributes {
            guard let index = PasteEngine.match(named.name, in: attributes, cursor: &cursor) else { continue }
            snapshot.attributes[index] = try PastePlan.convert(
                named.value, to: types[index], key: self.name(of: index), object: object.id)
        }
    }
}

/// Keys for a paste's new objects: each tree's from one call, the trees in the order of their roots' entity
/// indices, and handed out in the order the objects come.
struct TreeKeys {
    /// Per root entity index: the keys given its tree, and how many are handed out.
    private var keys: [[Int64]] = []
    private var handedOut: [Int] = []
    /// How many keys were given in all.
    let count: Int

    /// Keys for one object per element of `roots` (the root entity of each new object's tree).
    init(roots: some Sequence<Int>, allocate: (_ root: Int, _ count: Int) throws -> [Int64]) rethrows {
        var counts: [Int] = []
        for root in roots {
            if root >= counts.count { counts += repeatElement(0, count: root + 1 - counts.count) }
            counts[root] += 1
        }
        keys = try counts.indices.map { counts[$0] > 0 ? try allocate($0, counts[$0]) : [] }
        handedOut = Array(repeating: 0, count: counts.count)
        count = counts.reduce(0, +)
    }

    /// The keys given, per tree (by its root entity's index).
    var given: [Int: [Int64]] {
        Dictionary(uniqueKeysWithValues: keys.indices.filter { !keys[$0].isEmpty }.map { ($0, keys[$0]) })
    }

    /// The next key of the tree rooted at entity `root`.
    mutating func next(root: Int) -> Int64 {
        defer { handedOut[root] += 1 }
        return keys[root][handedOut[root]]
    }
}
