import Foundation

/// An attribute as declared in a model: a named, typed value of an entity.
///
/// For example:
///
/// ```swift
/// var salary = Attribute(name: "salary", type: .decimal)
/// salary.isOptional = false
/// salary.minValue = .integer(0)
/// ```
public struct Attribute: Hashable, Sendable {
    public var name: String
    public var type: AttributeType
    public var isOptional: Bool
    public var isTransient: Bool
    /// Set only by compiled models (flag 4); Xcode's editor has no switch for it.
    public var isReadOnly: Bool
    public var defaultValue: Value?
    /// The smallest allowed value: a number, a date, or for strings and binary data the shortest length.
    public var minValue: Value?
    /// The largest allowed value: a number, a date, or for strings and binary data the longest length.
    public var maxValue: Value?
    /// A regular expression every string value must match as a whole.
    public var regularExpression: String?
    /// The store keeps an index on this attribute (Xcode's older "Indexed" switch).
    public var isIndexed: Bool
    /// Core Spotlight indexes the attribute (Xcode's "Index in Spotlight": `spotlightIndexingEnabled`,
    /// `NSIndexedBySpotlight` in a compiled model). It takes no part in the version hash.
    public var isIndexedBySpotlight: Bool
    /// Binary data may be stored outside the store file (Apple's "Allows External Storage").
    public var allowsExternalBinaryDataStorage: Bool
    /// The value is kept in persistent history when the object is deleted.
    public var preservesValueInHistoryOnDeletion: Bool
    public var valueTransformerName: String?
    public var customClassName: String?
    /// Xcode's code-generation choice; kept so that a model round-trips.
    public var usesScalarValueType: Bool?
    /// A derived attribute's expression in predicate format (`pages.@count`, `uppercase:(title)`);
    /// `nil` for ordinary attributes. Its text is what the version hash of a derived attribute covers.
    public var derivationExpression: String?
    public var versionHashModifier: String?
    /// The renaming identifier lightweight migration uses to match this attribute to an older one.
    public var renamingIdentifier: String?
    public var userInfo: [String: String]

    public init(
        name: String, type: AttributeType, isOptional: Bool = true, isTransient: Bool = false,
        isReadOnly: Bool = false, defaultValue: Value? = nil, minValue: Value? = nil, maxValue: Value? = nil,
        regularExpression: String? = nil, isIndexed: Bool = false, isIndexedBySpotlight: Bool = false,
        allowsExternalBinaryDataStorage: Bool = false,
        preservesValueInHistoryOnDeletion: Bool = false, valueTransformerName: String? = nil,
        customClassName: String? = nil, usesScalarValueType: Bool? = nil, derivationExpression: String? = nil,
        versionHashModifier: String? = nil, renamingIdentifier: String? = nil, userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.isReadOnly = isReadOnly
        self.defaultValue = defaultValue
        self.minValue = minValue
        self.maxValue = maxValue
        self.regularExpression = regularExpression
        self.isIndexed = isIndexed
        self.isIndexedBySpotlight = isIndexedBySpotlight
        self.allowsExternalBinaryDataStorage = allowsExternalBinaryDataStorage
        self.preservesValueInHistoryOnDeletion = preservesValueInHistoryOnDeletion
        self.valueTransformerName = valueTransformerName
        self.customClassName = customClassName
        self.usesScalarValueType = usesScalarValueType
        self.derivationExpression = derivationExpression
        self.versionHashModifier = versionHashModifier
        self.renamingIdentifier = renamingIdentifier
        self.userInfo = userInfo
    }

    /// Whether this is a derived attribute (its value computed by the store from an expression).
    public var isDerived: Bool { derivationExpression != nil }
}

/// A relationship as declared in a model: a link from an entity to objects of another.
///
/// For example:
///
/// ```swift
/// let employees = Relationship(
///     name: "employees", destination: "Employee", inverse: "department",
///     isToMany: true, minCount: 3, maxCount: 40, deleteRule: .deny)
/// ```
public struct Relationship: Hashable, Sendable {
    public var name: String
    /// The declared destination entity; objects of its subentities may be related too.
    public var destination: String
    /// The inverse relationship's name, declared on the destination entity.
    public var inverse: String?
    public var isToMany: Bool
    /// A to-many relationship whose objects keep their order.
    public var isOrdered: Bool
    /// The fewest objects a to-many must hold (0: no minimum).
    public var minCount: Int
    /// The most objects a to-many may hold (0: unbounded). Always 1 for a to-one.
    public var maxCount: Int
    public var isOptional: Bool
    public var isTransient: Bool
    /// Set only by compiled models (flag 4).
    public var isReadOnly: Bool
    public var deleteRule: DeleteRule
    /// Core Spotlight indexes the relationship (`spotlightIndexingEnabled`, `NSIndexedBySpotlight`).
    public var isIndexedBySpotlight: Bool
    public var versionHashModifier: String?
    public var renamingIdentifier: String?
    public var userInfo: [String: String]
    /// What the model file declared that does not apply to this relationship and that Core Data
    /// ignores when it uses the model, yet keeps and hashes.
    public var inapplicable: Inapplicable

    /// Declarations that do not apply to a relationship: Core Data reads them without complaint, does
    /// not act on them, and keeps them in the version hash (`Formats/version-hashes.md`).
    public struct Inapplicable: Hashable, Sendable {
        /// An `ordered` flag on a to-one relationship (`DataUsage.sqlite`'s `Event.happenedOnNet`).
        public var isOrdered: Bool
        /// A maximum count below zero on a to-many relationship, which Core Data reads as unbounded
        /// (its count is unsigned); `nil` when the maximum is 0 or positive.
        public var maxCount: Int?

        public init(isOrdered: Bool = false, maxCount: Int? = nil) {
            self.isOrdered = isOrdered
            self.maxCount = maxCount
        }

        /// Nothing inapplicable.
        public static let none = Inapplicable()
    }

    public init(
        name: String, destination: String, inverse: String? = nil, isToMany: Bool = false,
        isOrdered: Bool = false, minCount: Int = 0, maxCount: Int? = nil, isOptional: Bool = true,
        isTransient: Bool = false, isReadOnly: Bool = false, deleteRule: DeleteRule = .nullify,
        isIndexedBySpotlight: Bool = false, versionHashModifier: String? = nil, renamingIdentifier: String? = nil,
        userInfo: [String: String] = [:], inapplicable: Inapplicable = .none
    ) {
        self.name = name
        self.destination = destination
        self.inverse = inverse
        self.isToMany = isToMany
        self.isOrdered = isOrdered
        self.minCount = minCount
        self.maxCount = maxCount ?? (isToMany ? 0 : 1)
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.isReadOnly = isReadOnly
        self.deleteRule = deleteRule
        self.isIndexedBySpotlight = isIndexedBySpotlight
        self.versionHashModifier = versionHashModifier
        self.renamingIdentifier = renamingIdentifier
        self.userInfo = userInfo
        self.inapplicable = inapplicable
    }
}

/// A fetched property: a weak, one-way relationship computed by a fetch.
///
/// The predicate may use `$FETCH_SOURCE` (the object the property belongs to) and
/// `$FETCHED_PROPERTY` (this description).
public struct FetchedProperty: Hashable, Sendable {
    public var name: String
    /// The entity the fetch returns.
    public var entity: String
    /// The fetch's predicate in Apple's predicate-format syntax; empty fetches everything.
    public var predicate: String
    public var isOptional: Bool
    public var userInfo: [String: String]

    public init(
        name: String, entity: String, predicate: String, isOptional: Bool = true, userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.entity = entity
        self.predicate = predicate
        self.isOptional = isOptional
        self.userInfo = userInfo
    }
}

/// An entity as declared in a model: its own properties only, with its parent named.
///
/// For example:
///
/// ```swift
/// var manager = Entity(name: "Manager", parent: "Employee")
/// manager.relationships.append(
///     Relationship(name: "reports", destination: "Employee", inverse: "manager", isToMany: true))
/// ```
public struct Entity: Hashable, Sendable {
    public var name: String
    /// The class Xcode would generate (`representedClassName`).
    public var className: String?
    /// The superentity's name.
    public var parent: String?
    public var isAbstract: Bool
    public var attributes: [Attribute]
    public var relationships: [Relationship]
    public var fetchedProperties: [FetchedProperty]
    /// Each constraint lists the names of properties whose values together are unique.
    public var uniquenessConstraints: [[String]]
    /// Indexes over several properties (Xcode's older "Compound Indexes").
    public var compoundIndexes: [[String]]
    /// Named fetch indexes (Xcode's newer "Indexes").
    public var fetchIndexes: [FetchIndex]
    public var versionHashModifier: String?
    public var renamingIdentifier: String?
    public var userInfo: [String: String]
    /// The expression Core Spotlight shows as an object's name (`coreSpotlightDisplayNameExpression`,
    /// `NSCoreSpotlightDisplayName`), in predicate format; `nil` when there is none.
    public var coreSpotlightDisplayName: String?

    public init(
        name: String, className: String? = nil, parent: String? = nil, isAbstract: Bool = false,
        attributes: [Attribute] = [], relationships: [Relationship] = [], fetchedProperties: [FetchedProperty] = [],
        uniquenessConstraints: [[String]] = [], compoundIndexes: [[String]] = [], fetchIndexes: [FetchIndex] = [],
        versionHashModifier: String? = nil, renamingIdentifier: String? = nil, userInfo: [String: String] = [:],
        coreSpotlightDisplayName: String? = nil
    ) {
        self.name = name
        self.className = className
        self.parent = parent
        self.isAbstract = isAbstract
        self.attributes = attributes
        self.relationships = relationships
        self.fetchedProperties = fetchedProperties
        self.uniquenessConstraints = uniquenessConstraints
        self.compoundIndexes = compoundIndexes
        self.fetchIndexes = fetchIndexes
        self.versionHashModifier = versionHashModifier
        self.renamingIdentifier = renamingIdentifier
        self.userInfo = userInfo
        self.coreSpotlightDisplayName = coreSpotlightDisplayName
    }
}

/// A named set of entities (Xcode's configurations).
public struct Configuration: Hashable, Sendable {
    public var name: String
    public var entities: [String]
    public init(name: String, entities: [String]) {
        self.name = name
        self.entities = entities
    }
}

/// A fetch request stored in the model under a name.
public struct FetchRequestTemplate: Hashable, Sendable {
    public var name: String
    public var entity: String
    public var predicate: String
    public init(name: String, entity: String, predicate: String) {
        self.name = name
        self.entity = entity
        self.predicate = predicate
    }
}

/// A named index over one or more properties of an entity.
public struct FetchIndex: Hashable, Sendable {
    public struct Element: Hashable, Sendable {
        /// The indexed property's name, or for an expression element the name Core Data gives its
        /// expression (`expression1`).
        public var property: String
        /// `"Binary"` (an ordinary B-tree index) or `"RTree"` (a spatial index).
        public var kind: String
        public var isAscending: Bool
        /// For an element that indexes an expression rather than a property, the expression in
        /// predicate format (`SELF`, `entity`), and the type of its values.
        public var expression: Expression?

        public struct Expression: Hashable, Sendable {
            public var text: String
            public var resultType: AttributeType
            public init(text: String, resultType: AttributeType) {
                self.text = text
                self.resultType = resultType
            }
        }

        public init(property: String, kind: String = "Binary", isAscending: Bool = true, expression: Expression? = nil)
        {
            self.property = property
            self.kind = kind
            self.isAscending = isAscending
            self.expression = expression
        }
    }
    public var name: String
    public var elements: [Element]
    /// A partial index's predicate, in predicate format: only objects it accepts are indexed.
    public var partialIndexPredicate: String?
    public init(name: String, elements: [Element], partialIndexPredicate: String? = nil) {
        self.name = name
        self.elements = elements
        self.partialIndexPredicate = partialIndexPredicate
    }
}
