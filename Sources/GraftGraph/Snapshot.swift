import GraftCore
import GraftModel

/// One object as data: its entity and key, its attribute values and its relationships as references to
/// other objects.
///
/// Every store format reads into snapshots and writes from them; `graft convert` streams snapshots from
/// a reader to a writer without building a context.
///
/// For example:
///
/// ```swift
/// let employee = model.entity(named: "Employee")!
/// var snapshot = Snapshot(entity: employee, key: 1)
/// snapshot[attribute: "name", in: employee] = "Ann"
/// ```
public struct Snapshot: Hashable, Sendable {
    public var ref: ObjectRef
    /// One value per attribute of the entity, in `EntityDescription.attributes` order (transient
    /// attributes are always `nil`).
    public var attributes: [Value?]
    /// One entry per relationship of the entity, in `EntityDescription.relationships` order.
    public var relationships: [RelationshipValue]
    /// The version of the object the store read these values from, for optimistic locking (a SQLite
    /// store's `Z_OPT`; a count of saves in stores that keep their objects in memory); `nil` when the
    /// store keeps no versions. Bookkeeping, not data: two snapshots with the same values are equal
    /// whatever their versions.
    public var version: Int64?

    public init(ref: ObjectRef, attributes: [Value?], relationships: [RelationshipValue], version: Int64? = nil) {
        self.ref = ref
        self.attributes = attributes
        self.relationships = relationships
        self.version = version
    }

    public static func == (lhs: Snapshot, rhs: Snapshot) -> Bool {
        lhs.ref == rhs.ref && lhs.attributes == rhs.attributes && lhs.relationships == rhs.relationships
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ref)
        hasher.combine(attributes)
        hasher.combine(relationships)
    }

    /// An empty snapshot (no values, empty relationships) for an object of `entity`.
    public init(entity: EntityDescription, key: Int64) {
        self.ref = ObjectRef(entity: entity.index, key: key)
        // Filled in place: `Array(repeating:count:)` copies its element one by one, as an opaque value.
        let count = entity.attributes.count
        self.attributes = [Value?](unsafeUninitializedCapacity: count) { buffer, initialized in
            buffer.initialize(repeating: nil)
            initialized = count
        }
        self.relationships = entity.relationships.map { $0.isToMany ? .toMany([]) : .toOne(nil) }
    }

    /// The snapshot's entity in `model`, once the snapshot is known to fit it: an entity the model has,
    /// one value per attribute and one entry per relationship. Writers check this before using a
    /// snapshot they are given.
    ///
    /// - Throws: `GraftError.malformedInput` naming the entity and the object.
    package func entity(checkedIn model: Model) throws -> EntityDescription {
        guard model.descriptions.indices.contains(ref.entity) else {
            throw GraftError(.malformedInput, "a snapshot names entity #\(ref.entity), which the model does not have")
        }
        let entity = model.descriptions[ref.entity]
        guard attributes.count == entity.attributes.count, relationships.count == entity.relationships.count else {
            throw GraftError(
                .malformedInput,
                "the snapshot has \(attributes.count) attributes and \(relationships.count) relationships, but "
                    + "\(entity.name) has \(entity.attributes.count) and \(entity.relationships.count)",
                context: [.entity(entity.name), .object("p\(ref.key)")])
        }
        return entity
    }

    /// Takes a to-many's array out, emptied but keeping its storage, and leaves `.unloaded` in its place:
    /// a reader that fills the same snapshot object after object appends to it without allocating,
    /// since the array is then uniquely referenced. An empty array for anything but a to-many.
    public mutating func takeToMany(at index: Int) -> [ObjectRef] {
        guard case .toMany(var refs) = relationships[index] else { return [] }
        relationships[index] = .unloaded
        refs.removeAll(keepingCapacity: true)
        return refs
    }

    /// Makes this the empty snapshot `init(entity:key:)` gives for `ref` (an object of `entity`, the
    /// entity this snapshot was made for), keeping the storage of its arrays, so that a streaming reader
    /// can reuse one snapshot per entity.
    public mutating func reset(to ref: ObjectRef, entity: EntityDescription) {
        self.ref = ref
        version = nil
        for index in attributes.indices where attributes[index] != nil { attributes[index] = nil }
        for index in relationships.indices {
            switch relationships[index] {
            case .toOne(nil):
                continue
            case .toMany(let refs) where refs.isEmpty:
                continue
            case .toMany:
                relationships[index] = .toMany(takeToMany(at: index))
            default:
                relationships[index] = entity.relationships[index].isToMany ? .toMany([]) : .toOne(nil)
            }
        }
    }

    /// The value of a named attribute.
    public subscript(attribute name: String, in entity: EntityDescription) -> Value? {
        get { entity.attributeIndexByName[name].flatMap { attributes[$0] } }
        set {
            guard let index = entity.attributeIndexByName[name] else { return }
            attributes[index] = newValue
        }
    }

    /// The value of a named relationship.
    public subscript(relationship name: String, in entity: EntityDescription) -> RelationshipValue? {
        get { entity.relationshipIndexByName[name].map { relationships[$0] } }
        set {
            guard let index = entity.relationshipIndexByName[name], let newValue else { return }
            relationships[index] = newValue
        }
    }
}

/// The value of one relationship in a snapshot.
public enum RelationshipValue: Hashable, Sendable {
    case toOne(ObjectRef?)
    /// The related objects, in order for ordered relationships.
    case toMany([ObjectRef])
    /// The store did not load this to-many; ask the store for it when needed.
    case unloaded

    /// The related objects as a list (empty for an empty to-one or an unloaded to-many).
    public var refs: [ObjectRef] {
        switch self {
        case .toOne(let ref): return ref.map { [$0] } ?? []
        case .toMany(let refs): return refs
        case .unloaded: return []
        }
    }

    /// The first of `refs`, without making the list: a to-one's object, a to-many's first.
    public var firstRef: ObjectRef? {
        switch self {
        case .toOne(let ref): return ref
        case .toMany(let refs): return refs.first
        case .unloaded: return nil
        }
    }
}
