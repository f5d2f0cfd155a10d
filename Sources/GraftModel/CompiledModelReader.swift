import Foundation
import GraftCore

/// Reads compiled models: `.mom` files (keyed archives of `NSManagedObjectModel`), `.momd` folders, and
/// the model cache a SQLite store keeps (the same archive, raw-deflate compressed).
///
/// Both dictionary encodings are read (`NSDictionary` and `NSKnownKeysDictionary1`), as are old
/// archives that list inherited properties as `_NSPropertyDescriptionProxy` entries and keep flags
/// as `NSIsOptional`/`NSIsTransient`/`NSIsOrdered` booleans rather than the `_P` flag word.
///
/// For example:
///
/// ```swift
/// let model = try CompiledModelReader.read(Data(contentsOf: momURL), path: momURL.path)
/// ```
public enum CompiledModelReader {
    /// Reads one compiled model from the bytes of a `.mom` (or an inflated model cache).
    ///
    /// - Throws: `GraftError.malformedInput` naming the entity or property that could not be read,
    ///   `GraftError.invalidModel` when the model contradicts itself.
    public static func read(_ data: Data, path: String? = nil) throws -> Model {
        do {
            let archive = try KeyedArchive(data: data)
            guard let root = try archive.topObject(forKey: "root") else {
                throw GraftError(.malformedInput, "the archive has no root object")
            }
            guard root.isKind(of: "NSManagedObjectModel") else {
                throw GraftError(
                    .malformedInput,
                    "the archive holds \(root.className ?? "a plain value"), not an NSManagedObjectModel")
            }
            return try model(from: root)
        } catch let error as GraftError {
            throw path.map { error.inFile($0) } ?? error
        }
    }

    /// A `.mom` file as a one-version `ModelFile`.
    static func loadFile(_ url: URL, data: Data) throws -> ModelFile {
        let model = try read(data, path: url.relativePath)
        let name = url.deletingPathExtension().lastPathComponent
        return ModelFile(url: url, format: .mom, versions: [.init(name: name, model: model)], currentVersionName: name)
    }

    /// A `.momd` folder: every `.mom` inside, with the current version and recorded hashes from
    /// `VersionInfo.plist`.
    static func loadBundle(_ url: URL) throws -> ModelFile {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: url.path).filter { $0.hasSuffix(".mom") }
                .sorted { $0.dropLast(4) < $1.dropLast(4) }
        } catch {
            throw GraftError(
                .io, "cannot list the folder: \(error.localizedDescription)", context: [.file(url.relativePath)])
        }
        guard !names.isEmpty else {
            throw GraftError(.malformedInput, "the .momd holds no .mom file", context: [.file(url.relativePath)])
        }
        let versions = try names.map { name -> ModelFile.Version in
            let file = url.appendingPathComponent(name)
            return .init(
                name: String(name.dropLast(4)), model: try read(FileAccess.read(file), path: file.relativePath))
        }
        var current = versions[versions.count - 1].name
        var hashes: [String: [String: Data]] = [:]
        var checksums: [String: String] = [:]
        let infoURL = url.appendingPathComponent("VersionInfo.plist")
        if FileAccess.kind(of: infoURL).exists {
            let info: PropertyList
            do {
                info = try PropertyList.decode(FileAccess.read(infoURL))
            } catch let error as GraftError {
                throw error.inFile(infoURL.relativePath)
            }
            if let name = info["NSManagedObjectModel_CurrentVersionName"]?.stringValue {
                guard versions.contains(where: { $0.name == name }) else {
                    throw GraftError(
                        .malformedInput, "names '\(name)' as the current version, but there is no \(name).mom",
                        context: [.file(infoURL.relativePath)])
                }
                current = name
            }
            for (version, value) in info["NSManagedObjectModel_VersionHashes"]?.dictionaryValue ?? [:] {
                var entities: [String: Data] = [:]
                for (entity, hash) in value.dictionaryValue ?? [:] {
                    if let data = hash.dataValue { entities[entity] = data }
                }
                hashes[version] = entities
            }
            for (version, value) in info["NSManagedObjectModel_VersionChecksums"]?.dictionaryValue ?? [:] {
                if let checksum = value.stringValue { checksums[version] = checksum }
            }
        }
        return ModelFile(
            url: url, format: .momd, versions: versions, currentVersionName: current, recordedVersionHashes: hashes,
            recordedVersionChecksums: checksums)
    }

    // MARK: Model

    private static func model(from root: ArchivedObject) throws -> Model {
        var entities: [Entity] = []
        for (name, object) in try root["NSEntities"]?.decodeStringKeyedDictionary() ?? [] {
            do {
                entities.append(try entity(from: object))
            } catch let error as GraftError {
                throw error.at(.entity(name))
            }
        }
        entities = withoutInheritedCopies(entities)
        var identifiers: [String] = []
        for element in try root["NSVersionIdentifiers"]?.decodeArray() ?? [] {
            if let text = try? element.decodeString() { identifiers.append(text) }
        }
        var templates: [FetchRequestTemplate] = []
        for (name, request) in (try? root["NSFetchRequestTemplates"]?.decodeStringKeyedDictionary()) ?? [] {
            let entityName =
                (try? request["NSEntity"]?.string(forKey: "NSEntityName"))
                ?? (try? request.string(forKey: "NSEntityName")) ?? nil
            guard let entityName else { continue }
            templates.append(
                FetchRequestTemplate(
                    name: name, entity: entityName, predicate: predicateText(try? request["NSPredicate"])))
        }
        var configurations: [Configuration] = []
        for (name, members) in (try? root["NSConfigurations"]?.decodeStringKeyedDictionary()) ?? [] {
            let names = ((try? members.decodeArray()) ?? []).compactMap { try? $0.string(forKey: "NSEntityName") }
            configurations.append(Configuration(name: name, entities: names))
        }
        return try Model(
            entities: entities.sorted { $0.name < $1.name },
            configurations: configurations.sorted { $0.name < $1.name },
            fetchRequestTemplates: templates.sorted { $0.name < $1.name }, versionIdentifiers: identifiers.sorted())
    }

    /// Newer archives repeat every inherited property in full on each subentity; keep each property on
    /// the entity that declares it, as a model file would.
    private static func withoutInheritedCopies(_ entities: [Entity]) -> [Entity] {
        let byName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        func names(of entity: Entity, depth: Int = 0) -> Set<String> {
            var own = Set(
                entity.attributes.map(\.name) + entity.relationships.map(\.name) + entity.fetchedProperties.map(\.name))
            if depth < entities.count, let parent = entity.parent.flatMap({ byName[$0] }) {
                own.formUnion(names(of: parent, depth: depth + 1))
            }
            return own
        }
        return entities.map { entity in
            guard let parent = entity.parent.flatMap({ byName[$0] }) else { return entity }
            let inherited = names(of: parent)
            var copy = entity
            copy.attributes.removeAll { inherited.contains($0.name) }
            copy.relationships.removeAll { inherited.contains($0.name) }
            copy.fetchedProperties.removeAll { inherited.contains($0.name) }
            return copy
        }
    }

    private static func entity(from object: ArchivedObject) throws -> Entity {
        guard let name = try object.string(forKey: "NSEntityName") else {
            throw GraftError(.malformedInput, "an entity has no NSEntityName")
        }
        var entity = Entity(
            name: name, className: try object.string(forKey: "NSClassNameForEntity"),
            parent: try object["NSSuperentity"]?.string(forKey: "NSEntityName"),
            isAbstract: try object.bool(forKey: "NSIsAbstract") ?? false,
            versionHashModifier: try object.string(forKey: "NSVersionHashModifier"),
            renamingIdentifier: try renamingIdentifier(object, name: name), userInfo: try userInfo(object))
        for (key, property) in try object["NSProperties"]?.decodeStringKeyedDictionary() ?? [] {
            // Old archives list inherited properties as proxies; the real ones live on the superentity.
            if property.isKind(of: "_NSPropertyDescriptionProxy") { continue }
            do {
                if property.isKind(of: "NSAttributeDescription") {
                    entity.attributes.append(try attribute(from: property))
                } else if property.isKind(of: "NSRelationshipDescription") {
                    entity.relationships.append(try relationship(from: property))
                } else if property.isKind(of: "NSFetchedPropertyDescription") {
                    entity.fetchedProperties.append(try fetchedProperty(from: property, owner: name))
                }
            } catch let error as GraftError {
                throw error.at(.key(key))
            }
        }
        entity.attributes.sort { $0.name < $1.name }
        entity.relationships.sort { $0.name < $1.name }
        entity.fetchedProperties.sort { $0.name < $1.name }
        for tuple in try object["NSUniqueTuples"]?.decodeArray() ?? [] {
            entity.uniquenessConstraints.append(try propertyNames(tuple))
        }
        for index in (try? object["NSCompoundIndexes"]?.decodeArray()) ?? [] {
            if let names = try? propertyNames(index), !names.isEmpty { entity.compoundIndexes.append(names) }
        }
        for index in (try? object["NSFetchIndexDescriptions"]?.decodeArray()) ?? [] {
            let elements = ((try? index["NSIndexElements"]?.decodeArray()) ?? []).compactMap {
                element -> FetchIndex.Element? in
                guard let property = try? element.string(forKey: "NSPropertyName") else { return nil }
                let kind = (try? element.integer(forKey: "NSFetchIndexElementType")) ?? 0
                return FetchIndex.Element(
                    property: property, kind: kind == 1 ? "RTree" : "Binary",
                    isAscending: (try? element.bool(forKey: "NSAscending")) ?? true)
            }
            entity.fetchIndexes.append(
                FetchIndex(name: (try? index.string(forKey: "NSIndexName")) ?? "", elements: elements))
        }
        return entity
    }

    /// Names in a uniqueness constraint or compound index: strings, or property descriptions.
    private static func propertyNames(_ list: ArchivedObject) throws -> [String] {
        try list.decodeArray().map { element in
            if let name = try? element.decodeString() { return name }
            guard let name = try element.string(forKey: "NSPropertyName") else {
                throw GraftError(.malformedInput, "a constraint names neither a string nor a property")
            }
            return name
        }
    }

    /// The property flags: `_P` where present (2 optional, 4 read-only, 8 transient, 0x400 ordered),
    /// else the older separate booleans.
    private struct Flags {
        var isOptional: Bool
        var isReadOnly: Bool
        var isTransient: Bool
        var isOrdered: Bool

        init(_ object: ArchivedObject) throws {
            if let word = object.rawField("_P")?.int64Value {
                isOptional = word & 0x2 != 0
                isReadOnly = word & 0x4 != 0
                isTransient = word & 0x8 != 0
                isOrdered = word & 0x400 != 0
            } else {
                isOptional = try object.bool(forKey: "NSIsOptional") ?? false
                isReadOnly = try object.bool(forKey: "NSIsReadOnly") ?? false
                isTransient = try object.bool(forKey: "NSIsTransient") ?? false
                isOrdered = try object.bool(forKey: "NSIsOrdered") ?? false
            }
        }
    }

    private static func attribute(from object: ArchivedObject) throws -> Attribute {
        guard let name = try object.string(forKey: "NSPropertyName") else {
            throw GraftError(.malformedInput, "an attribute has no NSPropertyName")
        }
        let code = try object.integer(forKey: "NSAttributeType") ?? 0
        guard let type = AttributeType(rawValue: Int32(truncatingIfNeeded: code)) else {
            throw GraftError(.malformedInput, "unknown attribute type code \(code)", context: [.key(name)])
        }
        let flags = try Flags(object)
        let storageFlags = object.rawField("NSFlagsKey")?.int64Value ?? 0
        var attribute = Attribute(
            name: name, type: type, isOptional: flags.isOptional, isTransient: flags.isTransient,
            isReadOnly: flags.isReadOnly, isIndexed: try object.bool(forKey: "NSIsIndexed") ?? false,
            allowsExternalBinaryDataStorage: storageFlags & 0x4 != 0,
            preservesValueInHistoryOnDeletion: storageFlags & 0x10 != 0,
            valueTransformerName: try object.string(forKey: "NSValueTransformerName"),
            versionHashModifier: try object.string(forKey: "NSVersionHashModifier"),
            renamingIdentifier: try renamingIdentifier(object, name: name), userInfo: try userInfo(object))
        if type == .transformable, let className = try? object.string(forKey: "NSAttributeValueClassName") {
            attribute.customClassName = className
        }
        if let expression = try? object["NSDerivationExpression"] {
            attribute.derivationExpression = try? expression.decodeString()
        }
        if let value = try? object["NSDefaultValue"] { attribute.defaultValue = defaultValue(value, type: type) }
        applyValidation(try? object["NSValidationPredicates"], to: &attribute)
        return attribute
    }

    /// A default value as the attribute's type holds it; values Graft cannot read are left out.
    private static func defaultValue(_ object: ArchivedObject, type: AttributeType) -> Value? {
        if object.isKind(of: "NSDecimalNumber") {
            if let text = try? object.decodeString() { return Decimal(string: text).map { .decimal($0) } }
            // Foundation's keyed form: exponent, sign and a 128-bit mantissa (see DecimalNumberArchive).
            guard case .data(let mantissa)? = object.rawField("NS.mantissa"),
                let exponent = object.rawField("NS.exponent")?.int64Value,
                let decimal = DecimalNumberArchive.decimal(
                    exponent: Int(exponent), isNegative: object.rawField("NS.negative")?.boolValue ?? false,
                    mantissa: mantissa, littleEndian: (object.rawField("NS.mantissa.bo")?.int64Value ?? 1) == 1)
            else { return nil }
            return .decimal(decimal)
        }
        guard let plist = try? object.decodePropertyList() else { return nil }
        switch (type, plist) {
        case (.integer16, _), (.integer32, _), (.integer64, _):
            return plist.int64Value.map { .integer($0) } ?? plist.boolValue.map { .integer($0 ? 1 : 0) }
        case (.double, _), (.float, _): return plist.doubleValue.map { .double($0) }
        case (.decimal, _): return plist.doubleValue.map { .decimal(Decimal(string: String($0)) ?? Decimal($0)) }
        case (.boolean, _): return plist.boolValue.map { .bool($0) } ?? plist.int64Value.map { .bool($0 != 0) }
        case (.string, .string(let text)): return .string(text)
        case (.date, .date(let date)): return .date(date)
        case (.date, _): return plist.doubleValue.map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        case (.uuid, .string(let text)): return UUID(uuidString: text).map { .uuid($0) }
        case (.uri, .string(let text)): return URL(string: text).map { .uri($0) }
        case (.binary, .data(let data)), (.transformable, .data(let data)): return .data(data)
        default: return nil
        }
    }

    /// Minimum, maximum and pattern from validation predicates kept as text (`SELF >= 0`,
    /// `NOT SELF < 0`, `length <= 60`, `timeIntervalSinceReferenceDate >= 0` for dates,
    /// `SELF MATCHES "…"` with `\\` and `\"` escaped). Archived predicate objects are not read.
    private static func applyValidation(_ list: ArchivedObject?, to attribute: inout Attribute) {
        guard let list, let elements = try? list.decodeArray() else { return }
        let number = #"(-?[0-9]+(?:\.[0-9]+)?)"#
        enum Rule { case minimum, maximum, minimumLength, maximumLength, pattern }
        let rules: [(String, Rule)] = [
            (#"^(?:SELF >= |NOT SELF < |timeIntervalSinceReferenceDate >= )"# + number + "$", .minimum),
            (#"^(?:SELF <= |NOT SELF > |timeIntervalSinceReferenceDate <= )"# + number + "$", .maximum),
            (#"^length >= "# + number + "$", .minimumLength),
            (#"^length <= "# + number + "$", .maximumLength),
            (#"^SELF MATCHES "(.*)"$"#, .pattern),
        ]
        for element in elements {
            guard let text = try? element.decodeString() else { continue }
            for (pattern, rule) in rules {
                guard let regex = try? NSRegularExpression(pattern: pattern),
                    let match = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
                    let range = Range(match.range(at: 1), in: text)
                else { continue }
                let found = String(text[range])
                switch rule {
                case .minimum: attribute.minValue = bound(found, attribute.type)
                case .maximum: attribute.maxValue = bound(found, attribute.type)
                case .minimumLength: attribute.minValue = Int64(found).map { .integer($0) }
                case .maximumLength: attribute.maxValue = Int64(found).map { .integer($0) }
                case .pattern: attribute.regularExpression = unescaped(found)
                }
            }
        }
    }

    private static func bound(_ text: String, _ type: AttributeType) -> Value? {
        try? ValueText.parse(text, as: type)
    }

    /// A predicate-format string constant's contents with `\\` and `\"` unescaped.
    private static func unescaped(_ text: String) -> String {
        guard text.contains("\\") else { return text }
        var out = ""
        var escaping = false
        for character in text {
            if escaping || character != "\\" {
                out.append(character)
                escaping = false
            } else {
                escaping = true
            }
        }
        return out
    }

    private static func relationship(from object: ArchivedObject) throws -> Relationship {
        guard let name = try object.string(forKey: "NSPropertyName") else {
            throw GraftError(.malformedInput, "a relationship has no NSPropertyName")
        }
        let destination =
            try object.string(forKey: "_NSDestinationEntityName")
            ?? object["NSDestinationEntity"]?.string(forKey: "NSEntityName")
        guard let destination else {
            throw GraftError(.malformedInput, "the relationship has no destination entity", context: [.key(name)])
        }
        let inverse =
            try object.string(forKey: "_NSInverseRelationshipName")
            ?? object["NSInverseRelationship"]?.string(forKey: "NSPropertyName")
        let flags = try Flags(object)
        let maxCount = Int(try object.integer(forKey: "NSMaxCount") ?? 0)
        let ruleCode = Int(try object.integer(forKey: "NSDeleteRule") ?? 1)
        guard let rule = DeleteRule(rawValue: ruleCode) else {
            throw GraftError(.malformedInput, "unknown delete rule code \(ruleCode)", context: [.key(name)])
        }
        return Relationship(
            name: name, destination: destination, inverse: inverse, isToMany: maxCount != 1,
            isOrdered: flags.isOrdered, minCount: Int(try object.integer(forKey: "NSMinCount") ?? 0),
            maxCount: maxCount,
            isOptional: flags.isOptional, isTransient: flags.isTransient, isReadOnly: flags.isReadOnly,
            deleteRule: rule,
            versionHashModifier: try object.string(forKey: "NSVersionHashModifier"),
            renamingIdentifier: try renamingIdentifier(object, name: name), userInfo: try userInfo(object))
    }

    /// The renaming identifier, left out when it is the name itself: Xcode's compiler writes the name
    /// for every entity and property that has none of its own, and Core Data treats the two alike.
    private static func renamingIdentifier(_ object: ArchivedObject, name: String) throws -> String? {
        let identifier = try object.string(forKey: "NSRenamingIdentifier")
        return identifier == name ? nil : identifier
    }

    private static func fetchedProperty(from object: ArchivedObject, owner: String) throws -> FetchedProperty {
        guard let name = try object.string(forKey: "NSPropertyName") else {
            throw GraftError(.malformedInput, "a fetched property has no NSPropertyName")
        }
        let request = try object["NSFetchRequest"]
        let entity =
            (try? request?["NSEntity"]?.string(forKey: "NSEntityName"))
            ?? (try? request?.string(forKey: "NSEntityName")) ?? nil
        return FetchedProperty(
            name: name, entity: entity ?? owner, predicate: predicateText(try? request?["NSPredicate"]),
            isOptional: (try? Flags(object).isOptional) ?? true, userInfo: try userInfo(object))
    }

    /// A predicate kept as text; archived predicate objects give an empty string.
    private static func predicateText(_ object: ArchivedObject??) -> String {
        guard let object = object ?? nil, let text = try? object.decodeString() else { return "" }
        return text
    }

    private static func userInfo(_ object: ArchivedObject) throws -> [String: String] {
        var info: [String: String] = [:]
        for (key, value) in (try? object["NSUserInfo"]?.decodeStringKeyedDictionary()) ?? [] {
            if let text = try? value.decodeString() {
                info[key] = text
            } else if let plist = try? value.decodePropertyList() {
                info[key] = plist.description
            }
        }
        return info
    }
}
