import Foundation
import GraftCore
import GraftGraph
import GraftModel

/// A migration step run by a mapping model, as Core Data's `NSMigrationManager` runs one: each entity
/// mapping takes the objects of its source entity, and each property mapping's value expression gives a
/// destination property its value.
///
/// Graft evaluates the expressions Xcode writes and people mostly write: `$source.key` (and
/// `FUNCTION($source, "valueForKey:", "key")`), constants, and the objects a relationship names through
/// another mapping (`FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", …)`
/// and `…ForSourceRelationshipNamed…`). A mapping with another expression, a filter other than
/// `TRUEPREDICATE`, or a custom policy no Swift ``MigrationPolicy`` answers for is refused, naming it.
enum MappingModelStep {
    /// Whether `mappingModel` joins `source` to `destination`: every entity mapping's recorded version
    /// hashes are those of the entities it names.
    static func joins(_ mappingModel: MappingModel, _ source: Model, _ destination: Model) -> Bool {
        var any = false
        for entityMapping in mappingModel.entityMappings {
            if let name = entityMapping.sourceEntity {
                guard let hash = entityMapping.sourceEntityVersionHash, source.entity(named: name)?.versionHash == hash
                else { return false }
                any = true
            }
            if let name = entityMapping.destinationEntity {
                guard let hash = entityMapping.destinationEntityVersionHash,
                    destination.entity(named: name)?.versionHash == hash
                else { return false }
                any = true
            }
        }
        return any
    }

    /// The step's mapping, its changes, and the policies it runs, by source entity index.
    ///
    /// - Throws: `GraftError.migrationBlocked` naming every mapping Graft cannot run.
    static func mapping(
        _ mappingModel: MappingModel, named name: String, from source: Model, to destination: Model,
        policies: [MigrationPolicy]
    ) throws -> (mapping: ModelMapping, changes: [MigrationChange], policies: [Int: MigrationPolicy]) {
        var objects = [ObjectMapping?](repeating: nil, count: source.descriptions.count)
        var changes: [MigrationChange] = []
        var chosen: [Int: MigrationPolicy] = [:]
        var blocked: [GraftError] = []
        // The destination entity of each entity mapping, by name, for relationship expressions.
        var destinations: [String: Int] = [:]
        for entityMapping in mappingModel.entityMappings {
            if let name = entityMapping.destinationEntity, let entity = destination.entity(named: name) {
                destinations[entityMapping.name] = entity.index
            }
        }
        for entityMapping in mappingModel.entityMappings {
            func block(_ message: String, property: String? = nil) {
                blocked.append(
                    GraftError(
                        .migrationBlocked, "entity mapping \(entityMapping.name): \(message)",
                        context: [.entity(entityMapping.destinationEntity ?? entityMapping.sourceEntity ?? "-")]
                            + (property.map { [.key($0)] } ?? [])))
            }
            switch entityMapping.kind {
            case .add:
                changes.append(
                    .init(entity: entityMapping.destinationEntity ?? "-", kind: .entityAdded, detail: "added"))
                continue
            case .remove:
                changes.append(
                    .init(
                        entity: entityMapping.sourceEntity ?? "-", kind: .entityRemoved,
                        detail: "removed: its objects are not carried"))
                continue
            case .copy, .transform, .custom, .undefined:
                break
            }
            guard let sourceName = entityMapping.sourceEntity, let sourceEntity = source.entity(named: sourceName),
                let destinationName = entityMapping.destinationEntity,
                let entity = destination.entity(named: destinationName)
            else {
                block("names an entity the versions do not have")
                continue
            }
            var filter: GraftPredicate?
            if let text = entityMapping.filterPredicate, text != "TRUEPREDICATE" {
                do {
                    filter = try GraftPredicate.parse(text)
                    changes.append(
                        .init(
                            entity: entityMapping.destinationEntity ?? "-", kind: .computed,
                            detail: "only the \(sourceName) objects for which \(text)"))
                } catch {
                    block("its filter (\(text)) does not parse: \(error)")
                }
            }
            if objects[sourceEntity.index] != nil {
                block("a second mapping of \(sourceName): Graft runs one mapping per source entity")
                continue
            }
            if let className = entityMapping.migrationPolicyClassName {
                if let policy = policies.first(where: { $0.answers(to: className) }) {
                    chosen[sourceEntity.index] = policy
                    changes.append(
                        .init(
                            entity: destinationName, kind: .customPolicy,
                            detail: "run by the Swift policy for \(className)"))
                } else {
                    block(
                        "its custom policy \(className) is app code Graft cannot run; from Swift, register a "
                            + "MigrationPolicy(className: \"\(className.split(separator: ".").last ?? "")\") that does what it does"
                    )
                }
            }
            if sourceName != destinationName {
                changes.append(
                    .init(entity: destinationName, kind: .entityRenamed, detail: "from \(sourceName)", from: sourceName)
                )
            }
            var attributes: [AttributeFill] = entity.attributes.map { .value($0.isTransient ? nil : $0.defaultValue) }
            for property in entityMapping.attributeMappings {
                guard let index = entity.attributeIndexByName[property.name] else {
                    block("maps an attribute \(destinationName) does not have", property: property.name)
                    continue
                }
                let attribute = entity.attributes[index]
                guard let text = property.valueExpression else { continue }
                switch Self.reading(text) {
                case .source(let key):
                    guard let from = sourceEntity.attributeIndexByName[key] else {
                        block("reads $source.\(key), which \(sourceName) does not have", property: property.name)
                        continue
                    }
                    let old = sourceEntity.attributes[from]
                    let conversions = old.type == attribute.type ? [] : [attribute.type]
                    // No value stays no value, as when Core Data sets the expression's nil over the default
                    // (a required attribute then breaks its rule, which the checks report).
                    attributes[index] = .source(from, conversions: conversions, whenNil: .keep)
                    if key != property.name {
                        changes.append(
                            .init(
                                entity: destinationName, property: property.name, kind: .propertyRenamed,
                                detail: "from \(key)", from: key))
                    }
                case .constant(let value):
                    let fill = AttributeFill.apply([attribute.type], whenNil: .keep, to: value)
                    if case .fail(let message) = fill {
                        block("its constant \(text): \(message)", property: property.name)
                        continue
                    }
                    attributes[index] = fill
                    changes.append(
                        .init(
                            entity: destinationName, property: property.name, kind: .computed, detail: "set to \(text)")
                    )
                default:
                    // Any other expression of the source object's values, evaluated object by object.
                    let variables = Self.variables(in: text)
                    guard variables.isSubset(of: ["source"]),
                        let expression = try? GraftPredicate.Expression.parse(text)
                    else {
                        block(
                            "its value expression \(text) reads "
                                + (variables.subtracting(["source"]).sorted().map { "$\($0)" }.joined(separator: ", "))
                                + ", which Graft does not evaluate (only $source)",
                            property: property.name)
                        continue
                    }
                    attributes[index] = .expression(expression, text)
                    changes.append(
                        .init(
                            entity: destinationName, property: property.name, kind: .computed,
                            detail: "computed as \(text)"))
                }
            }
            for attribute in sourceEntity.attributes where !attribute.isTransient {
                let read = entityMapping.attributeMappings.contains { mapping in
                    if case .source(attribute.name) = mapping.valueExpression.map(Self.reading) { return true }
                    return false
                }
                if !read && sourceEntity.declaration.attributes.contains(where: { $0.name == attribute.name }) {
                    changes.append(
                        .init(
                            entity: destinationName, property: attribute.name, kind: .propertyRemoved,
                            detail: "not carried"))
                }
            }
            var relationships: [RelationshipFill] = entity.relationships.map { _ in .empty }
            for property in entityMapping.relationshipMappings {
                guard let index = entity.relationshipIndexByName[property.name] else {
                    block("maps a relationship \(destinationName) does not have", property: property.name)
                    continue
                }
                guard let text = property.valueExpression else { continue }
                let key: String
                switch Self.reading(text) {
                case .source(let name), .throughRelationship(_, let name):
                    key = name
                case .throughMapping(let mappingName, let name):
                    key = name
                    guard destinations[mappingName] != nil else {
                        block(
                            "names the entity mapping \(mappingName), which the mapping model does not have",
                            property: property.name)
                        continue
                    }
                default:
                    block("its value expression \(text) is not one Graft evaluates yet", property: property.name)
                    continue
                }
                guard let from = sourceEntity.relationshipIndexByName[key] else {
                    block("reads $source.\(key), which \(sourceName) does not have", property: property.name)
                    continue
                }
                relationships[index] = .source(from, toMany: entity.relationships[index].declaration.isToMany)
            }
            objects[sourceEntity.index] = ObjectMapping(
                destinationEntity: entity.index, filter: filter, attributes: attributes, relationships: relationships)
        }
        if !blocked.isEmpty {
            throw GraftError(
                .migrationBlocked, "the mapping model \(name) has mappings Graft cannot run", underlying: blocked)
        }
        return (ModelMapping(source: source, destination: destination, objects: objects), changes, chosen)
    }

    /// The variables an expression's text names (`$source`, `$manager`), outside its string constants.
    static func variables(in text: String) -> Set<String> {
        var names = Set<String>()
        var inString: Character?
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if let quote = inString {
                if character == "\\" {
                    index = text.index(after: index)
                } else if character == quote {
                    inString = nil
                }
            } else if character == "\"" || character == "'" {
                inString = character
            } else if character == "$" {
                let start = text.index(after: index)
                var end = start
                while end < text.endIndex, text[end].isLetter || text[end].isNumber || text[end] == "_" {
                    end = text.index(after: end)
                }
                names.insert(String(text[start..<end]))
                index = end
                continue
            }
            if index < text.endIndex { index = text.index(after: index) }
        }
        return names
    }

    /// What a value expression reads.
    enum Reading: Equatable {
        /// `$source.key`, `FUNCTION($source, "valueForKey:", "key")`.
        case source(String)
        /// A constant.
        case constant(Value?)
        /// The destination objects of the objects `$source.key` names, through the entity mapping named.
        case throughMapping(String, String)
        /// The destination objects of the objects the source relationship names.
        case throughRelationship(String, String)
        case other
    }

    static func reading(_ text: String) -> Reading {
        guard let expression = try? GraftPredicate.Expression.parse(text) else { return .other }
        return reading(expression)
    }

    static func reading(_ expression: GraftPredicate.Expression) -> Reading {
        func sourceKey(_ expression: GraftPredicate.Expression) -> String? {
            switch expression {
            case .member(.variable("source"), let path):
                guard path.components.count == 1, case .key(let key) = path.components[0] else { return nil }
                return key
            case .keyPath(let path):
                // `$source.key` may read as a key path whose first step is the variable.
                let parts = path.description.split(separator: ".")
                guard parts.count == 2, parts[0] == "$source" else { return nil }
                return String(parts[1])
            case .method(.variable("source"), "valueForKey:", let arguments):
                guard arguments.count == 1, case .constant(.string(let key)) = arguments[0] else { return nil }
                return key
            default:
                return nil
            }
        }
        if let key = sourceKey(expression) { return .source(key) }
        switch expression {
        case .constant(let value):
            return .constant(value)
        case .null:
            return .constant(nil)
        case .method(.variable("manager"), let selector, let arguments) where arguments.count == 2:
            guard case .constant(.string(let name)) = arguments[0], let key = sourceKey(arguments[1]) else {
                return .other
            }
            switch selector {
            case "destinationInstancesForEntityMappingNamed:sourceInstances:": return .throughMapping(name, key)
            case "destinationInstancesForSourceRelationshipNamed:sourceInstances:":
                return .throughRelationship(name, key)
            default: return .other
            }
        default:
            return .other
        }
    }
}
