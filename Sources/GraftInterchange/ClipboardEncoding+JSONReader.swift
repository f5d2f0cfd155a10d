import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel

/// Reads a JSON clipboard in one pass over the bytes, typing each value by the document's model.
///
/// Members may come in any order: objects and references that come before the model, and attributes
/// that come before their object's entity, are skipped (their syntax checked) and read once what they
/// need is known.
struct ClipboardJSONReader {
    private var scanner: ClipboardJSONScanner
    private var parts = ClipboardParts()
    private var schema: ClipboardSchema?
    private var lastEntity = -1

    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> Clipboard {
        var reader = ClipboardJSONReader(scanner: ClipboardJSONScanner(bytes))
        do {
            return try reader.read()
        } catch let error as GraftError {
            // A document of another kind, or a newer version, explains the failure better.
            if !reader.parts.headerChecked, let problem = headerProblem(bytes) { throw problem }
            throw error
        }
    }

    private mutating func read() throws -> Clipboard {
        try scanner.beginObject("the document")
        var first = true
        var deferredObjects: ClipboardJSONScanner?
        var deferredReferences: ClipboardJSONScanner?
        var seen = Set<String>()
        while let key = try scanner.nextMember(&first, in: "the document") {
            let keyOffset = scanner.position
            let name = String(decoding: key, as: UTF8.self)
            guard seen.insert(name).inserted else {
                throw scanner.error("the member '\(name)' appears twice", at: keyOffset)
            }
            switch name {
            case ClipboardKey.format:
                let start = scanner.position
                let format = try scanner.stringValue("the format's name")
                if let problem = ClipboardHeader.formatProblem(format) { throw located(problem, at: start) }
                parts.format = format
            case ClipboardKey.version:
                let start = scanner.position
                let version = try integer("the format version")
                if let problem = ClipboardHeader.versionProblem(version) { throw located(problem, at: start) }
                parts.version = version
            case ClipboardKey.encoding:
                let start = scanner.position
                let entries = try readDeclaration()
                if let problem = ClipboardDeclaration.problem(entries, for: .json) {
                    throw located(GraftError(.unsupportedFormat, problem), at: start)
                }
                parts.declaration = entries
            case ClipboardKey.model:
                try readModel()
            case ClipboardKey.source:
                try scanner.beginObject("the source")
                var inner = true
                while let key = try scanner.nextMember(&inner, in: "the source") {
                    guard ByteText.equals(key, "store") else { throw unknownMember(key, in: "the source") }
                    parts.sourceStore = try scanner.stringValue("the source store's UUID")
                }
            case ClipboardKey.roots:
                parts.roots = try readIDs("the roots")
            case ClipboardKey.objects:
                if schema == nil {
                    deferredObjects = scanner
                    try scanner.skipValue()
                } else {
                    parts.objects = try readObjects()
                }
            case ClipboardKey.references:
                if schema == nil {
                    deferredReferences = scanner
                    try scanner.skipValue()
                } else {
                    parts.references = try readReferences()
                }
            default:
                throw unknownMember(key, in: "the document", at: keyOffset)
            }
        }
        scanner.skipSpace()
        guard scanner.isAtEnd else { throw scanner.error("there is more after the end of the document") }
        let end = scanner.position
        if deferredObjects != nil || deferredReferences != nil {
            guard schema != nil else { throw scanner.error("the document has no 'model'", at: end) }
            let resume = scanner
            if let deferred = deferredObjects {
                scanner = deferred
                parts.objects = try readObjects()
            }
            if let deferred = deferredReferences {
                scanner = deferred
                parts.references = try readReferences()
            }
            scanner = resume
        }
        switch parts.assemble(.json) {
        case .success(let clipboard): return clipboard
        case .failure(let error): throw located(error, at: end)
        }
    }

    // MARK: Header and model

    private mutating func readDeclaration() throws -> [(key: String, value: String)] {
        try scanner.beginObject("the encoding section")
        var entries: [(key: String, value: String)] = []
        var first = true
        while let key = try scanner.nextMember(&first, in: "the encoding section") {
            let name = String(decoding: key, as: UTF8.self)
            entries.append((name, try scanner.stringValue("how \(name) values are written")))
        }
        return entries
    }

    private mutating func readModel() throws {
        try scanner.beginObject("the model")
        var first = true
        var entities: [Clipboard.EntityInfo]?
        while let key = try scanner.nextMember(&first, in: "the model") {
            if ByteText.equals(key, "entities") {
                var list: [Clipboard.EntityInfo] = []
                try scanner.beginArray("the model's entities")
                var firstEntity = true
                while try scanner.nextElement(&firstEntity, in: "the model's entities") {
                    list.append(try readEntity())
                }
                entities = list
            } else if ByteText.equals(key, "versionIdentifiers") {
                parts.versionIdentifiers = try readIDs("the model's version identifiers")
            } else if ByteText.equals(key, "contents") {
                let at = scanner.position
                let text = try scanner.stringValue("the model's contents")
                guard let data = Base64.decode(text) else {
                    throw scanner.error("the model's contents are not valid base64", at: at)
                }
                parts.modelContents = data
            } else {
                throw unknownMember(key, in: "the model")
            }
        }
        guard let entities else { throw scanner.error("the model has no 'entities'") }
        let start = scanner.position
        do {
            schema = try ClipboardSchema(entities: entities)
        } catch let error as GraftError {
            throw located(error, at: start)
        }
        parts.entities = entities
    }

    private mutating func readEntity() throws -> Clipboard.EntityInfo {
        try scanner.beginObject("an entity")
        let start = scanner.position
        var name: String?
        var hash: Data?
        var attributes: [Clipboard.AttributeInfo] = []
        var relationships: [Clipboard.RelationshipInfo] = []
        var first = true
        while let key = try scanner.nextMember(&first, in: "an entity") {
            switch String(decoding: key, as: UTF8.self) {
            case "name":
                name = try scanner.stringValue("the entity's name")
            case "versionHash":
                let at = scanner.position
                let text = try scanner.stringValue("the entity's version hash")
                guard let data = Base64.decode(text) else {
                    throw scanner.error("the version hash is not valid base64", at: at)
                }
                hash = data
            case "attributes":
                try scanner.beginArray("the entity's attributes")
                var firstAttribute = true
                while try scanner.nextElement(&firstAttribute, in: "the entity's attributes") {
                    try scanner.beginObject("an attribute")
                    var attributeName: String?
                    var type: AttributeType?
                    var inner = true
                    while let key = try scanner.nextMember(&inner, in: "an attribute") {
                        if ByteText.equals(key, "name") {
                            attributeName = try scanner.stringValue("the attribute's name")
                        } else if ByteText.equals(key, "type") {
                            let at = scanner.position
                            let typeName = try scanner.stringValue("the attribute's type")
                            guard let known = ClipboardValues.type(named: typeName) else {
                                throw scanner.error(
                                    "'\(ByteText.excerpt(typeName))' is not an attribute type", at: at)
                            }
                            type = known
                        } else {
                            throw unknownMember(key, in: "an attribute")
                        }
                    }
                    guard let attributeName, let type else {
                        throw scanner.error("an attribute needs a 'name' and a 'type'")
                    }
                    attributes.append(.init(name: attributeName, type: type))
                }
            case "relationships":
                try scanner.beginArray("the entity's relationships")
                var firstRelationship = true
                while try scanner.nextElement(&firstRelationship, in: "the entity's relationships") {
                    try scanner.beginObject("a relationship")
                    var relationshipName: String?
                    var toMany: Bool?
                    var ordered = false
                    var inner = true
                    while let key = try scanner.nextMember(&inner, in: "a relationship") {
                        if ByteText.equals(key, "name") {
                            relationshipName = try scanner.stringValue("the relationship's name")
                        } else if ByteText.equals(key, "toMany") {
                            toMany = try bool("whether the relationship is to-many")
                        } else if ByteText.equals(key, "ordered") {
                            ordered = try bool("whether the relationship is ordered")
                        } else {
                            throw unknownMember(key, in: "a relationship")
                        }
                    }
                    guard let relationshipName, let toMany else {
                        throw scanner.error("a relationship needs a 'name' and 'toMany'")
                    }
                    relationships.append(.init(name: relationshipName, isToMany: toMany, isOrdered: ordered))
                }
            default:
                throw unknownMember(key, in: "an entity")
            }
        }
        guard let name, let hash else { throw scanner.error("an entity needs a 'name' and a 'versionHash'", at: start) }
        return Clipboard.EntityInfo(name: name, versionHash: hash, attributes: attributes, relationships: relationships)
    }

    // MARK: Objects

    private mutating func readObjects() throws -> [Clipboard.Object] {
        var objects: [Clipboard.Object] = []
        try scanner.beginArray("the objects")
        var first = true
        while try scanner.nextElement(&first, in: "the objects") {
            objects.append(try readObject(objects.count))
        }
        return objects
    }

    private mutating func readObject(_ index: Int) throws -> Clipboard.Object {
        try scanner.beginObject("an object")
        let start = scanner.position
        var id: String?
        var entity: Int?
        var attributes: [Clipboard.NamedValue] = []
        var relationships: [Clipboard.Link] = []
        var deferredAttributes: ClipboardJSONScanner?
        var deferredRelationships: ClipboardJSONScanner?
        var seen: UInt8 = 0
        var first = true
        while let key = try scanner.nextMember(&first, in: "an object") {
            let member: UInt8
            switch key.count {
            case 2 where ByteText.equals(key, "id"):
                member = 1
                id = try scanner.stringValue("the object's id")
            case 6 where ByteText.equals(key, "entity"):
                member = 2
                entity = try entityIndex(label: id ?? "objects[\(index)]")
            case 10 where ByteText.equals(key, "attributes"):
                member = 4
                if let entity {
                    attributes = try readValues(entity: entity, label: id ?? "objects[\(index)]", what: "attributes")
                } else {
                    deferredAttributes = scanner
                    try scanner.skipValue()
                }
            case 13 where ByteText.equals(key, "relationships"):
                member = 8
                if let entity {
                    relationships = try readLinks(entity: entity, label: id ?? "objects[\(index)]")
                } else {
                    deferredRelationships = scanner
                    try scanner.skipValue()
                }
            default:
                throw unknownMember(key, in: "an object", context: [.object(id ?? "objects[\(index)]")])
            }
            guard seen & member == 0 else {
                throw scanner.error(
                    "the member '\(String(decoding: key, as: UTF8.self))' appears twice",
                    context: [.object(id ?? "objects[\(index)]")])
            }
            seen |= member
        }
        guard let id, let entity else {
            throw scanner.error(
                "an object needs an 'id' and an 'entity'", at: start, context: [.object(id ?? "objects[\(index)]")])
        }
        if deferredAttributes != nil || deferredRelationships != nil {
            let resume = scanner
            if let deferred = deferredAttributes {
                scanner = deferred
                attributes = try readValues(entity: entity, label: id, what: "attributes")
            }
            if let deferred = deferredRelationships {
                scanner = deferred
                relationships = try readLinks(entity: entity, label: id)
            }
            scanner = resume
        }
        return Clipboard.Object(
            id: id, entity: schema!.entities[entity].name, attributes: attributes, relationships: relationships)
    }

    private mutating func readReferences() throws -> [Clipboard.Reference] {
        var references: [Clipboard.Reference] = []
        try scanner.beginArray("the references")
        var first = true
        while try scanner.nextElement(&first, in: "the references") {
            references.append(try readReference(references.count))
        }
        return references
    }

    private mutating func readReference(_ index: Int) throws -> Clipboard.Reference {
        try scanner.beginObject("a reference")
        let start = scanner.position
        var id: String?
        var entity: Int?
        var identity: [Clipboard.NamedValue] = []
        var uri: String?
        var deferredIdentity: ClipboardJSONScanner?
        var seen = Set<String>()
        var first = true
        while let key = try scanner.nextMember(&first, in: "a reference") {
            let name = String(decoding: key, as: UTF8.self)
            guard seen.insert(name).inserted else {
                throw scanner.error(
                    "the member '\(name)' appears twice", context: [.object(id ?? "references[\(index)]")])
            }
            switch name {
            case "id":
                id = try scanner.stringValue("the reference's id")
            case "entity":
                entity = try entityIndex(label: id ?? "references[\(index)]")
            case "identity":
                if let entity {
                    identity = try readValues(entity: entity, label: id ?? "references[\(index)]", what: "identity")
                } else {
                    deferredIdentity = scanner
                    try scanner.skipValue()
                }
            case "uri":
                uri = try scanner.stringValue("the reference's URI")
            default:
                throw unknownMember(key, in: "a reference", context: [.object(id ?? "references[\(index)]")])
            }
        }
        guard let id, let entity else {
            throw scanner.error(
                "a reference needs an 'id' and an 'entity'", at: start, context: [.object(id ?? "references[\(index)]")]
            )
        }
        if let deferred = deferredIdentity {
            let resume = scanner
            scanner = deferred
            identity = try readValues(entity: entity, label: id, what: "identity")
            scanner = resume
        }
        return Clipboard.Reference(id: id, entity: schema!.entities[entity].name, identity: identity, uri: uri)
    }

    private mutating func entityIndex(label: String) throws -> Int {
        guard scanner.peek() == UInt8(ascii: "\"") else {
            throw scanner.error(
                "expected the entity's name (a string), found \(scanner.describeNext())", context: [.object(label)])
        }
        let start = scanner.position
        let name = try scanner.string()
        guard let index = schema!.entity(bytes: name, last: lastEntity) else {
            throw scanner.error(
                "the entity '\(ByteText.excerpt(name))' is not in the document's model", at: start,
                context: [.object(label)])
        }
        lastEntity = index
        return index
    }

    /// An object's attribute values or a reference's identity.
    private mutating func readValues(entity index: Int, label: String, what: String) throws -> [Clipboard.NamedValue] {
        let entity = schema!.entities[index]
        try scanner.beginObject("the \(what)", context: label)
        var values: [Clipboard.NamedValue] = []
        values.reserveCapacity(entity.attributeNames.count)
        var seen = ClipboardSeenSet()
        var hint = 0
        var first = true
        while let key = try scanner.nextMember(&first, in: "the \(what)") {
            let keyStart = scanner.position
            guard let attribute = entity.attribute(bytes: key, hint: &hint) else {
                throw scanner.error(
                    "\(entity.name) has no attribute '\(ByteText.excerpt(key))' in the document's model",
                    at: keyStart, context: [.object(label)])
            }
            let name = entity.attributeNames[attribute]
            guard seen.insert(attribute) else {
                throw scanner.error("the attribute appears twice", at: keyStart, context: [.object(label), .key(name)])
            }
            do {
                values.append(
                    Clipboard.NamedValue(name, try value(entity.attributeTypes[attribute], label: label, key: name)))
            } catch let error as GraftError {
                throw error.within(object: label, key: name)
            }
        }
        return values
    }

    /// One value, read as the attribute's type says.
    @inline(__always)
    private mutating func value(_ type: AttributeType, label: String, key: String) throws -> Value {
        let next = scanner.peek()
        let start = scanner.position
        switch type {
        case .integer16, .integer32, .integer64:
            if next == UInt8(ascii: "-") || next &- 0x30 < 10 {
                let (text, isInteger) = try scanner.number()
                if isInteger, let integer = NumberText.int64(text) { return .integer(integer) }
                throw scanner.error(
                    "\(ByteText.excerpt(text)) is not an integer in −2⁶³ … 2⁶³−1", at: start,
                    context: [.object(label), .key(key)])
            }
        case .double, .float, .date:
            if next == UInt8(ascii: "-") || next &- 0x30 < 10 {
                let (text, _) = try scanner.number()
                guard let double = NumberText.double(text) else {
                    throw scanner.error(
                        "\(ByteText.excerpt(text)) is beyond the range of a double", at: start,
                        context: [.object(label), .key(key)])
                }
                return type == .date ? .date(Date(timeIntervalSinceReferenceDate: double)) : .double(double)
            }
            if next == UInt8(ascii: "\"") {
                let text = try scanner.string()
                guard let double = NumberText.nonFinite(text) else {
                    throw scanner.error(
                        "'\(ByteText.excerpt(text))' is not a number; the only strings \(Wording.withArticle(ClipboardValues.typeName(type))) "
                            + "value may be are NaN, Infinity and -Infinity", at: start,
                        context: [.object(label), .key(key)])
                }
                return type == .date ? .date(Date(timeIntervalSinceReferenceDate: double)) : .double(double)
            }
        case .boolean:
            if next == UInt8(ascii: "t") || next == UInt8(ascii: "f"), let bool = scanner.bool() { return .bool(bool) }
        case .decimal:
            if next == UInt8(ascii: "\"") || next == UInt8(ascii: "-") || next &- 0x30 < 10 {
                let text = next == UInt8(ascii: "\"") ? try scanner.string() : try scanner.number().text
                switch ClipboardDecimal.parse(text) {
                case .success(let decimal): return .decimal(decimal)
                case .failure(let problem):
                    throw scanner.error(
                        "'\(ByteText.excerpt(text))' \(ClipboardDecimal.message(problem))", at: start,
                        context: [.object(label), .key(key)])
                }
            }
        case .string:
            if next == UInt8(ascii: "\"") {
                let text = try scanner.string()
                guard let string = ByteText.string(text) else {
                    throw scanner.error(
                        "the string is not valid UTF-8", at: start, context: [.object(label), .key(key)])
                }
                return .string(string)
            }
        case .uuid:
            if next == UInt8(ascii: "\"") {
                let text = try scanner.string()
                guard let uuid = ClipboardUUID.parse(text) else {
                    throw scanner.error(
                        "'\(ByteText.excerpt(text))' is not a UUID", at: start,
                        context: [.object(label), .key(key)])
                }
                return .uuid(uuid)
            }
        case .binary, .transformable, .uri:
            if next == UInt8(ascii: "\"") {
                let text = try scanner.string()
                switch ClipboardValueText.value(text, type: type) {
                case .success(let value): return value
                case .failure(let problem):
                    throw scanner.error(problem.message, at: start, context: [.object(label), .key(key)])
                }
            }
        case .undefined, .objectID, .composite:
            throw scanner.error(ClipboardValueText.uncarried(type), at: start, context: [.object(label), .key(key)])
        }
        throw scanner.error(
            "expected \(Self.expected(type)) for \(Wording.withArticle(ClipboardValues.typeName(type))) attribute, found "
                + scanner.describeNext(), at: start, context: [.object(label), .key(key)])
    }

    static func expected(_ type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64: return "an integer"
        case .double, .float: return "a number (or NaN, Infinity, -Infinity as strings)"
        case .date: return "a number of seconds since 2001-01-01"
        case .boolean: return "true or false"
        case .decimal: return "a string of decimal digits"
        case .binary, .transformable: return "a base64 string"
        case .uuid: return "a UUID string"
        case .uri: return "a URI string"
        default: return "a string"
        }
    }

    private mutating func readLinks(entity index: Int, label: String) throws -> [Clipboard.Link] {
        let entity = schema!.entities[index]
        try scanner.beginObject("the relationships", context: label)
        var links: [Clipboard.Link] = []
        links.reserveCapacity(entity.relationships.count)
        var seen = ClipboardSeenSet()
        var hint = 0
        var first = true
        while let key = try scanner.nextMember(&first, in: "the relationships") {
            let keyStart = scanner.position
            guard let position = entity.relationship(bytes: key, hint: &hint) else {
                throw scanner.error(
                    "\(entity.name) has no relationship '\(ByteText.excerpt(key))' in the document's model",
                    at: keyStart, context: [.object(label)])
            }
            let name = entity.relationshipNames[position]
            guard seen.insert(position) else {
                throw scanner.error(
                    "the relationship appears twice", at: keyStart, context: [.object(label), .key(name)])
            }
            let toMany = entity.relationships[position].isToMany
            let next = scanner.peek()
            if next == UInt8(ascii: "\"") && !toMany {
                links.append(Clipboard.Link(name, [try scanner.stringValue("a target id")]))
            } else if next == UInt8(ascii: "[") {
                let start = scanner.position
                let targets = try readIDs("the targets")
                if !toMany && targets.count > 1 {
                    throw scanner.error(
                        "a to-one relationship has \(targets.count) targets", at: start,
                        context: [.object(label), .key(name)])
                }
                links.append(Clipboard.Link(name, targets))
            } else {
                throw scanner.error(
                    "expected \(toMany ? "an array of ids" : "an id string") for a \(toMany ? "to-many" : "to-one") "
                        + "relationship, found \(scanner.describeNext())", context: [.object(label), .key(name)])
            }
        }
        return links
    }

    // MARK: Small pieces

    private mutating func readIDs(_ what: String) throws -> [String] {
        try scanner.beginArray(what)
        var ids: [String] = []
        var first = true
        while try scanner.nextElement(&first, in: what) { ids.append(try scanner.stringValue("an id")) }
        return ids
    }

    private mutating func integer(_ what: String) throws -> Int64 {
        let next = scanner.peek()
        guard next == UInt8(ascii: "-") || next &- 0x30 < 10 else {
            throw scanner.error("expected \(what) (an integer), found \(scanner.describeNext())")
        }
        let start = scanner.position
        let (text, isInteger) = try scanner.number()
        guard isInteger, let value = NumberText.int64(text) else {
            throw scanner.error("expected \(what) (an integer), found \(ByteText.excerpt(text))", at: start)
        }
        return value
    }

    private mutating func bool(_ what: String) throws -> Bool {
        guard let value = scanner.peek() == 0 ? nil : scanner.bool() else {
            throw scanner.error("expected \(what) (true or false), found \(scanner.describeNext())")
        }
        return value
    }

    private func unknownMember(
        _ key: UnsafeRawBufferPointer, in what: String, at offset: Int? = nil, context: [GraftError.Location] = []
    ) -> GraftError {
        scanner.error("\(what) has no member '\(ByteText.excerpt(key))'", at: offset, context: context)
    }

    private func located(_ error: GraftError, at offset: Int) -> GraftError {
        var located = error
        located.message = "JSON clipboard: " + error.message
        located.context = [.line(ByteText.line(of: offset, in: scanner.bytes)), .offset(offset)] + error.context
        return located
    }

    /// When the document's `format` or `version` rules it out, the error saying so; read leniently, so
    /// that it works on documents that fail elsewhere.
    private static func headerProblem(_ bytes: UnsafeRawBufferPointer) -> GraftError? {
        var scanner = ClipboardJSONScanner(bytes)
        guard (try? scanner.beginObject("")) != nil else { return nil }
        var first = true
        var format: (String, Int)?
        var version: (Int64, Int)?
        while let key = try? scanner.nextMember(&first, in: "") {
            let start = scanner.position
            if ByteText.equals(key, "format"), let text = try? scanner.stringValue("") {
                format = (text, start)
            } else if ByteText.equals(key, "version"), let number = try? scanner.number(), number.isInteger,
                let value = NumberText.int64(number.text)
            {
                version = (value, start)
            } else if (try? scanner.skipValue()) == nil {
                break
            }
        }
        let problem =
            format.flatMap { format in ClipboardHeader.formatProblem(format.0).map { ($0, format.1) } }
            ?? version.flatMap { version in ClipboardHeader.versionProblem(version.0).map { ($0, version.1) } }
        guard let (error, offset) = problem else { return nil }
        var located = error
        located.message = "JSON clipboard: " + error.message
        located.context = [.line(ByteText.line(of: offset, in: bytes)), .offset(offset)]
        return located
    }
}

extension ClipboardJSONScanner {
    /// Consumes `{`, naming the object in the message when it is missing.
    mutating func beginObject(_ what: @autoclosure () -> String, context label: @autoclosure () -> String) throws {
        guard peek() == UInt8(ascii: "{") else {
            throw error("expected \(what()) (an object), found \(describeNext())", context: [.object(label())])
        }
        position += 1
    }
}
