import GraftCore
import GraftGraph
import GraftModel

/// Infers the mapping between two model versions as Core Data's lightweight migration does, from their
/// differences alone (`Formats/migration.md` lists the rules and their evidence):
///
/// - entities and properties correspond by *canonical name*: the renaming identifier where there is one,
///   else the name, so that a rename in one version and another rename in the next both carry;
/// - properties are matched over each entity's whole list, inherited ones included, so a property that
///   moves up or down the hierarchy keeps its values;
/// - an added attribute takes its default; one become required takes its default where it had none;
/// - an attribute's type may change where its values convert without loss (between numbers, and text
///   to UUID or URI that parse); any other change blocks the inference, naming the property;
/// - relationships may turn to-one ↔ to-many and unordered ↔ ordered; their destination must stay the
///   entity the source destination became (or one of its ancestors).
///
/// For example:
///
/// ```swift
/// let step = try MappingInference.infer(from: version1, to: version2)
/// for change in step.changes { print(change) }
/// ```
public enum MappingInference {
    /// An inferred mapping with the changes it carries, for the plan.
    public struct Inferred: Sendable {
        public let mapping: ModelMapping
        public let changes: [MigrationChange]
    }

    /// The mapping from `source` to `destination`.
    ///
    /// - Throws: `GraftError.migrationBlocked` naming every entity and property whose change cannot be
    ///   inferred, and what a mapping model would have to say for it.
    public static func infer(from source: Model, to destination: Model) throws -> Inferred {
        var inference = Inference(source: source, destination: destination)
        return try inference.run()
    }
}

/// The canonical name of an entity or property: the name it had before renames, when a renaming
/// identifier records it.
func canonicalName(_ name: String, renamingIdentifier: String?) -> String {
    guard let renamingIdentifier, !renamingIdentifier.isEmpty else { return name }
    return renamingIdentifier
}

/// The properties of a source entity by canonical name and by name, for finding the one a destination
/// property corresponds to (``Inference/correspondent(of:renamingIdentifier:among:name:renamingIdentifier:)``'s
/// rule, in constant time).
struct Lookup {
    private var byCanonical: [String: Int] = [:]
    private var byName: [String: Int] = [:]

    /// `properties` by index: name and renaming identifier, `nil` for those that carry nothing (transient).
    init(_ properties: [(String, String?)?]) {
        for (index, property) in properties.enumerated() {
            guard let (name, renaming) = property else { continue }
            if byCanonical[canonicalName(name, renamingIdentifier: renaming)] == nil {
                byCanonical[canonicalName(name, renamingIdentifier: renaming)] = index
            }
            if byName[name] == nil { byName[name] = index }
        }
    }

    func index(of name: String, renamingIdentifier: String?) -> Int? {
        let canonical = canonicalName(name, renamingIdentifier: renamingIdentifier)
        return byCanonical[canonical] ?? byName[canonical] ?? byName[name]
    }
}

private struct Inference {
    let source: Model
    let destination: Model
    var changes: [MigrationChange] = []
    var blocked: [GraftError] = []

    init(source: Model, destination: Model) {
        self.source = source
        self.destination = destination
    }

    mutating func run() throws -> MappingInference.Inferred {
        // The source entity of each destination entity, and the destination entity of each source entity.
        var targets = [Int?](repeating: nil, count: source.descriptions.count)
        var origins = [Int?](repeating: nil, count: destination.descriptions.count)
        for entity in destination.descriptions {
            let match = Self.correspondent(
                of: entity.name, renamingIdentifier: entity.declaration.renamingIdentifier,
                among: source.descriptions.filter { targets[$0.index] == nil },
                name: \.name, renamingIdentifier: \.declaration.renamingIdentifier)
            guard let match else { continue }
            targets[match.index] = entity.index
            origins[entity.index] = match.index
        }
        for entity in destination.descriptions {
            guard let origin = origins[entity.index].map({ source.descriptions[$0] }) else {
                changes.append(.init(entity: entity.name, kind: .entityAdded, detail: "added"))
                continue
            }
            if origin.name != entity.name {
                changes.append(
                    .init(
                        entity: entity.name, kind: .entityRenamed, detail: "renamed from \(origin.name)",
                        from: origin.name))
            }
            let oldParent = origin.superentityIndex.map {
                targets[$0].map { destination.descriptions[$0].name } ?? source.descriptions[$0].name
            }
            let newParent = entity.superentityIndex.map { destination.descriptions[$0].name }
            if newParent != oldParent {
                changes.append(
                    .init(
                        entity: entity.name, kind: .parentChanged,
                        detail: "parent \(oldParent ?? "none") → \(newParent ?? "none")"))
            }
        }
        for entity in source.descriptions where targets[entity.index] == nil {
            changes.append(
                .init(entity: entity.name, kind: .entityRemoved, detail: "removed: its objects are not carried"))
        }
        var objects = [ObjectMapping?](repeating: nil, count: source.descriptions.count)
        for sourceEntity in source.descriptions {
            guard let target = targets[sourceEntity.index] else { continue }
            let entity = destination.descriptions[target]
            let attributes = Lookup(
                sourceEntity.attributes.map { $0.isTransient ? nil : ($0.name, $0.renamingIdentifier) })
            let relationships = Lookup(
                sourceEntity.relationships.map {
                    $0.declaration.isTransient ? nil : ($0.declaration.name, $0.declaration.renamingIdentifier)
                })
            let object = ObjectMapping(
                destinationEntity: target,
                attributes: entity.attributes.map {
                    attributeFill($0, of: entity, from: sourceEntity, lookup: attributes)
                },
                relationships: entity.relationships.map {
                    relationshipFill($0, of: entity, from: sourceEntity, lookup: relationships, targets: targets)
                })
            objects[sourceEntity.index] = object
            // Removals are told on the entity that declared the property, as the other changes are.
            var keptAttributes = Set<Int>()
            for case .source(let index, _, _) in object.attributes { keptAttributes.insert(index) }
            var keptRelationships = Set<Int>()
            for case .source(let index, _) in object.relationships { keptRelationships.insert(index) }
            let declaredAttributes = Set(sourceEntity.declaration.attributes.map(\.name))
            for (index, attribute) in sourceEntity.attributes.enumerated()
            where !attribute.isTransient && declaredAttributes.contains(attribute.name)
                && !keptAttributes.contains(index)
            {
                changes.append(
                    .init(entity: entity.name, property: attribute.name, kind: .propertyRemoved, detail: "removed"))
            }
            let declaredRelationships = Set(sourceEntity.declaration.relationships.map(\.name))
            for relationship in sourceEntity.relationships
            where !relationship.declaration.isTransient && declaredRelationships.contains(relationship.declaration.name)
                && !keptRelationships.contains(relationship.index)
            {
                changes.append(
                    .init(
                        entity: entity.name, property: relationship.declaration.name, kind: .propertyRemoved,
                        detail: "removed"))
            }
        }
        fillInversesOfCarriedRelationships(&objects)
        // A property change is told once, on the entity that declares the property, not on each subentity.
        changes = changes.filter { change in
            guard let property = change.property, change.kind != .propertyRemoved,
                let entity = destination.entity(named: change.entity)?.declaration
            else { return true }
            return entity.attributes.contains { $0.name == property }
                || entity.relationships.contains { $0.name == property }
        }
        if !blocked.isEmpty {
            throw GraftError(
                .migrationBlocked,
                "no mapping can be inferred from this version to the next: "
                    + "some changes need a mapping model",
                underlying: blocked.reduce(into: []) { unique, error in
                    if !unique.contains(error) { unique.append(error) }
                })
        }
        return .init(
            mapping: ModelMapping(source: source, destination: destination, objects: objects), changes: changes)
    }

    /// The element of `candidates` a destination entity or property corresponds to: the one with the same
    /// canonical name, else the one whose name is the destination's canonical name, else the one of the
    /// same name.
    static func correspondent<Element>(
        of name: String, renamingIdentifier: String?, among candidates: [Element],
        name candidateName: (Element) -> String,
        renamingIdentifier candidateRenaming: (Element) -> String?
    ) -> Element? {
        let canonical = canonicalName(name, renamingIdentifier: renamingIdentifier)
        return candidates.first {
            canonicalName(candidateName($0), renamingIdentifier: candidateRenaming($0)) == canonical
        }
            ?? candidates.first { candidateName($0) == canonical }
            ?? candidates.first { candidateName($0) == name }
    }

    /// Gives an empty destination relationship the objects its inverse's source names from the other
    /// side: when version 2 pairs `Conversation.messages` with a new `Message.visibleInConversation`
    /// where version 1 paired it with `Message.conversation`, `visibleInConversation` carries
    /// `conversation`. Core Data's migration gets there by setting the inverse of every relationship it
    /// sets; a streaming migration writes both sides, so it must fill both from the store.
    mutating func fillInversesOfCarriedRelationships(_ objects: inout [ObjectMapping?]) {
        for sourceEntity in source.descriptions {
            guard let object = objects[sourceEntity.index] else { continue }
            let entity = destination.descriptions[object.destinationEntity]
            for (index, fill) in object.relationships.enumerated() where fill == .empty {
                let relationship = entity.relationships[index]
                guard let inverseIndex = relationship.inverseIndex else { continue }
                let other = destination.descriptions[relationship.destinationIndex]
                let inverseName = other.relationships[inverseIndex].declaration.name
                search: for candidate in source.descriptions {
                    guard let carried = objects[candidate.index],
                        carried.destinationEntity == other.index
                            || destination.descriptions[carried.destinationEntity].ancestorIndices.contains(other.index),
                        let inverse = destination.descriptions[carried.destinationEntity].relationshipIndexByName[
                            inverseName],
                        case .source(let from, _) = carried.relationships[inverse],
                        let sourceInverse = candidate.relationships[from].inverseIndex
                    else { continue }
                    let sourceSide = source.descriptions[candidate.relationships[from].destinationIndex]
                    let name = sourceSide.relationships[sourceInverse].declaration.name
                    guard let own = sourceEntity.relationshipIndexByName[name] else { continue }
                    objects[sourceEntity.index]!.relationships[index] = .source(
                        own, toMany: relationship.declaration.isToMany)
                    let owner = declaringEntity(of: relationship.declaration.name, in: entity)
                    changes.removeAll {
                        $0.entity == owner && $0.property == relationship.declaration.name && $0.kind == .propertyAdded
                    }
                    changes.append(
                        .init(
                            entity: owner, property: relationship.declaration.name, kind: .propertyRenamed,
                            detail: "carries \(name), as the inverse of \(other.name).\(inverseName)", from: name))
                    break search
                }
            }
        }
    }

    /// The entity among `entity` and its ancestors that declares the property `name`.
    func declaringEntity(of name: String, in entity: EntityDescription) -> String {
        for index in [entity.index] + entity.ancestorIndices {
            let declaration = destination.descriptions[index].declaration
            if declaration.attributes.contains(where: { $0.name == name })
                || declaration.relationships.contains(where: { $0.name == name })
            {
                return declaration.name
            }
        }
        return entity.name
    }

    mutating func attributeFill(
        _ attribute: Attribute, of entity: EntityDescription, from sourceEntity: EntityDescription, lookup: Lookup
    ) -> AttributeFill {
        if attribute.isTransient { return .value(nil) }
        let requiredMessage =
            "\(entity.name).\(attribute.name) is required and has no default value, and the object has no value for it"
        guard let index = lookup.index(of: attribute.name, renamingIdentifier: attribute.renamingIdentifier) else {
            let detail =
                attribute.defaultValue.map { "added, default \(Self.display($0))" }
                ?? (attribute.isOptional ? "added, no value" : "added, required without a default")
            changes.append(.init(entity: entity.name, property: attribute.name, kind: .propertyAdded, detail: detail))
            if let value = attribute.defaultValue { return .value(value) }
            return attribute.isOptional ? .value(nil) : .fail(requiredMessage)
        }
        let old = sourceEntity.attributes[index]
        var conversions: [AttributeType] = []
        if old.name != attribute.name {
            changes.append(
                .init(
                    entity: entity.name, property: attribute.name, kind: .propertyRenamed,
                    detail: "renamed from \(old.name)", from: old.name))
        }
        if old.type != attribute.type {
            if Self.converts(old.type, to: attribute.type) {
                conversions = [attribute.type]
                changes.append(
                    .init(
                        entity: entity.name, property: attribute.name, kind: .typeChanged,
                        detail: "\(old.type.modelName) → \(attribute.type.modelName), each value converted"))
            } else {
                let owner = declaringEntity(of: attribute.name, in: entity)
                blocked.append(
                    GraftError(
                        .migrationBlocked,
                        "its type changes from \(old.type.modelName) to \(attribute.type.modelName), which no "
                            + "inferred mapping converts; a mapping model would give \(owner).\(attribute.name) "
                            + "a value expression (or a custom policy) that makes the new value",
                        context: [.entity(owner), .key(attribute.name)]))
                return .fail("blocked")
            }
        }
        var whenNil: AttributeFill.NilRule = .keep
        if !attribute.isOptional {
            if let value = attribute.defaultValue {
                whenNil = .value(value)
            } else {
                whenNil = .fail(requiredMessage)
            }
            if old.isOptional {
                let detail =
                    attribute.defaultValue.map {
                        "optional → required: objects without a value get \(Self.display($0))"
                    }
                    ?? "optional → required, without a default: an object without a value cannot be migrated"
                changes.append(
                    .init(entity: entity.name, property: attribute.name, kind: .optionalityChanged, detail: detail))
            }
        } else if !old.isOptional {
            changes.append(
                .init(
                    entity: entity.name, property: attribute.name, kind: .optionalityChanged,
                    detail: "required → optional"))
        }
        return .source(index, conversions: conversions, whenNil: whenNil)
    }

    mutating func relationshipFill(
        _ relationship: RelationshipDescription, of entity: EntityDescription, from sourceEntity: EntityDescription,
        lookup: Lookup, targets: [Int?]
    ) -> RelationshipFill {
        let declaration = relationship.declaration
        if declaration.isTransient { return .empty }
        guard let index = lookup.index(of: declaration.name, renamingIdentifier: declaration.renamingIdentifier) else {
            changes.append(
                .init(entity: entity.name, property: declaration.name, kind: .propertyAdded, detail: "added, empty"))
            return .empty
        }
        let old = sourceEntity.relationships[index]
        if old.declaration.name != declaration.name {
            changes.append(
                .init(
                    entity: entity.name, property: declaration.name, kind: .propertyRenamed,
                    detail: "renamed from \(old.declaration.name)", from: old.declaration.name))
        }
        // The source destination's objects must be of the new destination entity (or below it).
        let newDestination = destination.descriptions[relationship.destinationIndex]
        let oldDestination = source.descriptions[old.destinationIndex]
        let carried = ([old.destinationIndex] + oldDestination.descendantIndices).compactMap { targets[$0] }
        let fits = carried.allSatisfy {
            $0 == newDestination.index || destination.descriptions[$0].ancestorIndices.contains(newDestination.index)
        }
        if !fits || carried.isEmpty && targets[old.destinationIndex] == nil {
            if carried.isEmpty {
                changes.append(
                    .init(
                        entity: entity.name, property: declaration.name, kind: .propertyRemoved,
                        detail: "emptied: the objects it named (\(oldDestination.name)) are not carried"))
                return .empty
            }
            let owner = declaringEntity(of: declaration.name, in: entity)
            blocked.append(
                GraftError(
                    .migrationBlocked,
                    "its destination changes from \(oldDestination.name) to \(newDestination.name), which the "
                        + "objects it names do not become; a mapping model would give \(owner)."
                        + "\(declaration.name) a value expression that finds the new destinations",
                    context: [.entity(owner), .key(declaration.name)]))
            return .empty
        }
        if old.declaration.isToMany != declaration.isToMany {
            let detail =
                declaration.isToMany
                ? "to-one → to-many" : "to-many → to-one: an object naming more than one cannot be migrated"
            changes.append(
                .init(entity: entity.name, property: declaration.name, kind: .cardinalityChanged, detail: detail))
        } else if declaration.isToMany, old.declaration.isOrdered != declaration.isOrdered {
            let detail = declaration.isOrdered ? "unordered → ordered (in the order read)" : "ordered → unordered"
            changes.append(
                .init(entity: entity.name, property: declaration.name, kind: .cardinalityChanged, detail: detail))
        }
        return .source(index, toMany: declaration.isToMany)
    }

    /// Whether an inferred mapping converts values of type `old` into type `new`: numbers into numbers,
    /// and text into UUIDs and URIs (values that do not convert stop the migration, naming the object).
    static func converts(_ old: AttributeType, to new: AttributeType) -> Bool {
        if (old.isNumeric || old == .boolean) && (new.isNumeric || new == .boolean) { return true }
        if old == .string && (new == .uuid || new == .uri) { return true }
        if old == .binary && new == .transformable || old == .transformable && new == .binary { return true }
        return false
    }

    static func display(_ value: Value) -> String {
        if case .string(let text) = value { return "'\(text)'" }
        return value.description
    }
}

/// One change a migration step carries, for its plan.
public struct MigrationChange: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        case entityAdded, entityRemoved, entityRenamed, parentChanged
        case propertyAdded, propertyRemoved, propertyRenamed, typeChanged, optionalityChanged, cardinalityChanged
        /// A value computed by a mapping model's expression.
        case computed
        /// Objects made or linked by a custom policy.
        case customPolicy
    }

    /// The destination entity (the source one for removed entities).
    public var entity: String
    public var property: String?
    public var kind: Kind
    public var detail: String
    /// The former name, for renames.
    public var from: String?

    public init(entity: String, property: String? = nil, kind: Kind, detail: String, from: String? = nil) {
        self.entity = entity
        self.property = property
        self.kind = kind
        self.detail = detail
        self.from = from
    }

    public var description: String { "\(entity)\(property.map { ".\($0)" } ?? ""): \(detail)" }
}
