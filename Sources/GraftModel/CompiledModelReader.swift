import Foundation
import GraftCore

/// Reads compiled models: `.mom` files (keyed archives of `NSManagedObjectModel`), `.momd` folders, and
/// the model cache a SQLite store keeps (the same archive, raw-deflate compressed).
///
/// Both dictionary encodings are read (`NSDictionary` and `NSKnownKeysDictionary1`), as are old
/// archives that list inherited properties as `_NSPropertyDescriptionProxy` entries and keep flags
/// as `NSIsOptional`/`NSIsTransient`/`NSIsOrdered` booleans rather than the `_P` flag word. Archived
/// `NSPredicate` and `NSExpression` objects (validation rules, derivations, partial indexes, fetch
/// requests, Spotlight display names) are read into predicate-format text.
///
/// For example:
///
/// ```swift
/// let model = try CompiledModelReader.read(Data(contentsOf: momURL), path: momURL.path)
/// ```
public enum CompiledModelReader {
    /// Reads one compiled model from the bytes of a `.mom` (or an inflated model cache).
    ///
    /// Declarations Core Data accepts but does not act on (an ordered flag on a to-one, a negative
    /// maximum count) are read as Core Data reads them; ``read(_:path:warnings:)`` says which.
    ///
    /// - Throws: `GraftError.malformedInput` naming the entity or property that could not be read,
    ///   `GraftError.invalidModel` when the model contradicts itself.
    public static func read(_ data: Data, path: String? = nil) throws -> Model {
        var warnings: [String] = []
        return try read(data, path: path, warnings: &warnings)
    }

    /// Reads one compiled model, appending to `warnings` what it read leniently, as Core Data does:
    /// an `ordered` flag on a to-one relationship (ignored), a negative maximum count (unbounded),
    /// an archived predicate Graft cannot read (left out). Each warning names the entity and property.
    ///
    /// For example:
    ///
    /// ```swift
    /// var warnings: [String] = []
    /// let model = try CompiledModelReader.read(archive, path: "store.sqlite (Z_MODELCACHE)", warnings: &warnings)
    /// for warning in warnings { print("warning:", warning) }
    /// ```
    ///
    /// - Throws: as ``read(_:path:)``.
    public static func read(_ data: Data, path: String? = nil, warnings: inout [String]) throws -> Model {
        var reading = Reading()
        defer { warnings += reading.warnings.map { (path.map { "\($0): " } ?? "") + $0 } }
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
            return try reading.model(from: root)
        } catch let error as GraftError {
            throw path.map { error.inFile($0) } ?? error
        }
    }

    /// A `.mom` file as a one-version `ModelFile`.
    static func loadFile(_ url: URL, data: Data) throws -> ModelFile {
        var warnings: [String] = []
        let model = try read(data, path: url.relativePath, warnings: &warnings)
        let name = url.deletingPathExtension().lastPathComponent
        return ModelFile(
            url: url, format: .mom, versions: [.init(name: name, model: model)], currentVersionName: name,
            warnings: warnings)
    }

    /// A `.momd` folder: every `.mom` inside, with the current version and recorded hashes from
    /// `VersionInfo.plist`.
    static func loadBundle(_ url: URL) throws -> ModelFile {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: url.path).filter { $0.hasSuffix(".mom") }
                .sorted { ModelFile.isOrderedBefore($0.dropLast(4), $1.dropLast(4)) }
        } catch {
            throw GraftError(
                .io, "cannot list the folder: \(error.localizedDescription)", context: [.file(url.relativePath)])
        }
        guard !names.isEmpty else {
            throw GraftError(.malformedInput, "the .momd holds no .mom file", context: [.file(url.relativePath)])
        }
        var warnings: [String] = []
        let versions = try names.map { name -> ModelFile.Version in
            let file = url.appendingPathComponent(name)
            return .init(
                name: String(name.dropLast(4)),
                model: try read(FileAccess.read(file), path: file.relativePath, warnings: &warnings))
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
            recordedVersionChecksums: checksums, warnings: warnings)
    }

}

/// One reading of a compiled model, collecting its warnings.
private struct Reading {
    var warnings: [String] = []

    mutating func warn(_ message: String, entity: String, property: String? = nil) {
        warnings.append("\(entity)\(property.map { ".\($0)" } ?? ""): " + message)
    }

    // MARK: Model

    mutating func model(from root: ArchivedObject) throws -> Model {
        var entities: [Entity] = []
        for (name, object) in try root["NSEntities"]?.decodeStringKeyedDictionary() ?? [] {
            do {
                entities.append(try entity(from: object))
            } catch let error as GraftError {
                throw error.at(.entity(name))
            }
        }
        entities = Self.withoutInheritedCopies(entities)
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
                    name: name, entity: entityName,
                    predicate: predicateText(try? request["NSPredicate"], entity: entityName, property: name)))
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
    static func withoutInheritedCopies(_ entities: [Entity]) -> [Entity] {
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

    mutating func entity(from object: ArchivedObject) throws -> Entity {
        guard let name = try object.string(forKey: "NSEntityName") else {
            throw GraftError(.malformedInput, "an entity has no NSEntityName")
        }
        var entity = Entity(
            name: name, className: try object.string(forKey: "NSClassNameForEntity"),
            parent: try object["NSSuperentity"]?.string(forKey: "NSEntityName"),
            isAbstract: try object.bool(forKey: "NSIsAbstract") ?? false,
            versionHashModifier: try object.string(forKey: "NSVersionHashModifier"),
            renamingIdentifier: try Self.renamingIdentifier(object, name: name), userInfo: try Self.userInfo(object))
        if let display = try? object["NSCoreSpotlightDisplayName"] {
            entity.coreSpotlightDisplayName = expressionText(display, entity: name, what: "Core Spotlight display name")
        }
        for (key, property) in try object["NSProperties"]?.decodeStringKeyedDictionary() ?? [] {
            // Old archives list inherited properties as proxies; the real ones live on the superentity.
            if property.isKind(of: "_NSPropertyDescriptionProxy") { continue }
            do {
                if property.isKind(of: "NSAttributeDescription") {
                    entity.attributes.append(try attribute(from: property, entity: name))
                } else if property.isKind(of: "NSRelationshipDescription") {
                    entity.relationships.append(try relationship(from: property, entity: name))
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
            entity.uniquenessConstraints.append(try Self.propertyNames(tuple))
        }
        for index in (try? object["NSCompoundIndexes"]?.decodeArray()) ?? [] {
            if let names = try? Self.propertyNames(index), !names.isEmpty { entity.compoundIndexes.append(names) }
        }
        for index in (try? object["NSFetchIndexDescriptions"]?.decodeArray()) ?? [] {
            let indexName = (try? index.string(forKey: "NSIndexName")) ?? ""
            var elements: [FetchIndex.Element] = []
            for element in (try? index["NSIndexElements"]?.decodeArray()) ?? [] {
                guard let property = try? element.string(forKey: "NSPropertyName") else { continue }
                let kind = (try? element.integer(forKey: "NSFetchIndexElementType")) ?? 0
                var item = FetchIndex.Element(
                    property: property, kind: kind == 1 ? "RTree" : "Binary",
                    isAscending: (try? element.bool(forKey: "NSAscending")) ?? true)
                // An element over an expression names an NSExpressionDescription (Photos.sqlite: `SELF`
                // as object IDs, the key path `entity`); one over a property names the property.
                if let indexed = try? element["NSIndexedProperty"], indexed.isKind(of: "NSExpressionDescription") {
                    let code = (try? indexed.integer(forKey: "NSExpressionType")) ?? 0
                    if let expression = try? indexed["NSExpression"],
                        let text = expressionText(expression, entity: name, what: "index \(indexName)")
                    {
                        item.expression = .init(
                            text: text,
                            resultType: AttributeType(rawValue: Int32(truncatingIfNeeded: code)) ?? .undefined)
                    }
                }
                elements.append(item)
            }
            var fetchIndex = FetchIndex(name: indexName, elements: elements)
            if let partial = try? index["NSPartialIndexPredicate"] {
                fetchIndex.partialIndexPredicate = expressionText(partial, entity: name, what: "index \(indexName)")
            }
            entity.fetchIndexes.append(fetchIndex)
        }
        return entity
    }

    /// The predicate-format text of an archived predicate or expression, or `nil` with a warning when
    /// Graft cannot read it.
    mutating func expressionText(_ object: ArchivedObject, entity: String, what: String) -> String? {
        if let text = ModelExpression.text(of: object) { return text }
        warn("its \(what) is \(object.className ?? "an object") that Graft cannot read; it is left out", entity: entity)
        return nil
    }

    /// Names in a uniqueness constraint or compound index: strings, or property descriptions.
    static func propertyNames(_ list: ArchivedObject) throws -> [String] {
        try list.decodeArray().map { element in
            if let name = try? element.decodeString() { return name }
            guard let name = try element.string(forKey: "NSPropertyName") else {
                throw GraftError(.malformedInput, "a constraint names neither a string nor a property")
            }
            return name
        }
    }

    /// The property flags: `_P` where present (2 optional, 4 read-only, 8 transient, 0x100 indexed by
    /// Spotlight, 0x400 ordered), else the older separate booleans.
    struct Flags {
        var isOptional: Bool
        var isReadOnly: Bool
        var isTransient: Bool
        var isOrdered: Bool
        var isIndexedBySpotlight: Bool

        init(_ object: ArchivedObject) throws {
            if let word = object.rawField("_P")?.int64Value, word != 0 {
                isOptional = word & 0x2 != 0
                isReadOnly = word & 0x4 != 0
                isTransient = word & 0x8 != 0
                isIndexedBySpotlight = word & 0x100 != 0
                isOrdered = word & 0x400 != 0
            } else {
                // -[NSPropertyDescription initWithCoder:] reads the booleans when _P is missing or 0.
                isOptional = try object.bool(forKey: "NSIsOptional") ?? false
                isReadOnly = try object.bool(forKey: "NSIsReadOnly") ?? false
                isTransient = try object.bool(forKey: "NSIsTransient") ?? false
                isIndexedBySpotlight = try object.bool(forKey: "NSIndexedBySpotlight") ?? false
                isOrdered = try object.bool(forKey: "NSIsOrdered") ?? false
            }
        }
    }

    mutating func attribute(from object: ArchivedObject, entity: String) throws -> Attribute {
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
            isIndexedBySpotlight: flags.isIndexedBySpotlight,
            allowsExternalBinaryDataStorage: storageFlags & 0x4 != 0,
            preservesValueInHistoryOnDeletion: storageFlags & 0x10 != 0,
            valueTransformerName: try object.string(forKey: "NSValueTransformerName"),
            versionHashModifier: try object.string(forKey: "NSVersionHashModifier"),
            renamingIdentifier: try Self.renamingIdentifier(object, name: name), userInfo: try Self.userInfo(object))
        if type == .transformable, let className = try? object.string(forKey: "NSAttributeValueClassName") {
            attribute.customClassName = className
        }
        if let expression = try? object["NSDerivationExpression"] {
            attribute.derivationExpression = expressionText(expression, entity: entity, what: "derivation of \(name)")
        }
        if let value = try? object["NSDefaultValue"] { attribute.defaultValue = Self.defaultValue(value, type: type) }
        applyValidation(try? object["NSValidationPredicates"], to: &attribute, entity: entity)
        return attribute
    }

    /// A default value as the attribute's type holds it; values Graft cannot read are left out.
    static func defaultValue(_ object: ArchivedObject, type: AttributeType) -> Value? {
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

    /// Minimum, maximum and pattern from validation predicates (`SELF >= 0`, `NOT SELF < 0`,
    /// `length <= 60`, `timeIntervalSinceReferenceDate >= 0` for dates, `SELF MATCHES "…"` with `\\` and
    /// `\"` escaped), archived as `NSComparisonPredicate` objects (`ReviewDocument.mom`) or kept as text.
    mutating func applyValidation(_ list: ArchivedObject?, to attribute: inout Attribute, entity: String) {
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
            guard let text = expressionText(element, entity: entity, what: "validation of \(attribute.name)")
            else { continue }
            var understood = false
            for (pattern, rule) in rules {
                guard let regex = try? NSRegularExpression(pattern: pattern),
                    let match = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
                    let range = Range(match.range(at: 1), in: text)
                else { continue }
                let found = String(text[range])
                understood = true
                let bound: Value?
                switch rule {
                case .minimum, .maximum: bound = Self.bound(found, attribute.type)
                case .minimumLength, .maximumLength: bound = Int64(found).map { .integer($0) }
                case .pattern:
                    attribute.regularExpression = Self.unescaped(found)
                    continue
                }
                guard let bound else {
                    // A bound the attribute's type cannot hold (1.5 for an integer, 70000 for an Integer 16)
                    // is not dropped silently.
                    warn(
                        "its validation predicate '\(text)' bounds it by \(found), which is not a value of its type "
                            + "(\(attribute.type.modelName)); it is left out", entity: entity, property: attribute.name)
                    continue
                }
                if rule == .minimum || rule == .minimumLength {
                    attribute.minValue = bound
                } else {
                    attribute.maxValue = bound
                }
            }
            if !understood {
                warn(
                    "its validation predicate '\(text)' is not a minimum, maximum or pattern; it is left out",
                    entity: entity, property: attribute.name)
            }
        }
    }

    static func bound(_ text: String, _ type: AttributeType) -> Value? {
        try? ValueText.parse(text, as: type)
    }

    /// A predicate-format string constant's contents with `\\` and `\"` unescaped.
    static func unescaped(_ text: String) -> String {
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

    mutating func relationship(from object: ArchivedObject, entity: String) throws -> Relationship {
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
        // -[NSRelationshipDescription initWithCoder:] reads the counts as 32-bit integers into unsigned
        // fields: a maximum of -1 is a to-many with no useful bound, hashed as -1.
        let maxCount = Int(Int32(truncatingIfNeeded: try object.integer(forKey: "NSMaxCount") ?? 0))
        let minCount = Int(Int32(truncatingIfNeeded: try object.integer(forKey: "NSMinCount") ?? 0))
        let ruleCode = Int(try object.integer(forKey: "NSDeleteRule") ?? 1)
        guard let rule = DeleteRule(rawValue: ruleCode) else {
            throw GraftError(.malformedInput, "unknown delete rule code \(ruleCode)", context: [.key(name)])
        }
        guard minCount >= 0 else {
            throw GraftError(.malformedInput, "the minimum count \(minCount) is negative", context: [.key(name)])
        }
        let isToMany = maxCount != 1
        var inapplicable = Relationship.Inapplicable.none
        if maxCount < 0 {
            inapplicable.maxCount = maxCount
            warn(
                "its maximum count \(maxCount) is read as unbounded, as Core Data reads it", entity: entity,
                property: name)
        }
        if flags.isOrdered && !isToMany {
            inapplicable.isOrdered = true
            warn(
                "is a to-one relationship marked ordered; Core Data ignores the flag (it keeps it in the version hash)",
                entity: entity, property: name)
        }
        return Relationship(
            name: name, destination: destination, inverse: inverse, isToMany: isToMany,
            isOrdered: flags.isOrdered && isToMany, minCount: minCount, maxCount: max(maxCount, 0),
            isOptional: flags.isOptional, isTransient: flags.isTransient, isReadOnly: flags.isReadOnly,
            deleteRule: rule, isIndexedBySpotlight: flags.isIndexedBySpotlight,
            versionHashModifier: try object.string(forKey: "NSVersionHashModifier"),
            renamingIdentifier: try Self.renamingIdentifier(object, name: name), userInfo: try Self.userInfo(object),
            inapplicable: inapplicable)
    }

    /// The renaming identifier, left out when it is the name itself: Xcode's compiler writes the name
    /// for every entity and property that has none of its own, and Core Data treats the two alike.
    static func renamingIdentifier(_ object: ArchivedObject, name: String) throws -> String? {
        let identifier = try object.string(forKey: "NSRenamingIdentifier")
        return identifier == name ? nil : identifier
    }

    mutating func fetchedProperty(from object: ArchivedObject, owner: String) throws -> FetchedProperty {
        guard let name = try object.string(forKey: "NSPropertyName") else {
            throw GraftError(.malformedInput, "a fetched property has no NSPropertyName")
        }
        let request = try object["NSFetchRequest"]
        let entity =
            (try? request?["NSEntity"]?.string(forKey: "NSEntityName"))
            ?? (try? request?.string(forKey: "NSEntityName")) ?? nil
        return FetchedProperty(
            name: name, entity: entity ?? owner,
            predicate: predicateText(try? request?["NSPredicate"], entity: owner, property: name),
            isOptional: (try? Flags(object).isOptional) ?? true, userInfo: try Self.userInfo(object))
    }

    /// A fetch request's predicate as text (archived as an `NSPredicate` or kept as text); none is "".
    mutating func predicateText(_ object: ArchivedObject??, entity: String, property: String) -> String {
        guard let object = object ?? nil else { return "" }
        if let text = ModelExpression.text(of: object) { return text }
        warn(
            "its fetch request's predicate is \(object.className ?? "an object") that Graft cannot read; it fetches everything",
            entity: entity, property: property)
        return ""
    }

    static func userInfo(_ object: ArchivedObject) throws -> [String: String] {
        object.userInfoStrings()
    }
}

extension ArchivedObject {
    /// The `NSUserInfo` dictionary of a model or mapping object: string values as they are, other
    /// property-list values in their text form; entries that are neither are left out.
    func userInfoStrings() -> [String: String] {
        var info: [String: String] = [:]
        for (key, value) in (try? self["NSUserInfo"]?.decodeStringKeyedDictionary()) ?? [] {
            if let text = try? value.decodeString() {
                info[key] = text
            } else if let plist = try? value.decodePropertyList() {
                info[key] = plist.description
            }
        }
        return info
    }
}
