import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a binary property-list clipboard straight from the bytes: the document's shape is fixed, so the
/// reader follows references only where the shape says (never recursing into arbitrary containers) and
/// types each value by the model, without building a property-list tree.
///
/// Every offset, count and reference is checked against the data. Keys and values may be shared or not,
/// and dictionaries may list their keys in any order.
struct ClipboardBinaryPlistReader {
    private let bytes: UnsafeRawBufferPointer
    private let base: UnsafePointer<UInt8>
    private let offsetSize: Int
    private let referenceSize: Int
    private let objectCount: Int
    private let topObject: Int
    private let tableStart: Int
    private var schema: ClipboardSchema?
    private var lastEntity = -1
    private let scratch = ByteBuffer(capacity: 256)

    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> Clipboard {
        var reader = try ClipboardBinaryPlistReader(bytes)
        return try reader.read()
    }

    private init(_ bytes: UnsafeRawBufferPointer) throws {
        self.bytes = bytes
        let count = bytes.count
        guard count >= 8, bytes.starts(with: "bplist".utf8) else {
            throw Self.error("the data does not start with 'bplist00'", at: 0)
        }
        guard bytes[6] == UInt8(ascii: "0"), bytes[7] == UInt8(ascii: "0") else {
            throw GraftError(
                .unsupportedFormat,
                "binary property-list clipboard: version '\(String(decoding: bytes[6..<8], as: UTF8.self))' of the "
                    + "format is not supported (only 'bplist00')", context: [.offset(6)])
        }
        base = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
        guard count >= 8 + 1 + 32 else {
            throw Self.error("the data is truncated: \(count) bytes cannot hold an object and the trailer", at: count)
        }
        let trailer = count - 32
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        let objects = Self.bigEndian(base + trailer + 8, size: 8)
        let top = Self.bigEndian(base + trailer + 16, size: 8)
        let table = Self.bigEndian(base + trailer + 24, size: 8)
        let truncated = " (is the data truncated?)"
        guard [1, 2, 4, 8].contains(offsetSize), [1, 2, 4, 8].contains(referenceSize) else {
            throw Self.error(
                "the trailer gives offsets of \(offsetSize) and references of \(referenceSize) bytes" + truncated,
                at: trailer + 6)
        }
        guard objects >= 1, objects < UInt64(trailer) else {
            throw Self.error(
                "the trailer gives an object count of \(objects), which does not fit" + truncated, at: trailer + 8)
        }
        guard top < objects else {
            throw Self.error("the top object \(top) is not among the \(objects) objects" + truncated, at: trailer + 16)
        }
        guard table >= 9, table <= UInt64(trailer), objects <= (UInt64(trailer) - table) / UInt64(offsetSize) else {
            throw Self.error("the offset table does not fit in the data" + truncated, at: trailer + 24)
        }
        guard referenceSize == 8 || objects <= UInt64(1) << UInt64(8 * referenceSize) else {
            throw Self.error(
                "\(objects) objects cannot be told apart with \(referenceSize)-byte references", at: trailer + 7)
        }
        objectCount = Int(objects)
        topObject = Int(top)
        tableStart = Int(table)
    }

    // MARK: Errors

    private static func error(_ message: String, at offset: Int, context: [GraftError.Location] = []) -> GraftError {
        GraftError(.malformedInput, "binary property-list clipboard: " + message, context: [.offset(offset)] + context)
    }

    private func error(_ message: String, object reference: Int, context: [GraftError.Location] = []) -> GraftError {
        Self.error(message, at: (try? offset(of: reference)) ?? tableStart, context: context)
    }

    // MARK: The document

    private mutating func read() throws -> Clipboard {
        let top = try dictionary(topObject, "the document")
        var members: [String: Int] = [:]
        for position in 0..<top.count {
            let key = try keyText(top.key(position))
            guard members.updateValue(try top.value(position), forKey: key) == nil else {
                throw error("the document names '\(key)' twice", object: topObject)
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
                    object: topObject)
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
            guard schema != nil else { throw error("the document has no 'model'", object: topObject) }
            parts.objects = try readObjects(objects)
        }
        if let references = members[ClipboardKey.references] {
            guard schema != nil else { throw error("the document has no 'model'", object: topObject) }
            parts.references = try readReferences(references)
        }
        switch parts.assemble(.binaryPlist) {
        case .success(let clipboard): return clipboard
        case .failure(let error): throw located(error, object: topObject)
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
        let offset = try self.offset(of: reference)
        let marker = base[offset]
        func fail(_ message: String) -> GraftError {
            Self.error(message, at: offset, context: [.object(label), .key(key)])
        }
        switch (type, marker >> 4) {
        case (.integer16, 0x1), (.integer32, 0x1), (.integer64, 0x1):
            guard let integer = try integer(at: offset) else {
                throw fail("the integer is outside −2⁶³ … 2⁶³−1")
            }
            return .integer(integer)
        case (.double, 0x2), (.float, 0x2):
            return .double(try real(at: offset))
        case (.date, 0x2):
            return .date(Date(timeIntervalSinceReferenceDate: try real(at: offset)))
        case (.date, 0x3) where marker == 0x33:
            // A property-list date: seconds since 2001 as a double, like the real this format writes.
            try need(offset + 1, 8, at: offset)
            return .date(
                Date(timeIntervalSinceReferenceDate: Double(bitPattern: Self.bigEndian(base + offset + 1, size: 8))))
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
            let marker = base[try offset(of: value)] >> 4
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
        let reader: ClipboardBinaryPlistReader
        let count: Int
        let start: Int

        @inline(__always)
        func key(_ position: Int) throws -> Int { try reader.reference(at: start + position * reader.referenceSize) }

        @inline(__always)
        func value(_ position: Int) throws -> Int {
            try reader.reference(at: start + (count + position) * reader.referenceSize)
        }
    }

    private struct ArrayView {
        let reader: ClipboardBinaryPlistReader
        let count: Int
        let start: Int

        @inline(__always)
        func element(_ position: Int) throws -> Int {
            try reader.reference(at: start + position * reader.referenceSize)
        }
    }

    private func dictionary(
        _ reference: Int, _ what: @autoclosure () -> String, context: @autoclosure () -> [GraftError.Location] = []
    ) throws -> DictionaryView {
        let offset = try self.offset(of: reference)
        guard base[offset] >> 4 == 0xD else {
            throw Self.error(
                "expected \(what()) (a dictionary), found \(kind(reference))", at: offset, context: context())
        }
        let (count, start) = try countAndStart(at: offset)
        guard count <= (tableStart - start) / (2 * referenceSize) else {
            throw Self.error("a dictionary of \(count) entries runs past the objects", at: offset, context: context())
        }
        return DictionaryView(reader: self, count: count, start: start)
    }

    private func array(
        _ reference: Int, _ what: @autoclosure () -> String, context: @autoclosure () -> [GraftError.Location] = []
    ) throws -> ArrayView {
        let offset = try self.offset(of: reference)
        guard base[offset] >> 4 == 0xA else {
            throw Self.error("expected \(what()) (an array), found \(kind(reference))", at: offset, context: context())
        }
        let (count, start) = try countAndStart(at: offset)
        guard count <= (tableStart - start) / referenceSize else {
            throw Self.error("an array of \(count) elements runs past the objects", at: offset, context: context())
        }
        return ArrayView(reader: self, count: count, start: start)
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
        let offset = try self.offset(of: reference)
        let marker = base[offset] >> 4
        switch marker {
        case 0x5, 0x7:
            let (count, start) = try countAndStart(at: offset)
            try need(start, count, at: offset)
            return UnsafeRawBufferPointer(start: base + start, count: count)
        case 0x6:
            let (count, start) = try countAndStart(at: offset)
            guard count <= (tableStart - start) / 2 else {
                throw Self.error(
                    "a string of \(count) UTF-16 units runs past the objects", at: offset, context: context())
            }
            scratch.removeAll()
            var index = 0
            while index < count {
                let unit = UInt16(base[start + 2 * index]) << 8 | UInt16(base[start + 2 * index + 1])
                index += 1
                var scalar = UInt32(unit)
                if unit >= 0xD800 && unit < 0xE000 {
                    let low =
                        index < count ? UInt16(base[start + 2 * index]) << 8 | UInt16(base[start + 2 * index + 1]) : 0
                    guard unit < 0xDC00, low >= 0xDC00, low < 0xE000 else {
                        throw Self.error(
                            "a UTF-16 string holds half of a surrogate pair", at: offset, context: context())
                    }
                    index += 1
                    scalar = 0x10000 + (UInt32(unit) - 0xD800) << 10 + (UInt32(low) - 0xDC00)
                }
                for byte in UTF8.encode(Unicode.Scalar(scalar)!)! { scratch.append(byte) }
            }
            return scratch.bytes
        default:
            throw Self.error("expected \(what()) (a string), found \(kind(reference))", at: offset, context: context())
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
        let offset = try self.offset(of: reference)
        guard base[offset] >> 4 == 0x4 else {
            throw Self.error("expected \(what()) (data), found \(kind(reference))", at: offset, context: context())
        }
        let (count, start) = try countAndStart(at: offset)
        try need(start, count, at: offset)
        return Data(bytes: base + start, count: count)
    }

    private func bool(_ reference: Int, _ what: @autoclosure () -> String) throws -> Bool {
        let offset = try self.offset(of: reference)
        switch base[offset] {
        case 0x08: return false
        case 0x09: return true
        default: throw Self.error("expected \(what()) (a Boolean), found \(kind(reference))", at: offset)
        }
    }

    private func integerValue(_ reference: Int) throws -> Int64? {
        let offset = try self.offset(of: reference)
        guard base[offset] >> 4 == 0x1 else { return nil }
        return try integer(at: offset)
    }

    /// The integer at `offset` (1, 2 and 4-byte integers are unsigned, 8-byte signed, 16-byte two's
    /// complement); `nil` when it does not fit in 64 signed bits.
    private func integer(at offset: Int) throws -> Int64? {
        let exponent = Int(base[offset] & 0x0F)
        guard exponent <= 4 else { throw Self.error("an integer of \(1 << exponent) bytes", at: offset) }
        let size = 1 << exponent
        try need(offset + 1, size, at: offset)
        switch size {
        case 8:
            return Int64(bitPattern: Self.bigEndian(base + offset + 1, size: 8))
        case 16:
            let high = Self.bigEndian(base + offset + 1, size: 8)
            let low = Self.bigEndian(base + offset + 9, size: 8)
            if high == 0 && low <= UInt64(Int64.max) { return Int64(low) }
            if high == UInt64.max && low >= UInt64(1) << 63 { return Int64(bitPattern: low) }
            return nil
        default:
            return Int64(Self.bigEndian(base + offset + 1, size: size))
        }
    }

    private func real(at offset: Int) throws -> Double {
        switch base[offset] & 0x0F {
        case 2:
            try need(offset + 1, 4, at: offset)
            return Double(Float(bitPattern: UInt32(Self.bigEndian(base + offset + 1, size: 4))))
        case 3:
            try need(offset + 1, 8, at: offset)
            return Double(bitPattern: Self.bigEndian(base + offset + 1, size: 8))
        default:
            throw Self.error("a real of unsupported size", at: offset)
        }
    }

    /// What an object is, for messages.
    private func kind(_ reference: Int) -> String {
        guard let offset = try? offset(of: reference) else { return "an object outside the data" }
        let marker = base[offset]
        switch marker >> 4 {
        case 0x0: return marker == 0x08 || marker == 0x09 ? "a Boolean" : "a null or fill byte"
        case 0x1: return "an integer"
        case 0x2: return "a real"
        case 0x3: return "a date"
        case 0x4: return "data"
        case 0x5, 0x6, 0x7: return "a string"
        case 0x8: return "a UID"
        case 0xA: return "an array"
        case 0xB, 0xC: return "a set"
        case 0xD: return "a dictionary"
        default: return "an object of unknown type 0x\(String(marker, radix: 16))"
        }
    }

    // MARK: Offsets and references

    @inline(__always)
    private func offset(of reference: Int) throws -> Int {
        let offset = Self.bigEndian(base + tableStart + reference * offsetSize, size: offsetSize)
        guard offset >= 8, offset < UInt64(tableStart) else {
            throw Self.error(
                "object \(reference) has the offset \(offset), outside the objects (8 ..< \(tableStart))",
                at: tableStart + reference * offsetSize)
        }
        return Int(offset)
    }

    @inline(__always)
    fileprivate func reference(at position: Int) throws -> Int {
        let reference = Self.bigEndian(base + position, size: referenceSize)
        guard reference < UInt64(objectCount) else {
            throw Self.error("a reference to object \(reference), but there are \(objectCount) objects", at: position)
        }
        return Int(reference)
    }

    /// The count after a marker (in its low bits, or in an integer that follows) and where the contents
    /// start.
    @inline(__always)
    private func countAndStart(at offset: Int) throws -> (count: Int, start: Int) {
        let low = Int(base[offset] & 0x0F)
        if low != 0x0F { return (low, offset + 1) }
        try need(offset + 1, 1, at: offset)
        let marker = base[offset + 1]
        guard marker >> 4 == 0x1, marker & 0x0F <= 3 else {
            throw Self.error("the count after a marker is not an integer", at: offset + 1)
        }
        let size = 1 << Int(marker & 0x0F)
        try need(offset + 2, size, at: offset)
        let count = Self.bigEndian(base + offset + 2, size: size)
        guard count <= UInt64(tableStart) else {
            throw Self.error("the count \(count) is larger than the data", at: offset + 1)
        }
        return (Int(count), offset + 2 + size)
    }

    /// Checks that `count` bytes from `start` lie among the objects.
    @inline(__always)
    private func need(_ start: Int, _ count: Int, at offset: Int) throws {
        guard start <= tableStart, count <= tableStart - start else {
            throw Self.error("an object runs past the end of the objects (the data may be truncated)", at: offset)
        }
    }

    @inline(__always)
    private static func bigEndian(_ pointer: UnsafePointer<UInt8>, size: Int) -> UInt64 {
        switch size {
        case 1: return UInt64(pointer[0])
        case 2: return UInt64(pointer[0]) << 8 | UInt64(pointer[1])
        case 4: return UInt64(UInt32(bigEndian: UnsafeRawPointer(pointer).loadUnaligned(as: UInt32.self)))
        default: return UInt64(bigEndian: UnsafeRawPointer(pointer).loadUnaligned(as: UInt64.self))
        }
    }

    private func located(_ error: GraftError, object reference: Int) -> GraftError {
        var located = error
        located.message = "binary property-list clipboard: " + error.message
        located.context = [.offset((try? offset(of: reference)) ?? tableStart)] + error.context
        return located
    }
}
