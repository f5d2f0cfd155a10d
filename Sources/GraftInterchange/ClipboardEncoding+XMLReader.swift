import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel

/// Reads a clipboard in Graft's XML format with `XMLScanner`.
///
/// Graft XML is not a tree of dictionaries and arrays, so it is not a ``ClipboardTokenSource``: names are
/// attributes, an object's attributes and relationships are its child elements in any mix, and the model
/// holds its entities and version identifiers as repeated elements. What is the same is shared with
/// ``ClipboardWalker``: the header and declaration checks, the entity, attribute and relationship lookups
/// with their checks and messages (`ClipboardSchema`), and values from text (`ClipboardValueText`).
///
/// The root's `format` and `version` attributes are checked before anything else. The sections may
/// come in any order, except that `<model>` must come before `<objects>` and `<references>` (the schema
/// fixes the order `Formats/clipboard.xsd` gives; the reader is lenient about the rest). Like the walker,
/// it reads the objects one at a time: ``readHeader(collecting:)`` skips `<objects>` unless asked to
/// collect them, and ``beginObjects()`` comes back to them.
struct ClipboardXMLReader {
    private var scanner: XMLScanner
    private var parts = ClipboardParts()
    private var schema: ClipboardSchema?
    private var entities: [ClipboardSchema.Entity] = []
    private var lastEntity = -1
    /// `<objects>`, when the header was read without them.
    private var objectsMark: XMLScanner?
    /// Whether `<objects>` is open and being read.
    private var inObjects = false
    /// Called every ``ClipboardParts/progressInterval`` objects while they are skipped.
    var progress: (() -> Void)?

    init(_ bytes: UnsafeRawBufferPointer) {
        scanner = XMLScanner(bytes, documentName: ClipboardEncoding.xml.documentName)
    }

    /// How far into the bytes reading has come.
    var consumed: Int { scanner.position }

    mutating func readHeader(collecting: Bool) throws -> ClipboardParts {
        try scanner.readRoot()
        guard scanner.isNamed("clipboard") else {
            throw scanner.error("the root element is <\(scanner.nameText)>, not <clipboard>")
        }
        try scanner.allowAttributes(["format", "version"])
        guard let format = try scanner.attributeText("format") else {
            throw scanner.error("<clipboard> has no 'format' attribute")
        }
        if let problem = ClipboardHeader.formatProblem(format) { throw located(problem) }
        parts.format = format
        guard let versionText = try scanner.attribute("version") else {
            throw scanner.error("<clipboard> has no 'version' attribute")
        }
        guard let version = NumberText.int64(ByteText.trimmed(versionText)) else {
            throw scanner.error("the version '\(ByteText.excerpt(versionText))' is not an integer")
        }
        if let problem = ClipboardHeader.versionProblem(version) { throw located(problem) }
        parts.version = version
        var seen = Set<String>()
        if !scanner.isEmptyElement {
            while try scanner.nextChild(of: "clipboard") {
                let name = scanner.nameText
                guard seen.insert(name).inserted else {
                    throw scanner.error("<clipboard> holds two <\(name)> elements")
                }
                switch name {
                case ClipboardKey.encoding:
                    try readDeclaration()
                case ClipboardKey.model:
                    try readModel()
                case ClipboardKey.source:
                    try scanner.allowAttributes(["store"])
                    guard let store = try scanner.attributeText("store") else {
                        throw scanner.error("<source> has no 'store'")
                    }
                    parts.sourceStore = store
                    try expectEmpty("source")
                case ClipboardKey.roots:
                    try scanner.allowAttributes([])
                    var roots: [String] = []
                    if !scanner.isEmptyElement {
                        while try scanner.nextChild(of: "roots") { roots.append(try reference(in: "root")) }
                    }
                    parts.roots = roots
                case ClipboardKey.objects:
                    guard schema != nil else { throw scanner.error("<objects> comes before <model>") }
                    try scanner.allowAttributes([])
                    parts.hasObjects = true
                    if collecting {
                        var objects: [Clipboard.Object] = []
                        inObjects = !scanner.isEmptyElement
                        while let object = try nextObject(index: objects.count) { objects.append(object) }
                        parts.objects = objects
                    } else {
                        objectsMark = scanner
                        var count = 0
                        if !scanner.isEmptyElement {
                            while try scanner.nextChild(of: "objects") {
                                try scanner.skipElement()
                                count += 1
                                if count % ClipboardParts.progressInterval == 0 { progress?() }
                            }
                        }
                        parts.objectCount = count
                    }
                case ClipboardKey.references:
                    guard schema != nil else { throw scanner.error("<references> comes before <model>") }
                    try scanner.allowAttributes([])
                    var references: [Clipboard.Reference] = []
                    if !scanner.isEmptyElement {
                        while try scanner.nextChild(of: "references") {
                            references.append(try readReference(references.count))
                        }
                    }
                    parts.references = references
                default:
                    throw scanner.error("<clipboard> cannot hold <\(name)>")
                }
            }
        }
        let end = scanner.tokenStart
        try scanner.readEnd()
        if let problem = parts.problem(.xml) { throw located(problem, at: end) }
        return parts
    }

    /// Starts the objects (their number is not known up front).
    mutating func beginObjects() throws -> Int? {
        if let objectsMark {
            scanner = objectsMark
            inObjects = !scanner.isEmptyElement
        }
        return nil
    }

    /// The next object, or nil after the last.
    mutating func nextObject(index: Int) throws -> Clipboard.Object? {
        guard inObjects else { return nil }
        guard try scanner.nextChild(of: "objects") else {
            inObjects = false
            return nil
        }
        return try readObject(index)
    }

    private mutating func readDeclaration() throws {
        var entries: [(key: String, value: String)] = []
        for index in scanner.attributes.indices {
            entries.append(try scanner.attributeEntry(index))
        }
        if let problem = ClipboardDeclaration.problem(entries, for: .xml) {
            throw located(GraftError(.unsupportedFormat, problem))
        }
        parts.declaration = entries
        try expectEmpty("encoding")
    }

    // MARK: Model

    private mutating func readModel() throws {
        try scanner.allowAttributes([])
        var entities: [Clipboard.EntityInfo] = []
        var identifiers: [String] = []
        if !scanner.isEmptyElement {
            while try scanner.nextChild(of: "model") {
                if scanner.isNamed("entity") {
                    entities.append(try readEntity())
                } else if scanner.isNamed("versionIdentifier") {
                    try scanner.allowAttributes(["encoding"])
                    identifiers.append(try text(of: "versionIdentifier", what: "a version identifier"))
                } else if scanner.isNamed("contents") {
                    try scanner.allowAttributes([])
                    guard parts.modelContents == nil else { throw scanner.error("<model> holds two <contents>") }
                    guard let data = Base64.decode(try scanner.text(of: "contents")) else {
                        throw scanner.error("the model's contents are not valid base64")
                    }
                    parts.modelContents = data
                } else {
                    throw scanner.error("<model> cannot hold <\(scanner.nameText)>")
                }
            }
        }
        do {
            let schema = try ClipboardSchema(entities: entities)
            self.schema = schema
            self.entities = schema.entities
        } catch let error as GraftError {
            throw located(error)
        }
        parts.entities = entities
        parts.versionIdentifiers = identifiers
    }

    private mutating func readEntity() throws -> Clipboard.EntityInfo {
        try scanner.allowAttributes(["name", "versionHash"])
        guard let name = try scanner.attributeText("name") else { throw scanner.error("<entity> has no 'name'") }
        guard let hashText = try scanner.attribute("versionHash") else {
            throw scanner.error("<entity> has no 'versionHash'", context: [.entity(name)])
        }
        guard let hash = Base64.decode(hashText) else {
            throw scanner.error("the version hash is not valid base64", context: [.entity(name)])
        }
        var attributes: [Clipboard.AttributeInfo] = []
        var relationships: [Clipboard.RelationshipInfo] = []
        if !scanner.isEmptyElement {
            while try scanner.nextChild(of: "entity") {
                if scanner.isNamed("attribute") {
                    try scanner.allowAttributes(["name", "type"])
                    guard let attributeName = try scanner.attributeText("name"),
                        let typeName = try scanner.attributeText("type")
                    else { throw scanner.error("an <attribute> needs a 'name' and a 'type'", context: [.entity(name)]) }
                    guard let type = ClipboardValues.type(named: typeName) else {
                        throw scanner.error(
                            "'\(ByteText.excerpt(typeName))' is not an attribute type", context: [.entity(name)])
                    }
                    try expectEmpty("attribute")
                    attributes.append(.init(name: attributeName, type: type))
                } else if scanner.isNamed("relationship") {
                    try scanner.allowAttributes(["name", "toMany", "ordered"])
                    guard let relationshipName = try scanner.attributeText("name") else {
                        throw scanner.error("a <relationship> needs a 'name'", context: [.entity(name)])
                    }
                    guard let toMany = try boolAttribute("toMany") else {
                        throw scanner.error("a <relationship> needs 'toMany'", context: [.entity(name)])
                    }
                    let ordered = try boolAttribute("ordered") ?? false
                    try expectEmpty("relationship")
                    relationships.append(.init(name: relationshipName, isToMany: toMany, isOrdered: ordered))
                } else {
                    throw scanner.error("<entity> cannot hold <\(scanner.nameText)>", context: [.entity(name)])
                }
            }
        }
        return Clipboard.EntityInfo(name: name, versionHash: hash, attributes: attributes, relationships: relationships)
    }

    // MARK: Objects

    private mutating func readObject(_ index: Int) throws -> Clipboard.Object {
        guard scanner.isNamed("object") else { throw scanner.error("<objects> cannot hold <\(scanner.nameText)>") }
        try scanner.allowAttributes(["id", "entity"])
        guard let id = try scanner.attributeText("id") else {
            throw scanner.error("an <object> needs an 'id'", context: [.object("objects[\(index)]")])
        }
        let entity = entities[try entityIndex(label: id)]
        var attributes: [Clipboard.NamedValue] = []
        attributes.reserveCapacity(entity.attributeNames.count)
        var relationships: [Clipboard.Link] = []
        var attributeCursor = ClipboardSchema.Cursor()
        var relationshipCursor = ClipboardSchema.Cursor()
        if !scanner.isEmptyElement {
            while try scanner.nextChild(of: "object") {
                if scanner.isNamed("attribute") {
                    attributes.append(try readValue(entity, element: "attribute", label: id, cursor: &attributeCursor))
                } else if scanner.isNamed("relationship") {
                    try scanner.allowAttributes(["name"])
                    guard let nameBytes = try scanner.attribute("name") else {
                        throw scanner.error("a <relationship> needs a 'name'", context: [.object(id)])
                    }
                    let position = try entity.relationship(nameBytes, cursor: &relationshipCursor).mapError {
                        scanner.error($0.message, context: $0.context(id))
                    }.get()
                    let name = entity.relationshipNames[position]
                    let start = scanner.tokenStart
                    var targets: [String] = []
                    if !scanner.isEmptyElement {
                        while try scanner.nextChild(of: "relationship") { targets.append(try reference(in: "target")) }
                    }
                    if let problem = entity.targetsProblem(position, count: targets.count) {
                        throw scanner.error(problem, at: start, context: [.object(id), .key(name)])
                    }
                    relationships.append(Clipboard.Link(name, targets))
                } else {
                    throw scanner.error("<object> cannot hold <\(scanner.nameText)>", context: [.object(id)])
                }
            }
        }
        return Clipboard.Object(id: id, entity: entity.name, attributes: attributes, relationships: relationships)
    }

    private mutating func readReference(_ index: Int) throws -> Clipboard.Reference {
        guard scanner.isNamed("reference") else {
            throw scanner.error("<references> cannot hold <\(scanner.nameText)>")
        }
        try scanner.allowAttributes(["id", "entity", "uri"])
        guard let id = try scanner.attributeText("id") else {
            throw scanner.error("a <reference> needs an 'id'", context: [.object("references[\(index)]")])
        }
        let uri = try scanner.attributeText("uri")
        let entity = entities[try entityIndex(label: id)]
        var identity: [Clipboard.NamedValue] = []
        var cursor = ClipboardSchema.Cursor()
        if !scanner.isEmptyElement {
            while try scanner.nextChild(of: "reference") {
                guard scanner.isNamed("identity") else {
                    throw scanner.error("<reference> cannot hold <\(scanner.nameText)>", context: [.object(id)])
                }
                identity.append(try readValue(entity, element: "identity", label: id, cursor: &cursor))
            }
        }
        return Clipboard.Reference(id: id, entity: entity.name, identity: identity, uri: uri)
    }

    private mutating func entityIndex(label: String) throws -> Int {
        guard let name = try scanner.attribute("entity") else {
            throw scanner.error("<\(scanner.nameText)> needs an 'entity'", context: [.object(label)])
        }
        guard let index = schema?.entity(bytes: name, last: lastEntity) else {
            throw scanner.error(ClipboardSchema.unknownEntity(name), context: [.object(label)])
        }
        lastEntity = index
        return index
    }

    /// An `<attribute>` or `<identity>` element's value, read as the attribute's type says.
    private mutating func readValue(
        _ entity: ClipboardSchema.Entity, element: StaticString, label: String, cursor: inout ClipboardSchema.Cursor
    ) throws -> Clipboard.NamedValue {
        try scanner.allowAttributes(["name", "encoding"])
        guard let nameBytes = try scanner.attribute("name") else {
            throw scanner.error("an <\(element)> needs a 'name'", context: [.object(label)])
        }
        let attribute = try entity.attribute(nameBytes, cursor: &cursor).mapError {
            scanner.error($0.message, context: $0.context(label))
        }.get()
        let name = entity.attributeNames[attribute]
        let type = entity.attributeTypes[attribute]
        let start = scanner.tokenStart
        if let encoding = try scanner.attribute("encoding") {
            guard ByteText.equals(encoding, "base64") else {
                throw scanner.error(
                    "the encoding '\(ByteText.excerpt(encoding))' is not known (only base64)",
                    context: [.object(label), .key(name)])
            }
            guard type == .string else {
                throw scanner.error(
                    "only string values are written in base64 (this is \(Wording.withArticle(ClipboardValues.typeName(type))))",
                    context: [.object(label), .key(name)])
            }
            guard let bytes = Base64.decode(try scanner.text(of: element)) else {
                throw scanner.error("the value is not valid base64", at: start, context: [.object(label), .key(name)])
            }
            guard let text = String(data: bytes, encoding: .utf8) else {
                throw scanner.error(
                    "the base64 value is not UTF-8 text", at: start, context: [.object(label), .key(name)])
            }
            return Clipboard.NamedValue(name, .string(text))
        }
        let text: UnsafeRawBufferPointer
        do {
            text = try scanner.text(of: element)
        } catch let error as GraftError {
            throw error.within(object: label, key: name)
        }
        switch ClipboardValueText.value(text, type: type) {
        case .success(let value): return Clipboard.NamedValue(name, value)
        case .failure(let problem):
            throw scanner.error(problem.message, at: start, context: [.object(label), .key(name)])
        }
    }

    // MARK: Small pieces

    /// The `ref` of a `<root>` or `<target>` element, which must be empty.
    private mutating func reference(in element: StaticString) throws -> String {
        guard scanner.isNamed(element) else {
            throw scanner.error("expected <\(element)>, found <\(scanner.nameText)>")
        }
        try scanner.allowAttributes(["ref"])
        guard let ref = try scanner.attributeText("ref") else { throw scanner.error("<\(element)> has no 'ref'") }
        try expectEmpty(element)
        return ref
    }

    /// Text content, decoded from base64 when the element says `encoding="base64"`.
    private mutating func text(of element: StaticString, what: String) throws -> String {
        let base64: Bool
        if let encoding = try scanner.attribute("encoding") {
            guard ByteText.equals(encoding, "base64") else { throw scanner.error("the encoding must be base64") }
            base64 = true
        } else {
            base64 = false
        }
        let text = try scanner.text(of: element)
        let bytes = base64 ? Base64.decode(text) : Data(text)
        guard let bytes, let string = String(data: bytes, encoding: .utf8) else {
            throw scanner.error("\(what) is not valid \(base64 ? "base64 of UTF-8 text" : "UTF-8")")
        }
        return string
    }

    private mutating func boolAttribute(_ name: StaticString) throws -> Bool? {
        guard let text = try scanner.attribute(name) else { return nil }
        let trimmed = ByteText.trimmed(text)
        if ByteText.equals(trimmed, "true") || ByteText.equals(trimmed, "1") { return true }
        if ByteText.equals(trimmed, "false") || ByteText.equals(trimmed, "0") { return false }
        throw scanner.error("'\(name)' must be true or false, not '\(ByteText.excerpt(text))'")
    }

    /// Checks that the element just started has no content.
    private mutating func expectEmpty(_ element: StaticString) throws {
        let text = try scanner.text(of: element)
        guard ByteText.trimmed(text).isEmpty else {
            throw scanner.error("<\(element)> holds text, but must be empty")
        }
    }

    private func located(_ error: GraftError, at offset: Int? = nil) -> GraftError {
        let offset = offset ?? scanner.tokenStart
        var located = error
        located.message = "\(ClipboardEncoding.xml.documentName): " + error.message
        located.context = [.line(ByteText.line(of: offset, in: scanner.bytes)), .offset(offset)] + error.context
        return located
    }
}

extension XMLScanner {
    /// The name and decoded value of the current tag's attribute at `index`.
    mutating func attributeEntry(_ index: Int) throws -> (key: String, value: String) {
        let attribute = attributes[index]
        let key = String(
            decoding: bytes[attribute.nameStart..<(attribute.nameStart + attribute.nameLength)], as: UTF8.self)
        let value = try attributeValue(at: index)
        return (key, value)
    }
}
