import Foundation
import GraftCore

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
    /// - Throws: `GraftError.malformedInput` for XML that is not a model, with the line;
    ///   `GraftError.invalidModel` for a model that contradicts itself.
    public static func read(_ data: Data, path: String? = nil) throws -> Model {
        var warnings: [String] = []
        return try read(data, path: path, warnings: &warnings)
    }

    /// Reads a model from the bytes of a `contents` file, appending to `warnings` what it read as
    /// Xcode's model compiler and Core Data do rather than as written: an `ordered` flag on a to-one
    /// relationship (ignored), a negative maximum count (unbounded).
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
                case "attribute": entity.attributes.append(try attribute(child))
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

    private static func attribute(_ element: XMLElement) throws -> Attribute {
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
            if type == .date {
                attribute.defaultValue = try element["defaultDateTimeInterval"].map {
                    try dateValue($0, "defaultDateTimeInterval")
                }
                attribute.minValue = try element["minDateTimeInterval"].map { try dateValue($0, "minDateTimeInterval") }
                attribute.maxValue = try element["maxDateTimeInterval"].map { try dateValue($0, "maxDateTimeInterval") }
            } else {
                // Xcode keeps whatever text was typed (an Integer 32 defaulting to "NO" after a type change);
                // its model compiler reads such text as Foundation's number parsing does, and so does Graft.
                attribute.defaultValue = element["defaultValueString"].flatMap {
                    ValueText.parseLeniently($0, as: type)
                }
                let boundType: AttributeType =
                    (type == .string || type == .binary || type == .transformable) ? .integer64 : type
                attribute.minValue = element["minValueString"].flatMap { ValueText.parseLeniently($0, as: boundType) }
                attribute.maxValue = element["maxValueString"].flatMap { ValueText.parseLeniently($0, as: boundType) }
            }
        } catch let error as GraftError {
            throw error.at(.key(name)).at(.line(element.line))
        }
        return attribute
    }

    private static func dateValue(_ text: String, _ what: String) throws -> Value {
        guard let seconds = Double(text) else {
            throw GraftError(.malformedInput, "\(what) '\(text)' is not a number of seconds")
        }
        return .date(Date(timeIntervalSinceReferenceDate: seconds))
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
            guard let value = Int(text) else {
                throw GraftError(
                    .malformedInput, "\(key) '\(text)' is not a whole number",
                    context: [.key(name), .line(element.line)])
            }
            return value
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

/// Parses and prints attribute values in the text forms model files use (`defaultValueString`).
public enum ValueText {
    /// Parses `text` as a value of `type`; returns `nil` for types that have no text form (binary data).
    ///
    /// - Throws: `GraftError.typeMismatch` when the text is not a value of the type.
    public static func parse(_ text: String, as type: AttributeType, what: String = "value") throws -> Value? {
        func fail() -> GraftError {
            GraftError(.typeMismatch, "\(what) '\(text)' is not a valid \(type.modelName)")
        }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        switch type {
        case .integer16, .integer32, .integer64:
            if let value = Int64(trimmed) { return .integer(value) }
            // Xcode accepts "0.0" for integers; keep the whole part when the fraction is zero.
            if let value = Double(trimmed), value.rounded() == value, abs(value) < 9.2e18 {
                return .integer(Int64(value))
            }
            throw fail()
        case .double, .float:
            guard let value = Double(trimmed) else { throw fail() }
            return .double(type == .float ? Double(Float(value)) : value)
        case .decimal:
            guard let value = Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX")) else { throw fail() }
            return .decimal(value)
        case .string:
            return .string(text)
        case .boolean:
            switch trimmed.lowercased() {
            case "yes", "true", "1": return .bool(true)
            case "no", "false", "0": return .bool(false)
            default: throw fail()
            }
        case .date:
            guard let seconds = Double(trimmed) else { throw fail() }
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case .uuid:
            guard let value = UUID(uuidString: trimmed) else { throw fail() }
            return .uuid(value)
        case .uri:
            guard let value = URL(string: trimmed) else { throw fail() }
            return .uri(value)
        case .binary, .transformable, .undefined, .objectID, .composite:
            return nil
        }
    }

    /// Parses like `parse`, but reads text that is not a number of the type as Foundation's
    /// `NSString.doubleValue`/`intValue` would: its leading number, or zero. Text for types without a text
    /// form, and dates, give `nil` when they do not parse.
    public static func parseLeniently(_ text: String, as type: AttributeType) -> Value? {
        if let value = try? parse(text, as: type) { return value }
        let number = leadingNumber(text)
        switch type {
        case .integer16, .integer32, .integer64:
            return .integer(Int64(exactly: number.rounded(.towardZero)) ?? 0)
        case .double, .float: return .double(type == .float ? Double(Float(number)) : number)
        case .decimal: return .decimal(Decimal(number))
        case .boolean: return .bool(number != 0 || text.lowercased().hasPrefix("y") || text.lowercased().hasPrefix("t"))
        default: return nil
        }
    }

    private static func leadingNumber(_ text: String) -> Double {
        let scalars = Array(text.trimmingCharacters(in: .whitespaces).unicodeScalars)
        var end = 0
        var seenDigit = false
        var seenPoint = false
        if end < scalars.count, scalars[end] == "+" || scalars[end] == "-" { end += 1 }
        while end < scalars.count {
            let scalar = scalars[end]
            if ("0"..."9").contains(scalar) {
                seenDigit = true
            } else if scalar == "." && !seenPoint {
                seenPoint = true
            } else {
                break
            }
            end += 1
        }
        guard seenDigit else { return 0 }
        var prefix = ""
        prefix.unicodeScalars.append(contentsOf: scalars[..<end])
        return Double(prefix) ?? 0
    }

    /// The text form of a value, as `parse` reads it back.
    public static func format(_ value: Value) -> String {
        switch value {
        case .integer(let number): return String(number)
        case .double(let number): return number.description
        case .decimal(let number): return number.description
        case .string(let text): return text
        case .bool(let flag): return flag ? "YES" : "NO"
        case .date(let date): return formatSeconds(date.timeIntervalSinceReferenceDate)
        case .data(let data): return data.base64EncodedString()
        case .uuid(let uuid): return uuid.uuidString
        case .uri(let url): return url.absoluteString
        }
    }

    /// Seconds printed without a needless ".0".
    static func formatSeconds(_ seconds: Double) -> String {
        if seconds.rounded() == seconds, abs(seconds) < 1e15 { return String(Int64(seconds)) }
        return seconds.description
    }
}
