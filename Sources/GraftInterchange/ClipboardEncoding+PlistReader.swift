import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel

/// Reads an XML property-list clipboard in one pass with `XMLScanner`, typing each value by the
/// document's model.
///
/// Dictionary keys may come in any order (Python's `plistlib` sorts them, which puts an object's
/// attributes before its entity, and the document's version last): what needs something later is
/// skipped, its syntax checked, and read once that is known.
struct ClipboardPlistReader {
    static let documentName = "XML property-list clipboard"

    private var scanner: XMLScanner
    private var parts = ClipboardParts()
    private var schema: ClipboardSchema?
    private var lastEntity = -1

    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> Clipboard {
        var reader = ClipboardPlistReader(scanner: XMLScanner(bytes, documentName: documentName))
        do {
            return try reader.read()
        } catch let error as GraftError {
            if !reader.parts.headerChecked, let problem = headerProblem(bytes) { throw problem }
            throw error
        }
    }

    private mutating func read() throws -> Clipboard {
        var open = try openDocument(&scanner)
        var deferredObjects: XMLScanner?
        var deferredReferences: XMLScanner?
        var seen = Set<String>()
        while let key = try nextKey(&open, in: "the document") {
            let name = String(decoding: key, as: UTF8.self)
            guard seen.insert(name).inserted else { throw scanner.error("the key '\(name)' appears twice") }
            switch name {
            case ClipboardKey.format:
                let format = try string("the format's name")
                if let problem = ClipboardHeader.formatProblem(format) { throw located(problem) }
                parts.format = format
            case ClipboardKey.version:
                let version = try integer("the format version")
                if let problem = ClipboardHeader.versionProblem(version) { throw located(problem) }
                parts.version = version
            case ClipboardKey.encoding:
                var entries: [(key: String, value: String)] = []
                var open = try beginDict("the encoding section")
                while let key = try nextKey(&open, in: "the encoding section") {
                    let entry = String(decoding: key, as: UTF8.self)
                    entries.append((entry, try string("how \(entry) values are written")))
                }
                if let problem = ClipboardDeclaration.problem(entries, for: .plist) {
                    throw located(GraftError(.unsupportedFormat, problem))
                }
                parts.declaration = entries
            case ClipboardKey.model:
                try readModel()
            case ClipboardKey.source:
                var open = try beginDict("the source")
                while let key = try nextKey(&open, in: "the source") {
                    guard ByteText.equals(key, "store") else { throw unknownKey(key, in: "the source") }
                    parts.sourceStore = try string("the source store's UUID")
                }
            case ClipboardKey.roots:
                parts.roots = try strings("the roots")
            case ClipboardKey.objects:
                if schema == nil {
                    try expect("array", "the objects")
                    deferredObjects = scanner
                    try scanner.skipElement()
                } else {
                    parts.objects = try readObjects()
                }
            case ClipboardKey.references:
                if schema == nil {
                    try expect("array", "the references")
                    deferredReferences = scanner
                    try scanner.skipElement()
                } else {
                    parts.references = try readReferences()
                }
            default:
                throw unknownKey(key, in: "the document")
            }
        }
        try closeDocument(&scanner)
        if deferredObjects != nil || deferredReferences != nil {
            guard schema != nil else { throw scanner.error("the document has no 'model'", at: scanner.position) }
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
        switch parts.assemble(.plist) {
        case .success(let clipboard): return clipboard
        case .failure(let error): throw located(error, at: scanner.position)
        }
    }

    /// Reads up to the top dictionary's first key; false when the dictionary is empty.
    private static func openDocument(_ scanner: inout XMLScanner) throws -> Bool {
        try scanner.readRoot()
        guard scanner.isNamed("plist") else {
            throw scanner.error("the root element is <\(scanner.nameText)>, not <plist>")
        }
        guard !scanner.isEmptyElement, try scanner.nextChild(of: "plist") else {
            throw scanner.error("the property list is empty")
        }
        guard scanner.isNamed("dict") else {
            throw scanner.error("expected the document (a <dict>), found <\(scanner.nameText)>")
        }
        return !scanner.isEmptyElement
    }

    private func openDocument(_ scanner: inout XMLScanner) throws -> Bool { try Self.openDocument(&scanner) }

    private func closeDocument(_ scanner: inout XMLScanner) throws {
        guard try !scanner.nextChild(of: "plist") else {
            throw scanner.error("<plist> holds more than one value")
        }
        try scanner.readEnd()
    }

    // MARK: Model

    private mutating func readModel() throws {
        var open = try beginDict("the model")
        var entities: [Clipboard.EntityInfo]?
        while let key = try nextKey(&open, in: "the model") {
            if ByteText.equals(key, "entities") {
                var list: [Clipboard.EntityInfo] = []
                if try beginArray("the model's entities") {
                    while try scanner.nextChild(of: "array") { list.append(try readEntity()) }
                }
                entities = list
            } else if ByteText.equals(key, "versionIdentifiers") {
                parts.versionIdentifiers = try strings("the model's version identifiers")
            } else if ByteText.equals(key, "contents") {
                parts.modelContents = try data("the model's contents")
            } else {
                throw unknownKey(key, in: "the model")
            }
        }
        guard let entities else { throw scanner.error("the model has no 'entities'") }
        do {
            schema = try ClipboardSchema(entities: entities)
        } catch let error as GraftError {
            throw located(error)
        }
        parts.entities = entities
    }

    private mutating func readEntity() throws -> Clipboard.EntityInfo {
        var open = try beginDict("an entity")
        let start = scanner.tokenStart
        var name: String?
        var hash: Data?
        var attributes: [Clipboard.AttributeInfo] = []
        var relationships: [Clipboard.RelationshipInfo] = []
        while let key = try nextKey(&open, in: "an entity") {
            switch String(decoding: key, as: UTF8.self) {
            case "name":
                name = try string("the entity's name")
            case "versionHash":
                hash = try data("the entity's version hash")
            case "attributes":
                if try beginArray("the entity's attributes") {
                    while try scanner.nextChild(of: "array") {
                        var open = try beginDict("an attribute")
                        var attributeName: String?
                        var type: AttributeType?
                        while let key = try nextKey(&open, in: "an attribute") {
                            if ByteText.equals(key, "name") {
                                attributeName = try string("the attribute's name")
                            } else if ByteText.equals(key, "type") {
                                let typeName = try string("the attribute's type")
                                guard let known = ClipboardValues.type(named: typeName) else {
                                    throw scanner.error("'\(ByteText.excerpt(typeName))' is not an attribute type")
                                }
                                type = known
                            } else {
                                throw unknownKey(key, in: "an attribute")
                            }
                        }
                        guard let attributeName, let type else {
                            throw scanner.error("an attribute needs a 'name' and a 'type'")
                        }
                        attributes.append(.init(name: attributeName, type: type))
                    }
                }
            case "relationships":
                if try beginArray("the entity's relationships") {
                    while try scanner.nextChild(of: "array") {
                        var open = try beginDict("a relationship")
                        var relationshipName: String?
                        var toMany: Bool?
                        var ordered = false
                        while let key = try nextKey(&open, in: "a relationship") {
                            if ByteText.equals(key, "name") {
                                relationshipName = try string("the relationship's name")
                            } else if ByteText.equals(key, "toMany") {
                                toMany = try bool("whether the relationship is to-many")
                            } else if ByteText.equals(key, "ordered") {
                                ordered = try bool("whether the relationship is ordered")
                            } else {
                                throw unknownKey(key, in: "a relationship")
                            }
                        }
                        guard let relationshipName, let toMany else {
                            throw scanner.error("a relationship needs a 'name' and 'toMany'")
                        }
                        relationships.append(.init(name: relationshipName, isToMany: toMany, isOrdered: ordered))
                    }
                }
            default:
                throw unknownKey(key, in: "an entity")
            }
        }
        guard let name, let hash else { throw scanner.error("an entity needs a 'name' and a 'versionHash'", at: start) }
        return Clipboard.EntityInfo(name: name, versionHash: hash, attributes: attributes, relationships: relationships)
    }

    // MARK: Objects

    private mutating func readObjects() throws -> [Clipboard.Object] {
        var objects: [Clipboard.Object] = []
        if try beginArray("the objects") {
            while try scanner.nextChild(of: "array") { objects.append(try readObject(objects.count)) }
        }
        return objects
    }

    private mutating func readObject(_ index: Int) throws -> Clipboard.Object {
        var open = try beginDict("an object")
        let start = scanner.tokenStart
        var id: String?
        var entity: Int?
        var attributes: [Clipboard.NamedValue] = []
        var relationships: [Clipboard.Link] = []
        var deferredAttributes: XMLScanner?
        var deferredRelationships: XMLScanner?
        var seen: UInt8 = 0
        while let key = try nextKey(&open, in: "an object") {
            let member: UInt8
            if ByteText.equals(key, "id") {
                member = 1
                id = try string("the object's id")
            } else if ByteText.equals(key, "entity") {
                member = 2
                entity = try entityIndex(label: id ?? "objects[\(index)]")
            } else if ByteText.equals(key, "attributes") {
                member = 4
                if let entity {
                    attributes = try readValues(entity: entity, label: id ?? "objects[\(index)]", what: "attributes")
                } else {
                    try expect("dict", "the attributes")
                    deferredAttributes = scanner
                    try scanner.skipElement()
                }
            } else if ByteText.equals(key, "relationships") {
                member = 8
                if let entity {
                    relationships = try readLinks(entity: entity, label: id ?? "objects[\(index)]")
                } else {
                    try expect("dict", "the relationships")
                    deferredRelationships = scanner
                    try scanner.skipElement()
                }
            } else {
                throw unknownKey(key, in: "an object", context: [.object(id ?? "objects[\(index)]")])
            }
            guard seen & member == 0 else {
                throw scanner.error("a key appears twice", context: [.object(id ?? "objects[\(index)]")])
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
        if try beginArray("the references") {
            while try scanner.nextChild(of: "array") { references.append(try readReference(references.count)) }
        }
        return references
    }

    private mutating func readReference(_ index: Int) throws -> Clipboard.Reference {
        var open = try beginDict("a reference")
        let start = scanner.tokenStart
        var id: String?
        var entity: Int?
        var identity: [Clipboard.NamedValue] = []
        var uri: String?
        var deferredIdentity: XMLScanner?
        var seen = Set<String>()
        while let key = try nextKey(&open, in: "a reference") {
            let name = String(decoding: key, as: UTF8.self)
            guard seen.insert(name).inserted else {
                throw scanner.error("the key '\(name)' appears twice", context: [.object(id ?? "references[\(index)]")])
            }
            switch name {
            case "id":
                id = try string("the reference's id")
            case "entity":
                entity = try entityIndex(label: id ?? "references[\(index)]")
            case "identity":
                if let entity {
                    identity = try readValues(entity: entity, label: id ?? "references[\(index)]", what: "identity")
                } else {
                    try expect("dict", "the identity")
                    deferredIdentity = scanner
                    try scanner.skipElement()
                }
            case "uri":
                uri = try string("the reference's URI")
            default:
                throw unknownKey(key, in: "a reference", context: [.object(id ?? "references[\(index)]")])
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
        try expect("string", "the entity's name", context: [.object(label)])
        let start = scanner.tokenStart
        let name = try scanner.text(of: "string")
        guard let index = schema!.entity(bytes: name, last: lastEntity) else {
            throw scanner.error(
                "the entity '\(ByteText.excerpt(name))' is not in the document's model", at: start,
                context: [.object(label)])
        }
        lastEntity = index
        return index
    }

    private mutating func readValues(entity index: Int, label: String, what: String) throws -> [Clipboard.NamedValue] {
        let entity = schema!.entities[index]
        var open = try beginDict("the \(what)", context: [.object(label)])
        var values: [Clipboard.NamedValue] = []
        values.reserveCapacity(entity.attributeNames.count)
        var seen = ClipboardSeenSet()
        var hint = 0
        while let key = try nextKey(&open, in: "the \(what)") {
            guard let attribute = entity.attribute(bytes: key, hint: &hint) else {
                throw scanner.error(
                    "\(entity.name) has no attribute '\(ByteText.excerpt(key))' in the document's model",
                    context: [.object(label)])
            }
            let name = entity.attributeNames[attribute]
            guard seen.insert(attribute) else {
                throw scanner.error("the attribute appears twice", context: [.object(label), .key(name)])
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

    /// One value, read as the attribute's type says; the scanner is at the value's start tag.
    private mutating func value(_ type: AttributeType, label: String, key: String) throws -> Value {
        let start = scanner.tokenStart
        func fail(_ message: String) -> GraftError {
            scanner.error(message, at: start, context: [.object(label), .key(key)])
        }
        switch type {
        case .integer16, .integer32, .integer64:
            if scanner.isNamed("integer") {
                let text = ByteText.trimmed(try scanner.text(of: "integer"))
                guard let integer = NumberText.int64(text) else {
                    throw fail("'\(ByteText.excerpt(text))' is not an integer in −2⁶³ … 2⁶³−1")
                }
                return .integer(integer)
            }
        case .double, .float, .date:
            if scanner.isNamed("real") || scanner.isNamed("integer") {
                let element: StaticString = scanner.isNamed("real") ? "real" : "integer"
                let text = ByteText.trimmed(try scanner.text(of: element))
                guard let double = NumberText.double(text) ?? NumberText.nonFinite(text) else {
                    throw fail("'\(ByteText.excerpt(text))' is not a number")
                }
                return type == .date ? .date(Date(timeIntervalSinceReferenceDate: double)) : .double(double)
            }
            if type == .date && scanner.isNamed("date") {
                let text = ByteText.trimmed(try scanner.text(of: "date"))
                guard let seconds = ClipboardISODate.seconds(text) else {
                    throw fail("'\(ByteText.excerpt(text))' is not a date of the form 2001-01-01T00:00:00Z")
                }
                return .date(Date(timeIntervalSinceReferenceDate: seconds))
            }
        case .decimal:
            if scanner.isNamed("string") || scanner.isNamed("integer") {
                let element: StaticString = scanner.isNamed("string") ? "string" : "integer"
                let text = ByteText.trimmed(try scanner.text(of: element))
                switch ClipboardDecimal.parse(text) {
                case .success(let decimal): return .decimal(decimal)
                case .failure(let problem):
                    throw fail("'\(ByteText.excerpt(text))' \(ClipboardDecimal.message(problem))")
                }
            }
        case .string:
            if scanner.isNamed("string") {
                guard let text = ByteText.string(try scanner.text(of: "string")) else {
                    throw fail("the string is not valid UTF-8")
                }
                return .string(text)
            }
            if scanner.isNamed("data") {
                // A string XML cannot carry, as its UTF-8 bytes.
                guard let bytes = Base64.decode(try scanner.text(of: "data")) else {
                    throw fail("the data is not valid base64")
                }
                guard let text = String(data: bytes, encoding: .utf8) else { throw fail("the data is not UTF-8 text") }
                return .string(text)
            }
        case .boolean:
            if scanner.isNamed("true") || scanner.isNamed("false") {
                let value = scanner.isNamed("true")
                let text = try scanner.text(of: value ? "true" : "false")
                guard ByteText.trimmed(text).isEmpty else {
                    throw fail("<\(value ? "true" : "false")> holds text")
                }
                return .bool(value)
            }
        case .binary, .transformable:
            if scanner.isNamed("data") {
                guard let data = Base64.decode(try scanner.text(of: "data")) else {
                    throw fail("the data is not valid base64")
                }
                return .data(data)
            }
        case .uuid, .uri:
            if scanner.isNamed("string") {
                switch ClipboardValueText.value(try scanner.text(of: "string"), type: type) {
                case .success(let value): return value
                case .failure(let problem): throw fail(problem.message)
                }
            }
        case .undefined, .objectID, .composite:
            throw fail(ClipboardValueText.uncarried(type))
        }
        throw fail(
            "expected \(Self.expected(type)) for \(Wording.withArticle(ClipboardValues.typeName(type))) attribute, found <\(scanner.nameText)>"
        )
    }

    static func expected(_ type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64: return "<integer>"
        case .double, .float: return "<real>"
        case .date: return "<real> (seconds since 2001-01-01)"
        case .boolean: return "<true/> or <false/>"
        case .binary, .transformable: return "<data>"
        case .string: return "<string> (or <data> holding UTF-8)"
        default: return "<string>"
        }
    }

    private mutating func readLinks(entity index: Int, label: String) throws -> [Clipboard.Link] {
        let entity = schema!.entities[index]
        var open = try beginDict("the relationships", context: [.object(label)])
        var links: [Clipboard.Link] = []
        links.reserveCapacity(entity.relationships.count)
        var seen = ClipboardSeenSet()
        var hint = 0
        while let key = try nextKey(&open, in: "the relationships") {
            guard let position = entity.relationship(bytes: key, hint: &hint) else {
                throw scanner.error(
                    "\(entity.name) has no relationship '\(ByteText.excerpt(key))' in the document's model",
                    context: [.object(label)])
            }
            let name = entity.relationshipNames[position]
            guard seen.insert(position) else {
                throw scanner.error("the relationship appears twice", context: [.object(label), .key(name)])
            }
            let toMany = entity.relationships[position].isToMany
            if scanner.isNamed("string") && !toMany {
                links.append(Clipboard.Link(name, [try string("a target id")]))
            } else if scanner.isNamed("array") {
                let start = scanner.tokenStart
                let targets = try strings("the targets")
                if !toMany && targets.count > 1 {
                    throw scanner.error(
                        "a to-one relationship has \(targets.count) targets", at: start,
                        context: [.object(label), .key(name)])
                }
                links.append(Clipboard.Link(name, targets))
            } else {
                throw scanner.error(
                    "expected \(toMany ? "an <array> of ids" : "an id <string>") for a \(toMany ? "to-many" : "to-one") "
                        + "relationship, found <\(scanner.nameText)>", context: [.object(label), .key(name)])
            }
        }
        return links
    }

    // MARK: Small pieces

    /// The next key of the dictionary being read, with the scanner left at its value's start tag; `nil`
    /// at the dictionary's end.
    private mutating func nextKey(
        _ open: inout Bool, in what: @autoclosure () -> String
    ) throws
        -> UnsafeRawBufferPointer?
    {
        guard open else { return nil }
        guard try scanner.nextChild(of: "dict") else {
            open = false
            return nil
        }
        guard scanner.isNamed("key") else {
            throw scanner.error("expected <key> in \(what()), found <\(scanner.nameText)>")
        }
        let key = try scanner.text(of: "key")
        guard try scanner.nextChild(of: "dict") else {
            throw scanner.error("the key '\(ByteText.excerpt(key))' in \(what()) has no value")
        }
        return key
    }

    /// Checks that the element just started is `<name>`.
    private func expect(
        _ name: StaticString, _ what: @autoclosure () -> String, context: @autoclosure () -> [GraftError.Location] = []
    ) throws {
        guard scanner.isNamed(name) else {
            throw scanner.error("expected \(what()) (<\(name)>), found <\(scanner.nameText)>", context: context())
        }
    }

    /// Starts a dictionary; false when it is empty (`<dict/>`), so that `nextKey` ends at once.
    private func beginDict(
        _ what: @autoclosure () -> String, context: @autoclosure () -> [GraftError.Location] = []
    ) throws -> Bool {
        try expect("dict", what(), context: context())
        return !scanner.isEmptyElement
    }

    /// Starts an array; false when it is empty (`<array/>`).
    private mutating func beginArray(_ what: String) throws -> Bool {
        try expect("array", what)
        return !scanner.isEmptyElement
    }

    private mutating func string(_ what: String) throws -> String {
        try expect("string", what)
        guard let text = ByteText.string(try scanner.text(of: "string")) else {
            throw scanner.error("\(what) is not valid UTF-8")
        }
        return text
    }

    private mutating func strings(_ what: String) throws -> [String] {
        var strings: [String] = []
        if try beginArray(what) {
            while try scanner.nextChild(of: "array") { strings.append(try string("an id")) }
        }
        return strings
    }

    private mutating func integer(_ what: String) throws -> Int64 {
        try expect("integer", what)
        let text = ByteText.trimmed(try scanner.text(of: "integer"))
        guard let value = NumberText.int64(text) else {
            throw scanner.error("\(what) '\(ByteText.excerpt(text))' is not an integer")
        }
        return value
    }

    private mutating func bool(_ what: String) throws -> Bool {
        guard scanner.isNamed("true") || scanner.isNamed("false") else {
            throw scanner.error("expected \(what) (<true/> or <false/>), found <\(scanner.nameText)>")
        }
        let value = scanner.isNamed("true")
        _ = try scanner.text(of: value ? "true" : "false")
        return value
    }

    private mutating func data(_ what: String) throws -> Data {
        try expect("data", what)
        guard let data = Base64.decode(try scanner.text(of: "data")) else {
            throw scanner.error("\(what) is not valid base64")
        }
        return data
    }

    private func unknownKey(
        _ key: UnsafeRawBufferPointer, in what: String, context: [GraftError.Location] = []
    ) -> GraftError {
        scanner.error("\(what) has no key '\(ByteText.excerpt(key))'", context: context)
    }

    private func located(_ error: GraftError, at offset: Int? = nil) -> GraftError {
        let offset = offset ?? scanner.tokenStart
        var located = error
        located.message = "\(Self.documentName): " + error.message
        located.context = [.line(ByteText.line(of: offset, in: scanner.bytes)), .offset(offset)] + error.context
        return located
    }

    /// When the document's `format` or `version` rules it out, the error saying so.
    private static func headerProblem(_ bytes: UnsafeRawBufferPointer) -> GraftError? {
        var scanner = XMLScanner(bytes, documentName: documentName)
        var format: (String, Int)?
        var version: (Int64, Int)?
        do {
            guard try openDocument(&scanner) else { return nil }
            while try scanner.nextChild(of: "dict") {
                guard scanner.isNamed("key") else { break }
                let key = String(decoding: try scanner.text(of: "key"), as: UTF8.self)
                guard try scanner.nextChild(of: "dict") else { break }
                let start = scanner.tokenStart
                if key == ClipboardKey.format && scanner.isNamed("string") {
                    format = (String(decoding: try scanner.text(of: "string"), as: UTF8.self), start)
                } else if key == ClipboardKey.version && scanner.isNamed("integer"),
                    let value = NumberText.int64(ByteText.trimmed(try scanner.text(of: "integer")))
                {
                    version = (value, start)
                } else {
                    try scanner.skipElement()
                }
            }
        } catch {}
        let problem =
            format.flatMap { format in ClipboardHeader.formatProblem(format.0).map { ($0, format.1) } }
            ?? version.flatMap { version in ClipboardHeader.versionProblem(version.0).map { ($0, version.1) } }
        guard let (error, offset) = problem else { return nil }
        var located = error
        located.message = "\(documentName): " + error.message
        located.context = [.line(ByteText.line(of: offset, in: bytes)), .offset(offset)]
        return located
    }
}

/// Property-list dates (`2001-01-01T00:00:00Z`, a fraction of a second allowed), which the plist
/// encoding reads for date attributes although it writes reals.
enum ClipboardISODate {
    /// Seconds since 2001-01-01T00:00:00Z.
    static func seconds(_ text: UnsafeRawBufferPointer) -> Double? {
        let bytes = Array(text)
        var position = 0
        func number(_ digits: Int) -> Int? {
            guard position + digits <= bytes.count else { return nil }
            var value = 0
            for _ in 0..<digits {
                let digit = bytes[position] &- 0x30
                guard digit < 10 else { return nil }
                value = value * 10 + Int(digit)
                position += 1
            }
            return value
        }
        func expect(_ character: UInt8) -> Bool {
            guard position < bytes.count, bytes[position] == character else { return false }
            position += 1
            return true
        }
        var sign = 1
        if expect(UInt8(ascii: "-")) { sign = -1 }
        guard let year = number(4), expect(UInt8(ascii: "-")), let month = number(2), expect(UInt8(ascii: "-")),
            let day = number(2), expect(UInt8(ascii: "T")), let hour = number(2), expect(UInt8(ascii: ":")),
            let minute = number(2), expect(UInt8(ascii: ":")), let second = number(2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second <= 60
        else { return nil }
        var fraction = 0.0
        if expect(UInt8(ascii: ".")) {
            let start = position
            while position < bytes.count, bytes[position] &- 0x30 < 10 { position += 1 }
            guard position > start, let value = Double("0." + String(decoding: bytes[start..<position], as: UTF8.self))
            else {
                return nil
            }
            fraction = value
        }
        guard expect(UInt8(ascii: "Z")), position == bytes.count else { return nil }
        // Days since 1970-01-01 in the proleptic Gregorian calendar.
        let y = sign * year - (month <= 2 ? 1 : 0)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let unix = Double(days * 86_400 + hour * 3_600 + minute * 60 + second) + fraction
        return unix - 978_307_200
    }
}
