import GraftCore
import GraftModel

/// A live view of one object's to-many relationship.
///
/// Adding and removing objects through it keeps inverses consistent and is recorded for undo; reading
/// it reflects the relationship's current contents. Ordered relationships also accept positions.
///
/// For example:
///
/// ```swift
/// let employees = try sales.relatedObjects(forKey: "employees")
/// try employees.insert(ann)          // ann.department is now sales
/// print(try employees.count)
/// ```
public struct RelationshipSet: Sequence, KeyValueCollection, CustomStringConvertible {
    public let owner: ManagedObject
    let relationship: Int

    init(owner: ManagedObject, relationship: Int) {
        self.owner = owner
        self.relationship = relationship
    }

    /// The relationship this set shows.
    public var relationshipDescription: RelationshipDescription { owner.entity.relationships[relationship] }

    public var description: String { "\(owner.label).\(relationshipDescription.name)" }

    private func context() throws -> ObjectContext { try owner.requireContext() }

    /// The related objects, in order for ordered relationships.
    public func allObjects() throws -> [ManagedObject] {
        let context = try context()
        try context.loadToMany(owner, relationship)
        return owner.storage!.relationships[relationship].objects
    }

    /// The related objects (empty if the store cannot be read; see `allObjects()` to get the error).
    public var objects: [ManagedObject] { (try? allObjects()) ?? [] }

    public var keyValueElements: [any KeyValueCoding] { objects }

    public var count: Int { objects.count }
    public var isEmpty: Bool { objects.isEmpty }

    public func makeIterator() -> IndexingIterator<[ManagedObject]> { objects.makeIterator() }

    public func contains(_ object: ManagedObject) -> Bool { objects.contains { $0 === object } }

    /// Adds an object (at the end of an ordered relationship), updating its inverse.
    public func insert(_ object: ManagedObject) throws {
        let context = try context()
        try context.perform { try context.addToMany(owner, relationship, object) }
    }

    /// Adds an object at a position of an ordered relationship (or moves it there if already present).
    public func insert(_ object: ManagedObject, at position: Int) throws {
        let context = try context()
        guard relationshipDescription.isOrdered else {
            throw GraftError(
                .invalidOperation, "'\(relationshipDescription.name)' is not ordered; objects have no position",
                context: [.object(owner.label), .key(relationshipDescription.name)])
        }
        try context.perform { try context.addToMany(owner, relationship, object, at: position) }
    }

    /// Removes an object, updating its inverse.
    public func remove(_ object: ManagedObject) throws {
        let context = try context()
        try context.perform { try context.removeFromToMany(owner, relationship, object) }
    }

    /// Adds several objects at once (at the end of an ordered relationship, in the order given), updating
    /// their inverses: one change for observers, one undo step.
    public func insert(contentsOf objects: [ManagedObject]) throws {
        let context = try context()
        try context.perform {
            for object in objects { try context.addToMany(owner, relationship, object) }
        }
    }

    /// Removes several objects at once, updating their inverses: one change for observers, one undo step.
    public func remove(contentsOf objects: [ManagedObject]) throws {
        let context = try context()
        try context.perform {
            for object in objects { try context.removeFromToMany(owner, relationship, object) }
        }
    }

    /// Moves an object of an ordered relationship to `position`.
    ///
    /// - Throws: `GraftError.invalidOperation` when the relationship is not ordered or does not hold
    ///   `object`.
    public func move(_ object: ManagedObject, to position: Int) throws {
        guard contains(object) else {
            throw GraftError(
                .invalidOperation, "\(object.label) is not in '\(relationshipDescription.name)'",
                context: [.object(owner.label), .key(relationshipDescription.name)])
        }
        try insert(object, at: position)
    }

    /// Removes every object.
    public func removeAll() throws {
        let context = try context()
        try context.perform { try context.replaceToMany(owner, relationship, with: []) }
    }

    /// Replaces the contents (keeping the given order for ordered relationships).
    public func replace(with objects: [ManagedObject]) throws {
        let context = try context()
        try context.perform { try context.replaceToMany(owner, relationship, with: objects) }
    }

}
