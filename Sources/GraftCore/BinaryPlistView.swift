import Foundation

/// Random access to a binary property list held in memory, one object at a time, straight from the
/// bytes: the one reader of the format's bytes, which ``BinaryPropertyList/decode(_:)``, the binary
/// store's object map and the binary property-list clipboard are built on.
///
/// The view checks the header and trailer once, then decodes only the objects asked for, without
/// copying: each object comes back as its type and where its contents lie. Every offset, count and
/// reference it follows is checked against the bytes, so hostile input gives a `GraftError`, never a
/// trap. Following references (and guarding against cycles) is the caller's business. It lives only
/// inside `withUnsafeBytes`.
///
/// For example:
///
/// ```swift
/// try data.withUnsafeBytes { bytes in
///     let plist = try BinaryPlistView(bytes)
///     if case .dictionary(let start, let count) = try plist.object(plist.topObject) { … }
/// }
/// ```
@usableFromInline
package struct BinaryPlistView {
    @usableFromInline package let bytes: UnsafeRawBufferPointer
    /// What the bytes are, at the start of every message ("binary property list", "object map").
    @usableFromInline package let name: StaticString
    /// Where these bytes start in their file, for error messages.
    @usableFromInline package let baseOffset: Int
    @usableFromInline package let offsetSize: Int
    @usableFromInline package let referenceSize: Int
    @usableFromInline package let objectCount: Int
    @usableFromInline package let topObject: Int
    /// Where the offset table starts: objects lie in `8 ..< offsetTableStart`.
    @usableFromInline package let offsetTableStart: Int

    /// One object's type and value, or where its contents lie; nothing is copied.
    @usableFromInline
    package enum Object {
        case integer(Int64)
        /// An integer above `Int64.max` (a 16-byte integer).
        case unsignedInteger(UInt64)
        case real(Double)
        case bool(Bool)
        /// Seconds since 2001-01-01.
        case date(Double)
        case data(start: Int, count: Int)
        /// A string of single bytes (marked ASCII, or UTF-8).
        case asciiString(start: Int, count: Int)
        /// A string of `count` big-endian UTF-16 units.
        case utf16String(start: Int, count: Int)
        case uid(UInt64)
        /// An array, ordered set or set: `count` references from `start`.
        case array(start: Int, count: Int)
        /// `count` key references from `start`, then `count` value references.
        case dictionary(start: Int, count: Int)

        package var typeName: String {
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

    /// Checks the header and the trailer.
    ///
    /// The header is `bplist0` and one more character, as Apple's CoreFoundation accepts it (it reads
    /// `bplist00` and the later `bplist0?`); the trailer's sizes, count, top object and offset table
    /// must fit in the bytes, and the reference size must tell every object apart.
    ///
    /// - Throws: `GraftError.malformedInput` (`.unsupportedFormat` for another version).
    package init(
        _ bytes: UnsafeRawBufferPointer, name: StaticString = "binary property list", baseOffset: Int = 0
    ) throws {
        self.bytes = bytes
        self.name = name
        self.baseOffset = baseOffset
        let count = bytes.count
        func failure(_ message: String, at offset: Int) -> GraftError {
            GraftError(.malformedInput, "\(name): \(message)", context: [.offset(baseOffset + offset)])
        }
        guard count >= 8, bytes[0] == 0x62, bytes[1] == 0x70, bytes[2] == 0x6C, bytes[3] == 0x69,
            bytes[4] == 0x73, bytes[5] == 0x74
        else {
            throw failure("the data does not start with 'bplist' (it is not a binary property list)", at: 0)
        }
        guard bytes[6] == 0x30 else {
            let version = String(decoding: [bytes[6], bytes[7]], as: UTF8.self)
            throw GraftError(
                .unsupportedFormat, "\(name): version '\(version)' of the format is not supported (only 'bplist00')",
                context: [.offset(baseOffset + 6)])
        }
        guard count >= 8 + 1 + 32 else {
            throw failure(
                "the data is truncated: \(count) bytes is too short to hold an object and a trailer", at: count)
        }
        let trailer = count - 32
        let offsetSize = Int(bytes[trailer + 6])
        let referenceSize = Int(bytes[trailer + 7])
        let objectCount = Self.readUInt64(bytes, at: trailer + 8, size: 8)
        let topObject = Self.readUInt64(bytes, at: trailer + 16, size: 8)
        let offsetTableStart = Self.readUInt64(bytes, at: trailer + 24, size: 8)
        let truncated = " (is the data truncated?)"
        guard (1...8).contains(offsetSize) else {
            throw failure(
                "the trailer gives an offset size of \(offsetSize) bytes (must be 1 to 8)" + truncated, at: trailer + 6)
        }
        guard (1...8).contains(referenceSize) else {
            throw failure(
                "the trailer gives an object reference size of \(referenceSize) bytes (must be 1 to 8)" + truncated,
                at: trailer + 7)
        }
        // Every object takes at least one byte before the offset table.
        guard objectCount >= 1, objectCount < UInt64(trailer) else {
            throw failure(
                "the trailer gives an object count of \(objectCount), which does not fit in the data" + truncated,
                at: trailer + 8)
        }
        guard topObject < objectCount else {
            throw failure(
                "the top object \(topObject) is not among the \(objectCount) objects" + truncated, at: trailer + 16)
        }
        guard offsetTableStart >= 9, offsetTableStart <= UInt64(trailer),
            objectCount <= (UInt64(trailer) - offsetTableStart) / UInt64(offsetSize)
        else {
            throw failure(
                "the offset table (at \(offsetTableStart), \(objectCount) entries of \(offsetSize) bytes) "
                    + "does not fit in the data" + truncated, at: trailer + 24)
        }
        // CoreFoundation refuses a trailer whose references cannot tell its objects apart.
        if referenceSize < 8 && objectCount > (UInt64(1) << (8 * UInt64(referenceSize))) {
            throw failure(
                "\(objectCount) objects cannot be addressed with \(referenceSize)-byte references", at: trailer + 7)
        }
        self.offsetSize = offsetSize
        self.referenceSize = referenceSize
        self.objectCount = Int(objectCount)
        self.topObject = Int(topObject)
        self.offsetTableStart = Int(offsetTableStart)
    }

    /// An error at `offset` in these bytes: "*name*: *message*", with the offset in the file.
    @usableFromInline
    package func failure(_ message: String, at offset: Int, context: [GraftError.Location] = []) -> GraftError {
        GraftError(.malformedInput, "\(name): \(message)", context: [.offset(baseOffset + offset)] + context)
    }

    // MARK: Objects

    /// The offset of an object, checked to lie among the objects.
    @inlinable @inline(__always)
    package func offset(of reference: Int) throws -> Int {
        guard UInt(bitPattern: reference) < UInt(objectCount) else { throw referenceFailure(reference, at: nil) }
        let position = offsetTableStart &+ reference &* offsetSize
        let offset = Self.readUInt64(bytes, at: position, size: offsetSize)
        guard offset >= 8, offset < UInt64(offsetTableStart) else { throw offsetFailure(reference, offset) }
        return Int(offset)
    }

    /// The reference stored at `position` (an element of an array or dictionary), checked to name an object.
    @inlinable @inline(__always)
    package func reference(at position: Int) throws -> Int {
        let reference = Self.readUInt64(bytes, at: position, size: referenceSize)
        guard reference < UInt64(objectCount) else {
            throw referenceFailure(Int(truncatingIfNeeded: reference), at: position)
        }
        return Int(reference)
    }

    /// The `index`th reference of an array or dictionary whose references start at `start`.
    @inlinable @inline(__always)
    package func element(_ index: Int, from start: Int) throws -> Int {
        try reference(at: start &+ index &* referenceSize)
    }

    /// The marker byte of an object: its type in the high four bits.
    @inlinable @inline(__always)
    package func marker(of reference: Int) throws -> UInt8 {
        bytes[try offset(of: reference)]
    }

    /// The object at a reference, its contents bounds-checked.
    @inlinable
    package func object(_ reference: Int) throws -> Object {
        try object(at: offset(of: reference), reference: reference)
    }

    /// The object at `offset` (from ``offset(of:)``); `reference` names it in messages.
    @inlinable
    package func object(at offset: Int, reference: Int) throws -> Object {
        let marker = bytes[offset]
        let low = Int(marker & 0x0F)
        switch marker >> 4 {
        case BinaryMarker.simple:
            if marker == BinaryMarker.falseValue { return .bool(false) }
            if marker == BinaryMarker.trueValue { return .bool(true) }
            throw markerFailure(reference, at: offset)
        case BinaryMarker.integer:
            return try integer(at: offset)
        case BinaryMarker.real:
            return .real(try real(at: offset, reference: reference))
        case BinaryMarker.date:
            guard marker == BinaryMarker.dateValue else { throw markerFailure(reference, at: offset) }
            try need(offset &+ 1, 8, for: "a date", at: offset)
            return .date(Double(bitPattern: Self.readUInt64(bytes, at: offset &+ 1, size: 8)))
        case BinaryMarker.data:
            let (start, count) = try contents(at: offset, type: BinaryMarker.data)
            return .data(start: start, count: count)
        case BinaryMarker.asciiString, BinaryMarker.utf8String:
            let (start, count) = try contents(at: offset, type: BinaryMarker.asciiString)
            return .asciiString(start: start, count: count)
        case BinaryMarker.utf16String:
            let (start, count) = try contents(at: offset, type: BinaryMarker.utf16String)
            return .utf16String(start: start, count: count)
        case BinaryMarker.uid:
            let size = low &+ 1
            guard size <= 8 else {
                throw failure("object \(reference) is a UID of unsupported size \(size) bytes", at: offset)
            }
            try need(offset &+ 1, size, for: "a \(size)-byte UID", at: offset)
            return .uid(Self.readUInt64(bytes, at: offset &+ 1, size: size))
        case BinaryMarker.array, BinaryMarker.orderedSet, BinaryMarker.set:
            let (start, count) = try contents(at: offset, type: BinaryMarker.array)
            return .array(start: start, count: count)
        case BinaryMarker.dictionary:
            let (start, count) = try contents(at: offset, type: BinaryMarker.dictionary)
            return .dictionary(start: start, count: count)
        default:
            throw markerFailure(reference, at: offset)
        }
    }

    /// Where the contents of the counted object at `offset` start and how many units they hold (bytes,
    /// UTF-16 units, references or entries), checked to lie among the objects. `type` is the kind of
    /// object the caller has seen in the marker's high four bits (an array for sets, a single-byte
    /// string for UTF-8).
    @inlinable @inline(__always)
    package func contents(at offset: Int, type: UInt8) throws -> (start: Int, count: Int) {
        let (count, start) = try count(at: offset)
        switch type {
        case BinaryMarker.array:
            try needReferences(start, count, at: offset)
        case BinaryMarker.dictionary:
            guard count <= Int.max / 2 else {
                throw failure("a dictionary of \(count) entries is impossibly large", at: offset)
            }
            try needReferences(start, 2 &* count, at: offset)
        case BinaryMarker.utf16String:
            guard count <= (offsetTableStart &- start) / 2 else {
                throw failure(
                    "a UTF-16 string of \(count) characters runs past the end of the object area", at: offset)
            }
        default:
            try need(
                start, count, for: type == BinaryMarker.data ? "\(count) bytes of data" : "a string of \(count) bytes",
                at: offset)
        }
        return (start, count)
    }

    /// The integer at `offset`: 1, 2 and 4-byte integers are unsigned, 8-byte ones signed, 16-byte ones
    /// two's complement (Apple writes them for values above `Int64.max`).
    @inlinable
    package func integer(at offset: Int) throws -> Object {
        let exponent = Int(bytes[offset] & 0x0F)
        guard exponent <= 4 else {
            throw failure("an integer of unsupported size \(1 << exponent) bytes", at: offset)
        }
        let size = 1 << exponent
        try need(offset &+ 1, size, for: "a \(size)-byte integer", at: offset)
        if size == 16 {
            let high = Self.readUInt64(bytes, at: offset &+ 1, size: 8)
            let low = Self.readUInt64(bytes, at: offset &+ 9, size: 8)
            if high == 0 { return low <= UInt64(Int64.max) ? .integer(Int64(low)) : .unsignedInteger(low) }
            if high == UInt64.max && low >= UInt64(1) << 63 { return .integer(Int64(bitPattern: low)) }
            throw failure("a 16-byte integer is outside the range −2⁶³ … 2⁶⁴−1", at: offset)
        }
        let value = Self.readUInt64(bytes, at: offset &+ 1, size: size)
        return .integer(size == 8 ? Int64(bitPattern: value) : Int64(value))
    }

    /// The real at `offset`; 4-byte reals are widened.
    @inlinable
    package func real(at offset: Int, reference: Int) throws -> Double {
        switch bytes[offset] & 0x0F {
        case 2:
            try need(offset &+ 1, 4, for: "a 4-byte real", at: offset)
            return Double(Float(bitPattern: UInt32(Self.readUInt64(bytes, at: offset &+ 1, size: 4))))
        case 3:
            try need(offset &+ 1, 8, for: "an 8-byte real", at: offset)
            return Double(bitPattern: Self.readUInt64(bytes, at: offset &+ 1, size: 8))
        default:
            throw failure(
                "object \(reference) is a real of unsupported size \(1 << Int(bytes[offset] & 0x0F)) bytes", at: offset)
        }
    }

    /// What an object is, with an article, for messages ("an integer", "a set").
    package func kind(of reference: Int) -> String {
        guard let offset = try? offset(of: reference) else { return "an object outside the data" }
        let marker = bytes[offset]
        switch marker >> 4 {
        case BinaryMarker.simple: return marker == 0x08 || marker == 0x09 ? "a Boolean" : "a null or fill byte"
        case BinaryMarker.integer: return "an integer"
        case BinaryMarker.real: return "a real"
        case BinaryMarker.date: return "a date"
        case BinaryMarker.data: return "data"
        case BinaryMarker.asciiString, BinaryMarker.utf16String, BinaryMarker.utf8String: return "a string"
        case BinaryMarker.uid: return "a UID"
        case BinaryMarker.array: return "an array"
        case BinaryMarker.orderedSet, BinaryMarker.set: return "a set"
        case BinaryMarker.dictionary: return "a dictionary"
        default: return "an object of unknown type 0x\(Self.hex(marker))"
        }
    }

    // MARK: Contents

    /// The bytes of a data or single-byte string object.
    @inlinable @inline(__always)
    package func bytes(_ start: Int, _ count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[start..<(start &+ count)])
    }

    package func data(_ start: Int, _ count: Int) -> Data {
        Data(bytes(start, count))
    }

    /// A string object's text, or `nil` for other objects. Single-byte strings that are not ASCII are
    /// read as UTF-8 when valid and as Latin-1 otherwise, and unpaired UTF-16 surrogates become U+FFFD,
    /// so sloppy writers do not make a file unreadable.
    package func string(_ object: Object) -> String? {
        switch object {
        case .asciiString(let start, let count):
            let units = bytes(start, count).assumingMemoryBound(to: UInt8.self)
            var ascii = true
            for byte in units where byte >= 0x80 {
                ascii = false
                break
            }
            if ascii { return String(decoding: units, as: UTF8.self) }
            if let valid = String(validating: units, as: UTF8.self) { return valid }
            return String(String.UnicodeScalarView(units.map { Unicode.Scalar($0) }))
        case .utf16String(let start, let count):
            return String(decoding: utf16Units(start, count), as: UTF16.self)
        default:
            return nil
        }
    }

    /// A string object's text, or `nil` when it is not a string or its UTF-16 is not valid (an unpaired
    /// surrogate, which ``string(_:)`` would replace with U+FFFD): for values that are refused rather
    /// than changed.
    package func validatedString(_ object: Object) -> String? {
        guard case .utf16String(let start, let count) = object else { return string(object) }
        return String(validating: utf16Units(start, count), as: UTF16.self)
    }

    private func utf16Units(_ start: Int, _ count: Int) -> [UInt16] {
        [UInt16](unsafeUninitializedCapacity: count) { buffer, initialized in
            for index in 0..<count {
                buffer[index] = UInt16(
                    bigEndian: bytes.loadUnaligned(fromByteOffset: start + 2 * index, as: UInt16.self))
            }
            initialized = count
        }
    }

    /// Transcodes `count` big-endian UTF-16 units from `start` to UTF-8, one byte at a time; `false` (after
    /// the bytes before it) at an unpaired surrogate.
    @inlinable
    package func transcodeUTF16(_ start: Int, _ count: Int, _ body: (UInt8) -> Void) -> Bool {
        var index = 0
        while index < count {
            let unit = UInt16(bytes[start &+ 2 &* index]) << 8 | UInt16(bytes[start &+ 2 &* index &+ 1])
            index &+= 1
            var scalar = UInt32(unit)
            if unit >= 0xD800 && unit < 0xE000 {
                guard unit < 0xDC00, index < count else { return false }
                let low = UInt16(bytes[start &+ 2 &* index]) << 8 | UInt16(bytes[start &+ 2 &* index &+ 1])
                guard low >= 0xDC00, low < 0xE000 else { return false }
                index &+= 1
                scalar = 0x10000 &+ (UInt32(unit) &- 0xD800) << 10 &+ (UInt32(low) &- 0xDC00)
            }
            switch scalar {
            case 0..<0x80:
                body(UInt8(truncatingIfNeeded: scalar))
            case 0x80..<0x800:
                body(UInt8(truncatingIfNeeded: 0xC0 | scalar >> 6))
                body(UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F))
            case 0x800..<0x10000:
                body(UInt8(truncatingIfNeeded: 0xE0 | scalar >> 12))
                body(UInt8(truncatingIfNeeded: 0x80 | scalar >> 6 & 0x3F))
                body(UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F))
            default:
                body(UInt8(truncatingIfNeeded: 0xF0 | scalar >> 18))
                body(UInt8(truncatingIfNeeded: 0x80 | scalar >> 12 & 0x3F))
                body(UInt8(truncatingIfNeeded: 0x80 | scalar >> 6 & 0x3F))
                body(UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F))
            }
        }
        return true
    }

    /// Whether a string object has exactly these ASCII bytes.
    package func stringEquals(_ object: Object, _ ascii: [UInt8]) -> Bool {
        guard case .asciiString(let start, let count) = object, count == ascii.count else { return false }
        return ascii.withUnsafeBytes { $0.elementsEqual(bytes(start, count)) }
    }

    // MARK: Checks

    /// The count that follows a marker (in its low four bits, or in an integer after it) and where the
    /// contents start.
    @inlinable @inline(__always)
    package func count(at offset: Int) throws -> (count: Int, start: Int) {
        let low = Int(bytes[offset] & 0x0F)
        if low != 0x0F { return (low, offset &+ 1) }
        return try longCount(at: offset)
    }

    @usableFromInline
    func longCount(at offset: Int) throws -> (count: Int, start: Int) {
        let countOffset = offset + 1
        try need(countOffset, 1, for: "a count", at: offset)
        let marker = bytes[countOffset]
        guard marker >> 4 == BinaryMarker.integer, marker & 0x0F <= 3 else {
            throw failure(
                "the count after marker 0x\(Self.hex(bytes[offset])) is not an integer (marker 0x\(Self.hex(marker)))",
                at: countOffset)
        }
        let size = 1 << Int(marker & 0x0F)
        try need(countOffset + 1, size, for: "a count", at: offset)
        let count = Self.readUInt64(bytes, at: countOffset + 1, size: size)
        guard count <= UInt64(offsetTableStart) else {
            throw failure("the count \(count) is larger than the file", at: countOffset)
        }
        return (Int(count), countOffset + 1 + size)
    }

    /// Checks that `count` bytes from `start` lie among the objects.
    @inlinable @inline(__always)
    package func need(_ start: Int, _ count: Int, for what: @autoclosure () -> String, at offset: Int) throws {
        guard start <= offsetTableStart, count <= offsetTableStart &- start else {
            throw failure("\(what()) runs past the end of the object area (at \(offsetTableStart))", at: offset)
        }
    }

    /// Checks that `count` references from `start` lie among the objects.
    @inlinable @inline(__always)
    package func needReferences(_ start: Int, _ count: Int, at offset: Int) throws {
        guard start <= offsetTableStart, count <= (offsetTableStart &- start) / referenceSize else {
            throw failure(
                "\(count) object references run past the end of the object area (at \(offsetTableStart))", at: offset)
        }
    }

    @usableFromInline
    func referenceFailure(_ reference: Int, at position: Int?) -> GraftError {
        failure(
            "reference to object \(reference), but there are only \(objectCount) objects",
            at: position ?? offsetTableStart)
    }

    @usableFromInline
    func offsetFailure(_ reference: Int, _ offset: UInt64) -> GraftError {
        failure(
            "object \(reference) has the offset \(offset), outside the object area 8..<\(offsetTableStart)",
            at: offsetTableStart + reference * offsetSize)
    }

    @usableFromInline
    func markerFailure(_ reference: Int, at offset: Int) -> GraftError {
        let marker = bytes[offset]
        switch marker {
        case 0x00: return failure("object \(reference) is a null, which property lists cannot hold", at: offset)
        case 0x0F: return failure("object \(reference) is a fill byte, not a value", at: offset)
        case 0x30...0x3F:
            return failure("object \(reference) is a date with the unknown marker 0x\(Self.hex(marker))", at: offset)
        default: return failure("object \(reference) has the unknown marker 0x\(Self.hex(marker))", at: offset)
        }
    }

    // MARK: Bytes

    /// A big-endian unsigned integer of `size` (1 to 8) bytes.
    @inlinable @inline(__always)
    package static func readUInt64(_ bytes: UnsafeRawBufferPointer, at offset: Int, size: Int) -> UInt64 {
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

    package static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}
