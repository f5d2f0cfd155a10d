import GraftCore
import GraftGraph
import GraftModel

/// Swift code that runs an entity mapping whose mapping model names a custom policy class (a subclass of
/// Core Data's `NSEntityMigrationPolicy`, in the app's language, which Graft cannot run).
///
/// Graft first makes each destination object as the entity mapping's property mappings say, as
/// `NSEntityMigrationPolicy.createDestinationInstances(forSource:in:manager:)`'s `super` call does;
/// the policy's body then sees the source object and its destination, and may set values and link it
/// to new objects it finds or makes by their values (a `Maker` per maker name, a `Color` per colour).
///
/// For example, CoreDataPlus's `V2to3MakerPolicy`, which gives each car the maker of its old `maker` text:
///
/// ```swift
/// let policy = MigrationPolicy(className: "V2to3MakerPolicy") { object in
///     guard case .string(let name)? = object.sourceValue("maker") else { return }
///     let maker = try object.object("Maker", with: ["name": .string(name)])
///     try object.link("createdBy", to: maker)
/// }
/// ```
public struct MigrationPolicy: Sendable {
    /// The class name the mapping model gives (a module prefix such as `REPLACE_AT_RUNTIME.` or `App.`
    /// may be left out); for a policy of an inferred step, a name for messages.
    public let className: String
    /// For a policy of an inferred step (an app's custom migration stage, or a mapping model Graft does
    /// not have): the version the step goes to, and the destination entity whose objects it sees.
    public let step: (version: String, entity: String)?
    let body: @Sendable (inout PolicyObject) throws -> Void

    public init(className: String, _ body: @escaping @Sendable (inout PolicyObject) throws -> Void) {
        self.className = className
        self.step = nil
        self.body = body
    }

    /// A policy that runs on the objects of `entity` in the inferred step to version `version`, after the
    /// inferred mapping made them: what an app's custom migration stage, or a mapping model's custom
    /// policy, does in that step.
    ///
    /// For example, the step of the wibosco example that gives each post a `Color` for its old `hexColor`:
    ///
    /// ```swift
    /// let colors = MigrationPolicy(step: "CoreDataMigration_Example 3", entity: "Post") { post in
    ///     guard case .string(let hex)? = post.sourceValue("hexColor") else { return }
    ///     try post.link("color", to: try post.object("Color", with: ["hex": .string(hex)]))
    /// }
    /// ```
    public init(step version: String, entity: String, _ body: @escaping @Sendable (inout PolicyObject) throws -> Void) {
        self.className = "the Swift policy of \(entity) in the step to \(version)"
        self.step = (version, entity)
        self.body = body
    }

    /// Whether this policy is the one a mapping model names `name` (`REPLACE_AT_RUNTIME.V2to3MakerPolicy`).
    func answers(to name: String) -> Bool {
        guard step == nil else { return false }
        return name == className || name.split(separator: ".").last.map(String.init) == className
            || className.split(separator: ".").last.map(String.init) == name.split(separator: ".").last.map(String.init)
    }
}

/// One object as a custom policy sees it: the source object, its destination, and the objects the
/// policy makes.
public struct PolicyObject {
    /// The source object and its entity (in the step's source model).
    public let source: Snapshot
    public let sourceEntity: EntityDescription
    /// The destination object as the property mappings made it, and its entity.
    public var destination: Snapshot
    public let destinationEntity: EntityDescription
    let created: CreatedObjects

    /// The source object's value of attribute `key`.
    public func sourceValue(_ key: String) -> Value? { source[attribute: key, in: sourceEntity] }

    /// Sets the destination object's attribute `key`.
    ///
    /// - Throws: `GraftError.notFound` for an attribute the destination entity does not have.
    public mutating func setValue(_ value: Value?, forKey key: String) throws {
        guard let index = destinationEntity.attributeIndexByName[key] else {
            throw GraftError(.notFound, "\(destinationEntity.name) has no attribute '\(key)'")
        }
        destination.attributes[index] = value
    }

    /// The new object of `entity` whose attributes have `values`, made (with those values) the first time
    /// it is asked for: one object per distinct set of values, for the whole migration.
    ///
    /// - Throws: `GraftError.notFound` for an entity or attribute the destination model does not have.
    public mutating func object(_ entity: String, with values: [String: Value]) throws -> ObjectRef {
        try created.object(entity, with: values, shared: true)
    }

    /// A new object of `entity` with `values`, made on every call (a pet for each owner, whatever its name).
    ///
    /// - Throws: `GraftError.notFound` for an entity or attribute the destination model does not have.
    public mutating func newObject(_ entity: String, with values: [String: Value]) throws -> ObjectRef {
        try created.object(entity, with: values, shared: false)
    }

    /// Adds the new object `target` (made by ``object(_:with:)`` or ``newObject(_:with:)``) to the
    /// destination object's relationship `key` (its to-one, or one
    /// more of its to-many), and the destination object to the inverse of `key` on `target`.
    ///
    /// - Throws: `GraftError.notFound` for a relationship the destination entity does not have;
    ///   `GraftError.invalidOperation` when `target` is not an object the policy made.
    public mutating func link(_ key: String, to target: ObjectRef) throws {
        guard let index = destinationEntity.relationshipIndexByName[key] else {
            throw GraftError(.notFound, "\(destinationEntity.name) has no relationship '\(key)'")
        }
        let relationship = destinationEntity.relationships[index]
        if relationship.declaration.isToMany {
            var refs = destination.relationships[index].refs
            if !refs.contains(target) { refs.append(target) }
            destination.relationships[index] = .toMany(refs)
        } else {
            destination.relationships[index] = .toOne(target)
        }
        try created.addInverse(of: relationship, from: destination.ref, to: target)
    }
}

/// The objects custom policies make during one migration, kept until every source object is read and
/// then handed on after them.
final class CreatedObjects: @unchecked Sendable {
    let model: Model
    /// The key the next new object gets: above every key of the store.
    private var nextKey: Int64
    private var byValues: [String: [[String: Value]: ObjectRef]] = [:]
    private(set) var snapshots: [ObjectRef: Snapshot] = [:]
    private(set) var order: [ObjectRef] = []

    init(model: Model, firstKey: Int64) {
        self.model = model
        nextKey = firstKey
    }

    func object(_ name: String, with values: [String: Value], shared: Bool) throws -> ObjectRef {
        guard let entity = model.entity(named: name) else {
            throw GraftError(.notFound, "the new model has no entity '\(name)'")
        }
        guard !entity.isAbstract else {
            throw GraftError(.invalidOperation, "\(name) is abstract: a policy makes objects of its subentities")
        }
        if shared, let ref = byValues[name]?[values] { return ref }
        var snapshot = Snapshot(entity: entity, key: nextKey)
        nextKey += 1
        for (index, attribute) in entity.attributes.enumerated() where !attribute.isTransient {
            snapshot.attributes[index] = attribute.defaultValue
        }
        for (key, value) in values {
            guard let index = entity.attributeIndexByName[key] else {
                throw GraftError(.notFound, "\(name) has no attribute '\(key)'")
            }
            snapshot.attributes[index] = value
        }
        if shared { byValues[name, default: [:]][values] = snapshot.ref }
        snapshots[snapshot.ref] = snapshot
        order.append(snapshot.ref)
        return snapshot.ref
    }

    func addInverse(of relationship: RelationshipDescription, from source: ObjectRef, to target: ObjectRef) throws {
        guard var snapshot = snapshots[target] else {
            throw GraftError(
                .invalidOperation, "a policy links only to objects it made with object(_:with:) (\(target) is not one)")
        }
        guard let inverse = relationship.inverseIndex else { return }
        let entity = model.descriptions[target.entity]
        // The inverse as the target's entity numbers it (it may be a subentity of the declaring one).
        let name = model.descriptions[relationship.destinationIndex].relationships[inverse].declaration.name
        guard let index = entity.relationshipIndexByName[name] else { return }
        if entity.relationships[index].declaration.isToMany {
            var refs = snapshot.relationships[index].refs
            if !refs.contains(source) { refs.append(source) }
            snapshot.relationships[index] = .toMany(refs)
        } else {
            snapshot.relationships[index] = .toOne(source)
        }
        snapshots[target] = snapshot
    }
}
