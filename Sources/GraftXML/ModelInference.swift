import GraftCore
import GraftModel

/// Builds a model from what a document says about itself, for documents read without one.
///
/// An XML store names each object's entity, each attribute's type, and each relationship's counts and
/// declared destination, so most of a model can be recovered. What cannot:
///
/// - the original case of names: Core Data writes entity names in capitals and property names in lower
///   case, and so does the inferred model (whatever case a hand-edited document uses), except that entity
///   names the metadata's version hashes list take their spelling from there;
/// - inheritance, except where objects of one entity are referenced through a relationship declared
///   with another destination: that entity is then made a subentity of the destination (when that
///   contradicts nothing), and properties both declare are left to the superentity. When an entity is
///   referenced through several such destinations, they must lie on one chain above it (inheritance is
///   single); where the document does not say in which order, the destination that holds objects of
///   more entities is taken to be the more general one;
/// - attributes that no object has a value for;
/// - optionality (everything is optional), delete rules (Nullify), whether to-many relationships are
///   ordered (they are unordered; their document order is kept in the snapshots), default values and
///   validation rules;
/// - inverse relationships, except where exactly one relationship leads each way between two
///   different entities.
enum ModelInference {
    struct Result {
        var model: Model
        /// The model's entity index for each entity number of the collector.
        var entityIndex: [Int32]
        var warnings: [String]
    }

    /// Infers the model.
    ///
    /// - Parameter knownEntityNames: entity names the metadata lists (its version hashes); an entity
    ///   whose capitalized name matches exactly one of them takes that spelling.
    static func infer(from schema: SchemaCollector, path: String, knownEntityNames: [String] = []) throws -> Result {
        let entities = schema.entities
        let count = entities.count
        var spelling: [String: String] = [:]
        var ambiguous = Set<String>()
        for name in knownEntityNames {
            let upper = name.uppercased()
            if spelling[upper] != nil && spelling[upper] != name { ambiguous.insert(upper) }
            spelling[upper] = name
        }
        var recovered = 0
        for info in entities where !ambiguous.contains(info.name) {
            if let name = spelling[info.name] {
                info.name = name
                recovered += 1
            }
        }
        let caseNote =
            recovered == count
            ? "entity names take their case from the metadata's version hashes; the original case of property "
                + "names is unknown (Core Data writes them in lower case, and so does the inferred model)"
            : recovered > 0
                ? "entity names take their case from the metadata's version hashes where it lists them (others "
                    + "are in capitals, as Core Data writes them); the original case of property names is unknown "
                    + "(Core Data writes them in lower case, and so does the inferred model)"
                : "the original case of names is unknown (Core Data writes entity names in capitals and property "
                    + "names in lower case, and so does the inferred model)"
        var warnings: [String] = [
            "the model was inferred from the document: \(caseNote); every property is optional, delete rules are "
                + "Nullify, to-many relationships are unordered (their document order is kept), and attributes no "
                + "object has a value for are missing"
        ]
        let empty = entities.enumerated().filter { $0.element.objectCount == 0 }.map(\.element.name)
        if !empty.isEmpty {
            warnings.append(
                "entities named only as destinations, with no objects, have no known properties: \(empty.joined(separator: ", "))"
            )
        }

        // Inheritance. An object of E referenced through a relationship whose destination is D ≠ E makes E
        // a subentity of D, at some depth. Inheritance is single, so all such destinations of E lie on one
        // chain above E; where the document does not say in which order, the destination holding objects
        // of more entities is taken to be the more general one (then the name decides).
        var above = [Set<Int32>](repeating: [], count: count)
        var kinds = [Int](repeating: 0, count: count)
        for pair in schema.references {
            above[Int(pair.entity)].insert(pair.destination)
            kinds[Int(pair.destination)] += 1
        }
        func closure(_ start: Int) -> Set<Int32> {
            var seen = Set<Int32>()
            var stack = Array(above[start])
            while let next = stack.popLast() {
                if seen.insert(next).inserted { stack.append(contentsOf: above[Int(next)]) }
            }
            return seen
        }
        func moreSpecific(_ a: Int32, _ b: Int32) -> Bool {
            kinds[Int(a)] != kinds[Int(b)]
                ? kinds[Int(a)] < kinds[Int(b)] : entities[Int(a)].name > entities[Int(b)].name
        }
        var parent = [Int32?](repeating: nil, count: count)
        var unknownParents: [String] = []
        var cyclic = Set<Int32>()
        var chains = [[Int32]](repeating: [], count: count)
        for _ in 0...count {
            var changed = false
            let closures = (0..<count).map(closure)
            for entity in 0..<count {
                var remaining = closures[entity]
                if remaining.contains(Int32(entity)) {
                    cyclic.insert(Int32(entity))
                }
                remaining.subtract(cyclic)
                // Most specific first: repeatedly the candidates no other remaining one lies below.
                var chain: [Int32] = []
                while !remaining.isEmpty {
                    // Those that are not above another remaining candidate.
                    let lowest = remaining.filter { candidate in
                        !remaining.contains { $0 != candidate && closures[Int($0)].contains(candidate) }
                    }
                    let next = (lowest.isEmpty ? remaining : lowest).min { moreSpecific($0, $1) }!
                    chain.append(next)
                    remaining.remove(next)
                }
                for (lower, upper) in zip(chain, chain.dropFirst()) where !closures[Int(lower)].contains(upper) {
                    above[Int(lower)].insert(upper)
                    changed = true
                }
                chains[entity] = chain
            }
            if !changed { break }
        }
        for entity in 0..<count {
            if cyclic.contains(Int32(entity)) {
                unknownParents.append("\(entities[entity].name) (its references form a cycle)")
            } else {
                parent[entity] = chains[entity].first
            }
        }
        // Break cycles.
        for entity in 0..<count {
            var seen: Set<Int32> = [Int32(entity)]
            var cursor = parent[entity]
            while let current = cursor {
                if !seen.insert(current).inserted {
                    unknownParents.append("\(entities[entity].name) (its references form a cycle)")
                    parent[entity] = nil
                    break
                }
                cursor = parent[Int(current)]
            }
        }

        // Own properties, with those a superentity declares left to it. Ancestors first.
        var order: [Int] = []
        var placed = [Bool](repeating: false, count: count)
        func place(_ entity: Int) {
            guard !placed[entity] else { return }
            placed[entity] = true
            if let up = parent[entity] { place(Int(up)) }
            order.append(entity)
        }
        for entity in 0..<count { place(entity) }

        var ownAttributes = [[SchemaCollector.AttributeInfo]](repeating: [], count: count)
        var ownRelationships = [[SchemaCollector.RelationshipInfo]](repeating: [], count: count)
        var allAttributes = [[String: SchemaCollector.AttributeInfo]](repeating: [:], count: count)
        var allRelationships = [[String: SchemaCollector.RelationshipInfo]](repeating: [:], count: count)
        var subentities: [String] = []
        for entity in order {
            let info = entities[entity]
            var inheritedAttributes: [String: SchemaCollector.AttributeInfo] = [:]
            var inheritedRelationships: [String: SchemaCollector.RelationshipInfo] = [:]
            if let up = parent[entity].map(Int.init) {
                inheritedAttributes = allAttributes[up]
                inheritedRelationships = allRelationships[up]
                var conflict: String?
                for (key, attribute) in info.attributes {
                    if let inherited = inheritedAttributes[key], inherited.kind != attribute.kind {
                        conflict =
                            "attribute \(attribute.name) is \(attribute.kind.spelling) here, \(inherited.kind.spelling) there"
                    } else if inheritedRelationships[key] != nil {
                        conflict = "\(attribute.name) is an attribute here, a relationship there"
                    }
                }
                for (key, relationship) in info.relationships {
                    if let inherited = inheritedRelationships[key],
                        inherited.destination != relationship.destination || inherited.minCount != relationship.minCount
                            || inherited.maxCount != relationship.maxCount
                    {
                        conflict = "relationship \(relationship.name) differs"
                    } else if inheritedAttributes[key] != nil {
                        conflict = "\(relationship.name) is a relationship here, an attribute there"
                    }
                }
                // Every relationship is written for every object: one the superentity has must be here too.
                if info.objectCount > 0,
                    let missing = inheritedRelationships.keys.sorted().first(where: { info.relationships[$0] == nil })
                {
                    conflict = "its objects do not have the relationship \(inheritedRelationships[missing]!.name)"
                }
                if let conflict {
                    unknownParents.append("\(info.name) (referenced as \(entities[up].name), but \(conflict))")
                    parent[entity] = nil
                    inheritedAttributes = [:]
                    inheritedRelationships = [:]
                } else {
                    subentities.append("\(info.name) → \(entities[up].name)")
                }
            }
            ownAttributes[entity] = info.attributeOrder.compactMap {
                inheritedAttributes[$0] == nil ? info.attributes[$0] : nil
            }
            ownRelationships[entity] = info.relationshipOrder.compactMap {
                inheritedRelationships[$0] == nil ? info.relationships[$0] : nil
            }
            allAttributes[entity] = inheritedAttributes
            allRelationships[entity] = inheritedRelationships
            for attribute in ownAttributes[entity] { allAttributes[entity][attribute.name.lowercased()] = attribute }
            for relationship in ownRelationships[entity] {
                allRelationships[entity][relationship.name.lowercased()] = relationship
            }
        }
        if !subentities.isEmpty {
            warnings.append(
                "inheritance was inferred from references only, and may be incomplete (abstract entities, and "
                    + "properties that subentities share, are unknown); subentity → superentity: "
                    + subentities.sorted().joined(separator: ", "))
        } else {
            warnings.append("inheritance is unknown: every entity is a root entity")
        }
        if !unknownParents.isEmpty {
            warnings.append(
                "superentities that could not be inferred: \(unknownParents.sorted().joined(separator: "; "))")
        }

        // Inverses: exactly one relationship each way between two different entities.
        var inverse = [[String: String]](repeating: [:], count: count)
        var pairs: [String] = []
        for a in 0..<count {
            for r in ownRelationships[a] where Int(r.destination) != a {
                let b = Int(r.destination)
                let forward = ownRelationships[a].filter { Int($0.destination) == b }
                let backward = ownRelationships[b].filter { Int($0.destination) == a }
                guard forward.count == 1, backward.count == 1 else { continue }
                inverse[a][r.name] = backward[0].name
                if a < b { pairs.append("\(entities[a].name).\(r.name) ↔ \(entities[b].name).\(backward[0].name)") }
            }
        }
        warnings.append(
            pairs.isEmpty
                ? "no inverse relationships could be inferred"
                : "inverse relationships were inferred where one relationship leads each way: \(pairs.joined(separator: ", "))"
        )

        var declared: [Entity] = []
        for entity in (0..<count).sorted(by: { entities[$0].name < entities[$1].name }) {
            let info = entities[entity]
            let attributes = ownAttributes[entity].map { Attribute(name: $0.name, type: $0.kind.attributeType) }
            let relationships = ownRelationships[entity].map { info -> Relationship in
                let toMany = info.maxCount != 1
                return Relationship(
                    name: info.name, destination: entities[Int(info.destination)].name,
                    inverse: inverse[entity][info.name], isToMany: toMany,
                    minCount: toMany ? info.minCount : min(info.minCount, 1), maxCount: toMany ? info.maxCount : 1)
            }
            declared.append(
                Entity(
                    name: info.name, parent: parent[entity].map { entities[Int($0)].name }, attributes: attributes,
                    relationships: relationships))
        }
        let model: Model
        do {
            model = try Model(entities: declared)
        } catch let error as GraftError {
            throw GraftError(
                .malformedInput, "a model cannot be inferred from the document: \(error.message)",
                context: [.file(path)],
                underlying: error.underlying)
        }
        let entityIndex = entities.map { Int32(model.entity(named: $0.name)!.index) }
        return Result(model: model, entityIndex: entityIndex, warnings: warnings)
    }
}
