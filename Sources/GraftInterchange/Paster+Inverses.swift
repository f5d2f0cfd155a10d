import GraftModel

/// What keeping both sides of a link asks of each relationship of a model, read from it once.
struct RelationshipFacts {
    struct Entry {
        var isToMany: Bool
        var isOrdered: Bool
        var destination: Int
        /// The inverse's index in the destination, and so in each of its subentities (which list their
        /// inherited relationships first); -1 without inverse.
        var inverse: Int
        var inverseIsToMany: Bool
        var inverseName: String
    }

    let model: Model
    private let entries: [[Entry]]

    init(model: Model) {
        self.model = model
        entries = model.descriptions.map { entity in
            entity.relationships.map { relationship in
                let inverse = model.inverse(of: relationship)
                return Entry(
                    isToMany: relationship.isToMany, isOrdered: relationship.isOrdered,
                    destination: relationship.destinationIndex, inverse: relationship.inverseIndex ?? -1,
                    inverseIsToMany: inverse?.isToMany ?? false, inverseName: inverse?.name ?? "")
            }
        }
    }

    subscript(entity: Int, relationship: Int) -> Entry { entries[entity][relationship] }

    /// The index of the inverse of `entry`'s relationship in an object of `entity`; nil when the
    /// relationship has no inverse or the entity lacks it.
    func inverseIndex(_ entry: Entry, in entity: Int) -> Int? {
        guard entry.inverse >= 0 else { return nil }
        let object = model.descriptions[entity]
        if model.isKind(object, of: model.descriptions[entry.destination]) { return entry.inverse }
        return object.relationshipIndexByName[entry.inverseName]
    }
}

/// The other side of a link, as it stands before the paste gives it the link's source.
enum InverseSide {
    /// It holds the source already, or the store keeps it from the source's own row.
    case holds
    /// A to-many without the source, or a to-one that names nothing: it gains the source.
    case open
    /// A to-one that names another object. `movable` when that is the target's own, unstated by the
    /// clipboard: it moves to the source, and the object it named loses it. Otherwise the links contradict
    /// each other.
    case namesAnother(movable: Bool)
}

/// A paste's objects, by slot, as keeping both sides of their links sees them. The engine keeps them as
/// snapshots in memory; the streaming paste, as a compact table of what the clipboard states. The rule
/// (``linkInverses(of:_:to:)``) is one.
protocol InverseSides {
    var facts: RelationshipFacts { get }
    /// The target entity of the object in `slot`.
    func entity(of slot: Int) -> Int
    /// What relationship `index` of the object in `slot` holds of `source`.
    mutating func side(_ index: Int, of slot: Int, toward source: Int) throws -> InverseSide
    /// Relationship `index` of the object in `slot` gains `source` (to-many) or names it (to-one).
    mutating func add(_ source: Int, to index: Int, of slot: Int) throws
    /// The to-one `index` of the object in `slot` moves to `source`, from the object whose `relationship`
    /// named it.
    mutating func move(_ index: Int, of slot: Int, to source: Int, leaving relationship: Int) throws
    /// `source`'s `relationship` names the object in `slot`, whose inverse names another object.
    mutating func contradiction(_ source: Int, _ relationship: Int, names slot: Int) throws
}

extension InverseSides {
    /// The other side of one stated link, where the clipboard does not state it: relationship `index` of
    /// the object in `source` names the objects in `targets` (each once).
    mutating func linkInverses(of source: Int, _ index: Int, to targets: some Sequence<Int>) throws {
        let stated = facts[entity(of: source), index]
        guard stated.inverse >= 0 else { return }
        for target in targets {
            guard let inverse = facts.inverseIndex(stated, in: entity(of: target)) else { continue }
            switch try side(inverse, of: target, toward: source) {
            case .holds: continue
            case .open: try add(source, to: inverse, of: target)
            case .namesAnother(movable: true): try move(inverse, of: target, to: source, leaving: index)
            case .namesAnother(movable: false): try contradiction(source, index, names: target)
            }
        }
    }
}
