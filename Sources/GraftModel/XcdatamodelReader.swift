import Foundation
@_spi(GraftInternal) import GraftCore

/// Reads the `contents` XML of an `.xcdatamodel` as Xcode writes it.
///
/// Unknown elements and attributes are ignored, so files from older and newer Xcode versions load.
/// Diagram layout (`<elements>`) is not part of the model and is skipped.
///
/// For example:
///
/// ```swift
/// let model = try XcdatamodelReader.read(contentsOf: url.appendingPathComponent("contents"))
/// ```
public enum XcdatamodelReader {
    /// Reads a model from the bytes of a `contents` file.
    ///
    /// - Parameter path: named in error messages.
    /// - Throws: `GraftError.malformedInput` for XML that is not a model, with the line, and for a default
    ///   or bound that is not a value of its attribute's type (`maxValueString="1e400"` on a String,
    ///   `defaultValueString="70000"` on an Integer 16), naming the entity, attribute, XML attribute and
    ///   text; `GraftError.invalidModel` for a model that contradicts itself.
    public static func read(_ data: Data, path: String? = nil) throws -> Model {
        var warnings: [String] = []
        return try read(data, path: path, warnings: &warnings)
    }

    /// Reads a model from the bytes of a `contents` file, appending to `warnings` what it read as
    /// Xcode's model compiler and Core Data do rather than as written: an `ordered` flag on a to-one
    /// relationship (ignored), a negative maximum count (unbounded), a Boolean's default `YES` or `NO`
    /// left on a number attribute (1 or 0), default or bound text the type has no use for (left out).
    ///
    /// - Throws: as ``read(_:path:)``.
    public static func read(_ data: Data, path: String? = nil, warnings: inout [String]) throws -> Model {
        let root = try XMLTree.parse(data, path: path)
        var found: [String] = []
        defer { warnings += found.map { (path.map { "\($0): " } ?? "") + $0 } }
        do {
            return try read(root, warnings: &found)
        } catch let error as GraftError {
            throw path.map { error.inFile($0) } ?? error
        }
    }

    /// Reads a model from a `contents` file.
    public static func read(contentsOf url: URL) throws -> Model {
        try read(FileAccess.read(url), path: url.relativePath)
    }

    /// Reads a model from a `contents` file, appending what it read leniently to `warnings`.
    public static func read(contentsOf url: URL, warnings: inout [String]) throws -> Model {
        try read(FileAccess.read(url), path: url.relativePath, warnings: &warnings)
    }

    static func read(_ root: XMLElement) throws -> Model {
        var warnings: [String] = []
        return try read(root, warnings: &warnings)
    }

    static func read(_ root: XMLElement, warnings: inout [String]) throws -> Model {
        guard root.name == "model" else {
            throw GraftError(
                .malformedInput, "expected a <model> element, found <\(root.name)>", context: [.line(root.line)])
        }
        var entities: [Entity] = []
        var configurations: [Configuration] = []
        var templates: [FetchRequestTemplate] = []
        for element in root.children {
            switch element.name {
            case "entity": entities.append(try entity(element, warnings: &warnings))
            case "configuration":
                configurations.append(
                    Configuration(
                        name: try required(element, "name"),
                        entities: element.children(named: "memberEntity").compactMap { $0["name"] }))
            case "fetchRequest":
                templates.append(
                    FetchRequestTemplate(
                        name: try required(element, "name"), entity: try required(element, "entity"),
                        predicate: element["predicateString"] ?? ""))
            default: continue
            }
        }
        let identifiers = root["userDefinedModelVersionIdentifier"].map { $0.isEmpty ? [] : [$0] } ?? []
        return try Model(
            entities: entities, configurations: configurations, fetchRequestTemplates: templates,
            versionIdentifiers: identifiers)
    }

    private static func entity(_ element: XMLElement, warnings: inout [String]) throws -> Entity {
        let name = try required(element, "name")
        var entity = Entity(
            name: name, className: element["representedClassName"], parent: element["parentEntity"],
            isAbstract: flag(element["isAbstract"]), versionHashModifier: element["versionHashModifier"],
            renamingIdentifier: element["elementID"], userInfo: userInfo(element),
            coreSpotlightDisplayName: element["coreSpotlightDisplayNameExpression"])
        do {
            for child in element.children {
                switch child.name {
                case "attribute": entity.attributes.append(try attribute(child, entity: name, warnings: &warnings))
                case "relationship":
                    entity.relationships.append(try relationship(child, entity: name, warnings: &warnings))
                case "fetchedProperty":
                    let request = child.child(named: "fetchRequest")
                    entity.fetchedProperties.append(
                        FetchedProperty(
                            name: try required(child, "name"), entity: request?["entity"] ?? name,
                            predicate: request?["predicateString"] ?? "", isOptional: flag(child["optional"]),
                            userInfo: userInfo(child)))
                case "uniquenessConstraints":
                    for constraint in child.children(named: "uniquenessConstraint") {
                        entity.uniquenessConstraints.append(
                            constraint.children(named: "constraint").compactMap { $0["value"] })
                    }
                case "compoundIndexes":
                    for index in child.children(named: "compoundIndex") {
                        entity.compoundIndexes.append(index.children(named: "index").compactMap { $0["value"] })
                    }
                case "fetchIndex":
                    entity.fetchIndexes.append(
                        FetchIndex(
                            name: child["name"] ?? "",
                            elements: child.children(named: "fetchIndexElement").map {
                                FetchIndex.Element(
                                    property: $0["property"] ?? "", kind: $0["type"] ?? "Binary",
                                    isAscending: $0["order"] != "descending")
                            }))
                default: continue
                }
            }
        } catch let error as GraftError {
            throw error.at(.entity(name))
        }
        return entity
    }

    private static func attribute(
        _ element: XMLElement, entity: String, warnings: inout [String]
    ) throws -> Attribute {
        let name = try required(element, "name")
        let typeName = element["attributeType"] ?? "Undefined"
        guard let type = AttributeType(modelName: typeName) else {
            throw GraftError(
                .malformedInput, "unknown attribute type '\(typeName)'", context: [.key(name), .line(element.line)])
        }
        var attribute = Attribute(
            name: name, type: type, isOptional: flag(element["optional"]), isTransient: flag(element["transient"]),
            regularExpression: element["regularExpressionString"], isIndexed: flag(element["indexed"]),
            isIndexedBySpotlight: flag(element["spotlightIndexingEnabled"]),
            allowsExternalBinaryDataStorage: flag(element["allowsExternalBinaryDataStorage"]),
            preservesValueInHistoryOnDeletion: flag(element["preserveAfterDeletion"]),
            valueTransformerName: element["valueTransformerName"], customClassName: element["customClassName"],
            usesScalarValueType: element["usesScalarValueType"].map(flag),
            derivationExpression: flag(element["derived"]) ? element["derivationExpression"] ?? "" : nil,
            versionHashModifier: element["versionHashModifier"], renamingIdentifier: element["elementID"],
            userInfo: userInfo(element))
        do {
            func read(_ field: String, _ reader: ValueText.ModelTextReader) throws -> Value? {
                guard let text = element[field] else { return nil }
                let read = try reader(text, type, field)
                if let warning = read.warning { warnings.append("\(entity).\(name): \(warning)") }
                return read.value
            }
            if type == .date {
                // The ...ValueString attributes beside these are display text (momcTests.xcdatamodel).
                attribute.defaultValue = try read("defaultDateTimeInterval", ValueText.modelBound)
                attribute.minValue = try read("minDateTimeInterval", ValueText.modelBound)
                attribute.maxValue = try read("maxDateTimeInterval", ValueText.modelBound)
            } else {
                attribute.defaultValue = try read("defaultValueString", ValueText.modelDefault)
                attribute.minValue = try read("minValueString", ValueText.modelBound)
                attribute.maxValue = try read("maxValueString", ValueText.modelBound)
            }
        } catch let error as GraftError {
            throw error.at(.key(name)).at(.line(element.line))
        }
        return attribute
    }

    private static func relationship(
        _ element: XMLElement, entity: String, warnings: inout [String]
    ) throws
        -> Relationship
    {
        let name = try required(element, "name")
        let isToMany = flag(element["toMany"])
        func count(_ key: String) throws -> Int? {
            guard let text = element[key] else { return nil }
            // Core Data keeps counts as 32-bit integers (-[NSRelationshipDescription initWithCoder:] decodes
            // them with decodeIntForKey:), and the version hash takes 32 bits.
            guard let value = Int32(text) else {
                let isDigits = NumberText.wholeNumber(text)?.endIndex == text.endIndex
                let problem = isDigits ? "is out of range for" : "is not"
                throw GraftError(
                    .malformedInput, "\(key) '\(Wording.excerpt(text))' \(problem) a 32-bit whole number",
                    context: [.key(name), .line(element.line)])
            }
            return Int(value)
        }
        let ruleName = element["deletionRule"] ?? "Nullify"
        guard let rule = DeleteRule(modelName: ruleName) else {
            throw GraftError(
                .malformedInput, "unknown deletion rule '\(ruleName)'", context: [.key(name), .line(element.line)])
        }
        guard let destination = element["destinationEntity"] else {
            throw GraftError(
                .malformedInput, "the relationship has no destinationEntity",
                context: [.key(name), .line(element.line)])
        }
        // Xcode keeps an `ordered` flag when a relationship is switched to to-one, and its compiler and
        // Core Data keep it too, doing nothing with it but hashing it (DataUsage.sqlite); a negative
        // maximum count is unbounded to Core Data. Both are read as Core Data reads them.
        var inapplicable = Relationship.Inapplicable.none
        let ordered = flag(element["ordered"])
        if ordered && !isToMany {
            inapplicable.isOrdered = true
            warnings.append(
                "\(entity).\(name): is a to-one relationship marked ordered; Core Data ignores the flag (it keeps it in the version hash)"
            )
        }
        var maxCount = try count("maxCount") ?? (isToMany ? 0 : 1)
        if isToMany && maxCount < 0 {
            inapplicable.maxCount = maxCount
            warnings.append(
                "\(entity).\(name): its maximum count \(maxCount) is read as unbounded, as Core Data reads it")
            maxCount = 0
        }
        return Relationship(
            name: name, destination: destination, inverse: element["inverseName"], isToMany: isToMany,
            isOrdered: ordered && isToMany, minCount: try count("minCount") ?? 0, maxCount: maxCount,
            isOptional: flag(element["optional"]), isTransient: flag(element["transient"]), deleteRule: rule,
            isIndexedBySpotlight: flag(element["spotlightIndexingEnabled"]),
            versionHashModifier: element["versionHashModifier"],
            renamingIdentifier: element["elementID"], userInfo: userInfo(element), inapplicable: inapplicable)
    }

    private static func userInfo(_ element: XMLElement) -> [String: String] {
        var info: [String: String] = [:]
        for entry in element.child(named: "userInfo")?.children(named: "entry") ?? [] {
            if let key = entry["key"] { info[key] = entry["value"] ?? "" }
        }
        return info
    }

    private static func required(_ element: XMLElement, _ attribute: String) throws -> String {
        guard let value = element[attribute], !value.isEmpty else {
            throw GraftError(
                .malformedInput, "<\(element.name)> has no \(attribute)", context: [.line(element.line)])
        }
        return value
    }

    static func flag(_ text: String?) -> Bool { text == "YES" || text == "yes" || text == "true" || text == "1" }
}
