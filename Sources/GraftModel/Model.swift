import Foundation
import GraftCore

/// A validated object model: entities with their inheritance resolved, relationships linked to their
/// inverses, and version hashes computed as Apple computes them.
///
/// A `Model` is immutable and shared freely. Building one checks that it does not contradict itself;
/// a model that does is rejected with an error naming the entity and property.
///
/// For example:
///
/// ```swift
/// let model = try Model(entities: [department, employee])
/// let employee = model.entity(named: "Employee")!
/// print(employee.versionHash.base64EncodedString())
/// ```
public final class Model: Sendable, Equatable, CustomStringConvertible {
    /// The entities as declared, in the order they were given.
    public let entities: [Entity]
    public let configurations: [Configuration]
    public let fetchRequestTemplates: [FetchRequestTemplate]
    /// The model's version identifiers (Xcode's "Model Version Identifier"), usually zero or one.
    public let versionIdentifiers: [String]

    /// Every entity, resolved, in Core Data's entity-number order: root entities sorted by name, each
    /// followed depth-first by its subentities sorted by name. `descriptions[i].index == i`.
    public let descriptions: [EntityDescription]
    private let indexByName: [String: Int]

    /// Builds and checks a model.
    ///
    /// - Throws: `GraftError.invalidModel` listing every contradiction found: duplicate entity or property
    ///   names, unknown parents or destinations, cycles in inheritance, inverses that do not point back or
    ///   whose destination does not match, impossible counts, constraints on unknown properties.
    public init(
        entities: [Entity], configurations: [Configuration] = [], fetchRequestTemplates: [FetchRequestTemplate] = [],
        versionIdentifiers: [String] = []
    ) throws {
        self.entities = entities
        self.configurations = configurations
        self.fetchRequestTemplates = fetchRequestTemplates
        self.versionIdentifiers = versionIdentifiers
        var resolver = ModelResolver(entities: entities, fetchRequestTemplates: fetchRequestTemplates)
        let resolved = try resolver.resolve()
        self.descriptions = resolved
        var indexByName: [String: Int] = [:]
        for description in resolved { indexByName[description.name] = description.index }
        self.indexByName = indexByName
    }

    /// The entity with this name, or `nil`.
    public func entity(named name: String) -> EntityDescription? {
        indexByName[name].map { descriptions[$0] }
    }

    /// The entity with this name, or an error that says which entity is missing.
    public func requireEntity(_ name: String) throws -> EntityDescription {
        guard let entity = entity(named: name) else {
            throw GraftError(.notFound, "the model has no entity '\(name)'", context: [.entity(name)])
        }
        return entity
    }

    /// The entity a relationship leads to.
    public func destination(of relationship: RelationshipDescription) -> EntityDescription {
        descriptions[relationship.destinationIndex]
    }

    /// The inverse of a relationship, if it has one.
    public func inverse(of relationship: RelationshipDescription) -> RelationshipDescription? {
        relationship.inverseIndex.map { descriptions[relationship.destinationIndex].relationships[$0] }
    }

    /// Whether `entity` is `ancestor` or one of its subentities.
    public func isKind(_ entity: EntityDescription, of ancestor: EntityDescription) -> Bool {
        entity.index == ancestor.index || entity.ancestorIndices.contains(ancestor.index)
    }

    /// Each entity's version hash by entity name.
    public var versionHashes: [String: Data] {
        Dictionary(uniqueKeysWithValues: descriptions.map { ($0.name, $0.versionHash) })
    }

    /// Base64 of SHA-512 over every entity's name and hash in name order; Core Data stores it in a store's
    /// metadata as `NSStoreModelVersionHashesDigest`.
    public var versionHashesDigest: String {
        VersionHasher.digest(of: versionHashes)
    }

    /// Base64 of SHA-256 over the entity hashes in name order: the model's version checksum
    /// (`NSStoreModelVersionChecksumKey`, and the checksums in a `.momd`'s `VersionInfo.plist`).
    public var versionChecksum: String {
        VersionHasher.checksum(of: versionHashes)
    }

    public static func == (lhs: Model, rhs: Model) -> Bool {
        lhs === rhs
            || (lhs.entities == rhs.entities && lhs.configurations == rhs.configurations
                && lhs.fetchRequestTemplates == rhs.fetchRequestTemplates
                && lhs.versionIdentifiers == rhs.versionIdentifiers)
    }

    /// The same model with its entities in a canonical order (by name), for comparing models that list
    /// the same entities differently.
    public var canonicalEntities: [Entity] { entities.sorted { $0.name < $1.name } }

    public var description: String {
        "Model(\(descriptions.map(\.name).joined(separator: ", ")))"
    }
}

/// An entity with its inheritance resolved: every property it has, its own and inherited, indexed for
/// fast access, and its version hash.
public final class EntityDescription: Sendable, CustomStringConvertible {
    /// The entity as declared (own properties only).
    public let declaration: Entity
    /// Position in `Model.descriptions` (Core Data's entity number minus one).
    public let index: Int
    public var name: String { declaration.name }
    public var isAbstract: Bool { declaration.isAbstract }
    /// The superentity's index, if any.
    public let superentityIndex: Int?
    /// Ancestors from the parent up to the root.
    public let ancestorIndices: [Int]
    /// Direct subentities, in name order.
    public let subentityIndices: [Int]
    /// Every subentity at any depth, in entity-number order.
    public let descendantIndices: [Int]
    /// The root of this entity's inheritance tree (itself for a root).
    public var rootIndex: Int { ancestorIndices.last ?? index }
    /// Every attribute, inherited ones first (root's first), then the entity's own, in declared order.
    public let attributes: [Attribute]
    /// Every relationship, inherited first, linked to its destination and inverse.
    public let relationships: [RelationshipDescription]
    /// Every fetched property, inherited first.
    public let fetchedProperties: [FetchedProperty]
    /// Uniqueness constraints, inherited ones included.
    public let uniquenessConstraints: [[String]]
    public let attributeIndexByName: [String: Int]
    public let relationshipIndexByName: [String: Int]
    /// SHA-256 version hash, as Core Data computes it.
    public let versionHash: Data

    init(
        declaration: Entity, index: Int, superentityIndex: Int?, ancestorIndices: [Int], subentityIndices: [Int],
        descendantIndices: [Int], attributes: [Attribute], relationships: [RelationshipDescription],
        fetchedProperties: [FetchedProperty], uniquenessConstraints: [[String]], versionHash: Data
    ) {
        self.declaration = declaration
        self.index = index
        self.superentityIndex = superentityIndex
        self.ancestorIndices = ancestorIndices
        self.subentityIndices = subentityIndices
        self.descendantIndices = descendantIndices
        self.attributes = attributes
        self.relationships = relationships
        self.fetchedProperties = fetchedProperties
        self.uniquenessConstraints = uniquenessConstraints
        self.versionHash = versionHash
        var attributeIndex: [String: Int] = [:]
        for (position, attribute) in attributes.enumerated() { attributeIndex[attribute.name] = position }
        self.attributeIndexByName = attributeIndex
        var relationshipIndex: [String: Int] = [:]
        for (position, relationship) in relationships.enumerated() { relationshipIndex[relationship.name] = position }
        self.relationshipIndexByName = relationshipIndex
    }

    /// The attribute with this name (own or inherited).
    public func attribute(named name: String) -> Attribute? {
        attributeIndexByName[name].map { attributes[$0] }
    }

    /// The relationship with this name (own or inherited).
    public func relationship(named name: String) -> RelationshipDescription? {
        relationshipIndexByName[name].map { relationships[$0] }
    }

    /// The fetched property with this name (own or inherited).
    public func fetchedProperty(named name: String) -> FetchedProperty? {
        fetchedProperties.first { $0.name == name }
    }

    /// Whether the entity has a property (attribute, relationship or fetched property) with this name.
    public func hasProperty(named name: String) -> Bool {
        attributeIndexByName[name] != nil || relationshipIndexByName[name] != nil
            || fetchedProperties.contains { $0.name == name }
    }

    /// Attributes that are stored (not transient).
    public var persistentAttributes: [Attribute] { attributes.filter { !$0.isTransient } }

    public var description: String { "Entity(\(name))" }
}

/// A relationship linked to its destination entity and inverse.
///
/// It reads like the declared `Relationship` (`description.name`, `description.isToMany`, …) and adds the
/// resolved links.
@dynamicMemberLookup
public struct RelationshipDescription: Hashable, Sendable {
    public let declaration: Relationship
    /// Position in the owning entity's `relationships`.
    public let index: Int
    /// The destination entity's index in `Model.descriptions`.
    public let destinationIndex: Int
    /// The inverse's index in the destination's `relationships`.
    public let inverseIndex: Int?

    public subscript<T>(dynamicMember keyPath: KeyPath<Relationship, T>) -> T {
        declaration[keyPath: keyPath]
    }
}
