import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel

/// Writes a clipboard as a binary property list (`bplist00`) in one pass, without building a tree.
///
/// Objects are numbered in the order they are written, and every container is written after its
/// children, so that the references it lists are known; the top dictionary comes last and the trailer
/// names it. The reference size is chosen up front from a count of the objects the document can need at
/// most. Dictionary keys, entity names and Booleans are written once and shared; values are written
/// where they occur. The bytes are GraftCore's ``BinaryPlistWriter``'s; only the offsets (a byte or two
/// an object) are kept until the end.
struct ClipboardBinaryPlistWriter {
    let clipboard: Clipboard
    let schema: ClipboardSchema
    let output: ByteBuffer

    private var plist: BinaryPlistWriter<ByteBuffer>
    private var entityNames: [Int?]
    private var attributeNames: [[Int?]]
    private var relationshipNames: [[Int?]]
    /// Reference lists being gathered for the container written next.
    private var keys: [Int] = []
    private var values: [Int] = []
    private var elements: [Int] = []
    private var fixedKeys = [Int](repeating: -1, count: 6)
    /// Where decimals are formatted before they are written (their header needs the length).
    private let decimalText = ByteBuffer(capacity: 1 << 16)

    init(clipboard: Clipboard, schema: ClipboardSchema, output: ByteBuffer) {
        self.clipboard = clipboard
        self.schema = schema
        self.output = output
        plist = BinaryPlistWriter(
            output: output,
            referenceSize: BinaryPlistWriter<ByteBuffer>.byteCount(
                UInt64(Self.objectBound(clipboard))))
        entityNames = Array(repeating: nil, count: schema.entities.count)
        attributeNames = schema.entities.map { Array(repeating: nil, count: $0.attributeNames.count) }
        relationshipNames = schema.entities.map { Array(repeating: nil, count: $0.relationships.count) }
    }

    mutating func write() throws {
        var top: [(Int, Int)] = []
        top.append((plist.sharedString(ClipboardKey.format), plist.string(Clipboard.formatName)))
        top.append((plist.sharedString(ClipboardKey.version), plist.integer(Int64(Clipboard.formatVersion))))
        var declarationKeys: [Int] = []
        var declarationValues: [Int] = []
        for entry in ClipboardDeclaration.entries(.binaryPlist) {
            declarationKeys.append(plist.sharedString(entry.key))
            declarationValues.append(plist.string(entry.value))
        }
        top.append((plist.sharedString(ClipboardKey.encoding), dictionary(declarationKeys, declarationValues)))
        top.append((plist.sharedString(ClipboardKey.model), writeModel()))
        if let store = clipboard.sourceStore {
            let storeKey = plist.sharedString("store")
            top.append((plist.sharedString(ClipboardKey.source), dictionary([storeKey], [plist.string(store)])))
        }
        top.append((plist.sharedString(ClipboardKey.roots), stringArray(clipboard.roots)))
        var objectList: [Int] = []
        objectList.reserveCapacity(clipboard.objects.count)
        var last = -1
        for object in clipboard.objects {
            objectList.append(try writeObject(object, last: &last))
            try output.flushIfFull()
        }
        top.append((plist.sharedString(ClipboardKey.objects), array(objectList)))
        objectList.removeAll(keepingCapacity: true)
        for reference in clipboard.references {
            objectList.append(try writeReference(reference, last: &last))
            try output.flushIfFull()
        }
        top.append((plist.sharedString(ClipboardKey.references), array(objectList)))
        try plist.finish(top: dictionary(top.map(\.0), top.map(\.1)))
    }

    /// The most objects the document can take: every key and value counted as if nothing were shared.
    private static func objectBound(_ clipboard: Clipboard) -> Int {
        var bound = 64 + clipboard.versionIdentifiers.count + clipboard.roots.count
        for entity in clipboard.entities {
            bound += 12 + 6 * entity.attributes.count + 8 * entity.relationships.count
        }
        for object in clipboard.objects {
            bound += 9 + 2 * object.attributes.count
            for link in object.relationships { bound += 2 + link.targets.count }
        }
        for reference in clipboard.references { bound += 10 + 2 * reference.identity.count }
        return bound
    }

    // MARK: The document's parts

    private mutating func writeModel() -> Int {
        var entityList: [Int] = []
        for (index, entity) in clipboard.entities.enumerated() {
            var attributeList: [Int] = []
            for attribute in entity.attributes {
                attributeList.append(
                    dictionary(
                        [plist.sharedString("name"), plist.sharedString("type")],
                        [plist.string(attribute.name), plist.sharedString(ClipboardValues.typeName(attribute.type))]))
            }
            var relationshipList: [Int] = []
            for relationship in entity.relationships {
                relationshipList.append(
                    dictionary(
                        [plist.sharedString("name"), plist.sharedString("toMany"), plist.sharedString("ordered")],
                        [
                            plist.string(relationship.name), plist.sharedBool(relationship.isToMany),
                            plist.sharedBool(relationship.isOrdered),
                        ]))
            }
            let name = plist.string(entity.name)
            entityNames[index] = name
            entityList.append(
                dictionary(
                    [
                        plist.sharedString("name"), plist.sharedString("versionHash"), plist.sharedString("attributes"),
                        plist.sharedString("relationships"),
                    ],
                    [name, plist.data(entity.versionHash), array(attributeList), array(relationshipList)]))
        }
        let entities = array(entityList)
        let identifiers = stringArray(clipboard.versionIdentifiers)
        var modelKeys = [plist.sharedString("entities"), plist.sharedString("versionIdentifiers")]
        var modelValues = [entities, identifiers]
        if let contents = clipboard.modelContents {
            modelKeys.append(plist.sharedString("contents"))
            modelValues.append(plist.data(contents))
        }
        return dictionary(modelKeys, modelValues)
    }

    private mutating func writeObject(_ object: Clipboard.Object, last: inout Int) throws -> Int {
        let index = schema.entity(named: object.entity, last: last)!
        last = index
        let entity = schema.entities[index]
        let id = plist.string(object.id)
        let attributes = try writeValues(object.attributes, entity: index, id: object.id)
        // Relationships: each to-one as the target's id, each to-many (and each to-one without a target)
        // as an array of ids.
        var hint = 0
        keys.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        for link in object.relationships {
            let position = entity.relationship(named: link.name, hint: &hint)!
            keys.append(relationshipName(index, position))
            if !entity.relationships[position].isToMany && link.targets.count == 1 {
                values.append(plist.string(link.targets[0]))
            } else {
                elements.removeAll(keepingCapacity: true)
                for target in link.targets { elements.append(plist.string(target)) }
                values.append(array(elements))
            }
        }
        let relationships = dictionary(keys, values)
        let entityName = entityName(index)
        // Keys are written (the first time) before the dictionary that lists them.
        let idKey = fixedKey(.id)
        let entityKey = fixedKey(.entity)
        let attributesKey = fixedKey(.attributes)
        let relationshipsKey = fixedKey(.relationships)
        let written = plist.beginObject()
        plist.header(BinaryMarker.dictionary, count: 4)
        for reference in [idKey, entityKey, attributesKey, relationshipsKey, id, entityName, attributes, relationships]
        {
            plist.appendReference(reference)
        }
        return written
    }

    private mutating func writeReference(_ reference: Clipboard.Reference, last: inout Int) throws -> Int {
        let index = schema.entity(named: reference.entity, last: last)!
        last = index
        let id = plist.string(reference.id)
        let identity = try writeValues(reference.identity, entity: index, id: reference.id)
        var keyList = [fixedKey(.id), fixedKey(.entity), fixedKey(.identity)]
        var valueList = [id, entityName(index), identity]
        if let uri = reference.uri {
            keyList.append(fixedKey(.uri))
            valueList.append(plist.string(uri))
        }
        return dictionary(keyList, valueList)
    }

    /// The keys every object has, written once.
    private enum FixedKey: Int, CaseIterable {
        case id, entity, attributes, relationships, identity, uri

        var text: String {
            switch self {
            case .id: return "id"
            case .entity: return "entity"
            case .attributes: return "attributes"
            case .relationships: return "relationships"
            case .identity: return "identity"
            case .uri: return "uri"
            }
        }
    }

    @inline(__always)
    private mutating func fixedKey(_ key: FixedKey) -> Int {
        let written = fixedKeys[key.rawValue]
        if written >= 0 { return written }
        let new = plist.sharedString(key.text)
        fixedKeys[key.rawValue] = new
        return new
    }

    /// Writes the values, then the dictionary of them; returns the dictionary.
    private mutating func writeValues(_ named: [Clipboard.NamedValue], entity index: Int, id: String) throws -> Int {
        let entity = schema.entities[index]
        var hint = 0
        keys.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        for value in named {
            let position = entity.attribute(named: value.name, hint: &hint)!
            keys.append(attributeName(index, position))
            values.append(self.value(value.value))
        }
        return plist.dictionary(keys: keys, values: values)
    }

    @inline(__always)
    private mutating func value(_ value: Value) -> Int {
        switch value {
        case .integer(let integer): return plist.integer(integer)
        case .double(let double): return plist.real(double)
        case .date(let date): return plist.real(date.timeIntervalSinceReferenceDate)
        case .decimal(let decimal):
            decimalText.removeAll()
            NumberText.append(decimal, to: decimalText)
            return plist.asciiString(UnsafeRawBufferPointer(start: decimalText.base, count: decimalText.count))
        case .string(let text): return plist.string(text)
        case .bool(let bool): return plist.sharedBool(bool)
        case .data(let bytes): return plist.data(bytes)
        case .uuid(let uuid):
            let written = plist.beginObject()
            plist.header(BinaryMarker.asciiString, count: 36)
            ClipboardUUID.append(uuid, to: output)
            return written
        case .uri(let url): return plist.string(ClipboardValueText.uriText(url))
        }
    }

    private mutating func entityName(_ entity: Int) -> Int {
        if let written = entityNames[entity] { return written }
        let written = plist.string(schema.entities[entity].name)
        entityNames[entity] = written
        return written
    }

    @inline(__always)
    private mutating func attributeName(_ entity: Int, _ attribute: Int) -> Int {
        if let written = attributeNames[entity][attribute] { return written }
        let written = plist.string(schema.entities[entity].attributeNames[attribute])
        attributeNames[entity][attribute] = written
        return written
    }

    @inline(__always)
    private mutating func relationshipName(_ entity: Int, _ relationship: Int) -> Int {
        if let written = relationshipNames[entity][relationship] { return written }
        let written = plist.string(schema.entities[entity].relationshipNames[relationship])
        relationshipNames[entity][relationship] = written
        return written
    }

    // MARK: Objects

    private mutating func stringArray(_ strings: [String]) -> Int {
        var list: [Int] = []
        list.reserveCapacity(strings.count)
        for text in strings { list.append(plist.string(text)) }
        return plist.array(list)
    }

    private mutating func array(_ references: [Int]) -> Int { plist.array(references) }

    private mutating func dictionary(_ keyList: [Int], _ valueList: [Int]) -> Int {
        plist.dictionary(keys: keyList, values: valueList)
    }
}
