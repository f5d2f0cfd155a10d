import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel

/// Reads a binary property-list clipboard straight from the bytes: the document's shape is fixed, so the
/// reader follows references only where the shape says (never recursing into arbitrary containers) and
/// types each value by the model, without building a property-list tree.
///
/// The bytes are read through GraftCore's ``BinaryPlistView``, which checks every offset, count and reference
/// against the data. Keys and values may be shared or not, and dictionaries may list their keys in any order.
struct ClipboardBinaryPlistReader {
    private let view: BinaryPlistView
    private var schema: ClipboardSchema?
    private var lastEntity = -1
    private let scratch = ByteBuffer(capacity: 256)

    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> Clipboard {
        var reader = try ClipboardBinaryPlistReader(bytes)
        return try reader.read()
    }

    private init(_ bytes: UnsafeRawBufferPointer) throws {
        view = try BinaryPlistView(bytes, name: "binary property-list clipboard")
    }

    // MARK: Errors

    private func error(_ message: String, object reference: Int, context: [GraftError.Location] = []) -> GraftError {
        view.failure(message, at: (try? view.offset(of: reference)) ?? view.offsetTableStart, context: context)
    }

    /// "expected *what* (*form*), found *what the object is*".
    private func mismatch(
        _ what: String, _ form: String, _ reference: Int, at offset: Int, context: [GraftError.Location] = []
    ) -> GraftError {
        view.failure("expected \(what) (\(form)), found \(view.kind(of: reference))", at: offset, context: context)
    }

    // MARK: The document

    private mutating func read() throws -> Clipboard {
        let top = try dictionary(view.topObject, "the document")
        var members: [String: Int] = [:]
        for position in 0..<top.count {
            let key = try keyText(top.key(position))
            guard members.updateValue(try top.value(position), forKey: key) == nil else {
                throw error("the document names '\(key)' twice", object: view.topObject)
            }
        }
        var parts = ClipboardParts()
        // The header first: a document of another kind or version is refused before anything else.
        if let format = members[ClipboardKey.format] {
            let text = try string(format, "the format's name")
            if let problem = ClipboardHeader.formatProblem(text) { throw located(problem, object: format) }
            parts.format = text
        }
        if let version = members[ClipboardKey.version] {
            guard let number = try integerValue(version) else {
                throw error("the format version is a \(kind(version)), not an integer", object: version)
            }
            if let problem = ClipboardHeader.versionProblem(number) { throw located(problem, object: version) }
            parts.version = number
        }
        for key in members.keys {
            switch key {
            case ClipboardKey.format, ClipboardKey.version, ClipboardKey.encoding, ClipboardKey.model,
                ClipboardKey.source,
                ClipboardKey.roots, ClipboardKey.objects, ClipboardKey.references:
                continue
            default:
                throw error(
                    "the document has a member '\(ByteText.excerpt(key))' the format does not know",
                    object: view.topObject)
            }
        }
        if let encoding = members[ClipboardKey.encoding] {
            let section = try dictionary(encoding, "the encoding section")
            var entries: [(key: String, value: String)] = []
            for position in 0..<section.count {
                let key = try keyText(section.key(position))
                entries.append((key, try string(section.value(position), "how \(key) values are written")))
            }
            if let problem = ClipboardDeclaration.problem(entries, for: .binaryPlist) {
                throw located(GraftError(.unsupportedFormat, problem), object: encoding)
            }
            parts.declaration = entries
        }
        if let model = members[ClipboardKey.model] {
            try readModel(model, into: &parts)
        }
        if let source = members[ClipboardKey.source] {
            let section = try dictionary(source, "the source")
            for position in 0..<section.count {
                let key = try keyText(section.key(position))
                guard key == "store" else {
                    throw error("the source has a member '\(key)' the format does not know", object: source)
                }
                parts.sourceStore = try string(section.value(position), "the source store's UUID")
            }
        }
        if let roots = members[ClipboardKey.roots] { parts.roots = try strings(roots, "the roots") }
        if let objects = members[ClipboardKey.objects] {
            guard schema != nil else { throw error("the document has no 'model'", object: view.topObject) }
            parts.objects = try readObjects(objects)
        }
        if let references = members[ClipboardKey.references] {
            guard schema != nil else { throw error("the document has no 'model'", object: view.topObject) }
            parts.references = try readReferences(references)
        }
        switch parts.assemble(.binaryPlist) {
        case .success(let clipboard): return clipboard
        case .failure(let error): throw located(error, object: view.topObject)
        }
    }

    private mutating func readModel(_ reference: Int, into parts: inout ClipboardParts) throws {
        let model = try dictionary(reference, "the model")
        var entities: [Clipboard.EntityInfo]?
        for position in 0..<model.count {
            let key = try keyText(model.key(position))
            let value = try model.value(position)
            switch key {
            case "entities":
                let list = try array(value, "the model's entities")
                var infos: [Clipboard.EntityInfo] = []
                for element in 0..<list.count { infos.append(try readEntity(list.element(element))) }
                entities = infos
            case "versionIdentifiers":
                parts.versionIdentifiers = try strings(value, "the model's version identifiers")
            case "contents":
                parts.modelContents = try data(value, "the model's contents")
            default:
                throw error("the model has a member '\(key)' the format does not know", object: reference)
            }
        }
        guard let entities else { throw error("the model has no 'entities'", object: reference) }
        do {
            schema = try ClipboardSchema(entities: entities)
        } catch let error as GraftError {
            throw located(error, object: reference)
        }
        parts.entities = entities
    }

    private func readEntity(_ reference: Int) throws -> Clipboard.EntityInfo {
        let entity = try dictionary(reference, "an entity")
        var name: String?
        var hash: Data?
        var attributes: [Clipboard.AttributeInfo] = []
        var relationships: [Clipboard.RelationshipInfo] = []
        for position in 0..<entity.count {
            let key = try keyText(entity.key(position))
            let value = try entity.value(position)
            switch key {
            case "name":
                name = try string(value, "the entity's name")
            case "versionHash":
                hash = try data(value, "the entity's version hash")
            case "attributes":
                let list = try array(value, "the entity's attributes")
                for element in 0..<list.count {
                    let item = try list.element(element)
                    let attribute = try dictionary(item, "an attribute")
                    var attributeName: String?
                    var type: AttributeType?
                    for member in 0..<attribute.count {
                        let key = try keyText(attribute.key(member))
                        if key == "name" {
                            attributeName = try string(attribute.value(member), "the attribute's name")
                        } else if key == "type" {
                            let typeName = try string(attribute.value(member), "the attribute's type")
                            guard let known = ClipboardValues.type(named: typeName) else {
                                throw error(
                                    "'\(ByteText.excerpt(typeName))' is not an attribute type", object: item)
                            }
                            type = known
                        } else {
                            throw error("an attribute has a member '\(key)' the format does not know", object: item)
                        }
                    }
                    guard let attributeName, let type else {
                        throw error("an attribute needs a 'name' and a 'type'", object: item)
                    }
                    attributes.append(.init(name: attributeName, type: type))
                }
            case "relationships":
                let list = try array(value, "the entity's relationships")
                for element in 0..<list.count {
                    let item = try list.element(element)
                    let relationship = try dictionary(item, "a relationship")
                    var relationshipName: String?
                    var toMany: Bool?
                    var ordered = false
                    for member in 0..<relationship.count {
                        let key = try keyText(relationship.key(member))
                        let value = try relationship.value(member)
                        switch key {
                        case "name": relationshipName = try string(value, "the relationship's name")
                        case "toMany": toMany = try bool(value, "whether the relationship is to-many")
                        case "ordered": ordered = try bool(value, "whether the relationship is ordered")
                        default:
                            throw error("a relationship has a member '\(key)' the format does not know", object: item)
                        }
                    }
                    guard let relationshipName, let toMany else {
                        throw error("a relationship needs a 'name' and 'toMany'", object: item)
                    }
                    relationships.append(.init(name: relationshipName, isToMany: toMany, isOrdered: ordered))
                }
            default:
                throw error("an entity has a member '\(key)' the format does not know", object: reference)
            }
        }
        guard let name, let hash else { throw error("an entity needs a 'name' and a 'versionHash'", object: reference) }
        return Clipboard.EntityInfo(name: name, versionHash: hash, attributes: attributes, relationships: relationships)
    }

    // MARK: Objects

    private mutating func readObjects(_ reference: Int) throws -> [Clipboard.Object] {
        let list = try array(reference, "the objects")
        var objects: [Clipboard.Object] = []
        objects.reserveCapacity(list.count)
        for position in 0..<list.count { objects.append(try readObject(list.element(position), index: position)) }
        return objects
    }

    private mutating func readObject(_ reference: Int, index: Int) throws -> Clipboard.Object {
        let object = try dictionary(reference, "an object")
        var id = -1
        var entity = -1
        var attributes = -1
        var relationships = -1
        for position in 0..<object.count {
            let key = try self.key(object.key(position))
            let value = try object.value(position)
            if ByteText.equals(key, "id") {
                guard id < 0 else { throw error("an object names 'id' twice", object: reference) }
                id = value
            } else if ByteText.equals(key, "entity") {
                guard entity < 0 else { throw error("an object names 'entity' twice", object: reference) }
                entity = value
            } else if ByteText.equals(key, "attributes") {
                guard attributes < 0 else { throw error("an object names 'attributes' twice", object: reference) }
                attributes = value
            } else if ByteText.equals(key, "relationships") {
                guard relationships < 0 else { throw error("an object names 'relationships' twice", object: reference) }
                relationships = value
            } else {
                throw error(
                    "an object has a member '\(ByteText.excerpt(key))' the format does not know", object: reference
                )
            }
        }
        guard id >= 0, entity >= 0 else {
            throw error(
                "an object needs an 'id' and an 'entity'", object: reference, context: [.object("objects[\(index)]")])
        }
        let identifier = try string(id, "the object's id", context: [.object("objects[\(index)]")])
        let entityIndex = try self.entityIndex(entity, label: identifier)
        let values =
            attributes < 0 ? [] : try readValues(attributes, entity: entityIndex, label: identifier, what: "attributes")
        let links = relationships < 0 ? [] : try readLinks(relationships, entity: entityIndex, label: identifier)
        return Clipboard.Object(
            id: identifier, entity: schema!.entities[entityIndex].name, attributes: values, relationships: links)
    }

    private mutating func readReferences(_ reference: Int) throws -> [Clipboard.Reference] {
        let list = try array(reference, "the references")
        var references: [Clipboard.Reference] = []
        references.reserveCapacity(list.count)
        for position in 0..<list.count {
            let item = try list.element(position)
            let dictionary = try self.dictionary(item, "a reference")
            var members: [String: Int] = [:]
            for member in 0..<dictionary.count {
                let key = try keyText(dictionary.key(member))
                guard members.updateValue(try dictionary.value(member), forKey: key) == nil else {
                    throw error("a reference names '\(key)' twice", object: item)
                }
                guard ["id", "entity", "identity", "uri"].contains(key) else {
                    throw error(
                        "a reference has a member '\(ByteText.excerpt(key))' the format does not know",
                        object: item)
                }
            }
            let label = "references[\(position)]"
            guard let id = members["id"], let entity = members["entity"] else {
                throw error("a reference needs an 'id' and an 'entity'", object: item, context: [.object(label)])
            }
            let identifier = try string(id, "the reference's id", context: [.object(label)])
            let entityIndex = try self.entityIndex(entity, label: identifier)
            let identity = try members["identity"].map {
                try readValues($0, entity: entityIndex, label: identifier, what: "identity")
            }
            let uri = try members["uri"].map { try string($0, "the reference's URI", context: [.object(identifier)]) }
            references.append(
                Clipboard.Reference(
                    id: identifier, entity: schema!.entities[entityIndex].name, identity: identity ?? [], uri: uri))
        }
        return references
    }

    private mutating func entityIndex(_ reference: Int, label: String) throws -> Int {
        let name = try stringBytes(reference, "the entity's name", context: [.object(label)])
        guard let index = schema!.entity(bytes: name, last: lastEntity) else {
            throw error(
                "the entity '\(ByteText.excerpt(name))' is not in the document's model", object: reference,
                context: [.object(label)])
        }
        lastEntity = index
        return index
    }

    private func readValues(
        _ reference: Int, entity index: Int, label: String, what: String
    ) throws
        -> [Clipboard.NamedValue]
    {
        let entity = schema!.entities[index]
        let dictionary = try self.dictionary(reference, "the \(what)", context: [.object(label)])
        var values: [Clipboard.NamedValue] = []
        values.reserveCapacity(dictionary.count)
        var seen = ClipboardSeenSet()
        var hint = 0
        for position in 0..<dictionary.count {
            let keyReference = try dictionary.key(position)
            let key = try self.key(keyReference)
            guard let attribute = entity.attribute(bytes: key, hint: &hint) else {
                throw error(
                    "\(entity.name) has no attribute '\(ByteText.excerpt(key))' in the document's model",
                    object: keyReference, context: [.object(label)])
            }
            let name = entity.attributeNames[attribute]
            guard seen.insert(attribute) else {
                throw error("the attribute appears twice", object: keyReference, context: [.object(label), .key(name)])
            }
            let value = try self.value(
                dictionary.value(position), type: entity.attributeTypes[attribute], label: label, key: name)
            values.append(Clipboard.NamedValue(name, value))
        }
        return values
    }

    /// One value, read as the attribute's type says.
    private func value(_ reference: Int, type: AttributeType, label: String, key: String) throws -> Value {
        let offset = try view.offset(of: reference)
        let marker = view.bytes[offset]
        func fail(_ message: String) -> GraftError {
            view.failure(message, at: offset, context: [.object(label), .key(key)])
        }
        switch (type, marker >> 4) {
        case (.integer16, 0x1), (.integer32, 0x1), (.integer64, 0x1):
            guard let integer = try integer(at: offset) else {
                throw fail("the integer is outside −2⁶³ … 2⁶³−1")
            }
            return .integer(integer)
        case (.double, 0x2), (.float, 0x2):
            return .double(try view.real(at: offset, reference: reference))
        case (.date, 0x2):
            return .date(Date(timeIntervalSinceReferenceDate: try view.real(at: offset, reference: reference)))
        case (.date, 0x3) where marker == BinaryMarker.dateValue:
            // A property-list date: seconds since 2001 as a double, like the real this format writes.
            guard case .date(let seconds) = try view.object(at: offset, reference: reference) else {
                throw fail("expected a date")
            }
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case (.double, 0x1), (.float, 0x1), (.date, 0x1):
            guard let integer = try integer(at: offset) else { throw fail("the integer is outside −2⁶³ … 2⁶³−1") }
            return type == .date
                ? .date(Date(timeIntervalSinceReferenceDate: Double(integer))) : .double(Double(integer))
        case (.boolean, 0x0) where marker == 0x08 || marker == 0x09:
            return .bool(marker == 0x09)
        case (.decimal, 0x5), (.decimal, 0x6), (.decimal, 0x7):
            let text = try stringBytes(reference, "a decimal", context: [.object(label), .key(key)])
            switch ClipboardDecimal.parse(text) {
            case .success(let decimal): return .decimal(decimal)
            case .failure(let problem):
                throw fail("'\(ByteText.excerpt(text))' \(ClipboardDecimal.message(problem))")
            }
        case (.decimal, 0x1):
            guard let integer = try integer(at: offset) else { throw fail("the integer is outside −2⁶³ … 2⁶³−1") }
            return .decimal(Decimal(integer))
        case (.string, 0x5), (.string, 0x6), (.string, 0x7):
            return .string(try string(reference, "a string", context: [.object(label), .key(key)]))
        case (.binary, 0x4), (.transformable, 0x4):
            return .data(try data(reference, "binary data", context: [.object(label), .key(key)]))
        case (.uuid, 0x5), (.uuid, 0x6), (.uuid, 0x7):
            let text = try stringBytes(reference, "a UUID", context: [.object(label), .key(key)])
            guard let uuid = ClipboardUUID.parse(text) else {
                throw fail("'\(ByteText.excerpt(text))' is not a UUID")
            }
            return .uuid(uuid)
        case (.uri, 0x5), (.uri, 0x6), (.uri, 0x7):
            let text = try stringBytes(reference, "a URI", context: [.object(label), .key(key)])
            switch ClipboardValueText.value(text, type: .uri) {
            case .success(let value): return value
            case .failure(let problem): throw fail(problem.message)
            }
        case (.undefined, _), (.objectID, _), (.composite, _):
            throw fail(ClipboardValueText.uncarried(type))
        default:
            throw fail(
                "expected \(Self.expected(type)) for \(Wording.withArticle(ClipboardValues.typeName(type))) attribute, found \(kind(reference))"
            )
        }
    }

    static func expected(_ type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64: return "an integer"
        case .double, .float: return "a real"
        case .date: return "a real (seconds since 2001-01-01)"
        case .boolean: return "a Boolean"
        case .decimal: return "a string of decimal digits"
        case .binary, .transformable: return "data"
        default: return "a string"
        }
    }

    private func readLinks(_ reference: Int, entity index: Int, label: String) throws -> [Clipboard.Link] {
        let entity = schema!.entities[index]
        let dictionary = try self.dictionary(reference, "the relationships", context: [.object(label)])
        var links: [Clipboard.Link] = []
        links.reserveCapacity(dictionary.count)
        var seen = ClipboardSeenSet()
        var hint = 0
        for position in 0..<dictionary.count {
            let keyReference = try dictionary.key(position)
            let key = try self.key(keyReference)
            guard let relationship = entity.relationship(bytes: key, hint: &hint) else {
                throw error(
                    "\(entity.name) has no relationship '\(ByteText.excerpt(key))' in the document's model",
                    object: keyReference, context: [.object(label)])
            }
            let name = entity.relationshipNames[relationship]
            guard seen.insert(relationship) else {
                throw error(
                    "the relationship appears twice", object: keyReference, context: [.object(label), .key(name)])
            }
            let toMany = entity.relationships[relationship].isToMany
            let value = try dictionary.value(position)
            let marker = try view.marker(of: value) >> 4
            if !toMany && (marker == 0x5 || marker == 0x6 || marker == 0x7) {
                links.append(
                    Clipboard.Link(name, [try string(value, "a target id", context: [.object(label), .key(name)])]))
            } else if marker == 0xA {
                let targets = try strings(value, "the targets", context: [.object(label), .key(name)])
                if !toMany && targets.count > 1 {
                    throw error(
                        "a to-one relationship has \(targets.count) targets", object: value,
                        context: [.object(label), .key(name)])
                }
                links.append(Clipboard.Link(name, targets))
            } else {
                throw error(
                    "expected \(toMany ? "an array of ids" : "an id string") for a \(toMany ? "to-many" : "to-one") "
                        + "relationship, found \(kind(value))", object: value, context: [.object(label), .key(name)])
            }
        }
        return links
    }

    // MARK: Containers

    /// A dictionary's keys and values, as positions of their references.
    private struct DictionaryView {
        let view: BinaryPlistView
        let count: Int
        let start: Int

        @inline(__always)
        func key(_ position: Int) throws -> Int { try view.element(position, from: start) }

        @inline(__always)
        func value(_ position: Int) throws -> Int { try view.element(count + position, from: start) }
    }

    private struct ArrayView {
        let view: BinaryPlistView
        let count: Int
        let start: Int

        @inline(__always)
        func element(_ position: Int) throws -> Int { try view.element(position, from: start) }
    }

    private func dictionary(
        _ reference: Int, _ what: @autoclosure () -> String, context: @autoclosure () -> [GraftError.Location] = []
    ) throws -> DictionaryView {
        let offset = try view.offset(of: reference)
        guard view.bytes[offset] >> 4 == BinaryMarker.dictionary else {
            throw mismatch(what(), "a dictionary", reference, at: offset, context: context())
        }
        let (start, count) = try view.contents(at: offset, type: BinaryMarker.dictionary)
        return DictionaryView(view: view, count: count, start: start)
    }

    private func array(
        _ reference: Int, _ what: @autoclosure () -> String, context: @autoclosure () -> [GraftError.Location] = []
    ) throws -> ArrayView {
        let offset = try view.offset(of: reference)
        guard view.bytes[offset] >> 4 == BinaryMarker.array else {
            throw mismatch(what(), "an array", reference, at: offset, context: context())
        }
        let (start, count) = try view.contents(at: offset, type: BinaryMarker.array)
        return ArrayView(view: view, count: count, start: start)
    }

    private func strings(
        _ reference: Int, _ what: @autoclosure () -> String, context: @autoclosure () -> [GraftError.Location] = []
    ) throws -> [String] {
        let list = try array(reference, what(), context: context())
        var strings: [String] = []
        strings.reserveCapacity(list.count)
        for position in 0..<list.count {
            strings.append(try string(list.element(position), "an id", context: context()))
        }
        return strings
    }

    // MARK: Scalars

    /// A string's UTF-8 bytes: the object's own bytes when it is ASCII or UTF-8, else decoded from UTF-16
    /// into the scratch buffer (valid until the next call).
    private func stringBytes(
        _ reference: Int, _ what: @autoclosure () -> String, context: @autoclosure () -> [GraftError.Location] = []
    ) throws
        -> UnsafeRawBufferPointer
    {
        let offset = try view.offset(of: reference)
        switch view.bytes[offset] >> 4 {
        case BinaryMarker.asciiString, BinaryMarker.utf8String:
            let (start, count) = try view.contents(at: offset, type: BinaryMarker.asciiString)
            return view.bytes(start, count)
        case BinaryMarker.utf16String:
            let (start, count) = try view.contents(at: offset, type: BinaryMarker.utf16String)
            scratch.removeAll()
            let scratch = scratch
            guard view.transcodeUTF16(start, count, { scratch.append($0) }) else {
                throw view.failure("a UTF-16 string holds half of a surrogate pair", at: offset, context: context())
            }
            return scratch.bytes
        default:
            throw mismatch(what(), "a string", reference, at: offset, context: context())
        }
    }

    private func string(
        _ reference: Int, _ what: @autoclosure () -> String, context: @autoclosure () -> [GraftError.Location] = []
    ) throws -> String {
        let bytes = try stringBytes(reference, what(), context: context())
        guard let text = ByteText.string(bytes) else {
            throw error("\(what()) is not valid text", object: reference, context: context())
        }
        return text
    }

    /// A dictionary key's bytes.
    @inline(__always)
    private func key(_ reference: Int) throws -> UnsafeRawBufferPointer { try stringBytes(reference, "a key") }

    private func keyText(_ reference: Int) throws -> String { try string(reference, "a key") }

    private func data(
        _ reference: Int, _ what: @autoclosure () -> String, context: @autoclosure () -> [GraftError.Location] = []
    ) throws -> Data {
        let offset = try view.offset(of: reference)
        guard view.bytes[offset] >> 4 == BinaryMarker.data else {
            throw mismatch(what(), "data", reference, at: offset, context: context())
        }
        let (start, count) = try view.contents(at: offset, type: BinaryMarker.data)
        return view.data(start, count)
    }

    private func bool(_ reference: Int, _ what: @autoclosure () -> String) throws -> Bool {
        let offset = try view.offset(of: reference)
        switch view.bytes[offset] {
        case BinaryMarker.falseValue: return false
        case BinaryMarker.trueValue: return true
        default: throw mismatch(what(), "a Boolean", reference, at: offset)
        }
    }

    private func integerValue(_ reference: Int) throws -> Int64? {
        let offset = try view.offset(of: reference)
        guard view.bytes[offset] >> 4 == BinaryMarker.integer else { return nil }
        return try integer(at: offset)
    }

    /// The integer at `offset`; `nil` when it does not fit in 64 signed bits.
    @inline(__always)
    private func integer(at offset: Int) throws -> Int64? {
        guard case .integer(let integer) = try view.integer(at: offset) else { return nil }
        return integer
    }

    private func kind(_ reference: Int) -> String { view.kind(of: reference) }

    private func located(_ error: GraftError, object reference: Int) -> GraftError {
        var located = error
        located.message = "\(view.name): " + error.message
        located.context = [.offset((try? view.offset(of: reference)) ?? view.offsetTableStart)] + error.context
        return located
    }
}
