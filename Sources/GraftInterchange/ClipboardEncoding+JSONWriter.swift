import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel

/// JSON tokens: the document's sections one per line or block, each entity, object and reference on a
/// line of its own (the top level, the model, and the lists of entities, objects and references are
/// broken into lines; everything else is written on one), so that documents diff cleanly.
struct ClipboardJSONSink: ClipboardTextSink, ClipboardValueWriting {
    var schema: ClipboardSchema
    var output: ByteBuffer
    /// How many containers are open, and per open container (a bit each, the outermost lowest) whether
    /// it is broken into lines and whether it has an entry yet.
    private var depth = 0
    private var broken: UInt64 = 0
    private var entries: UInt64 = 0
    /// Whether the token that comes is a dictionary's value (its key wrote the separator).
    private var afterKey = false
    /// Each attribute's and then each relationship's key as written (`"name": `), entity after entity,
    /// made once: key `n` is `nameKeyBytes[nameKeyStarts[n]..<nameKeyStarts[n + 1]]`, and an entity's
    /// first key is `nameKeyStarts[firstNameKey[entity]]`. Flat, and made anew for a copy that writes on
    /// another thread, so that no thread touches another's tables.
    private var nameKeyBytes: [UInt8] = []
    private var nameKeyStarts: [Int] = []
    private var firstNameKey: [Int] = []

    init(schema: ClipboardSchema, output: ByteBuffer) {
        self.schema = schema
        self.output = output
        makeNameKeys()
    }

    private mutating func makeNameKeys() {
        let scratch = ByteBuffer(capacity: 256)
        nameKeyBytes = []
        nameKeyStarts = [0]
        firstNameKey = []
        for entity in schema.entities {
            firstNameKey.append(nameKeyStarts.count - 1)
            for var name in entity.attributeNames + entity.relationshipNames {
                scratch.removeAll()
                name.withUTF8 { Self.string(UnsafeRawBufferPointer($0), to: scratch) }
                scratch.append(UInt8(ascii: ":"), UInt8(ascii: " "))
                nameKeyBytes += scratch.bytes
                nameKeyStarts.append(nameKeyBytes.count)
            }
        }
    }

    func copy(writingInto output: ByteBuffer, schema: ClipboardSchema) -> Self? {
        var copy = self
        copy.output = output
        copy.schema = schema
        copy.makeNameKeys()
        return copy
    }

    /// The separator before an entry: nothing after a key, else a comma (after the first) and, in a broken
    /// container, a line end and the entry's indentation.
    @inline(__always)
    private mutating func separate() {
        if afterKey {
            afterKey = false
            return
        }
        guard depth > 0 else { return }
        let bit: UInt64 = 1 << (depth - 1)
        let hasEntries = entries & bit != 0
        entries |= bit
        if broken & bit != 0 {
            output.append(hasEntries ? ",\n" : "\n")
            output.appendSpaces(2 * depth)
        } else if hasEntries {
            output.append(", ")
        }
    }

    mutating func begin(_ part: ClipboardPart) {
        separate()
        output.append(UInt8(ascii: part.isDictionary ? "{" : "["))
        let bit: UInt64 = 1 << depth
        depth += 1
        entries &= ~bit
        switch part {
        case .document, .model, .entities, .objects, .references: broken |= bit
        default: broken &= ~bit
        }
    }

    mutating func end(_ part: ClipboardPart) {
        depth -= 1
        let bit: UInt64 = 1 << depth
        if broken & bit != 0 && entries & bit != 0 {
            output.append(UInt8(ascii: "\n"))
            output.appendSpaces(2 * depth)
        }
        output.append(UInt8(ascii: part.isDictionary ? "}" : "]"))
    }

    @inline(__always)
    private mutating func keyBytes(_ text: String) {
        separate()
        stringValue(text)
        output.append(UInt8(ascii: ":"), UInt8(ascii: " "))
        afterKey = true
    }

    mutating func key(_ member: ClipboardMember) {
        // The keys every object has, as written.
        switch member {
        case .id: literalKey("\"id\": ")
        case .entity: literalKey("\"entity\": ")
        case .attributes: literalKey("\"attributes\": ")
        case .relationships: literalKey("\"relationships\": ")
        default: keyBytes(member.rawValue)
        }
    }

    /// A key whose text needs no escaping, with its `: `.
    @inline(__always)
    private mutating func literalKey(_ key: StaticString) {
        separate()
        output.append(key)
        afterKey = true
    }
    mutating func declarationKey(_ name: String) { keyBytes(name) }

    static var needsAttributePositions: Bool { true }

    @inline(__always)
    mutating func attributeKey(_ name: String, entity: Int, attribute: Int) { nameKey(entity, attribute) }

    @inline(__always)
    mutating func relationshipKey(entity: Int, relationship: Int) {
        nameKey(entity, schema.entities[entity].attributeNames.count + relationship)
    }

    /// The key of an entity's attribute or relationship, from the table of keys.
    @inline(__always)
    private mutating func nameKey(_ entity: Int, _ position: Int) {
        separate()
        let key = firstNameKey[entity] + position
        let range = nameKeyStarts[key]..<nameKeyStarts[key + 1]
        nameKeyBytes.withUnsafeBytes { output.append(UnsafeRawBufferPointer(rebasing: $0[range])) }
        afterKey = true
    }

    @inline(__always)
    mutating func string(_ text: String) {
        separate()
        stringValue(text)
    }

    mutating func target(_ id: String) { string(id) }

    @inline(__always)
    mutating func localID(_ number: Int64) {
        separate()
        output.append(UInt8(ascii: "\""), UInt8(ascii: "o"))
        output.append(decimal: number)
        output.append(UInt8(ascii: "\""))
    }

    mutating func localTarget(_ number: Int64) { localID(number) }
    mutating func versionIdentifier(_ text: String) { string(text) }
    mutating func entityName(_ entity: Int) { string(schema.entities[entity].name) }
    mutating func typeName(_ name: String) { string(name) }

    mutating func finish() { output.append(UInt8(ascii: "\n")) }

    @inline(__always)
    mutating func value(_ value: Value) {
        separate()
        writeValue(value)
    }

    // MARK: Values

    @inline(__always)
    func integerValue(_ value: Int64) { output.append(decimal: value) }

    @inline(__always)
    func realValue(_ value: Double) {
        ClipboardDouble.append(
            value, to: output, nan: "\"NaN\"", infinity: "\"Infinity\"", negativeInfinity: "\"-Infinity\"")
    }

    @inline(__always)
    func plainValue(_ text: (ByteBuffer) -> Void) {
        output.append(UInt8(ascii: "\""))
        text(output)
        output.append(UInt8(ascii: "\""))
    }

    @inline(__always)
    func stringValue(_ text: String) {
        var text = text
        text.withUTF8 { Self.string(UnsafeRawBufferPointer($0), to: output) }
    }

    @inline(__always)
    func boolValue(_ value: Bool) { output.append(value ? "true" : "false") }
    @inline(__always)
    func dataValue(_ value: Data) { plainValue { $0.append(base64: value) } }

    /// Writes a JSON string: `"` and `\` escaped, control characters as `\n`, `\t`, … or `\u00XX`, all
    /// else as UTF-8. Runs without any of those are passed over eight bytes at a time.
    static func string(_ bytes: UnsafeRawBufferPointer, to output: ByteBuffer) {
        output.reserve(bytes.count + 2)
        output.append(UInt8(ascii: "\""))
        var runStart = 0
        let count = bytes.count
        var index = 0
        while index < count {
            index = ClipboardJSONText.firstStop(in: bytes, from: index)
            guard index < count else { break }
            let byte = bytes[index]
            if index > runStart { output.append(UnsafeRawBufferPointer(rebasing: bytes[runStart..<index])) }
            switch byte {
            case 0x22: output.append(UInt8(ascii: "\\"), UInt8(ascii: "\""))
            case 0x5C: output.append(UInt8(ascii: "\\"), UInt8(ascii: "\\"))
            case 0x0A: output.append(UInt8(ascii: "\\"), UInt8(ascii: "n"))
            case 0x0D: output.append(UInt8(ascii: "\\"), UInt8(ascii: "r"))
            case 0x09: output.append(UInt8(ascii: "\\"), UInt8(ascii: "t"))
            case 0x08: output.append(UInt8(ascii: "\\"), UInt8(ascii: "b"))
            case 0x0C: output.append(UInt8(ascii: "\\"), UInt8(ascii: "f"))
            default:
                let hex = Array("0123456789abcdef".utf8)
                output.append("\\u00")
                output.append(hex[Int(byte >> 4)], hex[Int(byte & 0x0F)])
            }
            index += 1
            runStart = index
        }
        if count > runStart { output.append(UnsafeRawBufferPointer(rebasing: bytes[runStart..<count])) }
        output.append(UInt8(ascii: "\""))
    }
}
