import Foundation
@_spi(GraftInternal) import GraftCore
import GraftModel

/// Binary property-list tokens (`bplist00`), written in one pass without building a tree.
///
/// Objects are numbered in the order they are written, and every container is written after its
/// children, so that the references it lists are known; the top dictionary comes last and the trailer
/// names it. The reference size is chosen up front from a bound of the objects the document can need.
/// Dictionary keys, type names, entity names and Booleans are written once and shared; values are
/// written where they occur. The bytes are GraftCore's ``BinaryPlistWriter``'s; only the offsets (a byte
/// or two an object) and the objects' numbers are kept until the end.
///
/// When a container's keys and scalar values are written, relative to its children, is this encoding's
/// own choice (the numbering order): see ``Order``.
struct ClipboardBinaryPlistSink: ClipboardTokenSink, ClipboardValueWriting {
    let schema: ClipboardSchema
    private var plist: BinaryPlistWriter<ByteBuffer>
    private var entityNames: [Int]
    private var attributeNames: [[Int]]
    private var relationshipNames: [[Int]]
    /// The open containers; slots are kept for reuse.
    private var frames: [Frame] = []
    private var open = 0
    /// Where local ids, decimals and UUIDs are formatted before they are written (their header needs the
    /// length).
    private let asciiText = ByteBuffer(capacity: 64)

    /// When a container's keys and scalars are written.
    private enum Order {
        /// Each as it comes.
        case inline
        /// Keys and scalars at the end, keys first; parts as they come.
        case keysFirst
        /// As `keysFirst`, but the first scalar (the name) before the keys, and the arrays' own objects
        /// (not their elements) after them.
        case entity
        /// Scalars as they come until the first part, then at the end; keys at the end, first.
        case object
        /// Keys as they come, but those of the encoding section, the source, the objects and the
        /// references once their value's children are written.
        case document

        init(_ part: ClipboardPart) {
            switch part {
            case .document: self = .document
            case .model, .attributeInfo, .relationshipInfo, .source: self = .keysFirst
            case .entity: self = .entity
            case .object, .reference: self = .object
            default: self = .inline
            }
        }
    }

    private enum Scalar {
        case string(String), sharedString(String), value(Value)
        case entityName(Int)
        case array([Int])
        /// A local id by its number (``ClipboardLocalID``).
        case localID(Int64)
    }

    private struct Frame {
        var part = ClipboardPart.document
        var order = Order.inline
        var defers = false
        /// Keys and values written, or -1 where one is still to be written.
        var keys: [Int] = []
        var values: [Int] = []
        var laterKeys: [ClipboardMember] = []
        var laterValues: [Scalar] = []
        /// A key of the document written once its value's children are.
        var pendingKey: ClipboardMember?

        mutating func reset(_ part: ClipboardPart) {
            self.part = part
            order = Order(part)
            defers = order == .keysFirst || order == .entity
            keys.removeAll(keepingCapacity: true)
            values.removeAll(keepingCapacity: true)
            laterKeys.removeAll(keepingCapacity: true)
            laterValues.removeAll(keepingCapacity: true)
            pendingKey = nil
        }
    }

    init(schema: ClipboardSchema, output: ByteBuffer, objectBound: Int) {
        self.schema = schema
        plist = BinaryPlistWriter(
            output: output, referenceSize: BinaryPlistWriter<ByteBuffer>.byteCount(UInt64(objectBound)))
        entityNames = Array(repeating: -1, count: schema.entities.count)
        attributeNames = schema.entities.map { Array(repeating: -1, count: $0.attributeNames.count) }
        relationshipNames = schema.entities.map { Array(repeating: -1, count: $0.relationships.count) }
    }

    // MARK: Containers

    mutating func begin(_ part: ClipboardPart) {
        if open == frames.count { frames.append(Frame()) }
        frames[open].reset(part)
        open += 1
    }

    mutating func end(_ part: ClipboardPart) throws {
        let top = open - 1
        switch frames[top].order {
        case .inline, .document:
            writePendingParentKey()
        case .keysFirst:
            writeLaterKeys(top)
            writePendingParentKey()
            writeLaterValues(top)
        case .entity:
            writeLaterValues(top, upTo: 1)
            writeLaterKeys(top)
            writeLaterValues(top)
        case .object:
            writeLaterKeys(top)
            writeLaterValues(top)
        }
        open -= 1
        if part == .document {
            try plist.finish(top: plist.dictionary(keys: frames[top].keys, values: frames[top].values))
            return
        }
        let parent = open - 1
        if !part.isDictionary && frames[parent].order == .entity {
            frames[parent].values.append(-1)
            frames[parent].laterValues.append(.array(frames[top].values))
            return
        }
        let written =
            part.isDictionary
            ? plist.dictionary(keys: frames[top].keys, values: frames[top].values) : plist.array(frames[top].values)
        frames[parent].values.append(written)
        if frames[parent].order == .object { frames[parent].defers = true }
    }

    private mutating func writePendingParentKey() {
        guard open >= 2, let key = frames[open - 2].pendingKey else { return }
        frames[open - 2].pendingKey = nil
        frames[open - 2].keys[frames[open - 2].keys.count - 1] = plist.sharedString(key.rawValue)
    }

    private mutating func writeLaterKeys(_ frame: Int) {
        for key in frames[frame].laterKeys { frames[frame].keys.append(plist.sharedString(key.rawValue)) }
        frames[frame].laterKeys.removeAll(keepingCapacity: true)
    }

    /// Writes the scalars kept for the end (at most `limit`), into their places.
    private mutating func writeLaterValues(_ frame: Int, upTo limit: Int = .max) {
        var written = 0
        var slot = 0
        while written < limit && !frames[frame].laterValues.isEmpty {
            while frames[frame].values[slot] >= 0 { slot += 1 }
            let scalar = frames[frame].laterValues.removeFirst()
            frames[frame].values[slot] = write(scalar)
            written += 1
        }
    }

    // MARK: Keys

    mutating func key(_ member: ClipboardMember) {
        let top = open - 1
        switch frames[top].order {
        case .inline:
            frames[top].keys.append(plist.sharedString(member.rawValue))
        case .document:
            switch member {
            case .encoding, .source, .objects, .references:
                frames[top].keys.append(-1)
                frames[top].pendingKey = member
            default:
                frames[top].keys.append(plist.sharedString(member.rawValue))
            }
        case .keysFirst, .entity, .object:
            frames[top].laterKeys.append(member)
        }
    }

    mutating func declarationKey(_ name: String) { frames[open - 1].keys.append(plist.sharedString(name)) }

    static var needsAttributePositions: Bool { true }

    mutating func attributeKey(_ name: String, entity: Int, attribute: Int) {
        nameKey(entity, attribute, ofAttribute: true)
    }
    mutating func relationshipKey(entity: Int, relationship: Int) { nameKey(entity, relationship, ofAttribute: false) }

    /// An attribute's or relationship's name, written the first time (a string of its own per entity).
    @inline(__always)
    private mutating func nameKey(_ entity: Int, _ index: Int, ofAttribute: Bool) {
        var written = ofAttribute ? attributeNames[entity][index] : relationshipNames[entity][index]
        if written < 0 {
            let names = ofAttribute ? schema.entities[entity].attributeNames : schema.entities[entity].relationshipNames
            written = plist.string(names[index])
            if ofAttribute {
                attributeNames[entity][index] = written
            } else {
                relationshipNames[entity][index] = written
            }
        }
        frames[open - 1].keys.append(written)
    }

    // MARK: Scalars

    /// Writes a scalar now, or keeps it for the container's end.
    @inline(__always)
    private mutating func add(_ scalar: Scalar) {
        let top = open - 1
        if frames[top].defers {
            frames[top].values.append(-1)
            frames[top].laterValues.append(scalar)
        } else {
            frames[top].values.append(write(scalar))
        }
    }

    mutating func string(_ text: String) { add(.string(text)) }
    mutating func target(_ id: String) { add(.string(id)) }
    mutating func localID(_ number: Int64) { add(.localID(number)) }
    mutating func localTarget(_ number: Int64) { add(.localID(number)) }
    mutating func versionIdentifier(_ text: String) { add(.string(text)) }
    mutating func typeName(_ name: String) { add(.sharedString(name)) }
    mutating func value(_ value: Value) { add(.value(value)) }

    mutating func entityName(_ entity: Int) {
        let written = entityNames[entity]
        if written >= 0 { frames[open - 1].values.append(written) } else { add(.entityName(entity)) }
    }

    mutating func finish() {}

    @inline(__always)
    private mutating func write(_ scalar: Scalar) -> Int {
        switch scalar {
        case .string(let text): return plist.string(text)
        case .sharedString(let text): return plist.sharedString(text)
        case .value(let value): return writeValue(value)
        case .entityName(let entity):
            let written = plist.string(schema.entities[entity].name)
            entityNames[entity] = written
            return written
        case .array(let elements): return plist.array(elements)
        case .localID(let number):
            // ASCII, as `string` writes the id's text.
            return plainValue {
                $0.append(UInt8(ascii: "o"))
                $0.append(decimal: number)
            }
        }
    }

    // MARK: Values

    @inline(__always)
    mutating func integerValue(_ value: Int64) -> Int { plist.integer(value) }
    @inline(__always)
    mutating func realValue(_ value: Double) -> Int { plist.real(value) }

    /// ASCII text, formatted first: its header needs the length.
    @inline(__always)
    mutating func plainValue(_ text: (ByteBuffer) -> Void) -> Int {
        asciiText.removeAll()
        text(asciiText)
        return plist.asciiString(asciiText.bytes)
    }

    @inline(__always)
    mutating func stringValue(_ text: String) -> Int { plist.string(text) }
    @inline(__always)
    mutating func boolValue(_ value: Bool) -> Int { plist.sharedBool(value) }
    @inline(__always)
    mutating func dataValue(_ value: Data) -> Int { plist.data(value) }
}
