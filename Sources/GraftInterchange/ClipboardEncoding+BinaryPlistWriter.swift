import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel

/// Writes a clipboard as a binary property list (`bplist00`) in one pass, without building a tree.
///
/// Objects are numbered in the order they are written, and every container is written after its
/// children, so that the references it lists are known; the top dictionary comes last and the trailer
/// names it. The reference size is chosen up front from a count of the objects the document can need at
/// most. Dictionary keys, entity names and Booleans are written once and shared; values are written
/// where they occur. Only the offset table (one integer per object) is kept until the end.
struct ClipboardBinaryPlistWriter {
    let clipboard: Clipboard
    let schema: ClipboardSchema
    let output: ByteBuffer

    /// The offset of every object written, by object number.
    private var offsets: [Int] = []
    private var referenceSize = 1
    /// Shared strings (keys, names) by text.
    private var shared: [String: Int] = [:]
    private var entityNames: [Int?]
    private var attributeNames: [[Int?]]
    private var relationshipNames: [[Int?]]
    private var trueObject: Int?
    private var falseObject: Int?
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
        entityNames = Array(repeating: nil, count: schema.entities.count)
        attributeNames = schema.entities.map { Array(repeating: nil, count: $0.attributeNames.count) }
        relationshipNames = schema.entities.map { Array(repeating: nil, count: $0.relationships.count) }
    }

    mutating func write() throws {
        referenceSize = Self.byteCount(UInt64(max(objectBound() - 1, 0)))
        offsets.reserveCapacity(clipboard.objects.count * 12 + 256)
        output.append("bplist00")
        var top: [(Int, Int)] = []
        top.append((sharedString(ClipboardKey.format), string(Clipboard.formatName)))
        top.append((sharedString(ClipboardKey.version), integer(Int64(Clipboard.formatVersion))))
        var declarationKeys: [Int] = []
        var declarationValues: [Int] = []
        for entry in ClipboardDeclaration.entries(.binaryPlist) {
            declarationKeys.append(sharedString(entry.key))
            declarationValues.append(string(entry.value))
        }
        top.append((sharedString(ClipboardKey.encoding), dictionary(declarationKeys, declarationValues)))
        top.append((sharedString(ClipboardKey.model), writeModel()))
        if let store = clipboard.sourceStore {
            let storeKey = sharedString("store")
            top.append((sharedString(ClipboardKey.source), dictionary([storeKey], [string(store)])))
        }
        top.append((sharedString(ClipboardKey.roots), stringArray(clipboard.roots)))
        var objectList: [Int] = []
        objectList.reserveCapacity(clipboard.objects.count)
        var last = -1
        for object in clipboard.objects {
            objectList.append(try writeObject(object, last: &last))
            try output.flushIfFull()
        }
        top.append((sharedString(ClipboardKey.objects), array(objectList)))
        objectList.removeAll(keepingCapacity: true)
        for reference in clipboard.references {
            objectList.append(try writeReference(reference, last: &last))
            try output.flushIfFull()
        }
        top.append((sharedString(ClipboardKey.references), array(objectList)))
        let topObject = dictionary(top.map(\.0), top.map(\.1))
        // The offset table and the trailer.
        let tableStart = output.position
        let offsetSize = Self.byteCount(UInt64(offsets.last ?? 0))
        for offset in offsets {
            bigEndian(UInt64(offset), size: offsetSize)
            if output.count >= ByteBuffer.chunkSize { try output.flushIfFull() }
        }
        output.append(repeating: 0, count: 6)
        output.append(UInt8(offsetSize))
        output.append(UInt8(referenceSize))
        bigEndian(UInt64(offsets.count), size: 8)
        bigEndian(UInt64(topObject), size: 8)
        bigEndian(UInt64(tableStart), size: 8)
    }

    /// The most objects the document can take: every key and value counted as if nothing were shared.
    private func objectBound() -> Int {
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
                        [sharedString("name"), sharedString("type")],
                        [string(attribute.name), sharedString(ClipboardValues.typeName(attribute.type))]))
            }
            var relationshipList: [Int] = []
            for relationship in entity.relationships {
                relationshipList.append(
                    dictionary(
                        [sharedString("name"), sharedString("toMany"), sharedString("ordered")],
                        [string(relationship.name), bool(relationship.isToMany), bool(relationship.isOrdered)]))
            }
            let name = string(entity.name)
            entityNames[index] = name
            entityList.append(
                dictionary(
                    [
                        sharedString("name"), sharedString("versionHash"), sharedString("attributes"),
                        sharedString("relationships"),
                    ],
                    [name, data(entity.versionHash), array(attributeList), array(relationshipList)]))
        }
        let entities = array(entityList)
        let identifiers = stringArray(clipboard.versionIdentifiers)
        var modelKeys = [sharedString("entities"), sharedString("versionIdentifiers")]
        var modelValues = [entities, identifiers]
        if let contents = clipboard.modelContents {
            modelKeys.append(sharedString("contents"))
            modelValues.append(data(contents))
        }
        return dictionary(modelKeys, modelValues)
    }

    private mutating func writeObject(_ object: Clipboard.Object, last: inout Int) throws -> Int {
        let index = schema.entity(named: object.entity, last: last)!
        last = index
        let entity = schema.entities[index]
        let id = string(object.id)
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
                values.append(string(link.targets[0]))
            } else {
                elements.removeAll(keepingCapacity: true)
                for target in link.targets { elements.append(string(target)) }
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
        offsets.append(output.position)
        output.append(0xD4)
        for reference in [idKey, entityKey, attributesKey, relationshipsKey, id, entityName, attributes, relationships]
        {
            bigEndian(UInt64(reference), size: referenceSize)
        }
        return offsets.count - 1
    }

    private mutating func writeReference(_ reference: Clipboard.Reference, last: inout Int) throws -> Int {
        let index = schema.entity(named: reference.entity, last: last)!
        last = index
        let id = string(reference.id)
        let identity = try writeValues(reference.identity, entity: index, id: reference.id)
        var keyList = [fixedKey(.id), fixedKey(.entity), fixedKey(.identity)]
        var valueList = [id, entityName(index), identity]
        if let uri = reference.uri {
            keyList.append(fixedKey(.uri))
            valueList.append(string(uri))
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
        let new = sharedString(key.text)
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
        let start = output.position
        offsets.append(start)
        header(0xD, count: keys.count)
        for key in keys { bigEndian(UInt64(key), size: referenceSize) }
        for value in values { bigEndian(UInt64(value), size: referenceSize) }
        return offsets.count - 1
    }

    @inline(__always)
    private mutating func value(_ value: Value) -> Int {
        switch value {
        case .integer(let integer): return self.integer(integer)
        case .double(let double): return real(double)
        case .date(let date): return real(date.timeIntervalSinceReferenceDate)
        case .decimal(let decimal):
            decimalText.removeAll()
            NumberText.append(decimal, to: decimalText)
            offsets.append(output.position)
            header(0x5, count: decimalText.count)
            output.append(UnsafeRawBufferPointer(start: decimalText.base, count: decimalText.count))
            return offsets.count - 1
        case .string(let text): return string(text)
        case .bool(let bool): return self.bool(bool)
        case .data(let bytes): return data(bytes)
        case .uuid(let uuid):
            offsets.append(output.position)
            header(0x5, count: 36)
            ClipboardUUID.append(uuid, to: output)
            return offsets.count - 1
        case .uri(let url): return string(ClipboardValueText.uriText(url))
        }
    }

    private mutating func entityName(_ entity: Int) -> Int {
        if let written = entityNames[entity] { return written }
        let written = string(schema.entities[entity].name)
        entityNames[entity] = written
        return written
    }

    @inline(__always)
    private mutating func attributeName(_ entity: Int, _ attribute: Int) -> Int {
        if let written = attributeNames[entity][attribute] { return written }
        let written = string(schema.entities[entity].attributeNames[attribute])
        attributeNames[entity][attribute] = written
        return written
    }

    @inline(__always)
    private mutating func relationshipName(_ entity: Int, _ relationship: Int) -> Int {
        if let written = relationshipNames[entity][relationship] { return written }
        let written = string(schema.entities[entity].relationshipNames[relationship])
        relationshipNames[entity][relationship] = written
        return written
    }

    // MARK: Objects

    private mutating func sharedString(_ text: String) -> Int {
        if let written = shared[text] { return written }
        let written = string(text)
        shared[text] = written
        return written
    }

    /// Writes a string: ASCII as ASCII, anything else as UTF-16 (big-endian), as Apple's writer does.
    private mutating func string(_ text: String) -> Int {
        offsets.append(output.position)
        var text = text
        let ascii = text.withUTF8 { utf8 -> Bool in
            for byte in utf8 where byte >= 0x80 { return false }
            header(0x5, count: utf8.count)
            output.append(UnsafeRawBufferPointer(utf8))
            return true
        }
        if !ascii {
            let units = text.utf16
            header(0x6, count: units.count)
            output.reserve(2 * units.count)
            var target = output.end
            for unit in units {
                target[0] = UInt8(truncatingIfNeeded: unit >> 8)
                target[1] = UInt8(truncatingIfNeeded: unit)
                target += 2
            }
            output.commit(2 * units.count)
        }
        return offsets.count - 1
    }

    private mutating func integer(_ value: Int64) -> Int {
        offsets.append(output.position)
        // Non-negative values take the fewest of 1, 2, 4 bytes (read as unsigned); the rest 8 bytes.
        if value >= 0 && value <= Int64(UInt32.max) {
            let size = Self.byteCount(UInt64(value))
            output.append(0x10 | UInt8(size.trailingZeroBitCount))
            bigEndian(UInt64(value), size: size)
        } else {
            output.append(0x13)
            bigEndian(UInt64(bitPattern: value), size: 8)
        }
        return offsets.count - 1
    }

    private mutating func real(_ value: Double) -> Int {
        offsets.append(output.position)
        output.append(0x23)
        bigEndian(value.bitPattern, size: 8)
        return offsets.count - 1
    }

    private mutating func bool(_ value: Bool) -> Int {
        if value, let trueObject { return trueObject }
        if !value, let falseObject { return falseObject }
        offsets.append(output.position)
        output.append(value ? 0x09 : 0x08)
        if value { trueObject = offsets.count - 1 } else { falseObject = offsets.count - 1 }
        return offsets.count - 1
    }

    private mutating func data(_ bytes: Data) -> Int {
        offsets.append(output.position)
        header(0x4, count: bytes.count)
        bytes.withUnsafeBytes { output.append($0) }
        return offsets.count - 1
    }

    private mutating func stringArray(_ strings: [String]) -> Int {
        var list: [Int] = []
        list.reserveCapacity(strings.count)
        for text in strings { list.append(string(text)) }
        return array(list)
    }

    private mutating func array(_ references: [Int]) -> Int {
        offsets.append(output.position)
        header(0xA, count: references.count)
        for reference in references { bigEndian(UInt64(reference), size: referenceSize) }
        return offsets.count - 1
    }

    private mutating func dictionary(_ keyList: [Int], _ valueList: [Int]) -> Int {
        offsets.append(output.position)
        header(0xD, count: keyList.count)
        for key in keyList { bigEndian(UInt64(key), size: referenceSize) }
        for value in valueList { bigEndian(UInt64(value), size: referenceSize) }
        return offsets.count - 1
    }

    /// A marker with a count: in its low four bits when below 15, else in an integer that follows.
    @inline(__always)
    private func header(_ marker: UInt8, count: Int) {
        if count < 15 {
            output.append(marker << 4 | UInt8(count))
        } else {
            output.append(marker << 4 | 0x0F)
            let size = Self.byteCount(UInt64(count))
            output.append(0x10 | UInt8(size.trailingZeroBitCount))
            bigEndian(UInt64(count), size: size)
        }
    }

    @inline(__always)
    private func bigEndian(_ value: UInt64, size: Int) {
        output.reserve(size)
        let target = output.end
        switch size {
        case 1:
            target[0] = UInt8(truncatingIfNeeded: value)
        case 2:
            target[0] = UInt8(truncatingIfNeeded: value >> 8)
            target[1] = UInt8(truncatingIfNeeded: value)
        case 4:
            UnsafeMutableRawPointer(target).storeBytes(of: UInt32(truncatingIfNeeded: value).bigEndian, as: UInt32.self)
        default:
            UnsafeMutableRawPointer(target).storeBytes(of: value.bigEndian, as: UInt64.self)
        }
        output.commit(size)
    }

    /// The fewest of 1, 2, 4 or 8 bytes that hold `value`.
    static func byteCount(_ value: UInt64) -> Int {
        if value <= UInt64(UInt8.max) { return 1 }
        if value <= UInt64(UInt16.max) { return 2 }
        if value <= UInt64(UInt32.max) { return 4 }
        return 8
    }
}
