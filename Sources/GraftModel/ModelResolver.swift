import Foundation
import GraftCore

/// Checks a list of declared entities and resolves it into `EntityDescription`s.
///
/// Every problem found is collected, so a model with several mistakes reports them all at once.
struct ModelResolver {
    let entities: [Entity]
    let fetchRequestTemplates: [FetchRequestTemplate]
    private var problems: [GraftError] = []

    init(entities: [Entity], fetchRequestTemplates: [FetchRequestTemplate]) {
        self.entities = entities
        self.fetchRequestTemplates = fetchRequestTemplates
    }

    private mutating func problem(_ message: String, entity: String, property: String? = nil) {
        var context: [GraftError.Location] = [.entity(entity)]
        if let property { context.append(.key(property)) }
        problems.append(GraftError(.invalidModel, message, context: context))
    }

    private func failure() -> GraftError {
        if problems.count == 1 { return problems[0] }
        return GraftError(
            .invalidModel, "the model contradicts itself in \(problems.count) places", underlying: problems)
    }

    mutating func resolve() throws -> [EntityDescription] {
        // 1. Names are unique; parents exist; inheritance has no cycle.
        var declared: [String: Entity] = [:]
        for entity in entities {
            if entity.name.isEmpty {
                problems.append(GraftError(.invalidModel, "an entity has an empty name"))
                continue
            }
            if declared[entity.name] != nil {
                problem("the entity name is used twice", entity: entity.name)
                continue
            }
            declared[entity.name] = entity
        }
        for entity in declared.values.sorted(by: { $0.name < $1.name }) {
            if let parent = entity.parent, declared[parent] == nil {
                problem("parent entity '\(parent)' does not exist", entity: entity.name)
            }
            var seen: Set<String> = [entity.name]
            var cursor = entity.parent
            while let name = cursor, let next = declared[name] {
                if seen.contains(name) {
                    problem("inheritance forms a cycle through '\(name)'", entity: entity.name)
                    break
                }
                seen.insert(name)
                cursor = next.parent
            }
        }
        guard problems.isEmpty else { throw failure() }

        // 2. Entity numbering: roots by name, each followed depth-first by its subentities by name.
        var children: [String: [String]] = [:]
        for entity in declared.values {
            if let parent = entity.parent { children[parent, default: []].append(entity.name) }
        }
        var order: [String] = []
        func visit(_ name: String) {
            order.append(name)
            for child in (children[name] ?? []).sorted() { visit(child) }
        }
        for root in declared.values.filter({ $0.parent == nil }).map(\.name).sorted() { visit(root) }
        var index: [String: Int] = [:]
        for (position, name) in order.enumerated() { index[name] = position }

        // 3. Inherited property lists, with duplicate-name checks.
        var attributesOf: [String: [Attribute]] = [:]
        var relationshipsOf: [String: [Relationship]] = [:]
        var fetchedOf: [String: [FetchedProperty]] = [:]
        var constraintsOf: [String: [[String]]] = [:]
        for name in order {
            let entity = declared[name]!
            var attributes = entity.parent.map { attributesOf[$0]! } ?? []
            var relationships = entity.parent.map { relationshipsOf[$0]! } ?? []
            var fetched = entity.parent.map { fetchedOf[$0]! } ?? []
            var names = Set(attributes.map(\.name) + relationships.map(\.name) + fetched.map(\.name))
            let inherited = names
            func claim(_ property: String, _ resolver: inout ModelResolver) -> Bool {
                if property.isEmpty {
                    resolver.problem("a property has an empty name", entity: name)
                    return false
                }
                if names.contains(property) {
                    let why = inherited.contains(property) ? "is already inherited from a superentity" : "is used twice"
                    resolver.problem("the property name \(why)", entity: name, property: property)
                    return false
                }
                names.insert(property)
                return true
            }
            for attribute in entity.attributes where claim(attribute.name, &self) {
                attributes.append(attribute)
                checkAttribute(attribute, entity: name)
            }
            for relationship in entity.relationships where claim(relationship.name, &self) {
                relationships.append(relationship)
            }
            for property in entity.fetchedProperties where claim(property.name, &self) {
                fetched.append(property)
                if declared[property.entity] == nil {
                    problem(
                        "fetched property's entity '\(property.entity)' does not exist", entity: name,
                        property: property.name)
                }
            }
            var constraints = entity.parent.map { constraintsOf[$0]! } ?? []
            for constraint in entity.uniquenessConstraints {
                if constraint.isEmpty { problem("a uniqueness constraint names no property", entity: name) }
                for property in constraint where !names.contains(property) {
                    problem(
                        "uniqueness constraint names unknown property '\(property)'", entity: name, property: property)
                }
                constraints.append(constraint)
            }
            attributesOf[name] = attributes
            relationshipsOf[name] = relationships
            fetchedOf[name] = fetched
            constraintsOf[name] = constraints
        }

        // 4. Relationships: destinations, counts, and inverses that point back.
        func isKind(_ entity: String, of ancestor: String) -> Bool {
            var cursor: String? = entity
            while let name = cursor {
                if name == ancestor { return true }
                cursor = declared[name]?.parent
            }
            return false
        }
        var links: [String: [(destination: Int, inverse: Int?)]] = [:]
        for name in order {
            var entityLinks: [(destination: Int, inverse: Int?)] = []
            let own = Set(declared[name]!.relationships.map(\.name))
            for relationship in relationshipsOf[name]! {
                let checkHere = own.contains(relationship.name)
                guard let destinationIndex = index[relationship.destination] else {
                    if checkHere {
                        problem(
                            "destination entity '\(relationship.destination)' does not exist", entity: name,
                            property: relationship.name)
                    }
                    entityLinks.append((-1, nil))
                    continue
                }
                if checkHere { checkCounts(relationship, entity: name) }
                var inverseIndex: Int?
                if let inverseName = relationship.inverse {
                    let candidates = relationshipsOf[relationship.destination]!
                    if let position = candidates.firstIndex(where: { $0.name == inverseName }) {
                        let inverse = candidates[position]
                        inverseIndex = position
                        if checkHere {
                            if !isKind(name, of: inverse.destination) && !isKind(inverse.destination, of: name) {
                                problem(
                                    "inverse '\(relationship.destination).\(inverseName)' leads to '\(inverse.destination)', not back to '\(name)'",
                                    entity: name, property: relationship.name)
                            } else if inverse.inverse != relationship.name {
                                let says = inverse.inverse.map { "names '\($0)' as its inverse" } ?? "has no inverse"
                                problem(
                                    "inverse '\(relationship.destination).\(inverseName)' does not point back: it \(says)",
                                    entity: name, property: relationship.name)
                            } else if inverse.isTransient != relationship.isTransient {
                                problem(
                                    "inverse '\(relationship.destination).\(inverseName)' must be transient exactly when this relationship is",
                                    entity: name, property: relationship.name)
                            }
                        }
                    } else if checkHere {
                        problem(
                            "inverse relationship '\(inverseName)' does not exist on '\(relationship.destination)'",
                            entity: name, property: relationship.name)
                    }
                }
                entityLinks.append((destinationIndex, inverseIndex))
            }
            links[name] = entityLinks
        }
        guard problems.isEmpty else { throw failure() }

        // 5. Version hashes, parents before children.
        var hashes: [String: Data] = [:]
        for name in order {
            let entity = declared[name]!
            var properties: [(name: String, hash: [UInt8])] = []
            // A derived attribute is never transient to Core Data (-[NSDerivedAttributeDescription isTransient]).
            for attribute in attributesOf[name]! where !attribute.isTransient || attribute.isDerived {
                properties.append((attribute.name, VersionHasher.hash(of: attribute)))
            }
            for relationship in relationshipsOf[name]! where !relationship.isTransient {
                let owner = owningEntity(of: relationship.name, in: name, declared: declared)
                properties.append((relationship.name, VersionHasher.hash(of: relationship, owner: owner)))
            }
            hashes[name] = VersionHasher.entityHash(
                name: name, isAbstract: entity.isAbstract, superentityHash: entity.parent.map { hashes[$0]! },
                properties: properties, modifier: entity.versionHashModifier,
                uniquenessConstraints: entity.uniquenessConstraints)
        }

        // 6. Descriptions.
        return order.enumerated().map { position, name in
            let entity = declared[name]!
            var ancestors: [Int] = []
            var cursor = entity.parent
            while let parent = cursor {
                ancestors.append(index[parent]!)
                cursor = declared[parent]!.parent
            }
            let subentities = (children[name] ?? []).sorted().map { index[$0]! }
            let descendants = order.filter { $0 != name && isKind($0, of: name) }.map { index[$0]! }
            let relationships = relationshipsOf[name]!.enumerated().map { offset, relationship in
                RelationshipDescription(
                    declaration: relationship, index: offset, destinationIndex: links[name]![offset].destination,
                    inverseIndex: links[name]![offset].inverse)
            }
            return EntityDescription(
                declaration: entity, index: position, superentityIndex: entity.parent.map { index[$0]! },
                ancestorIndices: ancestors, subentityIndices: subentities, descendantIndices: descendants,
                attributes: attributesOf[name]!, relationships: relationships, fetchedProperties: fetchedOf[name]!,
                uniquenessConstraints: constraintsOf[name]!, versionHash: hashes[name]!)
        }
    }

    /// The entity along `name`'s inheritance chain that declares the relationship `property`.
    private func owningEntity(of property: String, in name: String, declared: [String: Entity]) -> String {
        var cursor: String? = name
        while let current = cursor, let entity = declared[current] {
            if entity.relationships.contains(where: { $0.name == property }) { return current }
            cursor = entity.parent
        }
        return name
    }

    private mutating func checkCounts(_ relationship: Relationship, entity: String) {
        if relationship.minCount < 0 || relationship.maxCount < 0 {
            problem("relationship counts cannot be negative", entity: entity, property: relationship.name)
        }
        if relationship.isToMany {
            if relationship.maxCount > 0 && relationship.minCount > relationship.maxCount {
                problem(
                    "minimum count \(relationship.minCount) is above maximum count \(relationship.maxCount)",
                    entity: entity, property: relationship.name)
            }
        } else {
            if relationship.isOrdered {
                problem("a to-one relationship cannot be ordered", entity: entity, property: relationship.name)
            }
            if relationship.maxCount != 1 {
                problem(
                    "a to-one relationship has maximum count 1, not \(relationship.maxCount)", entity: entity,
                    property: relationship.name)
            }
            if relationship.minCount > 1 {
                problem(
                    "a to-one relationship cannot require \(relationship.minCount) objects", entity: entity,
                    property: relationship.name)
            }
        }
    }

    private mutating func checkAttribute(_ attribute: Attribute, entity: String) {
        // Model files are checked as they are read, with the text; this holds for every source (compiled
        // models, models built in code).
        if let range = attribute.type.integerRange {
            let values = [
                ("default value", attribute.defaultValue), ("minimum", attribute.minValue),
                ("maximum", attribute.maxValue),
            ]
            for (what, value) in values {
                guard case .integer(let number)? = value, !range.contains(number) else { continue }
                problem(
                    "its \(what) \(number) is out of range for \(ValueText.target(attribute.type)) "
                        + "(\(range.lowerBound) to \(range.upperBound))", entity: entity, property: attribute.name)
            }
        }
        if let minimum = attribute.minValue?.doubleValue, let maximum = attribute.maxValue?.doubleValue,
            minimum > maximum
        {
            problem(
                "minimum value \(attribute.minValue!) is above maximum value \(attribute.maxValue!)", entity: entity,
                property: attribute.name)
        }
        if let pattern = attribute.regularExpression, (try? NSRegularExpression(pattern: pattern)) == nil {
            problem("regular expression '\(pattern)' does not compile", entity: entity, property: attribute.name)
        }
    }
}
