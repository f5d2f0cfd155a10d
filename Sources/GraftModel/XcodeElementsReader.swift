import Foundation
import GraftCore

/// Reads the `elements` file of an Xcode 3 `.xcdatamodel` folder (one with no `contents` file).
///
/// Xcode 3 saved its models as an `NSKeyedArchiver` archive of its own modelling classes: an
/// `XDPMModel` whose root `XDModelPackage` holds the `XDPMEntity` objects, each owning `XDPMAttribute`
/// and `XDPMRelationship` objects. The Core Data settings are not fields of those objects but tagged
/// values of *stereotypes* attached to them (`XDUMLStereotypeImp` objects whose owned attributes are
/// `XDUMLPropertyImp` objects: the tag is the `_name`, the value the `_default`).
///
/// Which tags become which model fields (`XD_PSK_` tags sit in an entity's `XD_PStereotype`,
/// `XD_PPSK_` in every property's `XD_PPropStereotype`, `XD_PAttK_` in an attribute's
/// `XD_PAtt_Stereotype`, `XD_PRK_` in a relationship's `XD_PR_Stereotype`):
///
/// - entity: `_name` → `name`; `XD_PSK_entityClassName` → `className`; `XD_PSK_isAbstract` (else the
///   entity's own `_isAbstract`) → `isAbstract`; the generalizations bucket → `parent`;
///   `XD_PSK_versionHashModifier`, `XD_PSK_elementID`, `XD_PSK_userInfo` → modifier, renaming identifier,
///   user info; `XDPMUniquenessConstraints`, `XDPMCompoundIndexes` → constraints and compound indexes.
/// - every property: `_name` → `name`; `XD_PPSK_isOptional` (absent: optional), `XD_PPSK_isTransient`,
///   `XD_PPSK_versionHashModifier`, `XD_PPSK_elementID`, `XD_PPSK_userInfo`; attributes also
///   `XD_PPSK_isIndexed`.
/// - attribute: `XD_PAttK_attributeType` → `type` (the integer code: 100 Integer 16, 700 String, 900 Date,
///   1800 Transformable, …); `XD_PAttK_defaultValueAsString`, `XD_PAttK_minValueString`,
///   `XD_PAttK_maxValueString` → default, minimum, maximum (text, read as the `contents` reader reads
///   it); `XD_PAttK_regularExpressionString`, `XD_PAttK_valueTransformerName`.
/// - relationship: `XD_PRK_destination` and `XD_PRK_inverseRelationship` (references to the entity and
///   relationship objects) → `destination`, `inverse`; `XD_PRK_isToMany` (absent: to-one);
///   `XD_PRK_minCount` (absent: 0); `XD_PRK_maxCount` (absent on a to-many: unbounded; a to-one's is
///   1); `XD_PRK_deleteRule` → `deleteRule` (0 No Action, 1 Nullify, 2 Cascade, 3 Deny).
/// - model: `_modelVersionIdentifier` → `versionIdentifiers`; `_configurationsByName` → configurations.
///
/// Unknown tags and fields are ignored; Xcode's Sync Services settings (`com.apple.syncservices.*`
/// user-info keys) are left out of `userInfo`. Attributes and relationships come out sorted by name,
/// entities too: the archive keeps them in dictionaries, whose order means nothing. Fetched properties
/// and fetch request templates were not in any sample and are refused with an error rather than lost.
/// Subentities and constraints are shown by the models a mapping model keeps in this format.
/// `Formats/xcode3-elements.md` describes the layout and the evidence for each rule.
///
/// For example:
///
/// ```swift
/// let folder = URL(fileURLWithPath: "Recipes.xcdatamodel")
/// let model = try XcodeElementsReader.read(contentsOf: folder.appendingPathComponent("elements"))
/// print(model.entities.map(\.name))   // ["Image", "Ingredient", "Recipe", "RecipeType"]
/// ```
public enum XcodeElementsReader {
    /// Reads a model from the bytes of an `elements` file.
    ///
    /// For example:
    ///
    /// ```swift
    /// let model = try XcodeElementsReader.read(data, path: "Recipes.xcdatamodel/elements")
    /// ```
    ///
    /// - Parameter path: named in error messages.
    /// - Throws: `GraftError.malformedInput` for bytes that are not a keyed archive, or an archive whose
    ///   entities or properties cannot be read (naming the entity and property);
    ///   `GraftError.unsupportedFormat` for a keyed archive that is not an Xcode 3 model, or one using a
    ///   feature Graft cannot read from this format yet; `GraftError.invalidModel` for a model that
    ///   contradicts itself.
    public static func read(_ data: Data, path: String? = nil) throws -> Model {
        var warnings: [String] = []
        return try read(data, path: path, warnings: &warnings)
    }

    /// Reads a model from the bytes of an `elements` file, appending to `warnings` what it read as
    /// Core Data reads it rather than as written (a negative maximum count, read as unbounded).
    ///
    /// - Throws: as ``read(_:path:)``.
    public static func read(_ data: Data, path: String? = nil, warnings: inout [String]) throws -> Model {
        var found: [String] = []
        defer { warnings += found.map { (path.map { "\($0): " } ?? "") + $0 } }
        do {
            let archive: KeyedArchive
            do {
                archive = try KeyedArchive(data: data)
            } catch let error as GraftError {
                var wrapped = error
                wrapped.message = "not an Xcode 3 model archive: " + error.message
                throw wrapped
            }
            guard let root = try archive.topObject(forKey: "root") else {
                throw GraftError(.malformedInput, "the archive has no root object")
            }
            guard root.isKind(of: "XDPMModel") else {
                throw GraftError(
                    .unsupportedFormat,
                    "the archive holds \(root.className ?? "a plain value"), not an Xcode 3 model (XDPMModel)")
            }
            return try model(from: root, warnings: &found)
        } catch let error as GraftError {
            throw path.map { error.inFile($0) } ?? error
        }
    }

    /// Reads a model from an `elements` file.
    ///
    /// For example:
    ///
    /// ```swift
    /// let model = try XcodeElementsReader.read(contentsOf: folder.appendingPathComponent("elements"))
    /// ```
    ///
    /// - Throws: `GraftError.fileNotFound` or `GraftError.io` when the file cannot be read, and the
    ///   errors of ``read(_:path:)``.
    public static func read(contentsOf url: URL) throws -> Model {
        try read(FileAccess.read(url), path: url.relativePath)
    }

    /// Reads a model from an `elements` file, appending what it read leniently to `warnings`.
    public static func read(contentsOf url: URL, warnings: inout [String]) throws -> Model {
        try read(FileAccess.read(url), path: url.relativePath, warnings: &warnings)
    }

    // MARK: Model

    private static func model(from root: ArchivedObject, warnings: inout [String]) throws -> Model {
        guard let package = try root["_xd_rootPackage"] else {
            throw GraftError(.malformedInput, "the model has no root package", context: [.key("_xd_rootPackage")])
        }
        var entities: [Entity] = []
        for object in try entityObjects(in: package) {
            entities.append(try entity(from: object, warnings: &warnings))
        }
        return try Model(
            entities: entities.sorted { $0.name < $1.name }, configurations: try configurations(of: root),
            versionIdentifiers: try versionIdentifiers(of: root))
    }

    /// The entities of a package and of the packages inside it.
    private static func entityObjects(in package: ArchivedObject) throws -> [ArchivedObject] {
        var visited = Set<UInt64>()
        var found: [ArchivedObject] = []
        func collect(_ package: ArchivedObject) throws {
            if let uid = package.uid, !visited.insert(uid).inserted { return }
            found += try bucket("Classes", of: package).filter { $0.isKind(of: "XDPMEntity") }
            for inner in try bucket("Packages", of: package) { try collect(inner) }
        }
        try collect(package)
        return found
    }

    /// `_modelVersionIdentifier`: a string, or (leniently) a collection of strings.
    private static func versionIdentifiers(of root: ArchivedObject) throws -> [String] {
        guard let value = try root["_modelVersionIdentifier"] else { return [] }
        if let text = try? value.decodeString() { return text.isEmpty ? [] : [text] }
        return try value.decodeArray().map { try $0.decodeString() }.filter { !$0.isEmpty }.sorted()
    }

    /// `_configurationsByName`: configuration name → its member entities (objects or names).
    private static func configurations(of root: ArchivedObject) throws -> [Configuration] {
        var configurations: [Configuration] = []
        for (name, members) in try root["_configurationsByName"]?.decodeStringKeyedDictionary() ?? [] {
            guard let elements = try? members.decodeArray() else {
                throw GraftError(
                    .unsupportedFormat,
                    "configuration '\(name)' is stored as \(members.className ?? members.rawValue.typeName), "
                        + "which Graft cannot read from an Xcode 3 model",
                    context: [.key("_configurationsByName"), .key(name)])
            }
            let names = try elements.map { element -> String in
                if element.isKind(of: "XDPMEntity") { return try elementName(element, what: "a configuration member") }
                return try element.decodeString()
            }
            configurations.append(Configuration(name: name, entities: names.sorted()))
        }
        return configurations.sorted { $0.name < $1.name }
    }

    // MARK: Entities and properties

    private static func entity(from object: ArchivedObject, warnings: inout [String]) throws -> Entity {
        let name = try elementName(object, what: "an entity")
        do {
            let tags = try TaggedValues(of: object)
            let isAbstract = try tags.flag(Key.entityIsAbstract) ?? object.bool(forKey: "_isAbstract") ?? false
            var entity = Entity(
                name: name, className: try tags.string(Key.entityClassName), parent: try parent(of: object),
                isAbstract: isAbstract, versionHashModifier: try tags.string(Key.entityVersionHashModifier),
                renamingIdentifier: try tags.string(Key.entityElementID),
                userInfo: try tags.userInfo(Key.entityUserInfo))
            entity.uniquenessConstraints = try tags.nameLists(Key.uniquenessConstraints)
            entity.compoundIndexes = try tags.nameLists(Key.compoundIndexes)
            if let requests = tags[Key.fetchRequests], (try? requests.decodeArray())?.isEmpty != true {
                throw GraftError(
                    .unsupportedFormat,
                    "the entity has fetch request templates, which Graft cannot read from an Xcode 3 model yet",
                    context: [.key(Key.fetchRequests)])
            }
            for property in try bucket("OwnedAttributes", of: object) {
                let propertyName = try elementName(property, what: "a property")
                do {
                    if property.isKind(of: "XDPMAttribute") {
                        entity.attributes.append(
                            try attribute(from: property, name: propertyName, entity: name, warnings: &warnings))
                    } else if property.isKind(of: "XDPMRelationship") {
                        entity.relationships.append(
                            try relationship(from: property, name: propertyName, entity: name, warnings: &warnings))
                    } else {
                        throw GraftError(
                            .unsupportedFormat,
                            "the property is \(describe(property)), which Graft cannot read from an Xcode 3 "
                                + "model (only XDPMAttribute and XDPMRelationship)")
                    }
                } catch let error as GraftError {
                    throw error.at(.key(propertyName))
                }
            }
            entity.attributes.sort { $0.name < $1.name }
            entity.relationships.sort { $0.name < $1.name }
            return entity
        } catch let error as GraftError {
            throw error.at(.entity(name))
        }
    }

    /// The parent entity, from the generalizations bucket: each element is an `XDPMEntity`, or a
    /// generalization object (`XDUMLGeneralizationImp`, as a mapping model's models have) whose `_general`
    /// is one.
    private static func parent(of entity: ArchivedObject) throws -> String? {
        var parents: [String] = []
        for element in try bucket("Generalizations", of: entity) {
            let general = element.isKind(of: "XDPMEntity") ? element : try element["_general"]
            guard let general, general.isKind(of: "XDPMEntity") else {
                throw GraftError(
                    .malformedInput, "a generalization (\(describe(element))) does not lead to a parent entity",
                    context: element.uid.map { [.object("$objects[\($0)]")] } ?? [])
            }
            parents.append(try elementName(general, what: "a parent entity"))
        }
        guard parents.count <= 1 else {
            throw GraftError(
                .malformedInput,
                "the entity has \(parents.count) parents (\(parents.joined(separator: ", "))); "
                    + "Core Data allows one")
        }
        return parents.first
    }

    private static func attribute(
        from object: ArchivedObject, name: String, entity: String, warnings: inout [String]
    ) throws -> Attribute {
        let tags = try TaggedValues(of: object)
        let code = try tags.integer(Key.attributeType) ?? 0
        guard let type = AttributeType(rawValue: Int32(truncatingIfNeeded: code)), Int64(type.rawValue) == code else {
            throw GraftError(.malformedInput, "unknown attribute type code \(code)", context: [.key(Key.attributeType)])
        }
        // The same text as a `contents` file's, read by the same rules.
        func read(_ key: String, _ reader: ValueText.ModelTextReader) throws -> Value? {
            guard let text = try tags.string(key) else { return nil }
            let read = try reader(text, type, key)
            if let warning = read.warning { warnings.append("\(entity).\(name): \(warning)") }
            return read.value
        }
        return Attribute(
            name: name, type: type, isOptional: try tags.flag(Key.isOptional) ?? true,
            isTransient: try tags.flag(Key.isTransient) ?? false,
            defaultValue: try read(Key.defaultValue, ValueText.modelDefault),
            minValue: try read(Key.minValue, ValueText.modelBound),
            maxValue: try read(Key.maxValue, ValueText.modelBound),
            regularExpression: try tags.string(Key.regularExpression), isIndexed: try tags.flag(Key.isIndexed) ?? false,
            valueTransformerName: try tags.string(Key.valueTransformerName),
            versionHashModifier: try tags.string(Key.versionHashModifier),
            renamingIdentifier: try tags.string(Key.elementID), userInfo: try tags.userInfo(Key.userInfo))
    }

    private static func relationship(
        from object: ArchivedObject, name: String, entity: String, warnings: inout [String]
    ) throws -> Relationship {
        let tags = try TaggedValues(of: object)
        guard let destinationObject = tags[Key.destination] else {
            throw GraftError(
                .malformedInput, "the relationship has no destination entity", context: [.key(Key.destination)])
        }
        let destination = try referencedName(destinationObject, what: "the destination entity")
        let inverse = try tags[Key.inverse].map { try referencedName($0, what: "the inverse relationship") }
        let isToMany = try tags.flag(Key.isToMany) ?? false
        let minCount = try tags.integer(Key.minCount) ?? 0
        // A to-many without a maximum is unbounded (0); a to-one always has a maximum of 1. A negative
        // maximum is unbounded to Core Data too, and kept for the version hash.
        var maxCount = isToMany ? try tags.integer(Key.maxCount) ?? 0 : 1
        var inapplicable = Relationship.Inapplicable.none
        if maxCount < 0 {
            inapplicable.maxCount = Int(Int32(clamping: maxCount))
            warnings.append(
                "\(entity).\(name): its maximum count \(maxCount) is read as unbounded, as Core Data reads it")
            maxCount = 0
        }
        let ruleCode = try tags.integer(Key.deleteRule) ?? Int64(DeleteRule.nullify.rawValue)
        guard let rule = DeleteRule(rawValue: Int(truncatingIfNeeded: ruleCode)), Int64(rule.rawValue) == ruleCode
        else {
            throw GraftError(.malformedInput, "unknown delete rule code \(ruleCode)", context: [.key(Key.deleteRule)])
        }
        return Relationship(
            name: name, destination: destination, inverse: inverse, isToMany: isToMany,
            minCount: Int(clamping: minCount), maxCount: Int(clamping: maxCount),
            isOptional: try tags.flag(Key.isOptional) ?? true, isTransient: try tags.flag(Key.isTransient) ?? false,
            deleteRule: rule, versionHashModifier: try tags.string(Key.versionHashModifier),
            renamingIdentifier: try tags.string(Key.elementID), userInfo: try tags.userInfo(Key.userInfo),
            inapplicable: inapplicable)
    }

    // MARK: Archive helpers

    /// The elements of one of Xcode's buckets (`XDBucketFor<name>storage`): a dictionary's values or a
    /// collection's elements; none when the bucket was not encoded.
    private static func bucket(_ name: String, of element: ArchivedObject) throws -> [ArchivedObject] {
        guard let storage = try element["XDBucketFor\(name)storage"] else { return [] }
        if storage.contains("NS.keys") || storage.contains("searchMapping") {
            return try storage.decodeDictionary().map(\.value)
        }
        return try storage.decodeArray()
    }

    /// An element's `_name`, which must be a non-empty string.
    private static func elementName(_ element: ArchivedObject, what: String) throws -> String {
        guard let name = try element.string(forKey: "_name"), !name.isEmpty else {
            throw GraftError(
                .malformedInput, "\(what) (\(describe(element))) has no name",
                context: element.uid.map { [.object("$objects[\($0)]")] } ?? [])
        }
        return name
    }

    /// "an object of class XDPMEntity", "a string", "an integer", … for messages.
    private static func describe(_ object: ArchivedObject) -> String {
        if let className = object.className { return "an object of class \(className)" }
        let name = object.rawValue.typeName
        return ("aeiou".contains(name.first ?? "x") ? "an " : "a ") + name
    }

    /// The name of an entity or relationship a tag refers to: the object itself, or (leniently) its name.
    private static func referencedName(_ value: ArchivedObject, what: String) throws -> String {
        if value.className == nil, let text = try? value.decodeString(), !text.isEmpty { return text }
        return try elementName(value, what: what)
    }

    /// The tag names Graft reads. `XD_PSK_` tags belong to entities (stereotype `XD_PStereotype`),
    /// `XD_PPSK_` to every property (`XD_PPropStereotype`), `XD_PAttK_` to attributes
    /// (`XD_PAtt_Stereotype`), `XD_PRK_` to relationships (`XD_PR_Stereotype`).
    private enum Key {
        static let entityClassName = "XD_PSK_entityClassName"
        static let entityIsAbstract = "XD_PSK_isAbstract"
        static let entityVersionHashModifier = "XD_PSK_versionHashModifier"
        static let entityUserInfo = "XD_PSK_userInfo"
        static let fetchRequests = "XD_PSK_fetchRequestsArray"
        static let entityElementID = "XD_PSK_elementID"
        static let uniquenessConstraints = "XDPMUniquenessConstraints"
        static let compoundIndexes = "XDPMCompoundIndexes"

        static let isOptional = "XD_PPSK_isOptional"
        static let isTransient = "XD_PPSK_isTransient"
        static let isIndexed = "XD_PPSK_isIndexed"
        static let versionHashModifier = "XD_PPSK_versionHashModifier"
        static let elementID = "XD_PPSK_elementID"
        static let userInfo = "XD_PPSK_userInfo"

        static let attributeType = "XD_PAttK_attributeType"
        static let defaultValue = "XD_PAttK_defaultValueAsString"
        static let minValue = "XD_PAttK_minValueString"
        static let maxValue = "XD_PAttK_maxValueString"
        static let regularExpression = "XD_PAttK_regularExpressionString"
        static let valueTransformerName = "XD_PAttK_valueTransformerName"

        static let destination = "XD_PRK_destination"
        static let inverse = "XD_PRK_inverseRelationship"
        static let isToMany = "XD_PRK_isToMany"
        static let minCount = "XD_PRK_minCount"
        static let maxCount = "XD_PRK_maxCount"
        static let deleteRule = "XD_PRK_deleteRule"
    }

    /// The tagged values of every stereotype attached to an element, by tag name; a tag whose value is
    /// `$null` is absent.
    private struct TaggedValues {
        private var values: [String: ArchivedObject] = [:]

        init(of element: ArchivedObject) throws {
            for stereotype in try XcodeElementsReader.bucket("Stereotypes", of: element) {
                for property in try XcodeElementsReader.bucket("OwnedAttributes", of: stereotype) {
                    guard let tag = try property.string(forKey: "_name") else { continue }
                    if let value = try property["_default"] { values[tag] = value }
                }
            }
        }

        subscript(tag: String) -> ArchivedObject? { values[tag] }

        /// A text value; an empty string counts as absent.
        func string(_ tag: String) throws -> String? {
            guard let value = values[tag] else { return nil }
            guard let text = try? value.decodeString() else { throw mismatch(tag, value, "a string") }
            return text.isEmpty ? nil : text
        }

        /// A Boolean, an integer (non-zero is true) or the text `YES`/`NO`.
        func flag(_ tag: String) throws -> Bool? {
            guard let value = values[tag] else { return nil }
            if let flag = try? value.decodeBool() { return flag }
            switch (try? value.decodeString())?.uppercased() {
            case "YES", "TRUE", "1": return true
            case "NO", "FALSE", "0": return false
            default: throw mismatch(tag, value, "a Boolean")
            }
        }

        /// An integer, or text holding one.
        func integer(_ tag: String) throws -> Int64? {
            guard let value = values[tag] else { return nil }
            if let number = try? value.decodeInteger() { return number }
            if let text = try? value.decodeString(), let number = Int64(text.trimmingCharacters(in: .whitespaces)) {
                return number
            }
            throw mismatch(tag, value, "an integer")
        }

        /// Lists of property names (uniqueness constraints, compound indexes): an array of arrays of
        /// strings; none when the tag is absent.
        func nameLists(_ tag: String) throws -> [[String]] {
            guard let value = values[tag] else { return [] }
            do {
                return try value.decodeArray().map { try $0.decodeArray().map { try $0.decodeString() } }
            } catch let error as GraftError {
                throw error.at(.key(tag))
            }
        }

        /// A user-info dictionary, without Xcode's own Sync Services keys; values that are not strings
        /// are kept in their property-list text form.
        func userInfo(_ tag: String) throws -> [String: String] {
            guard let value = values[tag] else { return [:] }
            let entries: [(key: String, value: ArchivedObject)]
            do {
                entries = try value.decodeStringKeyedDictionary()
            } catch let error as GraftError {
                throw error.at(.key(tag))
            }
            var info: [String: String] = [:]
            for (key, entry) in entries where !key.hasPrefix("com.apple.syncservices.") {
                if let text = try? entry.decodeString() {
                    info[key] = text
                } else {
                    info[key] = try entry.decodePropertyList().description
                }
            }
            return info
        }

        private func mismatch(_ tag: String, _ value: ArchivedObject, _ expected: String) -> GraftError {
            var context: [GraftError.Location] = [.key(tag)]
            if let uid = value.uid { context.insert(.object("$objects[\(uid)]"), at: 0) }
            return GraftError(
                .malformedInput, "the value is \(XcodeElementsReader.describe(value)), not \(expected)",
                context: context)
        }
    }
}
