import Foundation
import GraftCore

/// Reads Xcode's source form of a mapping model: the `xcmapping.xml` of an `.xcmappingmodel` folder.
///
/// The file is a Core Data XML store document of Xcode's own editing model: one `XDDEVMAPPINGMODEL`
/// object holding the two models it maps between (as Xcode 3 `XDPMModel` archives), an
/// `XDDEVENTITYMAPPING` per entity mapping and an `XDDEVATTRIBUTEMAPPING` or `XDDEVRELATIONSHIPMAPPING`
/// per property mapping. It keeps what the author chose and leaves the rest to Xcode's compiler; this
/// reader fills the rest in as that compiler does, so that a mapping model read from its source equals
/// the one read from its `.cdm` (`Formats/migration.md` gives each rule and its evidence).
extension MappingModel {
    /// Reads a mapping model from the bytes of an `xcmapping.xml`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let file = folder.appendingPathComponent("xcmapping.xml")
    /// let mapping = try MappingModel.read(xcmapping: FileAccess.read(file), path: file.path)
    /// ```
    ///
    /// - Parameters:
    ///   - data: the XML document.
    ///   - path: named in error messages.
    /// - Throws: `GraftError.malformedInput` for XML that is not well-formed or is not a mapping model's
    ///   document, for references to objects that are not there, for model data or expressions that cannot
    ///   be read, naming the object and attribute; `GraftError.unsupportedFormat` for a setting whose
    ///   compiled form Graft does not know.
    public static func read(xcmapping data: Data, path: String? = nil) throws -> MappingModel {
        do {
            // The file is added below, once for every error.
            let root = try XMLTree.parse(data)
            guard root.name == "database" else {
                throw GraftError(
                    .malformedInput,
                    "the document's root element is <\(root.name)>, not the <database> of an xcmapping.xml",
                    context: [.line(root.line)])
            }
            return try XcodeMappingDocument(root).mappingModel()
        } catch let error as GraftError {
            throw path.map { error.inFile($0) } ?? error
        }
    }
}

/// The objects of an `xcmapping.xml`, by their ids.
private struct XcodeMappingDocument {
    /// One `<object>`: its type, attributes (name → text) and relationships (name → ids).
    struct Object {
        let id: String
        let type: String
        let line: Int
        var attributes: [String: String] = [:]
        var references: [String: [String]] = [:]

        var location: GraftError.Location { .object("\(type) \(id)") }

        /// A string attribute; an empty one counts as absent.
        func string(_ name: String) -> String? {
            guard let text = attributes[name], !text.isEmpty else { return nil }
            return text
        }

        /// A `bool` attribute (`1`/`0`, as the XML store writes them).
        func flag(_ name: String) throws -> Bool? {
            guard let text = attributes[name]?.trimmingCharacters(in: .whitespacesAndNewlines) else { return nil }
            switch text {
            case "1", "YES", "true": return true
            case "0", "NO", "false": return false
            default: throw failure("'\(text)' is not a Boolean (1 or 0)", attribute: name)
            }
        }

        /// A `binary` attribute: base64 text.
        func data(_ name: String) throws -> Data? {
            guard let text = attributes[name] else { return nil }
            guard let data = Base64.decode(text) else {
                throw failure("is not base64 data", attribute: name)
            }
            return data
        }

        func failure(
            _ message: String, attribute: String? = nil, code: GraftError.Code = .malformedInput
        )
            -> GraftError
        {
            GraftError(code, message, context: [.line(line), location] + (attribute.map { [.key($0)] } ?? []))
        }

        /// Refuses attributes whose compiled form Graft does not know: leaving one out could change what
        /// the mapping does.
        func checkAttributes(known: Set<String>) throws {
            for name in attributes.keys.sorted() where !known.contains(name) {
                throw failure(
                    "is an attribute Graft does not know, so it cannot tell what Xcode compiles it into",
                    attribute: name, code: .unsupportedFormat)
            }
        }
    }

    static let modelType = "XDDEVMAPPINGMODEL"
    static let entityMappingType = "XDDEVENTITYMAPPING"
    static let attributeMappingType = "XDDEVATTRIBUTEMAPPING"
    static let relationshipMappingType = "XDDEVRELATIONSHIPMAPPING"

    static let modelAttributes: Set = [
        "sourcemodelpath", "sourcemodeldata", "destinationmodelpath", "destinationmodeldata",
    ]
    static let entityMappingAttributes: Set = [
        "name", "sourcename", "destinationname", "mappingtypename", "mappingnumber", "migrationpolicyclassname",
        "autogenerateexpression",
    ]
    static let propertyMappingAttributes: Set = ["name", "valueexpressiondata", "autogenerateexpression"]

    var objects: [String: Object] = [:]
    var root: Object

    init(_ database: XMLElement) throws {
        var models: [Object] = []
        for element in database.children(named: "object") {
            guard let id = element["id"], let type = element["type"] else {
                throw GraftError(
                    .malformedInput, "an <object> has no \(element["id"] == nil ? "id" : "type")",
                    context: [.line(element.line)])
            }
            var object = Object(id: id, type: type.uppercased(), line: element.line)
            for attribute in element.children(named: "attribute") {
                guard let name = attribute["name"] else {
                    throw object.failure("has an <attribute> without a name")
                }
                object.attributes[name.lowercased()] = attribute.text
            }
            for relationship in element.children(named: "relationship") {
                guard let name = relationship["name"] else {
                    throw object.failure("has a <relationship> without a name")
                }
                object.references[name.lowercased()] = (relationship["idrefs"] ?? "").split(separator: " ").map(
                    String.init)
            }
            guard objects[id] == nil else { throw object.failure("repeats the id \(id)") }
            objects[id] = object
            if object.type == Self.modelType { models.append(object) }
        }
        guard models.count == 1 else {
            throw GraftError(
                .malformedInput,
                models.isEmpty
                    ? "the document has no \(Self.modelType) object: it is not a mapping model"
                    : "the document has \(models.count) \(Self.modelType) objects; a mapping model has one",
                context: [.line(database.line)])
        }
        root = models[0]
    }

    /// The objects an object's relationship refers to, each of the given type.
    func referenced(_ name: String, of owner: Object, type: String) throws -> [Object] {
        try (owner.references[name] ?? []).map { id in
            guard let object = objects[id] else {
                throw owner.failure("refers to \(id), which is not in the document", attribute: name)
            }
            guard object.type == type else {
                throw owner.failure("refers to \(id), a \(object.type), not a \(type)", attribute: name)
            }
            return object
        }
    }

    /// One of the two models, from its archived `XDPMModel`; `nil` when the document keeps none.
    func model(_ attribute: String) throws -> Model? {
        guard let data = try root.data(attribute) else { return nil }
        do {
            return try XcodeElementsReader.read(data)
        } catch let error as GraftError {
            var wrapped = error
            wrapped.message = "is not a model Graft reads: " + error.message
            wrapped.context = [.line(root.line), root.location, .key(attribute)] + error.context
            throw wrapped
        }
    }

    func mappingModel() throws -> MappingModel {
        try root.checkAttributes(known: Self.modelAttributes)
        let source = try model("sourcemodeldata")
        let destination = try model("destinationmodeldata")
        var listed = try referenced("entitymappings", of: root, type: Self.entityMappingType)
        if root.references["entitymappings"] == nil {
            listed = objects.values.filter { $0.type == Self.entityMappingType }.sorted { $0.line < $1.line }
        }
        // In `mappingnumber` order (the order of the idrefs, then of the document, for ties).
        var numbered: [(number: Int, position: Int, object: Object)] = []
        for (position, object) in listed.enumerated() {
            var number = Int.max
            if let text = object.attributes["mappingnumber"]?.trimmingCharacters(in: .whitespacesAndNewlines) {
                guard let parsed = Int(text) else {
                    throw object.failure("'\(text)' is not an integer", attribute: "mappingnumber")
                }
                number = parsed
            }
            numbered.append((number, position, object))
        }
        numbered.sort { ($0.number, $0.position) < ($1.number, $1.position) }
        var mappings: [EntityMapping] = []
        for (_, _, object) in numbered {
            mappings.append(try entityMapping(object, source: source, destination: destination))
        }
        // Relationship mappings name the entity mappings of their destination objects, so they are
        // generated once every mapping has its name.
        for (index, (_, _, object)) in numbered.enumerated() {
            mappings[index].relationshipMappings = try relationshipMappings(
                object, of: mappings[index], in: mappings, source: source)
        }
        return MappingModel(entityMappings: mappings)
    }

    func entityMapping(_ object: Object, source: Model?, destination: Model?) throws -> EntityMapping {
        try object.checkAttributes(known: Self.entityMappingAttributes)
        let sourceName = object.string("sourcename")
        let destinationName = object.string("destinationname")
        let policy = object.string("migrationpolicyclassname")
        // Xcode writes no name for a mapping it named itself: `CarToCar`, or the one entity's name.
        let name =
            object.string("name")
            ?? {
                switch (sourceName, destinationName) {
                case (let from?, let to?): return from + "To" + to
                case (nil, let to?): return to
                case (let from?, nil): return from
                case (nil, nil): return ""
                }
            }()
        guard !name.isEmpty else { throw object.failure("names neither a source nor a destination entity") }
        let kind = try Self.kind(of: object, source: sourceName, destination: destinationName, policy: policy)
        var mapping = EntityMapping(
            name: name, kind: kind, sourceEntity: sourceName,
            sourceEntityVersionHash: sourceName.flatMap { source?.entity(named: $0)?.versionHash },
            destinationEntity: destinationName,
            destinationEntityVersionHash: destinationName.flatMap { destination?.entity(named: $0)?.versionHash },
            migrationPolicyClassName: policy)
        if let sourceName, let source, source.entity(named: sourceName) == nil {
            throw object.failure("the source model has no entity \(sourceName)", attribute: "sourcename")
        }
        if let destinationName, let destination, destination.entity(named: destinationName) == nil {
            throw object.failure(
                "the destination model has no entity \(destinationName)", attribute: "destinationname")
        }
        if let sourceName {
            guard try object.flag("autogenerateexpression") ?? true else {
                throw object.failure(
                    "is 0: the source expression is not generated, and Graft does not know where Xcode keeps one "
                        + "written by hand", attribute: "autogenerateexpression", code: .unsupportedFormat)
            }
            let expression = MappingExpressions.sourceExpression(entity: sourceName)
            mapping.sourceExpression = expression.format
            mapping.filterPredicate = MappingExpressions.filterPredicate(of: expression)
        }
        let sourceEntity = sourceName.flatMap { source?.entity(named: $0) }
        mapping.attributeMappings = try propertyObjects(
            "attributemappings", of: object, type: Self.attributeMappingType
        )
        .map { property in
            let name = try Self.propertyName(property)
            return PropertyMapping(
                name: name,
                valueExpression: try Self.storedExpression(property)?.format
                    ?? Self.generatedAttributeValue(name, sourceName: sourceName, sourceEntity: sourceEntity)?.format)
        }
        return mapping
    }

    /// The kind: the one `mappingtypename` names, or for `Undefined` (all five of the corpus file's) the
    /// one Xcode's compiler picks.
    static func kind(
        of object: Object, source: String?, destination: String?, policy: String?
    ) throws -> EntityMapping.Kind {
        let typeName = object.string("mappingtypename") ?? "Undefined"
        if let named = EntityMapping.Kind.allCases.first(where: { $0.description == typeName.lowercased() }),
            named != .undefined
        {
            return named
        }
        guard typeName.lowercased() == "undefined" else {
            throw object.failure(
                "'\(typeName)' is not a mapping type (Undefined, Custom, Add, Remove, Copy or Transform)",
                attribute: "mappingtypename")
        }
        if source == nil { return .add }
        if destination == nil { return .remove }
        return policy == nil ? .copy : .custom
    }

    func propertyObjects(_ name: String, of owner: Object, type: String) throws -> [Object] {
        let objects = try referenced(name, of: owner, type: type)
        for object in objects { try object.checkAttributes(known: Self.propertyMappingAttributes) }
        // Xcode's compiler writes them in name order, whatever order the document lists them in.
        return try objects.map { (try Self.propertyName($0), $0) }.sorted { $0.0 < $1.0 }.map(\.1)
    }

    static func propertyName(_ object: Object) throws -> String {
        guard let name = object.string("name") else { throw object.failure("has no name") }
        return name
    }

    /// The value expression the author wrote (`valueexpressiondata`, an archived `NSExpression`), which
    /// the compiler keeps whatever `autogenerateexpression` says.
    static func storedExpression(_ object: Object) throws -> ModelExpression? {
        guard let data = try object.data("valueexpressiondata") else { return nil }
        do {
            let archive = try KeyedArchive(data: data)
            guard let expression = try archive.topObject(forKey: "root") else {
                throw GraftError(.malformedInput, "the archive has no root object")
            }
            return try ModelExpression(archived: expression)
        } catch let error as GraftError {
            var wrapped = error
            wrapped.message = "is not an expression Graft reads: " + error.message
            wrapped.context = [.line(object.line), object.location, .key("valueexpressiondata")] + error.context
            throw wrapped
        }
    }

    /// `$source.name` when the source entity has the attribute (or when there is no source model to ask);
    /// nothing when there is no source entity.
    static func generatedAttributeValue(
        _ name: String, sourceName: String?, sourceEntity: EntityDescription?
    ) -> ModelExpression? {
        guard sourceName != nil else { return nil }
        if let sourceEntity, sourceEntity.attribute(named: name) == nil { return nil }
        return MappingExpressions.sourceValue(name)
    }

    func relationshipMappings(
        _ object: Object, of mapping: EntityMapping, in mappings: [EntityMapping], source: Model?
    )
        throws -> [PropertyMapping]
    {
        let sourceEntity = mapping.sourceEntity.flatMap { source?.entity(named: $0) }
        return try propertyObjects("relationshipmappings", of: object, type: Self.relationshipMappingType).map {
            property in
            let name = try Self.propertyName(property)
            if let stored = try Self.storedExpression(property) {
                return PropertyMapping(name: name, valueExpression: stored.format)
            }
            guard mapping.sourceEntity != nil else { return PropertyMapping(name: name) }
            guard let source, let sourceEntity else {
                return PropertyMapping(
                    name: name, valueExpression: MappingExpressions.destinations(ofSourceRelationship: name).format)
            }
            guard let relationship = sourceEntity.relationship(named: name) else { return PropertyMapping(name: name) }
            // The mappings whose source objects the relationship can lead to: one mapping of the destination
            // entity itself is named; several (the entity and its subentities) are left to the manager.
            let target = source.destination(of: relationship)
            let covering = mappings.filter { candidate in
                guard let entity = candidate.sourceEntity.flatMap({ source.entity(named: $0) }) else { return false }
                return source.isKind(entity, of: target)
            }
            if covering.count == 1, covering[0].sourceEntity == target.name {
                return PropertyMapping(
                    name: name,
                    valueExpression: MappingExpressions.destinations(of: name, throughMapping: covering[0].name).format)
            }
            return PropertyMapping(
                name: name, valueExpression: MappingExpressions.destinations(ofSourceRelationship: name).format)
        }
    }
}
