import Foundation

/// Describes a model for people (text) and for programs (JSON), as `graft inspect` prints it.
///
/// For example:
///
/// ```swift
/// let file = try ModelFile.load(url)
/// print(ModelReport.text(for: file))
/// print(ModelReport.json(for: file).text(pretty: true))
/// ```
public enum ModelReport {
    /// A readable listing: every entity with its parent and version hash, its own attributes with types
    /// and constraints, its relationships with inverse, cardinality and delete rule, and its fetched
    /// properties.
    public static func text(for file: ModelFile) -> String {
        let model = file.current
        var out = "Model \(file.url.relativePath) (\(file.format.rawValue))\n"
        if file.versions.count > 1 {
            out +=
                "Versions: \(file.versions.map(\.name).joined(separator: ", ")); current: \(file.currentVersionName)\n"
        }
        if !model.versionIdentifiers.isEmpty {
            out += "Version identifiers: \(model.versionIdentifiers.joined(separator: ", "))\n"
        }
        out += "Version checksum: \(model.versionChecksum)\n"
        out += "Entities: \(model.descriptions.count)\n"
        for entity in model.descriptions {
            out += "\n" + entityText(entity, in: model)
        }
        return out
    }

    private static func entityText(_ entity: EntityDescription, in model: Model) -> String {
        var heading = entity.name
        if let parent = entity.superentityIndex { heading += " : \(model.descriptions[parent].name)" }
        if entity.isAbstract { heading += " (abstract)" }
        var out = "\(heading)\n  version hash \(entity.versionHash.base64EncodedString())\n"
        let declaration = entity.declaration
        let inherited =
            entity.attributes.count - declaration.attributes.count
            + entity.relationships.count - declaration.relationships.count
        if inherited > 0 { out += "  inherits \(inherited) propert\(inherited == 1 ? "y" : "ies")\n" }
        let attributeRows = declaration.attributes.map { attribute -> [String] in
            [attribute.name, attribute.type.modelName, attributeNotes(attribute).joined(separator: ", ")]
        }
        if !attributeRows.isEmpty { out += "  attributes\n" + table(attributeRows, indent: 4) }
        let relationshipRows = declaration.relationships.map { relationship -> [String] in
            let kind = relationship.isToMany ? (relationship.isOrdered ? "to-many ordered" : "to-many") : "to-one"
            var notes: [String] = []
            notes.append(relationship.inverse.map { "inverse \($0)" } ?? "no inverse")
            if relationship.isToMany && (relationship.minCount > 0 || relationship.maxCount > 0) {
                notes.append(
                    "count \(relationship.minCount)…\(relationship.maxCount == 0 ? "∞" : String(relationship.maxCount))"
                )
            }
            if !relationship.isOptional { notes.append("required") }
            if relationship.isTransient { notes.append("transient") }
            notes.append(relationship.deleteRule.modelName)
            return [relationship.name, "\(kind) \(relationship.destination)", notes.joined(separator: ", ")]
        }
        if !relationshipRows.isEmpty { out += "  relationships\n" + table(relationshipRows, indent: 4) }
        let fetchedRows = declaration.fetchedProperties.map { [$0.name, $0.entity, "where \($0.predicate)"] }
        if !fetchedRows.isEmpty { out += "  fetched properties\n" + table(fetchedRows, indent: 4) }
        for constraint in declaration.uniquenessConstraints {
            out += "  unique (\(constraint.joined(separator: ", ")))\n"
        }
        return out
    }

    private static func attributeNotes(_ attribute: Attribute) -> [String] {
        var notes: [String] = []
        notes.append(attribute.isOptional ? "optional" : "required")
        if attribute.isTransient { notes.append("transient") }
        if let value = attribute.defaultValue { notes.append("default \(display(value))") }
        let isLength = attribute.type == .string || attribute.type == .binary
        if let value = attribute.minValue { notes.append("\(isLength ? "min length" : "min") \(display(value))") }
        if let value = attribute.maxValue { notes.append("\(isLength ? "max length" : "max") \(display(value))") }
        if let pattern = attribute.regularExpression { notes.append("matches /\(pattern)/") }
        if attribute.allowsExternalBinaryDataStorage { notes.append("external storage") }
        if let expression = attribute.derivationExpression { notes.append("derived from \(expression)") }
        if let transformer = attribute.valueTransformerName { notes.append("transformer \(transformer)") }
        return notes
    }

    private static func display(_ value: Value) -> String {
        switch value {
        case .string(let text): return "\"\(text)\""
        case .date(let date): return ISO8601DateFormatter().string(from: date)
        default: return ValueText.format(value)
        }
    }

    private static func table(_ rows: [[String]], indent: Int) -> String {
        let widths = (0..<2).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            let padded =
                row[0].padding(toLength: widths[0], withPad: " ", startingAt: 0) + "  "
                + row[1].padding(toLength: widths[1], withPad: " ", startingAt: 0) + "  " + row[2]
            return String(repeating: " ", count: indent) + padded.trimmingCharacters(in: .whitespaces) + "\n"
        }.joined()
    }

    /// The same as `text(for:)`, as JSON:
    /// `{"source", "format", "currentVersion", "versions", "entities": [{"name", "parent", "abstract",
    /// "versionHash", …, "attributes": […], "relationships": […]}], "versionChecksum", "versionHashesDigest"}`.
    public static func json(for file: ModelFile) -> JSONValue {
        let model = file.current
        return .object([
            ("source", .string(file.url.relativePath)),
            ("format", .string(file.format.rawValue)),
            ("currentVersion", .string(file.currentVersionName)),
            ("versions", .array(file.versions.map { .string($0.name) })),
            ("versionIdentifiers", .array(model.versionIdentifiers.map { .string($0) })),
            ("entities", .array(model.descriptions.map { entityJSON($0, in: model) })),
            ("versionChecksum", .string(model.versionChecksum)),
            ("versionHashesDigest", .string(model.versionHashesDigest)),
        ])
    }

    /// One entity as JSON, with its own properties (inherited ones are listed on the parent).
    public static func entityJSON(_ entity: EntityDescription, in model: Model) -> JSONValue {
        let declaration = entity.declaration
        return .object([
            ("name", .string(entity.name)),
            ("parent", entity.superentityIndex.map { .string(model.descriptions[$0].name) } ?? .null),
            ("abstract", .bool(entity.isAbstract)),
            ("versionHash", .string(entity.versionHash.base64EncodedString())),
            ("className", declaration.className.map(JSONValue.string) ?? .null),
            ("attributes", .array(declaration.attributes.map(attributeJSON))),
            ("relationships", .array(declaration.relationships.map(relationshipJSON))),
            (
                "fetchedProperties",
                .array(
                    declaration.fetchedProperties.map {
                        .object([
                            ("name", .string($0.name)), ("entity", .string($0.entity)),
                            ("predicate", .string($0.predicate)),
                        ])
                    })
            ),
            (
                "uniquenessConstraints",
                .array(declaration.uniquenessConstraints.map { .array($0.map(JSONValue.string)) })
            ),
        ])
    }

    private static func attributeJSON(_ attribute: Attribute) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("name", .string(attribute.name)),
            ("type", .string(attribute.type.modelName)),
            ("optional", .bool(attribute.isOptional)),
            ("transient", .bool(attribute.isTransient)),
        ]
        if let value = attribute.defaultValue { members.append(("default", json(value))) }
        if let value = attribute.minValue { members.append(("min", json(value))) }
        if let value = attribute.maxValue { members.append(("max", json(value))) }
        if let pattern = attribute.regularExpression { members.append(("regularExpression", .string(pattern))) }
        if attribute.allowsExternalBinaryDataStorage { members.append(("allowsExternalStorage", .bool(true))) }
        if let expression = attribute.derivationExpression { members.append(("derivation", .string(expression))) }
        if let transformer = attribute.valueTransformerName {
            members.append(("valueTransformer", .string(transformer)))
        }
        return .object(members)
    }

    private static func relationshipJSON(_ relationship: Relationship) -> JSONValue {
        .object([
            ("name", .string(relationship.name)),
            ("destination", .string(relationship.destination)),
            ("inverse", relationship.inverse.map(JSONValue.string) ?? .null),
            ("toMany", .bool(relationship.isToMany)),
            ("ordered", .bool(relationship.isOrdered)),
            ("minCount", .int(Int64(relationship.minCount))),
            ("maxCount", .int(Int64(relationship.maxCount))),
            ("optional", .bool(relationship.isOptional)),
            ("transient", .bool(relationship.isTransient)),
            ("deleteRule", .string(relationship.deleteRule.modelName)),
        ])
    }

    /// An attribute value as JSON: numbers as numbers (decimals as strings, to keep every digit),
    /// dates as seconds since 2001-01-01, data as base64.
    public static func json(_ value: Value) -> JSONValue {
        switch value {
        case .integer(let number): return .int(number)
        case .double(let number): return .double(number)
        case .decimal(let number): return .string(number.description)
        case .string(let text): return .string(text)
        case .bool(let flag): return .bool(flag)
        case .date(let date): return .double(date.timeIntervalSinceReferenceDate)
        case .data(let data): return .string(data.base64EncodedString())
        case .uuid(let uuid): return .string(uuid.uuidString)
        case .uri(let url): return .string(url.absoluteString)
        }
    }
}
