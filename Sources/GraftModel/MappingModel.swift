import Foundation

/// A mapping model: how the objects of one model version become objects of another, entity by entity
/// (Core Data's `NSMappingModel`, which Xcode keeps in an `.xcmappingmodel` and compiles to a `.cdm`).
///
/// Expressions are kept as predicate-format text (`$source.name`,
/// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "CarToCar", $source.cars)`),
/// as `Model` keeps its predicates; the migration engine parses and evaluates them.
///
/// For example:
///
/// ```swift
/// let mapping = try MappingModel.load(URL(fileURLWithPath: "V2toV3.cdm"))
/// for entityMapping in mapping.entityMappings {
///     print(entityMapping.name, entityMapping.kind, entityMapping.sourceEntity ?? "-")
/// }
/// ```
public struct MappingModel: Hashable, Sendable {
    /// The entity mappings, in the order the mapping model lists them (Core Data runs them in this order).
    public var entityMappings: [EntityMapping]

    public init(entityMappings: [EntityMapping]) {
        self.entityMappings = entityMappings
    }

    /// The entity mapping with this name.
    public func entityMapping(named name: String) -> EntityMapping? {
        entityMappings.first { $0.name == name }
    }
}

/// How the objects of one source entity become objects of one destination entity (`NSEntityMapping`).
public struct EntityMapping: Hashable, Sendable {
    /// What the mapping does (`NSEntityMappingType`; the raw values are Core Data's codes).
    public enum Kind: Int, Hashable, Sendable, CaseIterable, CustomStringConvertible {
        /// Left for a custom policy to decide (`NSUndefinedEntityMappingType`).
        case undefined = 0
        /// Run entirely by a custom policy (`NSCustomEntityMappingType`).
        case custom = 1
        /// The destination entity is new: no source objects (`NSAddEntityMappingType`).
        case add = 2
        /// The source entity goes: its objects are not carried (`NSRemoveEntityMappingType`).
        case remove = 3
        /// Objects carried as they are (`NSCopyEntityMappingType`).
        case copy = 4
        /// Objects carried through the property mappings (`NSTransformEntityMappingType`).
        case transform = 5

        public var description: String {
            switch self {
            case .undefined: "undefined"
            case .custom: "custom"
            case .add: "add"
            case .remove: "remove"
            case .copy: "copy"
            case .transform: "transform"
            }
        }
    }

    /// The mapping's name (`CarToCar`), by which value expressions refer to it.
    public var name: String
    public var kind: Kind
    public var sourceEntity: String?
    /// The source entity's version hash as the mapping model records it.
    public var sourceEntityVersionHash: Data?
    public var destinationEntity: String?
    /// The destination entity's version hash as the mapping model records it.
    public var destinationEntityVersionHash: Data?
    /// The expression that fetches the source objects, as predicate-format text
    /// (`FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Car", "TRUEPREDICATE"), $manager.sourceContext, NO)`);
    /// `nil` when there is none.
    public var sourceExpression: String?
    /// The predicate that filters the source objects, taken out of ``sourceExpression``
    /// (`TRUEPREDICATE` when it takes them all); `nil` when there is no source expression.
    public var filterPredicate: String?
    public var attributeMappings: [PropertyMapping]
    public var relationshipMappings: [PropertyMapping]
    /// The custom `NSEntityMigrationPolicy` subclass that runs the mapping (`V2to3MakerPolicy`, as the
    /// mapping model names it, module prefix included); `nil` for Core Data's own.
    public var migrationPolicyClassName: String?
    public var userInfo: [String: String]

    public init(
        name: String, kind: Kind, sourceEntity: String? = nil, sourceEntityVersionHash: Data? = nil,
        destinationEntity: String? = nil, destinationEntityVersionHash: Data? = nil, sourceExpression: String? = nil,
        filterPredicate: String? = nil, attributeMappings: [PropertyMapping] = [],
        relationshipMappings: [PropertyMapping] = [], migrationPolicyClassName: String? = nil,
        userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.kind = kind
        self.sourceEntity = sourceEntity
        self.sourceEntityVersionHash = sourceEntityVersionHash
        self.destinationEntity = destinationEntity
        self.destinationEntityVersionHash = destinationEntityVersionHash
        self.sourceExpression = sourceExpression
        self.filterPredicate = filterPredicate
        self.attributeMappings = attributeMappings
        self.relationshipMappings = relationshipMappings
        self.migrationPolicyClassName = migrationPolicyClassName
        self.userInfo = userInfo
    }
}

/// How one destination property gets its value (`NSPropertyMapping`).
public struct PropertyMapping: Hashable, Sendable {
    /// The destination property's name.
    public var name: String
    /// The value expression, as predicate-format text (`$source.name`); `nil` leaves the property as a
    /// new object has it (its default).
    public var valueExpression: String?
    public var userInfo: [String: String]

    public init(name: String, valueExpression: String? = nil, userInfo: [String: String] = [:]) {
        self.name = name
        self.valueExpression = valueExpression
        self.userInfo = userInfo
    }
}
