import Foundation
import GraftCore

/// Random access to a binary property list held in memory, one object at a time.
///
/// `BinaryPropertyList.decode` builds the whole tree, which for an object map of a million nodes
/// means tens of millions of values; this view decodes only the objects asked for, straight from the
/// bytes, and checks every offset, count and reference it follows. It lives only inside
/// `withUnsafeBytes`.
struct PlistView {
    let bytes: UnsafeRawBufferPointer
    /// Where these bytes start in their file, for error messages.
    let baseOffset: Int
    let offsetSize: Int
    let referenceSize: Int
    let objectCount: Int
    let topObject: Int
    let offsetTableStart: Int
    /// What the bytes are, for error messages ("object map").
    let name: String

    /// One object's type and where its contents lie; nothing is copied.
    enum Object {
        case integer(Int64)
        case unsignedInteger(UInt64)
        case real(Double)
        case bool(Bool)
        case date(Double)
        case data(start: Int, count: Int)
        case asciiString(start: Int, count: Int)
        case utf16String(start: Int, count: Int)
        case uid(UInt64)
        case array(start: Int, count: Int)
        case dictionary(start: Int, count: Int)

        var typeName: String {
            switch self {
            case .integer, .unsignedInteger: return "integer"
            case .real: return "real"
            case .bool: return "Boolean"
            case .date: return "date"
            case .data: return "data"
            case .asciiString, .utf16String: return "string"
            case .uid: return "UID"
            case .array: return "array"
            case .dictionary: return "dictionary"
            }
        }
    }

    init(_ bytes: UnsafeRawBufferPointer, baseOffset: Int, name: String) throws {
        self.bytes = bytes
        self.baseOffset = baseOffset
        self.name = name
        let count = bytes.count
        guard count >= 8, BinaryPropertyList.hasMagic(Data(bytes[0..<8])) else {
            throw GraftError(
                .malformedInput, "\(name): not a keyed archive (it does not start with 'bplist')",
                context: [.offset(baseOffset)])
        }
        guard count >= 8 + 1 + 32 else {
            throw GraftError(
                .malformedInput, "\(name): the property list is truncated (\(count) bytes cannot hold a trailer)",
                context: [.offset(baseOffset + count)])
        }
        let trailer = count - 32
        let offsetSize = Int(bytes[trailer + 6])
        let referenceSize = Int(bytes[trailer + 7])
        let objects = Self.readUInt64(bytes, at: trailer + 8, size: 8)
        let top = Self.readUInt64(bytes, at: trailer + 16, size: 8)
        let table = Self.readUInt64(bytes, at: trailer + 24, size: 8)
        func failure(_ message: String, at offset: Int) -> GraftError {
            GraftError(.malformedInput, "\(name): \(message)", context: [.offset(baseOffset + offset)])
        }
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw failure(
                "the trailer gives offset size \(offsetSize) and reference size \(referenceSize)", at: trailer)
        }
        guard objects >= 1, objects < UInt64(trailer), top < objects else {
            throw failure("the trailer gives \(objects) objects with top object \(top)", at: trailer + 8)
        }
        guard table >= 9, table <= UInt64(trailer), objects <= (UInt64(trailer) - table) / UInt64(offsetSize) else {
            throw failure("the offset table (at \(table), \(objects) entries) does not fit", at: trailer + 24)
        }
        self.offsetSize = offsetSize
        self.referenceSize = referenceSize
        objectCount = Int(objects)
        topObject = Int(top)
        offsetTableStart = Int(table)
    }

    func failure(_ message: String, at offset: Int) -> GraftError {
        GraftError(.malformedInput, "\(name): \(message)", context: [.offset(baseOffset + offset)])
    }

    // MARK: Objects

    func offset(of reference: Int) throws -> Int {
        guard reference >= 0, reference < objectCount else {
            throw failure("reference to object \(reference), but there are only \(objectCount)", at: offsetTableStart)
        }
        let position = offsetTableStart + reference * offsetSize
        let offset = Self.readUInt64(bytes, at: position, size: offsetSize)
        guard offset >= 8, offset < UInt64(offsetTableStart) else {
            throw failure("object \(reference) has the offset \(offset), outside the object area", at: position)
        }
        return Int(offset)
    }

    /// The object at a reference, its contents bounds-checked.
    func object(_ reference: Int) throws -> Object {
        let offset = try self.offset(of: reference)
        let marker = bytes[offset]
        let low = Int(marker & 0x0F)
        switch marker >> 4 {
        case 0x0:
            if marker == 0x08 { return .bool(false) }
            if marker == 0x09 { return .bool(true) }
            throw failure("object \(reference) has the marker 0x\(String(marker, radix: 16)), not a value", at: offset)
        case 0x1:
            guard low <= 4 else { throw failure("an integer of unsupported size", at: offset) }
            let size = 1 << low
            try need(offset + 1, size, at: offset)
            if size == 16 {
                let high = Self.readUInt64(bytes, at: offset + 1, size: 8)
                let value = Self.readUInt64(bytes, at: offset + 9, size: 8)
                if high == 0 { return value <= UInt64(Int64.max) ? .integer(Int64(value)) : .unsignedInteger(value) }
                if high == UInt64.max && value >= 1 << 63 { return .integer(Int64(bitPattern: value)) }
                throw failure("a 16-byte integer outside −2⁶³ … 2⁶⁴−1", at: offset)
            }
            let value = Self.readUInt64(bytes, at: offset + 1, size: size)
            return .integer(size == 8 ? Int64(bitPattern: value) : Int64(value))
        case 0x2:
            if low == 2 {
                try need(offset + 1, 4, at: offset)
                return .real(Double(Float(bitPattern: UInt32(Self.readUInt64(bytes, at: offset + 1, size: 4)))))
            }
            guard low == 3 else { throw failure("a real of unsupported size", at: offset) }
            try need(offset + 1, 8, at: offset)
            return .real(Double(bitPattern: Self.readUInt64(bytes, at: offset + 1, size: 8)))
        case 0x3:
            try need(offset + 1, 8, at: offset)
            return .date(Double(bitPattern: Self.readUInt64(bytes, at: offset + 1, size: 8)))
        case 0x4:
            let (count, start) = try countAndStart(at: offset)
            try need(start, count, at: offset)
            return .data(start: start, count: count)
        case 0x5, 0x7:
            let (count, start) = try countAndStart(at: offset)
            try need(start, count, at: offset)
            return .asciiString(start: start, count: count)
        case 0x6:
            let (count, start) = try countAndStart(at: offset)
            guard count <= (offsetTableStart - start) / 2 else {
                throw failure("a UTF-16 string runs past the end of the object area", at: offset)
            }
            return .utf16String(start: start, count: count)
        case 0x8:
            guard low < 8 else { throw failure("a UID of unsupported size", at: offset) }
            try need(offset + 1, low + 1, at: offset)
            return .uid(Self.readUInt64(bytes, at: offset + 1, size: low + 1))
        case 0xA, 0xB, 0xC:
            let (count, start) = try countAndStart(at: offset)
            try needReferences(start, count, at: offset)
            return .array(start: start, count: count)
        case 0xD:
            let (count, start) = try countAndStart(at: offset)
            guard count <= Int.max / 4 else { throw failure("an impossibly large dictionary", at: offset) }
            try needReferences(start, 2 * count, at: offset)
            return .dictionary(start: start, count: count)
        default:
            throw failure("object \(reference) has the unknown marker 0x\(String(marker, radix: 16))", at: offset)
        }
    }

    /// The reference stored at `position` (an element of an array or dictionary).
    @inline(__always)
    func reference(at position: Int) throws -> Int {
        let reference = Self.readUInt64(bytes, at: position, size: referenceSize)
        guard reference < UInt64(objectCount) else {
            throw failure("reference to object \(reference), but there are only \(objectCount)", at: position)
        }
        return Int(reference)
    }

    /// The `index`th element reference of an array or dictionary whose references start at `start`.
    @inline(__always)
    func element(_ index: Int, from start: Int) throws -> Int {
        try reference(at: start + index * referenceSize)
    }

    func string(_ object: Object) -> String? {
        switch object {
        case .asciiString(let start, let count):
            let raw = UnsafeRawBufferPointer(rebasing: bytes[start..<(start + count)])
            let units = raw.assumingMemoryBound(to: UInt8.self)
            if let valid = String(validating: units, as: UTF8.self) { return valid }
            return String(String.UnicodeScalarView(units.map { Unicode.Scalar($0) }))
        case .utf16String(let start, let count):
            var units = [UInt16]()
            units.reserveCapacity(count)
            for index in 0..<count {
                units.append(UInt16(Self.readUInt64(bytes, at: start + 2 * index, size: 2)))
            }
            return String(decoding: units, as: UTF16.self)
        default:
            return nil
        }
    }

    /// A string object's text, or `nil` when it is not a string or its UTF-16 is not valid (an unpaired
    /// surrogate, which ``string(_:)`` would replace with U+FFFD): for attribute values, where such a
    /// string is refused rather than changed.
    func validatedString(_ object: Object) -> String? {
        guard case .utf16String(let start, let count) = object else { return string(object) }
        var units = [UInt16]()
        units.reserveCapacity(count)
        for index in 0..<count {
            units.append(UInt16(Self.readUInt64(bytes, at: start + 2 * index, size: 2)))
        }
        return String(validating: units, as: UTF16.self)
    }

    func data(_ start: Int, _ count: Int) -> Data {
        Data(UnsafeRawBufferPointer(rebasing: bytes[start..<(start + count)]))
    }

    /// Whether the string object at `reference` has exactly these ASCII bytes.
    func stringEquals(_ object: Object, _ ascii: [UInt8]) -> Bool {
        guard case .asciiString(let start, let count) = object, count == ascii.count else { return false }
        return ascii.withUnsafeBytes { memcmp($0.baseAddress!, bytes.baseAddress! + start, count) == 0 }
    }

    // MARK: Checks

    private func countAndStart(at offset: Int) throws -> (Int, Int) {
        let low = Int(bytes[offset] & 0x0F)
        if low != 0x0F { return (low, offset + 1) }
        try need(offset + 1, 1, at: offset)
        let marker = bytes[offset + 1]
        guard marker >> 4 == 0x1, marker & 0x0F <= 3 else {
            throw failure("the count after a marker is not an integer", at: offset + 1)
        }
        let size = 1 << Int(marker & 0x0F)
        try need(offset + 2, size, at: offset)
        let count = Self.readUInt64(bytes, at: offset + 2, size: size)
        guard count <= UInt64(offsetTableStart) else {
            throw failure("the count \(count) is larger than the property list", at: offset + 1)
        }
        return (Int(count), offset + 2 + size)
    }

    @inline(__always)
    private func need(_ start: Int, _ count: Int, at offset: Int) throws {
        guard start <= offsetTableStart, count <= offsetTableStart - start else {
            throw failure("an object runs past the end of the object area", at: offset)
        }
    }

    private func needReferences(_ start: Int, _ count: Int, at offset: Int) throws {
        guard start <= offsetTableStart, count <= (offsetTableStart - start) / referenceSize else {
            throw failure("\(count) references run past the end of the object area", at: offset)
        }
    }

    @inline(__always)
    static func readUInt64(_ bytes: UnsafeRawBufferPointer, at offset: Int, size: Int) -> UInt64 {
        switch size {
        case 1: return UInt64(bytes[offset])
        case 2: return UInt64(UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
        case 4: return UInt64(UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        case 8: return UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        default:
            var value: UInt64 = 0
            for index in 0..<size { value = value << 8 | UInt64(bytes[offset + index]) }
            return value
        }
    }
}
