import Foundation
import GraftCore

/// Writes compiled models: the `NSManagedObjectModel` keyed archive that a `.mom` file holds and that a
/// SQLite store keeps, raw-deflate compressed, in its `Z_MODELCACHE` table.
///
/// The archive has the classes and keys Apple's model compiler and Core Data write (see
/// `Formats/models.md`), so that ``CompiledModelReader`` reads it back into an equal model with equal
/// version hashes, and so that Core Data can unarchive it. Two shapes are written, as Apple writes two:
/// ``Layout/compiledModel`` for a `.mom` file and ``Layout/modelCache`` for a store.
///
/// Validation rules, fetch-request predicates, derivation expressions and the other expressions a model
/// holds are archived as `NSPredicate` and `NSExpression` objects, as Apple archives them; text outside
/// the forms Graft parses is archived as a string (see `Formats/models.md`).
///
/// Archives differ between framework versions; a ``Style`` chooses which version's shape to write.
///
/// For example:
///
/// ```swift
/// let model = try ModelFile.load(URL(fileURLWithPath: "Company.xcdatamodeld")).current
/// try CompiledModelWriter.write(model, to: URL(fileURLWithPath: "Company.mom"))
/// let cache = try CompiledModelWriter.modelCache(model)   // for Z_MODELCACHE.Z_CONTENT
/// ```
public enum CompiledModelWriter {
    /// The two shapes Apple gives the same model's archive.
    public enum Layout: Sendable, CaseIterable, CustomStringConvertible {
        /// As Xcode's model compiler writes a `.mom`: entities in an `NSMutableDictionary`, each entity
        /// listing only the properties it declares.
        case compiledModel
        /// As Core Data archives a loaded model into a store's model cache: entities in an
        /// `NSKnownKeysDictionary1`, each entity listing every property it has, inherited ones repeated
        /// as copies that belong to it.
        case modelCache

        public var description: String {
            switch self {
            case .compiledModel: return "compiled model (.mom)"
            case .modelCache: return "model cache (Z_MODELCACHE)"
            }
        }
    }

    /// Which framework version's archive to imitate: the keys Core Data added over the years are
    /// left out of archives for versions that did not write them.
    ///
    /// For example:
    ///
    /// ```swift
    /// let style = CompiledModelWriter.Style(frameworkVersion: 641)   // a store's NSPersistenceFrameworkVersion
    /// let archive = CompiledModelWriter.archive(model, style: style)
    /// ```
    ///
    /// `Formats/models.md` gives the evidence for each difference.
    public struct Style: Sendable, Hashable, CustomStringConvertible {
        /// Attributes carry `NSFlagsKey` (external storage, preserved after deletion); archives from
        /// before external binary storage (framework version 358, OS X 10.7 and iOS 5) have none
        /// (`ReviewDocument.mom`).
        public var writesAttributeFlags: Bool
        /// Entities carry `NSFetchIndexDescriptions`; fetch indexes arrived with framework version 847
        /// (the Wire caches of version 754 and below have compound indexes only).
        public var writesFetchIndexes: Bool

        public init(writesAttributeFlags: Bool = true, writesFetchIndexes: Bool = true) {
            self.writesAttributeFlags = writesAttributeFlags
            self.writesFetchIndexes = writesFetchIndexes
        }

        /// The shape of the archives the framework of this `NSPersistenceFrameworkVersion` writes.
        public init(frameworkVersion: Int) {
            self.init(writesAttributeFlags: frameworkVersion >= 358, writesFetchIndexes: frameworkVersion >= 847)
        }

        /// The shape of an archive Apple's tools wrote, found from the keys it uses, so that a model read
        /// from it is written back the same way.
        ///
        /// - Parameter archive: the bytes of a `.mom` or an inflated model cache; bytes that are not a
        ///   keyed archive give ``newest``.
        public init(matching archive: Data) {
            self = .newest
            guard let plist = try? PropertyList.decode(archive), let objects = plist["$objects"]?.arrayValue else {
                return
            }
            var sawAttribute = false
            var sawAttributeFlags = false
            var sawIndexKeys = false
            var sawFetchIndexes = false
            for object in objects {
                guard let fields = object.dictionaryValue, case .uid(let classUID)? = fields["$class"],
                    Int(classUID) < objects.count,
                    let name = objects[Int(classUID)]["$classname"]?.stringValue
                else { continue }
                if name == "NSAttributeDescription" || name == "NSDerivedAttributeDescription" {
                    sawAttribute = true
                    if fields["NSFlagsKey"] != nil { sawAttributeFlags = true }
                } else if name == "NSEntityDescription" {
                    if fields["NSCompoundIndexes"] != nil { sawIndexKeys = true }
                    if fields["NSFetchIndexDescriptions"] != nil { sawFetchIndexes = true }
                }
            }
            if sawAttribute && !sawAttributeFlags { writesAttributeFlags = false }
            if sawIndexKeys && !sawFetchIndexes { writesFetchIndexes = false }
        }

        /// What the newest framework and model compiler write.
        public static let newest = Style()

        public var description: String {
            var parts: [String] = []
            if !writesAttributeFlags { parts.append("no attribute flags") }
            if !writesFetchIndexes { parts.append("no fetch indexes") }
            return parts.isEmpty ? "newest" : parts.joined(separator: ", ")
        }
    }

    /// The keyed archive of `model`, as binary property-list bytes.
    ///
    /// For example:
    ///
    /// ```swift
    /// let archive = CompiledModelWriter.archive(model)
    /// let again = try CompiledModelReader.read(archive)   // equal to model
    /// ```
    ///
    /// - Parameters:
    ///   - model: the model to archive.
    ///   - layout: ``Layout/modelCache`` (the default, what a store keeps) or ``Layout/compiledModel``
    ///     (what a `.mom` file holds).
    ///   - style: which framework version's shape to write; the newest by default.
    public static func archive(_ model: Model, layout: Layout = .modelCache, style: Style = .newest) -> Data {
        var builder = ModelArchiveBuilder(model: model, layout: layout, style: style)
        return builder.build()
    }

    /// The model cache a SQLite store keeps in `Z_MODELCACHE.Z_CONTENT`: the ``Layout/modelCache``
    /// archive compressed with raw deflate (no zlib header, window bits −15).
    ///
    /// For example:
    ///
    /// ```swift
    /// let content = try CompiledModelWriter.modelCache(model)
    /// let archive = try RawDeflate.inflate(content)   // == CompiledModelWriter.archive(model)
    /// ```
    ///
    /// - Parameter frameworkVersion: the `NSPersistenceFrameworkVersion` of the store the model came
    ///   from, whose cache's shape to write; `nil` writes the newest shape.
    /// - Throws: `GraftError.io` when zlib fails.
    public static func modelCache(_ model: Model, frameworkVersion: Int? = nil) throws -> Data {
        let style = frameworkVersion.map { Style(frameworkVersion: $0) } ?? .newest
        return try RawDeflate.deflate(archive(model, layout: .modelCache, style: style))
    }

    /// Writes `model` as a `.mom` file (the ``Layout/compiledModel`` archive), atomically.
    ///
    /// For example:
    ///
    /// ```swift
    /// try CompiledModelWriter.write(model, to: URL(fileURLWithPath: "Company.mom"))
    /// let file = try ModelFile.load(URL(fileURLWithPath: "Company.mom"))
    /// ```
    ///
    /// - Parameter style: which framework version's shape to write; the newest by default.
    /// - Throws: `GraftError.io` naming the file when it cannot be written.
    public static func write(_ model: Model, to url: URL, style: Style = .newest) throws {
        try FileAccess.writeAtomically(archive(model, layout: .compiledModel, style: style), to: url)
    }
}

// MARK: - Building the archive

/// Builds one model archive. Every entity and property is reserved first, because the object graph is
/// full of cycles (an entity and its model, a property and its entity, a relationship and its inverse).
private struct ModelArchiveBuilder {
    typealias UID = KeyedArchiver.UID

    /// A property as an entity lists it.
    enum Listed {
        case attribute(Attribute)
        case relationship(Relationship)
        case fetched(FetchedProperty)

        var name: String {
            switch self {
            case .attribute(let attribute): return attribute.name
            case .relationship(let relationship): return relationship.name
            case .fetched(let fetched): return fetched.name
            }
        }
    }

    static let propertyChain = ["NSPropertyDescription", "NSObject"]
    static let attributeChain = ["NSAttributeDescription"] + propertyChain
    static let derivedAttributeChain = ["NSDerivedAttributeDescription"] + attributeChain
    static let relationshipChain = ["NSRelationshipDescription"] + propertyChain
    static let fetchedPropertyChain = ["NSFetchedPropertyDescription"] + propertyChain
    static let entityChain = ["NSEntityDescription", "NSObject"]
    static let modelChain = ["NSManagedObjectModel", "NSObject"]
    static let fetchRequestChain = ["NSFetchRequest", "NSPersistentStoreRequest", "NSObject"]
    static let fetchIndexChain = ["NSFetchIndexDescription", "NSObject"]
    static let fetchIndexElementChain = ["NSFetchIndexElementDescription", "NSObject"]
    static let expressionDescriptionChain = ["NSExpressionDescription"] + propertyChain
    static let decimalNumberChain = ["NSDecimalNumber", "NSNumber", "NSValue", "NSObject"]
    static let knownKeysDictionaryChain = [
        "NSKnownKeysDictionary1", "NSKnownKeysDictionary", "NSMutableDictionary", "NSDictionary", "NSObject",
    ]
    static let knownKeysMappingChain = ["NSKnownKeysMappingStrategy1", "NSKnownKeysMappingStrategy", "NSObject"]
    /// The placeholder Core Data stores in the empty slots of an `NSKnownKeysDictionary1`.
    static let emptySlotToken = "__empty_slot_token_4c24_98dc_ac1e_b773__"

    let model: Model
    let layout: CompiledModelWriter.Layout
    let style: CompiledModelWriter.Style
    var archiver = KeyedArchiver()
    var expressions = ExpressionArchiver()
    /// By entity index (`EntityDescription.index`).
    var entityUIDs: [UID] = []
    /// By entity index: the properties the entity lists, in order, and their UIDs by name.
    var listings: [[Listed]] = []
    var propertyUIDs: [[String: UID]] = []
    var sharedEmptyDictionary: UID?

    init(model: Model, layout: CompiledModelWriter.Layout, style: CompiledModelWriter.Style) {
        self.model = model
        self.layout = layout
        self.style = style
    }

    /// A predicate as an archived `NSPredicate`, or as its text when Graft does not parse it.
    mutating func predicate(_ text: String) -> UID {
        guard let parsed = ModelExpression.parsePredicate(text) else { return archiver.encode(text) }
        return expressions.archive(parsed, in: &archiver)
    }

    /// An expression as an archived `NSExpression`, or as its text when Graft does not parse it.
    mutating func expression(_ text: String) -> UID {
        guard let parsed = ModelExpression.parseExpression(text) else { return archiver.encode(text) }
        return expressions.archive(parsed, in: &archiver)
    }

    /// Entities in the order they are archived: by name, as Core Data keys them.
    var archiveOrder: [EntityDescription] { model.descriptions.sorted { $0.name < $1.name } }

    mutating func build() -> Data {
        let modelUID = archiver.reserveObject()
        let order = archiveOrder
        entityUIDs = Array(repeating: .null, count: model.descriptions.count)
        listings = Array(repeating: [], count: model.descriptions.count)
        propertyUIDs = Array(repeating: [:], count: model.descriptions.count)
        for entity in order { entityUIDs[entity.index] = archiver.reserveObject() }
        for entity in order {
            listings[entity.index] = listedProperties(of: entity)
            for property in listings[entity.index] {
                propertyUIDs[entity.index][property.name] = archiver.reserveObject()
            }
        }
        for entity in order {
            for property in listings[entity.index] { defineProperty(property, of: entity) }
        }
        let hasIndexes = model.entities.contains { entity in
            !entity.fetchIndexes.isEmpty || !entity.compoundIndexes.isEmpty
                || entity.attributes.contains(where: \.isIndexed)
        }
        for entity in order { defineEntity(entity, modelUID: modelUID, modelHasIndexes: hasIndexes) }
        defineModel(modelUID, order: order)
        return BinaryPropertyList.encode(archiver.finish(top: ["root": modelUID]))
    }

    /// The entity's own properties for a `.mom`; for a model cache, every property from the root entity
    /// down, as Core Data lists them.
    func listedProperties(of entity: EntityDescription) -> [Listed] {
        let chain = layout == .modelCache ? entity.ancestorIndices.reversed() + [entity.index] : [entity.index]
        return chain.flatMap { index -> [Listed] in
            let declaration = model.descriptions[index].declaration
            return declaration.attributes.map(Listed.attribute) + declaration.relationships.map(Listed.relationship)
                + declaration.fetchedProperties.map(Listed.fetched)
        }
    }

    // MARK: Values

    mutating func string(_ text: String?) -> PropertyList {
        guard let text else { return UID.null.propertyList }
        return archiver.encode(text).propertyList
    }

    /// A string-keyed `NSDictionary` of strings; every empty one shares a single object, as in Apple's files.
    mutating func userInfo(_ info: [String: String]) -> PropertyList {
        if info.isEmpty {
            if let shared = sharedEmptyDictionary { return shared.propertyList }
            let empty = archiver.encodeDictionary([(key: UID, value: UID)]())
            sharedEmptyDictionary = empty
            return empty.propertyList
        }
        var entries: [(key: UID, value: UID)] = []
        for key in info.keys.sorted() {
            entries.append((key: archiver.encode(key), value: archiver.encode(info[key]!)))
        }
        return archiver.encodeDictionary(entries).propertyList
    }

    mutating func mutableDictionary(_ entries: [(String, UID)]) -> PropertyList {
        var pairs: [(key: UID, value: UID)] = []
        for (key, value) in entries { pairs.append((key: archiver.encode(key), value: value)) }
        return archiver.encodeDictionary(pairs, mutable: true).propertyList
    }

    /// An array of strings (`NSMutableArray` when `mutable`).
    mutating func stringArray(_ strings: [String], mutable: Bool) -> UID {
        var elements: [UID] = []
        for text in strings { elements.append(archiver.encode(text)) }
        return archiver.encodeArray(elements, mutable: mutable)
    }

    // MARK: Model and entities

    mutating func defineModel(_ uid: UID, order: [EntityDescription]) {
        var fields: PropertyList.Dictionary = [:]
        switch layout {
        case .compiledModel:
            fields["NSEntities"] = mutableDictionary(order.map { ($0.name, entityUIDs[$0.index]) })
        case .modelCache:
            fields["NSEntities"] = knownKeysDictionary(order.map { ($0.name, entityUIDs[$0.index]) })
        }
        var identifiers: [UID] = []
        for identifier in Set(model.versionIdentifiers).sorted() { identifiers.append(archiver.encode(identifier)) }
        fields["NSVersionIdentifiers"] = archiver.encodeSet(identifiers).propertyList
        if model.fetchRequestTemplates.isEmpty {
            fields["NSFetchRequestTemplates"] = UID.null.propertyList
        } else {
            var templates: [(String, UID)] = []
            for template in model.fetchRequestTemplates {
                templates.append((template.name, fetchRequest(entity: template.entity, predicate: template.predicate)))
            }
            fields["NSFetchRequestTemplates"] = mutableDictionary(templates)
        }
        if !model.configurations.isEmpty {
            var configurations: [(String, UID)] = []
            for configuration in model.configurations {
                let members = configuration.entities.compactMap { model.entity(named: $0).map { entityUIDs[$0.index] } }
                configurations.append((configuration.name, archiver.encodeSet(members)))
            }
            fields["NSConfigurations"] = mutableDictionary(configurations)
        }
        archiver.defineObject(uid, classChain: Self.modelChain, fields: fields)
    }

    /// An `NSKnownKeysDictionary1`, the dictionary Core Data keeps a loaded model's entities in.
    mutating func knownKeysDictionary(_ entries: [(String, UID)]) -> PropertyList {
        let keys = stringArray(entries.map(\.0), mutable: false)
        let mapping = archiver.encodeObject(
            classChain: Self.knownKeysMappingChain,
            fields: ["keys": keys.propertyList, "length": .integer(Int64(entries.count)), "version": 1])
        let token = archiver.encode(Self.emptySlotToken)
        let values = archiver.encodeArray(entries.map(\.1))
        return archiver.encodeObject(
            classChain: Self.knownKeysDictionaryChain,
            fields: [
                "values": values.propertyList, "searchMapping": mapping.propertyList,
                "emptyToken": token.propertyList, "version": 1,
            ]
        ).propertyList
    }

    mutating func defineEntity(_ entity: EntityDescription, modelUID: UID, modelHasIndexes: Bool) {
        let declaration = entity.declaration
        let uid = entityUIDs[entity.index]
        var fields: PropertyList.Dictionary = [:]
        fields["NSEntityName"] = string(declaration.name)
        fields["NSClassNameForEntity"] = string(declaration.className)
        if declaration.isAbstract { fields["NSIsAbstract"] = true }
        fields["NSManagedObjectModel"] = modelUID.propertyList
        fields["NSSuperentity"] = entity.superentityIndex.map { entityUIDs[$0] }?.propertyList ?? UID.null.propertyList
        let subentities = entity.subentityIndices.map { (model.descriptions[$0].name, entityUIDs[$0]) }
        fields["NSSubentities"] = mutableDictionary(subentities)
        fields["NSProperties"] = mutableDictionary(
            listings[entity.index].map { ($0.name, propertyUIDs[entity.index][$0.name]!) })
        fields["NSUserInfo"] = userInfo(declaration.userInfo)
        fields["NSVersionHashModifier"] = string(declaration.versionHashModifier.flatMap { $0.isEmpty ? nil : $0 })
        fields["NSRenamingIdentifier"] = string(declaration.renamingIdentifier ?? declaration.name)
        if let display = declaration.coreSpotlightDisplayName {
            fields["NSCoreSpotlightDisplayName"] = expression(display).propertyList
        }
        if !declaration.uniquenessConstraints.isEmpty {
            var tuples: [UID] = []
            for names in declaration.uniquenessConstraints { tuples.append(stringArray(names, mutable: true)) }
            fields["NSUniqueTuples"] = archiver.encodeArray(tuples, mutable: true).propertyList
        }
        // Xcode's compiler gives index keys only to entities with indexes; Core Data gives them to
        // every entity once the model has any.
        let hasIndexes = !declaration.fetchIndexes.isEmpty || !declaration.compoundIndexes.isEmpty
        if hasIndexes || (layout == .modelCache && modelHasIndexes) {
            if style.writesFetchIndexes {
                var indexes: [UID] = []
                for index in declaration.fetchIndexes { indexes.append(fetchIndex(index, entity: uid)) }
                fields["NSFetchIndexDescriptions"] = archiver.encodeArray(indexes, mutable: true).propertyList
            }
            var compound: [UID] = []
            for names in declaration.compoundIndexes { compound.append(stringArray(names, mutable: true)) }
            fields["NSCompoundIndexes"] = archiver.encodeArray(compound, mutable: true).propertyList
        }
        archiver.defineObject(uid, classChain: Self.entityChain, fields: fields)
    }

    mutating func fetchIndex(_ index: FetchIndex, entity: UID) -> UID {
        let uid = archiver.reserveObject()
        var elements: [UID] = []
        for element in index.elements {
            var fields: PropertyList.Dictionary = [
                "NSPropertyName": string(element.property),
                "NSFetchIndexElementType": element.kind.lowercased() == "rtree" ? 1 : 0,
                "NSAscending": .bool(element.isAscending),
                "NSFetchIndexDescription": uid.propertyList,
            ]
            if let indexed = element.expression {
                fields["NSIndexedProperty"] = expressionDescription(named: element.property, indexed).propertyList
            }
            elements.append(archiver.encodeObject(classChain: Self.fetchIndexElementChain, fields: fields))
        }
        let list = archiver.encodeArray(elements, mutable: layout == .modelCache)
        let fields: PropertyList.Dictionary = [
            "NSIndexName": string(index.name), "NSIndexElements": list.propertyList,
            "NSEntity": entity.propertyList,
            "NSPartialIndexPredicate": index.partialIndexPredicate.map { predicate($0).propertyList }
                ?? UID.null.propertyList,
        ]
        archiver.defineObject(uid, classChain: Self.fetchIndexChain, fields: fields)
        return uid
    }

    /// The `NSExpressionDescription` an index element over an expression names (Photos.sqlite: `SELF` as
    /// object IDs under the name `expression1`): optional, read-only, belonging to no entity.
    mutating func expressionDescription(named name: String, _ indexed: FetchIndex.Element.Expression) -> UID {
        let fields: PropertyList.Dictionary = [
            "NSPropertyName": string(name), "NSRenamingIdentifier": string(name), "NSEntity": UID.null.propertyList,
            "NSExpression": expression(indexed.text).propertyList,
            "NSExpressionType": .integer(Int64(indexed.resultType.rawValue)), "NSIsOptional": true,
            "NSIsReadOnly": true, "_P": 0xF7,
        ]
        return archiver.encodeObject(classChain: Self.expressionDescriptionChain, fields: fields)
    }

    /// An `NSFetchRequest` with Core Data's default settings.
    mutating func fetchRequest(entity name: String, predicate text: String) -> UID {
        let entity = model.entity(named: name).map { entityUIDs[$0.index].propertyList } ?? string(name)
        let null = UID.null.propertyList
        let predicateText = text.isEmpty ? null : predicate(text).propertyList
        return archiver.encodeObject(
            classChain: Self.fetchRequestChain,
            fields: [
                "NSEntity": entity, "NSPredicate": predicateText,
                "NSSortDescriptors": null, "NSValuesToFetch": null, "NSValuesToGroupBy": null,
                "NSHavingPredicate": null, "NSRelationshipKeyPathsForPrefetching": null, "NSFetchLimit": 0,
                "NSFetchOffset": 0, "NSBatchSize": 0, "NSResultType": 0, "NSAllocationType": 0,
                // Includes subentities (2), property values (4), objects as faults (8), pending changes (0x10).
                "NSHasFetchRequestFlags": true, "NSFetchRequestFlags": 0x1E,
            ])
    }

    // MARK: Properties

    /// The keys every property description has, and the `_P` flag word: 1 always, 2 optional,
    /// 4 read-only, 8 transient, 0x10 no validation predicates, 0x20 no validation warnings,
    /// 0x40 no user info, 0x80 no version hash modifier, 0x100 indexed by Spotlight, 0x400 ordered.
    mutating func propertyFields(
        name: String, entity: EntityDescription, isOptional: Bool, isReadOnly: Bool, isTransient: Bool,
        isOrdered: Bool = false, isIndexedBySpotlight: Bool = false,
        validation: [(predicate: String, warning: Int64)] = [], userInfo info: [String: String],
        versionHashModifier: String?, renamingIdentifier: String?
    ) -> PropertyList.Dictionary {
        var fields: PropertyList.Dictionary = [:]
        var flags: Int64 = 0x1
        fields["NSPropertyName"] = string(name)
        fields["NSEntity"] = entityUIDs[entity.index].propertyList
        if isOptional {
            flags |= 0x2
            fields["NSIsOptional"] = true
        }
        if isReadOnly {
            flags |= 0x4
            fields["NSIsReadOnly"] = true
        }
        if isTransient {
            flags |= 0x8
            fields["NSIsTransient"] = true
        }
        if isIndexedBySpotlight {
            flags |= 0x100
            fields["NSIndexedBySpotlight"] = true
        }
        if isOrdered {
            flags |= 0x400
            fields["NSIsOrdered"] = true
        }
        if validation.isEmpty {
            flags |= 0x10 | 0x20
        } else {
            // Arrays as a .mom keeps them (ReviewDocument.mom: NSArray) or a cache (Photos.sqlite: NSMutableArray).
            var predicates: [UID] = []
            for rule in validation { predicates.append(predicate(rule.predicate)) }
            let warnings = validation.map { archiver.encode($0.warning) }
            let mutable = layout == .modelCache
            fields["NSValidationPredicates"] = archiver.encodeArray(predicates, mutable: mutable).propertyList
            fields["NSValidationWarnings"] = archiver.encodeArray(warnings, mutable: mutable).propertyList
        }
        if info.isEmpty {
            flags |= 0x40
        } else {
            fields["NSUserInfo"] = userInfo(info)
        }
        if let modifier = versionHashModifier, !modifier.isEmpty {
            fields["NSVersionHashModifier"] = string(modifier)
        } else {
            flags |= 0x80
        }
        fields["NSRenamingIdentifier"] = string(renamingIdentifier ?? name)
        fields["_P"] = .integer(flags)
        return fields
    }

    mutating func defineProperty(_ property: Listed, of entity: EntityDescription) {
        let uid = propertyUIDs[entity.index][property.name]!
        switch property {
        case .attribute(let attribute):
            defineAttribute(attribute, uid: uid, of: entity)
        case .relationship(let relationship):
            defineRelationship(relationship, uid: uid, of: entity)
        case .fetched(let fetched):
            var fields = propertyFields(
                name: fetched.name, entity: entity, isOptional: fetched.isOptional, isReadOnly: false,
                isTransient: false, userInfo: fetched.userInfo, versionHashModifier: nil, renamingIdentifier: nil)
            fields["NSFetchRequest"] = fetchRequest(entity: fetched.entity, predicate: fetched.predicate).propertyList
            fields["_NSFetchRequestEntityName"] = string(fetched.entity)
            archiver.defineObject(uid, classChain: Self.fetchedPropertyChain, fields: fields)
        }
    }

    mutating func defineAttribute(_ attribute: Attribute, uid: UID, of entity: EntityDescription) {
        var fields = propertyFields(
            name: attribute.name, entity: entity, isOptional: attribute.isOptional, isReadOnly: attribute.isReadOnly,
            isTransient: attribute.isTransient, isIndexedBySpotlight: attribute.isIndexedBySpotlight,
            validation: ValidationText.rules(for: attribute), userInfo: attribute.userInfo,
            versionHashModifier: attribute.versionHashModifier, renamingIdentifier: attribute.renamingIdentifier)
        fields["NSAttributeType"] = .integer(Int64(attribute.type.rawValue))
        fields["NSAttributeValueClassName"] = string(Self.valueClassName(of: attribute))
        fields["NSDefaultValue"] =
            attribute.defaultValue.flatMap { defaultValue($0, type: attribute.type) }?.propertyList
            ?? UID.null.propertyList
        fields["NSValueTransformerName"] = string(attribute.valueTransformerName)
        if attribute.isIndexed { fields["NSIsIndexed"] = true }
        var storage: Int64 = 0
        if attribute.allowsExternalBinaryDataStorage { storage |= 0x4 }
        if attribute.preservesValueInHistoryOnDeletion { storage |= 0x10 }
        if style.writesAttributeFlags { fields["NSFlagsKey"] = .integer(storage) }
        var chain = Self.attributeChain
        if let derivation = attribute.derivationExpression {
            chain = Self.derivedAttributeChain
            // As -[NSDerivedAttributeDescription setDerivationExpression:] leaves it: `pages.@count` as `count:(pages)`.
            fields["NSDerivationExpression"] = expression(DerivationExpression.normalized(derivation)).propertyList
            fields["NSFilteringPredicate"] = UID.null.propertyList
        }
        archiver.defineObject(uid, classChain: chain, fields: fields)
    }

    /// The Foundation class of the attribute's values, as Core Data names it for each type; for
    /// transformable attributes, the custom class if there is one.
    static func valueClassName(of attribute: Attribute) -> String? {
        switch attribute.type {
        case .integer16, .integer32, .integer64, .double, .float, .boolean: return "NSNumber"
        case .decimal: return "NSDecimalNumber"
        case .string: return "NSString"
        case .date: return "NSDate"
        case .binary: return "NSData"
        case .uuid: return "NSUUID"
        case .uri: return "NSURL"
        case .transformable: return attribute.customClassName
        case .undefined, .objectID, .composite: return nil
        }
    }

    /// A default value archived as Core Data archives it for the attribute's type: numbers and strings
    /// as plain values, dates, UUIDs, URLs and decimals as Foundation objects.
    mutating func defaultValue(_ value: Value, type: AttributeType) -> UID? {
        switch type {
        case .integer16, .integer32, .integer64:
            switch value {
            case .integer(let number): return archiver.encode(number)
            case .bool(let flag): return archiver.encode(Int64(flag ? 1 : 0))
            default:
                guard let number = value.doubleValue, number.isFinite, abs(number) < 9.2e18 else { return nil }
                return archiver.encode(Int64(number.rounded(.towardZero)))
            }
        case .double, .float:
            return value.doubleValue.map { archiver.encode($0) }
        case .decimal:
            switch value {
            case .decimal(let decimal): return decimalNumber(decimal)
            case .integer(let number): return decimalNumber(Decimal(number))
            default: return value.doubleValue.flatMap { decimalNumber(Decimal($0)) }
            }
        case .boolean:
            if case .bool(let flag) = value { return archiver.encode(flag) }
            return value.doubleValue.map { archiver.encode($0 != 0) }
        case .string:
            if case .string(let text) = value { return archiver.encode(text) }
            return nil
        case .date:
            if case .date(let date) = value { return archiver.encode(date) }
            return value.doubleValue.map { archiver.encode(Date(timeIntervalSinceReferenceDate: $0)) }
        case .binary, .transformable:
            if case .data(let bytes) = value { return archiver.encode(bytes) }
            return nil
        case .uuid:
            if case .uuid(let uuid) = value { return archiver.encode(uuid) }
            return nil
        case .uri:
            if case .uri(let url) = value { return archiver.encode(url) }
            return nil
        case .undefined, .objectID, .composite:
            return nil
        }
    }

    /// An `NSDecimalNumber` in Foundation's keyed form (see ``DecimalNumberArchive``); `nil` for NaN and
    /// numbers Foundation's decimals cannot hold.
    mutating func decimalNumber(_ decimal: Decimal) -> UID? {
        guard let parts = DecimalNumberArchive.parts(of: decimal) else { return nil }
        return archiver.encodeObject(
            classChain: Self.decimalNumberChain,
            fields: [
                "NS.exponent": .integer(Int64(parts.exponent)), "NS.length": .integer(Int64(parts.length)),
                "NS.negative": .bool(parts.isNegative), "NS.compact": .bool(parts.isCompact),
                "NS.mantissa.bo": 1, "NS.mantissa": .data(parts.mantissa),
            ])
    }

    mutating func defineRelationship(_ relationship: Relationship, uid: UID, of entity: EntityDescription) {
        // Declarations that do not apply are written back as Core Data keeps them (Relationship.Inapplicable).
        var fields = propertyFields(
            name: relationship.name, entity: entity, isOptional: relationship.isOptional,
            isReadOnly: relationship.isReadOnly, isTransient: relationship.isTransient,
            isOrdered: relationship.isOrdered || relationship.inapplicable.isOrdered,
            isIndexedBySpotlight: relationship.isIndexedBySpotlight, userInfo: relationship.userInfo,
            versionHashModifier: relationship.versionHashModifier, renamingIdentifier: relationship.renamingIdentifier)
        fields["NSMinCount"] = .integer(Int64(relationship.minCount))
        let maxCount = relationship.isToMany ? relationship.inapplicable.maxCount ?? relationship.maxCount : 1
        fields["NSMaxCount"] = .integer(Int64(maxCount))
        fields["NSDeleteRule"] = .integer(Int64(relationship.deleteRule.rawValue))
        let destination = model.entity(named: relationship.destination)
        fields["NSDestinationEntity"] = destination.map { entityUIDs[$0.index] }?.propertyList ?? UID.null.propertyList
        fields["_NSDestinationEntityName"] = string(relationship.destination)
        let inverse = destination.flatMap { destination in
            relationship.inverse.flatMap { listedUID(of: $0, from: destination) }
        }
        fields["NSInverseRelationship"] = inverse?.propertyList ?? UID.null.propertyList
        fields["_NSInverseRelationshipName"] = string(relationship.inverse)
        archiver.defineObject(uid, classChain: Self.relationshipChain, fields: fields)
    }

    /// The archived property named `name` as `entity` lists it, or as the nearest ancestor that lists it.
    func listedUID(of name: String, from entity: EntityDescription) -> UID? {
        for index in [entity.index] + entity.ancestorIndices {
            if let uid = propertyUIDs[index][name] { return uid }
        }
        return nil
    }
}

// MARK: - Validation rules as text

/// Validation rules as the predicates Core Data checks, in predicate-format text, each with the
/// `NSCocoaErrorDomain` code Core Data reports when it fails.
enum ValidationText {
    /// `NSValidationNumberTooLargeError` and the other codes from `CoreDataErrors.h`.
    static let numberTooLarge: Int64 = 1610
    static let numberTooSmall: Int64 = 1620
    static let dateTooLate: Int64 = 1630
    static let dateTooSoon: Int64 = 1640
    static let stringTooLong: Int64 = 1660
    static let stringTooShort: Int64 = 1670
    static let stringPatternMatching: Int64 = 1680

    /// The minimum, maximum and pattern of `attribute`: `SELF >= 0` for numbers,
    /// `timeIntervalSinceReferenceDate <= 7.5e8` for dates, `length <= 60` for strings and data,
    /// `SELF MATCHES "…"` for patterns.
    static func rules(for attribute: Attribute) -> [(predicate: String, warning: Int64)] {
        var rules: [(predicate: String, warning: Int64)] = []
        let subject: String
        let tooSmall: Int64
        let tooLarge: Int64
        switch attribute.type {
        case .date:
            (subject, tooSmall, tooLarge) = ("timeIntervalSinceReferenceDate", dateTooSoon, dateTooLate)
        case .string, .binary, .transformable:
            (subject, tooSmall, tooLarge) = ("length", stringTooShort, stringTooLong)
        default:
            (subject, tooSmall, tooLarge) = ("SELF", numberTooSmall, numberTooLarge)
        }
        if let text = attribute.minValue.flatMap(number) { rules.append(("\(subject) >= \(text)", tooSmall)) }
        if let text = attribute.maxValue.flatMap(number) { rules.append(("\(subject) <= \(text)", tooLarge)) }
        if let pattern = attribute.regularExpression {
            rules.append(("SELF MATCHES \(quoted(pattern))", stringPatternMatching))
        }
        return rules
    }

    /// A bound as a plain decimal number (no exponent), or `nil` for values that are not numbers.
    static func number(_ value: Value) -> String? {
        switch value {
        case .integer(let number): return String(number)
        case .bool(let flag): return flag ? "1" : "0"
        case .decimal(let decimal): return decimal.isFinite ? "\(decimal)" : nil
        case .double(let number): return plain(number)
        case .date(let date): return plain(date.timeIntervalSinceReferenceDate)
        default: return nil
        }
    }

    /// `value` in positional notation: the shortest digits that read back as the same `Double`.
    static func plain(_ value: Double) -> String? {
        guard value.isFinite else { return nil }
        if value == value.rounded(), abs(value) < 9e18 { return String(Int64(value)) }
        let text = "\(value)"
        guard let marker = text.firstIndex(where: { $0 == "e" || $0 == "E" }),
            let exponent = Int(text[text.index(after: marker)...])
        else { return text.hasSuffix(".0") ? String(text.dropLast(2)) : text }
        var mantissa = Substring(text[..<marker])
        let negative = mantissa.hasPrefix("-")
        if negative { mantissa = mantissa.dropFirst() }
        let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
        var digits = String(parts[0]) + (parts.count > 1 ? String(parts[1]) : "")
        var point = parts[0].count + exponent
        if point <= 0 {
            digits = String(repeating: "0", count: 1 - point) + digits
            point = 1
        }
        if point >= digits.count {
            digits += String(repeating: "0", count: point - digits.count)
        } else {
            digits.insert(".", at: digits.index(digits.startIndex, offsetBy: point))
            while digits.hasSuffix("0") { digits.removeLast() }
            if digits.hasSuffix(".") { digits.removeLast() }
        }
        return (negative ? "-" : "") + digits
    }

    /// A string constant as predicate format writes it: in double quotes, with `\` and `"` escaped.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for character in text {
            if character == "\\" || character == "\"" { out.append("\\") }
            out.append(character)
        }
        return out + "\""
    }
}
