import GraftCore
import GraftModel

/// The subclasses registered with a context, by entity, their per-key validators, and the objects whose
/// `awakeFromFetch` waits for a fetch to finish.
struct LifecycleState {
    var classes: [Int: ManagedObject.Type] = [:]
    /// Per entity, the validators of its class by key.
    var validators: [Int: [String: [PropertyValidator]]] = [:]
    /// Nesting of fetches under way.
    var fetchDepth = 0
    var awaitingAwake: [ManagedObject] = []
    /// The objects of the save under way that get `didSave()`.
    var saving: [ManagedObject] = []
}

/// A per-key validation rule of a managed-object subclass (Core Data's `validate<Key>:error:`).
///
/// The rule receives the object and the proposed value (as `value(forKey:)` gives values, after the
/// model's coercion); it throws when the value is not acceptable, and may replace the value with an
/// acceptable one (``ManagedObject/validateValue(_:forKey:)`` hands the replacement back; a save only
/// uses the errors).
///
/// For example:
///
/// ```swift
/// final class Employee: ManagedObject {
///     override class var propertyValidators: [PropertyValidator] {
///         [PropertyValidator("name") { (_: Employee, value) in
///             if let name = value as? String, name != name.trimmingCharacters(in: .whitespaces) {
///                 value = name.trimmingCharacters(in: .whitespaces)     // a replacement
///             }
///             if (value as? String)?.isEmpty == true { throw EmployeeError.blankName }
///         }]
///     }
/// }
/// ```
public struct PropertyValidator {
    /// The attribute or relationship the rule is for.
    public let key: String
    let validate: (ManagedObject, inout Any?) throws -> Void

    public init<Object: ManagedObject>(_ key: String, _ validate: @escaping (Object, inout Any?) throws -> Void) {
        self.key = key
        self.validate = { object, value in
            guard let object = object as? Object else { return }
            try validate(object, &value)
        }
    }
}

extension ObjectContext {
    // MARK: Classes

    /// Makes the objects of an entity instances of `type`.
    ///
    /// Without `entityName`, `type` is used for every entity whose class name in the model
    /// (`representedClassName`) is the type's name; a module prefix (`MyApp.Department`, `.Department`) is
    /// ignored. Register before the context hands out objects of the entity: objects already made keep
    /// their class. Subentities have their own class names, as in Core Data: register them too.
    ///
    /// For example:
    ///
    /// ```swift
    /// final class Department: ManagedObject { … }
    /// try context.register(Department.self)                        // by the model's class name
    /// try context.register(Department.self, forEntity: "Division")  // or explicitly
    /// ```
    ///
    /// - Throws: `GraftError.notFound` when no entity has the class name or `entityName` is unknown, or a
    ///   validator names a key the entity does not have.
    public func register(_ type: ManagedObject.Type, forEntity entityName: String? = nil) throws {
        let entities: [EntityDescription]
        let typeName = Self.unqualified(String(describing: type))
        if let entityName {
            entities = [try model.requireEntity(entityName)]
        } else {
            entities = model.descriptions.filter { entity in
                entity.declaration.className.map(Self.unqualified) == typeName
            }
            guard !entities.isEmpty else {
                throw GraftError(
                    .notFound,
                    "no entity of the model has the class name \(typeName); name the entity with forEntity:")
            }
        }
        let validators = Dictionary(grouping: type.propertyValidators, by: \.key)
        for entity in entities {
            for key in validators.keys.sorted()
            where entity.attributeIndexByName[key] == nil && entity.relationshipIndexByName[key] == nil {
                throw GraftError(
                    .notFound, "\(typeName) validates '\(key)', which entity \(entity.name) does not have",
                    context: [.entity(entity.name), .key(key)])
            }
            lifecycle.classes[entity.index] = type
            lifecycle.validators[entity.index] = validators
        }
    }

    /// The class of the entity's objects in this context (`ManagedObject` unless a subclass is registered).
    public func objectClass(for entity: EntityDescription) -> ManagedObject.Type {
        lifecycle.classes[entity.index] ?? ManagedObject.self
    }

    private static func unqualified(_ name: String) -> Substring {
        name.split(separator: ".").last ?? Substring(name)
    }

    func makeObject(_ entity: EntityDescription, _ id: ObjectID) -> ManagedObject {
        objectClass(for: entity).init(ManagedObject.Creation(entity: entity, objectID: id, context: self))
    }

    // MARK: Life-cycle calls

    /// After an object's values were read from the store. Core Data disables change processing around
    /// `awakeFromFetch` so that it does not dirty the document; here undo registration is paused.
    ///
    /// During a fetch, the call waits until the fetch has made its list of results: what `awakeFromFetch`
    /// changes must not change which objects the fetch finds.
    func awakeFromFetch(_ object: ManagedObject) {
        guard type(of: object) != ManagedObject.self else { return }
        if lifecycle.fetchDepth > 0 {
            lifecycle.awaitingAwake.append(object)
            return
        }
        withoutUndoRegistration { object.awakeFromFetch() }
    }

    /// Starts a fetch (see ``awakeFromFetch(_:)``).
    func beginFetch() {
        lifecycle.fetchDepth += 1
    }

    /// Ends a fetch; the outermost one awakes the objects it filled.
    func endFetch() {
        lifecycle.fetchDepth -= 1
        guard lifecycle.fetchDepth == 0, !lifecycle.awaitingAwake.isEmpty else { return }
        let awaiting = lifecycle.awaitingAwake
        lifecycle.awaitingAwake.removeAll()
        withoutUndoRegistration {
            for object in awaiting where object.context === self { object.awakeFromFetch() }
        }
    }

    /// Before delete rules are applied: every object about to be deleted, in the order found.
    func prepareForDeletion(_ objects: [ManagedObject]) throws {
        for object in objects where type(of: object) != ManagedObject.self { try object.prepareForDeletion() }
    }

    /// The first part of a save: pending changes are processed (observers hear of them), will-save
    /// observers are told, and every object to be saved is sent `willSave()`; objects that `willSave()`
    /// changes (or inserts) are sent it again, as Core Data does, until nothing more changes.
    ///
    /// - Throws: what `willSave()` throws; `GraftError.invalidOperation` when it keeps changing objects.
    func prepareForSave() throws {
        processPendingChanges()
        for observer in observation.willSaveObservers { observer.handler(()) }
        lifecycle.saving = []
        guard !lifecycle.classes.isEmpty else { return }
        var round = pending.values.filter(\.isSaveCandidate).sorted { $0.objectID < $1.objectID }
        var rounds = 0
        while !round.isEmpty {
            rounds += 1
            guard rounds <= Self.willSaveRounds else {
                throw GraftError(
                    .invalidOperation,
                    "willSave() keeps changing objects (\(round.count) changed again after \(Self.willSaveRounds) rounds); compare values before setting them",
                    context: [.object(round[0].label)])
            }
            observation.touched = [:]
            defer { observation.touched = nil }
            for object in round where type(of: object) != ManagedObject.self { try object.willSave() }
            deliverObservedChanges()
            round = (observation.touched ?? [:]).values.filter(\.isSaveCandidate).sorted { $0.objectID < $1.objectID }
        }
        processPendingChanges()
        lifecycle.saving = pending.values.filter { $0.isSaveCandidate && type(of: $0) != ManagedObject.self }
            .sorted { $0.objectID < $1.objectID }
    }

    private static let willSaveRounds = 100

    /// The last part of a save: `didSave()` for every object written (as `prepareForSave()` found them),
    /// then the did-save observers, with what was saved.
    func finishSave(_ saved: SaveChanges) {
        let saving = lifecycle.saving
        lifecycle.saving = []
        if !saving.isEmpty {
            let written = Set(saved.inserted + saved.updated + saved.deleted)
            for object in saving where written.contains(object.objectID) { object.didSave() }
        }
        for observer in observation.didSaveObservers { observer.handler(saved) }
    }
}

extension ManagedObject {
    /// Whether a save writes the object: inserted (and not deleted again), changed, or deleted.
    var isSaveCandidate: Bool {
        if isInsertedFlag { return !isDeletedFlag }
        return isDeletedFlag || (storage != nil && hasPersistentChanges)
    }
}
