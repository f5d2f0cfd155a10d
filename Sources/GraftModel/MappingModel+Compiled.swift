import Foundation
import GraftCore

/// Reads compiled mapping models (`.cdm`): `NSKeyedArchiver` archives whose root is an `NSMappingModel`.
///
/// The keys are those `-[NSMappingModel initWithCoder:]`, `-[NSEntityMapping initWithCoder:]` and
/// `-[NSPropertyMapping initWithCoder:]` decode; `Formats/migration.md` lists them with the corpus file
/// that shows each.
extension MappingModel {
    /// Reads a compiled mapping model from the bytes of a `.cdm` file.
    ///
    /// For example:
    ///
    /// ```swift
    /// let mapping = try MappingModel.read(compiled: FileAccess.read(cdmURL), path: cdmURL.path)
    /// print(mapping.entityMappings.map(\.name))   // ["CarToCar", "LuxuryCarToLuxuryCar", …]
    /// ```
    ///
    /// - Parameters:
    ///   - data: the archive (a binary or XML property list).
    ///   - path: named in error messages.
    /// - Throws: `GraftError.malformedInput` for bytes that are not a keyed archive, and for an archive
    ///   whose entity or property mappings cannot be read (naming the mapping and the key);
    ///   `GraftError.unsupportedFormat` for a keyed archive of something other than a mapping model.
    public static func read(compiled data: Data, path: String? = nil) throws -> MappingModel {
        do {
            let archive = try KeyedArchive(data: data)
            guard let root = try archive.topObject(forKey: "root") else {
                throw GraftError(.malformedInput, "the archive has no root object")
            }
            guard root.isKind(of: "NSMappingModel") else {
                throw GraftError(
                    .unsupportedFormat,
                    "the archive holds \(root.className ?? "a plain value"), not a mapping model (NSMappingModel)")
            }
            var mappings: [EntityMapping] = []
            for (position, object) in (try root["NSEntityMappings"]?.decodeArray() ?? []).enumerated() {
                do {
                    mappings.append(try CompiledMapping.entityMapping(from: object))
                } catch let error as GraftError {
                    throw error.at(.key("NSEntityMappings[\(position)]"))
                }
            }
            return MappingModel(entityMappings: mappings)
        } catch let error as GraftError {
            throw path.map { error.inFile($0) } ?? error
        }
    }
}

/// The reading of one compiled mapping model's objects.
private enum CompiledMapping {
    static func entityMapping(from object: ArchivedObject) throws -> EntityMapping {
        guard object.isKind(of: "NSEntityMapping") else {
            throw GraftError(.malformedInput, "the entity mapping is \(object.kindDescription), not an NSEntityMapping")
        }
        guard let name = try object.string(forKey: "NSMappingName") else {
            throw GraftError(.malformedInput, "an entity mapping has no NSMappingName")
        }
        do {
            // -[NSEntityMapping initWithCoder:] reads the type with decodeIntForKey: (0 when missing).
            let code = try object.integer(forKey: "NSMappingType") ?? 0
            guard let kind = EntityMapping.Kind(rawValue: Int(truncatingIfNeeded: code)), Int64(kind.rawValue) == code
            else {
                throw GraftError(
                    .malformedInput, "unknown mapping type code \(code) (Core Data's are 0 to 5)",
                    context: [.key("NSMappingType")])
            }
            var mapping = EntityMapping(
                name: name, kind: kind, sourceEntity: try object.string(forKey: "NSSourceEntityName"),
                sourceEntityVersionHash: try object.data(forKey: "NSSourceEntityVersionHash"),
                destinationEntity: try object.string(forKey: "NSDestinationEntityName"),
                destinationEntityVersionHash: try object.data(forKey: "NSDestinationEntityVersionHash"),
                migrationPolicyClassName: try object.string(forKey: "NSEntityMigrationPolicyClassName"),
                userInfo: object.userInfoStrings())
            if let source = try object["NSSourceExpression"] {
                let expression = try MappingExpressions.read(source, key: "NSSourceExpression")
                mapping.sourceExpression = expression.format
                mapping.filterPredicate = MappingExpressions.filterPredicate(of: expression)
            }
            mapping.attributeMappings = try propertyMappings(object, key: "NSAttributeMappings")
            mapping.relationshipMappings = try propertyMappings(object, key: "NSRelationshipMappings")
            return mapping
        } catch let error as GraftError {
            throw error.at(.entity(name))
        }
    }

    static func propertyMappings(_ owner: ArchivedObject, key: String) throws -> [PropertyMapping] {
        var mappings: [PropertyMapping] = []
        for (position, object) in (try owner[key]?.decodeArray() ?? []).enumerated() {
            guard object.isKind(of: "NSPropertyMapping") else {
                throw GraftError(
                    .malformedInput, "the property mapping is \(object.kindDescription), not an NSPropertyMapping",
                    context: [.key("\(key)[\(position)]")])
            }
            guard let name = try object.string(forKey: "NSDestinationPropertyName") else {
                throw GraftError(
                    .malformedInput, "a property mapping has no NSDestinationPropertyName",
                    context: [.key("\(key)[\(position)]")])
            }
            var mapping = PropertyMapping(name: name, userInfo: object.userInfoStrings())
            do {
                if let value = try object["NSValueExpression"] {
                    mapping.valueExpression = try MappingExpressions.read(value, key: "NSValueExpression").format
                }
            } catch let error as GraftError {
                throw error.at(.key(name))
            }
            mappings.append(mapping)
        }
        return mappings
    }
}

/// The expressions of mapping models, in both forms: archived objects read, and the ones Xcode's
/// compiler writes where a mapping model stores none.
enum MappingExpressions {
    /// The selector of the migration manager a source expression calls for its fetch request.
    static let fetchRequestSelector = "fetchRequestForSourceEntityNamed:predicateString:"
    /// The selector of a relationship mapping that names the entity mapping of its destination objects.
    static let byEntityMappingSelector = "destinationInstancesForEntityMappingNamed:sourceInstances:"
    /// The selector of a relationship mapping that leaves the manager to find the entity mappings.
    static let bySourceRelationshipSelector = "destinationInstancesForSourceRelationshipNamed:sourceInstances:"

    /// An archived `NSExpression` of a mapping model.
    ///
    /// - Throws: `GraftError.malformedInput` naming the key when Graft cannot read it.
    static func read(_ object: ArchivedObject, key: String) throws -> ModelExpression {
        do {
            return try ModelExpression(archived: object)
        } catch let error as GraftError {
            throw error.at(.key(key))
        }
    }

    /// `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Car", "TRUEPREDICATE"),
    /// $manager.sourceContext, NO)`: the source expression Xcode's compiler writes for every mapping with a
    /// source entity (V2toV3.cdm).
    static func sourceExpression(entity: String, predicate: String = "TRUEPREDICATE") -> ModelExpression {
        .fetch(
            request: .method(
                .variable("manager"), fetchRequestSelector,
                [.constant(.string(entity)), .constant(.string(predicate))]),
            context: .keyPath("$manager.sourceContext"), countOnly: false)
    }

    /// The predicate string of a source expression of the form Xcode writes, or `nil` for any other.
    static func filterPredicate(of expression: ModelExpression) -> String? {
        guard case .fetch(let request, _, _) = expression,
            case .method(_, fetchRequestSelector, let arguments) = request, arguments.count == 2,
            case .constant(.string(let predicate)) = arguments[1]
        else { return nil }
        return predicate
    }

    /// `$source.name`: an attribute's value carried from the source object.
    static func sourceValue(_ name: String) -> ModelExpression { .keyPath("$source." + name) }

    /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson",
    /// $source.owner)`.
    static func destinations(of relationship: String, throughMapping mapping: String) -> ModelExpression {
        .method(
            .variable("manager"), byEntityMappingSelector, [.constant(.string(mapping)), sourceValue(relationship)])
    }

    /// `FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "cars", $source.cars)`.
    static func destinations(ofSourceRelationship relationship: String) -> ModelExpression {
        .method(
            .variable("manager"), bySourceRelationshipSelector,
            [.constant(.string(relationship)), sourceValue(relationship)])
    }
}
