import Foundation

/// Where a ``BinaryPlistWriter`` puts its bytes: a growing buffer, or one that hands full chunks on to a
/// file or a sink.
@usableFromInline
package protocol BinaryPlistOutput {
    /// The offset of the next byte from the start of the property list, counting bytes handed on.
    var position: Int { get }
    mutating func appendByte(_ byte: UInt8)
    mutating func appendBytes(_ bytes: UnsafeRawBufferPointer)
    /// Appends the low `size` (1 to 8) bytes of `value`, most significant first.
    mutating func appendBigEndian(_ value: UInt64, size: Int)
    /// Appends each unit big-endian.
    mutating func appendUTF16BigEndian(_ units: String.UTF16View)
    /// Hands the bytes on when enough have gathered (nothing for a buffer that only grows).
    mutating func flushIfFull() throws
}

extension BinaryPlistOutput {
    @inlinable
    package mutating func appendUTF16BigEndian(_ units: String.UTF16View) {
        for unit in units {
            appendByte(UInt8(truncatingIfNeeded: unit >> 8))
            appendByte(UInt8(truncatingIfNeeded: unit))
        }
    }

    @inlinable
    package mutating func flushIfFull() throws {}
}

/// A property list that is only ever held whole in memory.
extension [UInt8]: BinaryPlistOutput {
    @inlinable package var position: Int { count }

    @inlinable @inline(__always)
    package mutating func appendByte(_ byte: UInt8) { append(byte) }

    @inlinable
    package mutating func appendBytes(_ bytes: UnsafeRawBufferPointer) { append(contentsOf: bytes) }

    @inlinable @inline(__always)
    package mutating func appendBigEndian(_ value: UInt64, size: Int) {
        var shift = (size - 1) * 8
        while shift >= 0 {
            append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            shift -= 8
        }
    }
}

/// Writes a binary property list (`bplist00`) object by object, in the order of the objects' numbers:
/// the one writer of the format's bytes, which ``BinaryPropertyList/encode(_:)``, the binary store's
/// keyed archive and the binary property-list clipboard are built on.
///
/// Each object is numbered as it is written (or *reserved* first and written later) and only its
/// offset is kept, as a compact log of a byte or two an object, so a writer that streams its output
/// grows by little more than that. A container lists references to objects by number, written before
/// or after it. Integers and counts take the fewest of 1, 2, 4 or 8 bytes that hold them, and offsets
/// the fewest that reach the offset table, as Apple's CFBinaryPList writes them. The reference size is
/// the caller's, fixed up front: Apple's writer takes the fewest bytes that hold the number of objects
/// (not the largest number), and its reader refuses fewer.
///
/// For example:
///
/// ```swift
/// var writer = BinaryPlistWriter(output: [UInt8](), referenceSize: 1)
/// let key = writer.string("name")
/// let value = writer.string("Ann")
/// let top = writer.dictionary(keys: [key], values: [value])
/// try writer.finish(top: top)
/// let data = Data(writer.output)
/// ```
@usableFromInline
package struct BinaryPlistWriter<Output: BinaryPlistOutput> {
    @usableFromInline package var output: Output
    /// How many bytes each object reference takes.
    @usableFromInline package let referenceSize: Int
    /// The number of objects numbered so far.
    @usableFromInline package var objectCount = 0
    /// Each object's offset, in object order: the distance from the previous object written in turn
    /// (LEB128, at least 1), or 0 for an object reserved to be written later.
    @usableFromInline var offsetLog = ByteLog()
    @usableFromInline var lastOffset = 0
    /// Reserved objects in object order, and their offsets once written (0 until then). Offsets are
    /// kept in 32 bits, so a reserved object must be written in the first 4 GiB.
    @usableFromInline var reservedObjects: [UInt32] = []
    @usableFromInline var reservedOffsets: [UInt32] = []
    @usableFromInline var sharedStrings: [String: Int] = [:]
    @usableFromInline var trueObject = -1
    @usableFromInline var falseObject = -1

    /// Starts a property list: writes its header at the output's current position, which must be 0.
    @inlinable
    package init(output: Output, referenceSize: Int) {
        self.output = output
        self.referenceSize = referenceSize
        for byte in BinaryPropertyList.magic { self.output.appendByte(byte) }
    }

    /// The fewest of 1, 2, 4 or 8 bytes that hold `value`.
    @inlinable @inline(__always)
    package static func byteCount(_ value: UInt64) -> Int {
        if value <= 0xFF { return 1 }
        if value <= 0xFFFF { return 2 }
        if value <= 0xFFFF_FFFF { return 4 }
        return 8
    }

    // MARK: Numbering

    /// Numbers a new object that starts at the current position; its bytes follow.
    @inlinable @inline(__always)
    package mutating func beginObject() -> Int {
        let offset = output.position
        offsetLog.appendLEB128(UInt64(offset &- lastOffset))
        lastOffset = offset
        objectCount &+= 1
        return objectCount &- 1
    }

    /// Numbers an object to be written later with ``beginReserved(_:)``.
    @inlinable
    package mutating func reserve() -> Int {
        offsetLog.append(byte: 0)
        reservedObjects.append(UInt32(truncatingIfNeeded: objectCount))
        reservedOffsets.append(0)
        objectCount += 1
        return objectCount - 1
    }

    /// Starts writing a reserved object at the current position; its bytes follow.
    @inlinable
    package mutating func beginReserved(_ object: Int) throws {
        // Reserved objects are in object order: find this one.
        var low = 0
        var high = reservedObjects.count
        while low < high {
            let middle = (low + high) / 2
            if Int(reservedObjects[middle]) < object { low = middle + 1 } else { high = middle }
        }
        guard low < reservedObjects.count, Int(reservedObjects[low]) == object, reservedOffsets[low] == 0 else {
            throw GraftError(
                .invalidOperation, "property-list object \(object) was not reserved, or is written already")
        }
        let offset = output.position
        guard offset <= Int(UInt32.max) else {
            throw GraftError(
                .invalidOperation,
                "property-list object \(object) would lie beyond 4 GiB, where reserved objects cannot")
        }
        reservedOffsets[low] = UInt32(offset)
    }

    // MARK: Parts of objects

    /// A marker with a count: in its low four bits when below 15, else in an integer that follows.
    @inlinable @inline(__always)
    package mutating func header(_ marker: UInt8, count: Int) {
        if count < 15 {
            output.appendByte(marker << 4 | UInt8(truncatingIfNeeded: count))
        } else {
            output.appendByte(marker << 4 | 0x0F)
            let size = Self.byteCount(UInt64(count))
            output.appendByte(BinaryMarker.integer << 4 | UInt8(truncatingIfNeeded: size.trailingZeroBitCount))
            output.appendBigEndian(UInt64(count), size: size)
        }
    }

    /// One object reference, inside an array or dictionary.
    @inlinable @inline(__always)
    package mutating func appendReference<Reference: BinaryInteger>(_ object: Reference) {
        output.appendBigEndian(UInt64(truncatingIfNeeded: object), size: referenceSize)
    }

    // MARK: Objects

    /// Writes a string: ASCII as ASCII, anything else as UTF-16 (big-endian), as Apple's writer does.
    @inlinable
    package mutating func string(_ text: String) -> Int {
        let object = beginObject()
        var text = text
        let ascii = text.withUTF8 { utf8 -> Bool in
            for byte in utf8 where byte >= 0x80 { return false }
            header(BinaryMarker.asciiString, count: utf8.count)
            output.appendBytes(UnsafeRawBufferPointer(utf8))
            return true
        }
        if !ascii {
            let units = text.utf16
            header(BinaryMarker.utf16String, count: units.count)
            output.appendUTF16BigEndian(units)
        }
        return object
    }

    /// Writes an ASCII string of these bytes (the caller knows they are ASCII).
    @inlinable
    package mutating func asciiString(_ bytes: UnsafeRawBufferPointer) -> Int {
        counted(BinaryMarker.asciiString, bytes)
    }

    /// Writes an object of these bytes, counted after its marker.
    @inlinable @inline(__always)
    mutating func counted(_ marker: UInt8, _ bytes: UnsafeRawBufferPointer) -> Int {
        let object = beginObject()
        header(marker, count: bytes.count)
        output.appendBytes(bytes)
        return object
    }

    /// One string object per distinct text (keys, names).
    @inlinable
    package mutating func sharedString(_ text: String) -> Int {
        if let object = sharedStrings[text] { return object }
        let object = string(text)
        sharedStrings[text] = object
        return object
    }

    /// Writes an integer: non-negative values below 2³² in the fewest of 1, 2 or 4 bytes (read back as
    /// unsigned), all others in 8.
    @inlinable
    package mutating func integer(_ value: Int64) -> Int {
        let object = beginObject()
        appendInteger(value)
        return object
    }

    /// Writes a reserved object as an integer.
    @inlinable
    package mutating func integer(_ value: Int64, at object: Int) throws {
        try beginReserved(object)
        appendInteger(value)
    }

    @inlinable @inline(__always)
    mutating func appendInteger(_ value: Int64) {
        if value >= 0 && value <= Int64(UInt32.max) {
            let size = Self.byteCount(UInt64(value))
            output.appendByte(BinaryMarker.integer << 4 | UInt8(truncatingIfNeeded: size.trailingZeroBitCount))
            output.appendBigEndian(UInt64(value), size: size)
        } else {
            output.appendByte(BinaryMarker.integer << 4 | 3)
            output.appendBigEndian(UInt64(bitPattern: value), size: 8)
        }
    }

    /// Writes an unsigned integer; above `Int64.max` it takes 16 bytes, as Apple writes it.
    @inlinable
    package mutating func unsignedInteger(_ value: UInt64) -> Int {
        guard value > UInt64(Int64.max) else { return integer(Int64(value)) }
        let object = beginObject()
        output.appendByte(BinaryMarker.integer << 4 | 4)
        output.appendBigEndian(0, size: 8)
        output.appendBigEndian(value, size: 8)
        return object
    }

    /// Writes a real, always in 8 bytes so that every value survives.
    @inlinable
    package mutating func real(_ value: Double) -> Int {
        let object = beginObject()
        output.appendByte(BinaryMarker.real << 4 | 3)
        output.appendBigEndian(value.bitPattern, size: 8)
        return object
    }

    /// Writes a date: seconds since 2001-01-01.
    @inlinable
    package mutating func date(_ seconds: Double) -> Int {
        let object = beginObject()
        output.appendByte(BinaryMarker.dateValue)
        output.appendBigEndian(seconds.bitPattern, size: 8)
        return object
    }

    /// Writes a Boolean.
    @inlinable
    package mutating func bool(_ value: Bool) -> Int {
        let object = beginObject()
        output.appendByte(value ? BinaryMarker.trueValue : BinaryMarker.falseValue)
        return object
    }

    /// One object for `true` and one for `false`, written the first time each is asked for.
    @inlinable
    package mutating func sharedBool(_ value: Bool) -> Int {
        let known = value ? trueObject : falseObject
        if known >= 0 { return known }
        let object = bool(value)
        if value { trueObject = object } else { falseObject = object }
        return object
    }

    /// Writes a data object.
    @inlinable
    package mutating func data(_ bytes: UnsafeRawBufferPointer) -> Int {
        counted(BinaryMarker.data, bytes)
    }

    @inlinable
    package mutating func data(_ value: Data) -> Int {
        value.withUnsafeBytes { data($0) }
    }

    /// Writes a keyed archive's UID in the fewest of 1, 2, 4 or 8 bytes.
    @inlinable
    package mutating func uid(_ value: UInt64) -> Int {
        let object = beginObject()
        let size = Self.byteCount(value)
        output.appendByte(BinaryMarker.uid << 4 | UInt8(truncatingIfNeeded: size - 1))
        output.appendBigEndian(value, size: size)
        return object
    }

    /// Writes an array of these objects.
    @inlinable
    package mutating func array<Elements: Collection>(_ elements: Elements) -> Int
    where Elements.Element: BinaryInteger {
        let object = beginObject()
        header(BinaryMarker.array, count: elements.count)
        for element in elements { appendReference(element) }
        return object
    }

    /// Writes a dictionary: its keys' references, then its values'.
    @inlinable
    package mutating func dictionary<Keys: Collection, Values: Collection>(keys: Keys, values: Values) -> Int
    where Keys.Element: BinaryInteger, Values.Element: BinaryInteger {
        let object = beginObject()
        header(BinaryMarker.dictionary, count: keys.count)
        for key in keys { appendReference(key) }
        for value in values { appendReference(value) }
        return object
    }

    // MARK: Finishing

    /// Writes the offset table and the trailer, naming `top` the top object.
    ///
    /// - Returns: the property list's length in bytes.
    /// - Throws: `GraftError.invalidOperation` when an object was reserved but never written, or there are
    ///   more objects than the reference size can tell apart; what the output throws.
    @inlinable @discardableResult
    package mutating func finish(top: Int) throws -> Int {
        if let unwritten = reservedOffsets.firstIndex(of: 0) {
            throw GraftError(
                .invalidOperation, "property-list object \(reservedObjects[unwritten]) was reserved but never written")
        }
        // CoreFoundation refuses references that cannot hold the number of objects.
        if referenceSize < 8 && objectCount >= 1 << (8 * referenceSize) {
            throw GraftError(
                .invalidOperation,
                "\(objectCount) property-list objects cannot be told apart with "
                    + "\(referenceSize)-byte references")
        }
        // Offsets as wide as the offset table's own offset, as CoreFoundation writes and reads them.
        let tableStart = output.position
        let offsetSize = Self.byteCount(UInt64(tableStart))
        var reader = offsetLog.reader()
        var offset = 0
        var reserved = 0
        for _ in 0..<objectCount {
            let distance = reader.nextLEB128()
            if distance == 0 {
                output.appendBigEndian(UInt64(reservedOffsets[reserved]), size: offsetSize)
                reserved += 1
            } else {
                offset += Int(distance)
                output.appendBigEndian(UInt64(offset), size: offsetSize)
            }
            try output.flushIfFull()
        }
        offsetLog = ByteLog()
        // Trailer: 5 unused bytes, the sort version, offset size, reference size, object count, top
        // object, offset table start.
        for _ in 0..<6 { output.appendByte(0) }
        output.appendByte(UInt8(offsetSize))
        output.appendByte(UInt8(referenceSize))
        output.appendBigEndian(UInt64(objectCount), size: 8)
        output.appendBigEndian(UInt64(top), size: 8)
        output.appendBigEndian(UInt64(tableStart), size: 8)
        return output.position
    }
}

/// An append-only run of bytes kept in chunks of 1 MiB, so that it grows without copying (and
/// without the doubled peak of a growing array).
@usableFromInline
package struct ByteLog {
    @usableFromInline static var chunkSize: Int { 1 << 20 }
    @usableFromInline var full: [[UInt8]] = []
    @usableFromInline var current: [UInt8] = []

    @inlinable package init() {}

    @inlinable @inline(__always)
    package mutating func append(byte: UInt8) {
        if current.count == Self.chunkSize { startChunk() }
        current.append(byte)
    }

    @inlinable
    mutating func startChunk() {
        full.append(current)
        current = []
        current.reserveCapacity(Self.chunkSize)
    }

    /// Appends `value` in LEB128 (seven bits a byte, least significant first).
    @inlinable @inline(__always)
    package mutating func appendLEB128(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            append(byte: UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        append(byte: UInt8(truncatingIfNeeded: rest))
    }

    @inlinable
    package func reader() -> Reader { Reader(chunks: full + [current]) }

    /// Reads a log from its start.
    @usableFromInline
    package struct Reader {
        @usableFromInline let chunks: [[UInt8]]
        @usableFromInline var chunk = 0
        @usableFromInline var position = 0

        @inlinable
        init(chunks: [[UInt8]]) { self.chunks = chunks }

        @inlinable @inline(__always)
        package mutating func nextByte() -> UInt8 {
            while position == chunks[chunk].count {
                chunk += 1
                position = 0
            }
            let byte = chunks[chunk][position]
            position += 1
            return byte
        }

        @inlinable
        package mutating func nextLEB128() -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let byte = nextByte()
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }
    }
}
