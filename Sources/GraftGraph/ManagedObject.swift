import Foundation
import GraftCore
import GraftModel

/// Where an object stands relative to its store, so an Active Record style `persist` knows whether to
/// insert, update or delete it.
public enum ObjectState: String, Sendable, CustomStringConvertible {
    /// Inserted into the context and not yet saved.
    case new
    /// Its values equal what the store holds (or it is a fault).
    case unchanged
    /// Loaded from the store and edited since.
    case changed
    /// Deleted in the context, not yet saved.
    case deleted

    public var description: String { rawValue }
}

/// The values of one object: one slot per attribute and one per relationship.
struct ObjectStorage {
    var attributes: [Value?]
    var relationships: [RelationshipStorage]
}

/// The contents of one relationship slot.
enum RelationshipStorage {
    case toOne(ManagedObject?)
    case toMany(ObjectList)
    /// A to-many the store has not loaded yet.
    case unloaded

    var objects: [ManagedObject] {
        switch self {
        case .toOne(let object): return object.map { [$0] } ?? []
        case .toMany(let list): return list.objects
        case .unloaded: return []
        }
    }
}

/// An object of the graph: an instance of an entity, living in an `ObjectContext`.
///
/// Read and write its properties by name. Relationship changes keep the other side consistent, and every
/// change is tracked, validated on save, and can be undone.
///
/// For example:
///
/// ```swift
/// let ann = try context.insert("Employee")
/// try ann.setValue("Ann", forKey: "name")
/// try ann.setValue(sales, forKey: "department")     // also adds Ann to sales.employees
/// let name = ann.value(forKey: "name") as? String
/// ```
///
/// An object refers to its context weakly: it does not keep the context alive.
///
/// Subclass it to give an entity's objects behaviour, register the subclass with the context (see
/// ``ObjectContext/register(_:forEntity:)``), and override the life-cycle methods — ``awakeFromInsert()``,
/// ``awakeFromFetch()``, ``willSave()``, ``didSave()``, ``prepareForDeletion()``, ``willTurnIntoFault()``,
/// ``didTurnIntoFault()`` — and ``propertyValidators`` for per-key validation:
///
/// ```swift
/// final class Department: ManagedObject {
///     override func awakeFromInsert() {
///         try? setValue("Headquarters", forKey: "location")
///     }
/// }
/// try context.register(Department.self)      // the model's class name for the entity is "Department"
/// ```
///
/// Only a context creates objects (an object of a registered class is made through its
/// ``init(_:)``, which takes a ``Creation`` only the context can make).
open class ManagedObject: KeyValueCoding, Hashable, CustomStringConvertible {
    public let entity: EntityDescription
    public internal(set) var objectID: ObjectID
    public internal(set) weak var context: ObjectContext?

    /// Current values; `nil` while the object is a fault.
    var storage: ObjectStorage?
    /// Values as last read from or saved to the store; `nil` for objects never saved.
    var committed: ObjectStorage?
    var isInsertedFlag = false
    var isDeletedFlag = false
    /// The store's version of the object when `committed` was read or saved (see `Snapshot.version`):
    /// what a save expects the store still to have.
    var version: Int64?
    /// Deleted from the store by another writer (found by a save's version check), so a deletion here
    /// has nothing left to remove and an insertion puts it back under its key.
    var isGoneFromStore = false

    /// What a context hands a new instance: its entity, its ID and the context. Only a context makes one.
    public struct Creation {
        let entity: EntityDescription
        let objectID: ObjectID
        let context: ObjectContext
    }

    /// Makes the instance a context asked for. A subclass that declares its own designated initializer
    /// overrides this one and calls `super.init(creation)`.
    public required init(_ creation: Creation) {
        self.entity = creation.entity
        self.objectID = creation.objectID
        self.context = creation.context
    }

    // MARK: Life cycle (see `ObjectContext+Lifecycle.swift` for when each is called)

    /// Called once in the object's life, when it is inserted into a context, inside the insertion's undo
    /// step: values set here are undone with the insertion. The default does nothing.
    open func awakeFromInsert() {}

    /// Called each time the object's values are read from the store (a fault fires, a fetch fills it),
    /// with undo registration paused: changes made here are not undo steps. The default does nothing.
    open func awakeFromFetch() {}

    /// Called when the context saves, for every object inserted, changed or deleted, before validation.
    /// An object changed here is asked again (until nothing changes), so compare before setting.
    /// Throwing stops the save. The default does nothing.
    open func willSave() throws {}

    /// Called after a save for every object it wrote (deleted ones included). Changes made here are new
    /// unsaved changes (and undo steps: use ``ObjectContext/withoutUndoRegistration(_:)`` to avoid that).
    /// The default does nothing.
    open func didSave() {}

    /// Called when the object is about to be deleted, before its delete rules are applied (its
    /// relationships still hold their objects), for each object a deletion cascades to. Throwing refuses
    /// the deletion. The default does nothing.
    open func prepareForDeletion() throws {}

    /// Called before the object turns back into a fault (its values are released). The default does
    /// nothing.
    open func willTurnIntoFault() {}

    /// Called after the object turned into a fault: release what was derived from its values. The
    /// default does nothing.
    open func didTurnIntoFault() {}

    /// Per-key validation rules of this class, run by ``validateValue(_:forKey:)`` and by every save
    /// after the model's own rules. A subclass of a subclass adds to `super.propertyValidators`. The
    /// context reads them once, when the class is registered.
    open class var propertyValidators: [PropertyValidator] { [] }

    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// Whether the object's values are not in memory (they are read from the store on first access).
    public var isFault: Bool { storage == nil }

    /// Inserted and not yet saved.
    public var isInserted: Bool { isInsertedFlag && !isDeletedFlag }

    /// Deleted and not yet saved.
    public var isDeleted: Bool { isDeletedFlag }

    /// New, unchanged, changed or deleted.
    public var state: ObjectState {
        if isDeletedFlag { return .deleted }
        if isInsertedFlag { return .new }
        return hasPersistentChanges ? .changed : .unchanged
    }

    /// Whether any stored value differs from what the store holds.
    public var hasPersistentChanges: Bool {
        guard !isInsertedFlag, !isDeletedFlag else { return true }
        guard let storage, let committed else { return false }
        for (index, attribute) in entity.attributes.enumerated() where !attribute.isTransient {
            if storage.attributes[index] != committed.attributes[index] { return true }
        }
        for (index, relationship) in entity.relationships.enumerated() where !relationship.isTransient {
            if !Self.sameContents(
                storage.relationships[index], committed.relationships[index], ordered: relationship.isOrdered)
            {
                return true
            }
        }
        return false
    }

    static func sameContents(_ lhs: RelationshipStorage, _ rhs: RelationshipStorage, ordered: Bool) -> Bool {
        switch (lhs, rhs) {
        case (.toOne(let a), .toOne(let b)): return a === b
        case (.toMany(let a), .toMany(let b)):
            if ordered { return a.objects.elementsEqual(b.objects, by: ===) }
            return a.hasSameMembers(as: b.objects)
        case (.unloaded, .unloaded): return true
        default: return false
        }
    }

    /// The keys whose values differ from the store's, with their new values
    /// (see `value(forKey:)` for the value types).
    public func changedValues() -> [String: Any?] {
        guard let storage else { return [:] }
        var changes: [String: Any?] = [:]
        for (index, attribute) in entity.attributes.enumerated() where !attribute.isTransient {
            let current = storage.attributes[index]
            if isInsertedFlag || committed?.attributes[index] != current {
                changes[attribute.name] = current?.anyValue
            }
        }
        for (index, relationship) in entity.relationships.enumerated() where !relationship.isTransient {
            let current = storage.relationships[index]
            if isInsertedFlag
                || !Self.sameContents(
                    current, committed?.relationships[index] ?? .unloaded, ordered: relationship.isOrdered)
            {
                changes[relationship.name] = relationship.isToMany ? current.objects : current.objects.first
            }
        }
        return changes
    }

    /// The object's URI (`x-coredata://<store UUID>/<Entity>/p<key>`).
    public var uri: String {
        guard let context else {
            return "x-coredata:///\(entity.name)/\(objectID.isTemporary ? "t" : "p")\(objectID.key)"
        }
        return objectID.uri(in: context.model, storeIdentifier: context.store.identifier)
    }

    open var description: String {
        let marker = isFault ? " (fault)" : ""
        return
            "<\(entity.name) \(objectID.isTemporary ? "new " : "")\(objectID.isTemporary ? "t" : "p")\(objectID.key)\(marker)>"
    }

    /// A short name for messages: the entity and the key (`Employee p12`, `Employee (new #3)`).
    public var label: String {
        "\(entity.name) \(objectID.isTemporary ? "(new #\(objectID.key))" : "p\(objectID.key)")"
    }

    func requireContext() throws -> ObjectContext {
        guard let context else {
            throw GraftError(.invalidOperation, "the object's context no longer exists", context: [.object(label)])
        }
        return context
    }
}

// MARK: - Key-value access

extension ManagedObject {
    /// The value for a key, as key-value coding sees it.
    ///
    /// Attributes give plain Swift values (`Int64` for every integer type, `Double`, `Decimal`, `String`,
    /// `Bool`, `Date`, `Data`, `UUID`, `URL`) or `nil`; a to-one gives a `ManagedObject` or `nil`; a to-many
    /// gives a `RelationshipSet`; a fetched property gives an array of objects. An unknown key gives `nil`.
    /// Reading a fault fills it from the store.
    public func value(forKey key: String) -> Any? {
        do {
            return try keyedValue(forKey: key)
        } catch {
            context?.recordFaultError(error)
            return nil
        }
    }

    /// Like `value(forKey:)`, but an unknown key or a store failure throws.
    public func keyedValue(forKey key: String) throws -> Any? {
        if let index = entity.attributeIndexByName[key] {
            return try attributeValue(at: index)?.anyValue
        }
        if let index = entity.relationshipIndexByName[key] {
            let relationship = entity.relationships[index]
            if relationship.isToMany { return RelationshipSet(owner: self, relationship: index) }
            return try relatedObject(at: index)
        }
        if let fetched = entity.fetchedProperty(named: key) {
            return try requireContext().evaluateFetchedProperty(fetched, of: self)
        }
        throw unknownKey(key)
    }

    func unknownKey(_ key: String) -> GraftError {
        GraftError(.notFound, "entity \(entity.name) has no property '\(key)'", context: [.object(label), .key(key)])
    }

    /// The typed value of an attribute.
    ///
    /// - Throws: `GraftError.notFound` when the entity has no such attribute.
    public func attributeValue(forKey key: String) throws -> Value? {
        guard let index = entity.attributeIndexByName[key] else { throw unknownKey(key) }
        return try attributeValue(at: index)
    }

    func attributeValue(at index: Int) throws -> Value? {
        try requireContext().fulfill(self)
        return storage!.attributes[index]
    }

    /// The object a to-one relationship points to.
    public func relatedObject(forKey key: String) throws -> ManagedObject? {
        guard let index = entity.relationshipIndexByName[key], !entity.relationships[index].isToMany else {
            throw GraftError(
                .notFound, "entity \(entity.name) has no to-one relationship '\(key)'",
                context: [.object(label), .key(key)])
        }
        return try relatedObject(at: index)
    }

    func relatedObject(at index: Int) throws -> ManagedObject? {
        try requireContext().fulfill(self)
        if case .toOne(let object) = storage!.relationships[index] { return object }
        return nil
    }

    /// A live view of a to-many relationship, through which objects are added and removed.
    public func relatedObjects(forKey key: String) throws -> RelationshipSet {
        guard let index = entity.relationshipIndexByName[key], entity.relationships[index].isToMany else {
            throw GraftError(
                .notFound, "entity \(entity.name) has no to-many relationship '\(key)'",
                context: [.object(label), .key(key)])
        }
        return RelationshipSet(owner: self, relationship: index)
    }

    /// Sets the value for a key.
    ///
    /// Attributes take a `Value` or a plain Swift value (numbers are converted to the attribute's type
    /// where no information is lost); a to-one takes a `ManagedObject` or `nil`; a to-many takes a sequence
    /// of objects, which replaces its contents. Inverses are updated and the change can be undone.
    ///
    /// - Throws: `GraftError.notFound` for an unknown key, `GraftError.typeMismatch` for a value of the
    ///   wrong kind, `GraftError.invalidOperation` for an object of another context or a deleted one.
    public func setValue(_ value: Any?, forKey key: String) throws {
        let context = try requireContext()
        if let index = entity.attributeIndexByName[key] {
            let attribute = entity.attributes[index]
            let converted = try ValueConversion.convert(value, to: attribute, entity: entity.name)
            try context.perform { try context.setAttribute(self, index, converted) }
            return
        }
        if let index = entity.relationshipIndexByName[key] {
            let relationship = entity.relationships[index]
            if relationship.isToMany {
                let objects = try ValueConversion.objects(from: value, key: key, owner: self)
                try context.perform { try context.replaceToMany(self, index, with: objects) }
            } else {
                guard value == nil || value is ManagedObject || (value as? Optional<ManagedObject>) != nil else {
                    throw GraftError(
                        .typeMismatch, "a to-one relationship takes a managed object or nil, not \(type(of: value!))",
                        context: [.object(label), .key(key)])
                }
                let object = value as? ManagedObject
                try context.perform { try context.setToOne(self, index, object) }
            }
            return
        }
        throw unknownKey(key)
    }

    /// The value at the end of a key path such as `manager.department.name` or `employees.@avg.salary`.
    public func value(forKeyPath keyPath: String) throws -> Any? {
        let value = try KeyValuePath(parsing: keyPath).evaluate(on: self)
        try context?.throwFaultError()
        return value
    }
}
