import Foundation

extension BinaryPropertyList {
    /// Decodes a binary property list.
    ///
    /// Sets are read as arrays, 16-byte integers as `.unsignedInteger` (or `.integer` when they fit),
    /// and 4-byte reals are widened to `Double`. Strings marked ASCII that hold other bytes are read
    /// as UTF-8 when valid and as Latin-1 otherwise, so sloppy writers do not make a file unreadable.
    ///
    /// An object referred to from several places is decoded once and shared, so decoding is linear
    /// in the size of the file. A small file can still describe a very large tree (an array that
    /// refers twice to the next array, forty deep): navigating it is cheap, but encoding or comparing
    /// it in full walks every path.
    ///
    /// For example:
    ///
    /// ```swift
    /// let model = try BinaryPropertyList.decode(FileAccess.read(momURL))
    /// print(model["$archiver"]?.stringValue ?? "?")   // "NSKeyedArchiver"
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` with the byte offset of the problem when the data is
    ///   truncated, an offset, count or reference points outside the file, an object refers back to
    ///   itself, nesting is deeper than ``maximumDepth``, or an object has an unknown type.
    public static func decode(_ data: Data) throws -> PropertyList {
        try data.withUnsafeBytes { bytes in
            var reader = try BinaryPlistReader(bytes)
            return try reader.readTop()
        }
    }
}

/// Reads one binary property list held in memory. Lives only inside `withUnsafeBytes`.
struct BinaryPlistReader {
    private let bytes: UnsafeRawBufferPointer
    private let offsetSize: Int
    private let referenceSize: Int
    private let objectCount: Int
    private let topObject: Int
    private let offsetTableStart: Int
    /// Objects lie in `8 ..< objectAreaEnd`.
    private let objectAreaEnd: Int

    /// Decoded objects, so shared objects are decoded once (and a file cannot blow up exponentially).
    private var cache: [PropertyList?]
    /// Containers being decoded right now, to detect cycles.
    private var inProgress: [Bool]
    private var depth = 0

    init(_ bytes: UnsafeRawBufferPointer) throws {
        self.bytes = bytes
        let count = bytes.count
        guard count >= 8, bytes[0] == 0x62, bytes[1] == 0x70, bytes[2] == 0x6C, bytes[3] == 0x69,
            bytes[4] == 0x73, bytes[5] == 0x74
        else {
            throw Self.error("the data does not start with the binary property-list header 'bplist'", at: 0)
        }
        guard bytes[6] == 0x30 else {
            let version = String(decoding: [bytes[6], bytes[7]], as: UTF8.self)
            throw GraftError(
                .unsupportedFormat, "binary property list version '\(version)' is not supported (only 'bplist00')",
                context: [.offset(6)])
        }
        guard count >= 8 + 1 + 32 else {
            throw Self.error(
                "the binary property list is truncated: \(count) bytes is too short to hold a trailer",
                at: count)
        }
        let trailer = count - 32
        let offsetSize = Int(bytes[trailer + 6])
        let referenceSize = Int(bytes[trailer + 7])
        let objectCount = Self.readUInt64(bytes, at: trailer + 8, size: 8)
        let topObject = Self.readUInt64(bytes, at: trailer + 16, size: 8)
        let offsetTableStart = Self.readUInt64(bytes, at: trailer + 24, size: 8)
        guard (1...8).contains(offsetSize) else {
            throw Self.error(
                "the trailer gives an offset size of \(offsetSize) bytes (must be 1 to 8)", at: trailer + 6)
        }
        guard (1...8).contains(referenceSize) else {
            throw Self.error(
                "the trailer gives an object reference size of \(referenceSize) bytes (must be 1 to 8)",
                at: trailer + 7)
        }
        // Every object takes at least one byte before the offset table.
        guard objectCount >= 1, objectCount < UInt64(trailer) else {
            throw Self.error(
                "the trailer gives an object count of \(objectCount), which does not fit in the file",
                at: trailer + 8)
        }
        guard topObject < objectCount else {
            throw Self.error("the top object \(topObject) is not among the \(objectCount) objects", at: trailer + 16)
        }
        guard offsetTableStart >= 9, offsetTableStart <= UInt64(trailer),
            objectCount <= (UInt64(trailer) - offsetTableStart) / UInt64(offsetSize)
        else {
            throw Self.error(
                "the offset table (at \(offsetTableStart), \(objectCount) entries of \(offsetSize) bytes) "
                    + "does not fit in the file", at: trailer + 24)
        }
        if referenceSize < 8 && objectCount > (UInt64(1) << (8 * UInt64(referenceSize))) {
            throw Self.error(
                "\(objectCount) objects cannot be addressed with \(referenceSize)-byte references",
                at: trailer + 7)
        }
        self.offsetSize = offsetSize
        self.referenceSize = referenceSize
        self.objectCount = Int(objectCount)
        self.topObject = Int(topObject)
        self.offsetTableStart = Int(offsetTableStart)
        self.objectAreaEnd = Int(offsetTableStart)
        self.cache = Array(repeating: nil, count: Int(objectCount))
        self.inProgress = Array(repeating: false, count: Int(objectCount))
    }

    mutating func readTop() throws -> PropertyList {
        try object(topObject)
    }

    // MARK: Objects

    private mutating func object(_ reference: Int) throws -> PropertyList {
        if let cached = cache[reference] { return cached }
        let offset = try self.offset(of: reference)
        let marker = bytes[offset]
        let low = Int(marker & 0x0F)
        let value: PropertyList
        switch marker >> 4 {
        case BinaryMarker.simple:
            switch marker {
            case BinaryMarker.falseValue: value = .bool(false)
            case BinaryMarker.trueValue: value = .bool(true)
            case 0x00: throw Self.error("object \(reference) is a null, which property lists cannot hold", at: offset)
            case 0x0F: throw Self.error("object \(reference) is a fill byte, not a value", at: offset)
            default: throw Self.error("object \(reference) has the unknown marker 0x\(Self.hex(marker))", at: offset)
            }
        case BinaryMarker.integer:
            value = try integer(at: offset, sizeExponent: low)
        case BinaryMarker.real:
            switch low {
            case 2:
                try need(offset + 1, 4, for: "a 4-byte real", at: offset)
                value = .real(Double(Float(bitPattern: UInt32(Self.readUInt64(bytes, at: offset + 1, size: 4)))))
            case 3:
                try need(offset + 1, 8, for: "an 8-byte real", at: offset)
                value = .real(Double(bitPattern: Self.readUInt64(bytes, at: offset + 1, size: 8)))
            default:
                throw Self.error("object \(reference) is a real of unsupported size \(1 << low) bytes", at: offset)
            }
        case BinaryMarker.date:
            guard marker == BinaryMarker.dateValue else {
                throw Self.error(
                    "object \(reference) is a date with the unknown marker 0x\(Self.hex(marker))",
                    at: offset)
            }
            try need(offset + 1, 8, for: "a date", at: offset)
            let seconds = Double(bitPattern: Self.readUInt64(bytes, at: offset + 1, size: 8))
            value = .date(Date(timeIntervalSinceReferenceDate: seconds))
        case BinaryMarker.data:
            let (count, start) = try countAndStart(at: offset)
            try need(start, count, for: "\(count) bytes of data", at: offset)
            value = .data(Data(UnsafeRawBufferPointer(rebasing: bytes[start..<(start + count)])))
        case BinaryMarker.asciiString, BinaryMarker.utf8String:
            let (count, start) = try countAndStart(at: offset)
            try need(start, count, for: "a string of \(count) bytes", at: offset)
            value = .string(
                Self.string(fromSingleBytes: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + count)])))
        case BinaryMarker.utf16String:
            let (count, start) = try countAndStart(at: offset)
            guard count <= (objectAreaEnd - start) / 2 else {
                throw Self.error(
                    "a UTF-16 string of \(count) characters runs past the end of the object area",
                    at: offset)
            }
            value = .string(
                Self.string(
                    fromUTF16BigEndian: UnsafeRawBufferPointer(
                        rebasing: bytes[start..<(start + 2 * count)])))
        case BinaryMarker.uid:
            let size = low + 1
            guard size <= 8 else {
                throw Self.error("object \(reference) is a UID of unsupported size \(size) bytes", at: offset)
            }
            try need(offset + 1, size, for: "a \(size)-byte UID", at: offset)
            value = .uid(Self.readUInt64(bytes, at: offset + 1, size: size))
        case BinaryMarker.array, BinaryMarker.orderedSet, BinaryMarker.set:
            let (count, start) = try countAndStart(at: offset)
            try needReferences(start, count, at: offset)
            try enter(reference, at: offset)
            var elements: [PropertyList] = []
            elements.reserveCapacity(count)
            for position in 0..<count {
                let child = try self.reference(at: start + position * referenceSize)
                elements.append(try object(child))
            }
            leave(reference)
            value = .array(elements)
        case BinaryMarker.dictionary:
            let (count, start) = try countAndStart(at: offset)
            guard count <= Int.max / 2 else {
                throw Self.error("a dictionary of \(count) entries is impossibly large", at: offset)
            }
            try needReferences(start, 2 * count, at: offset)
            try enter(reference, at: offset)
            var dictionary = PropertyList.Dictionary(minimumCapacity: count)
            let valuesStart = start + count * referenceSize
            for position in 0..<count {
                let keyReference = try self.reference(at: start + position * referenceSize)
                let key = try object(keyReference)
                guard case .string(let name) = key else {
                    throw Self.error(
                        "dictionary key \(position) is a \(key.typeName), not a string",
                        at: (try? self.offset(of: keyReference)) ?? offset)
                }
                let valueReference = try self.reference(at: valuesStart + position * referenceSize)
                dictionary[name] = try object(valueReference)
            }
            leave(reference)
            value = .dictionary(dictionary)
        default:
            throw Self.error("object \(reference) has the unknown marker 0x\(Self.hex(marker))", at: offset)
        }
        cache[reference] = value
        return value
    }

    private mutating func enter(_ reference: Int, at offset: Int) throws {
        if inProgress[reference] {
            throw Self.error("object \(reference) contains itself (a reference cycle)", at: offset)
        }
        depth += 1
        if depth > BinaryPropertyList.maximumDepth {
            throw Self.error("containers are nested more than \(BinaryPropertyList.maximumDepth) deep", at: offset)
        }
        inProgress[reference] = true
    }

    private mutating func leave(_ reference: Int) {
        inProgress[reference] = false
        depth -= 1
    }

    private func integer(at offset: Int, sizeExponent: Int) throws -> PropertyList {
        switch sizeExponent {
        case 0, 1, 2:
            // 1, 2 and 4-byte integers are unsigned.
            let size = 1 << sizeExponent
            try need(offset + 1, size, for: "a \(size)-byte integer", at: offset)
            return .integer(Int64(Self.readUInt64(bytes, at: offset + 1, size: size)))
        case 3:
            try need(offset + 1, 8, for: "an 8-byte integer", at: offset)
            return .integer(Int64(bitPattern: Self.readUInt64(bytes, at: offset + 1, size: 8)))
        case 4:
            // 16-byte integers: two's complement 128-bit; Apple writes them for values above Int64.max.
            try need(offset + 1, 16, for: "a 16-byte integer", at: offset)
            let high = Self.readUInt64(bytes, at: offset + 1, size: 8)
            let low = Self.readUInt64(bytes, at: offset + 9, size: 8)
            if high == 0 { return PropertyList(integer: low) }
            if high == UInt64.max && low >= UInt64(1) << 63 { return .integer(Int64(bitPattern: low)) }
            throw Self.error("a 16-byte integer is outside the range −2⁶³ … 2⁶⁴−1", at: offset)
        default:
            throw Self.error("an integer of unsupported size \(1 << sizeExponent) bytes", at: offset)
        }
    }

    /// The element count that follows a marker, and where the contents start.
    private func countAndStart(at offset: Int) throws -> (count: Int, start: Int) {
        let low = Int(bytes[offset] & 0x0F)
        if low != 0x0F { return (low, offset + 1) }
        let countOffset = offset + 1
        try need(countOffset, 1, for: "a count", at: offset)
        let marker = bytes[countOffset]
        guard marker >> 4 == BinaryMarker.integer, marker & 0x0F <= 3 else {
            throw Self.error(
                "the count after marker 0x\(Self.hex(bytes[offset])) is not an integer "
                    + "(marker 0x\(Self.hex(marker)))", at: countOffset)
        }
        let size = 1 << Int(marker & 0x0F)
        try need(countOffset + 1, size, for: "a count", at: offset)
        let count = Self.readUInt64(bytes, at: countOffset + 1, size: size)
        guard count <= UInt64(objectAreaEnd) else {
            throw Self.error("the count \(count) is larger than the file", at: countOffset)
        }
        return (Int(count), countOffset + 1 + size)
    }

    private func offset(of reference: Int) throws -> Int {
        let offset = Self.readUInt64(bytes, at: offsetTableStart + reference * offsetSize, size: offsetSize)
        guard offset >= 8, offset < UInt64(objectAreaEnd) else {
            throw Self.error(
                "object \(reference) has the offset \(offset), outside the object area 8..<\(objectAreaEnd)",
                at: offsetTableStart + reference * offsetSize)
        }
        return Int(offset)
    }

    private func reference(at position: Int) throws -> Int {
        let reference = Self.readUInt64(bytes, at: position, size: referenceSize)
        guard reference < UInt64(objectCount) else {
            throw Self.error(
                "reference to object \(reference), but there are only \(objectCount) objects", at: position)
        }
        return Int(reference)
    }

    /// Checks that `count` bytes starting at `start` lie inside the object area.
    @inline(__always)
    private func need(_ start: Int, _ count: Int, for what: @autoclosure () -> String, at offset: Int) throws {
        guard start <= objectAreaEnd, count <= objectAreaEnd - start else {
            throw Self.error("\(what()) runs past the end of the object area (at \(objectAreaEnd))", at: offset)
        }
    }

    private func needReferences(_ start: Int, _ count: Int, at offset: Int) throws {
        guard start <= objectAreaEnd, count <= (objectAreaEnd - start) / referenceSize else {
            throw Self.error(
                "\(count) object references run past the end of the object area (at \(objectAreaEnd))",
                at: offset)
        }
    }

    // MARK: Helpers

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

    static func string(fromSingleBytes raw: UnsafeRawBufferPointer) -> String {
        let units = raw.assumingMemoryBound(to: UInt8.self)
        var ascii = true
        for byte in units where byte >= 0x80 {
            ascii = false
            break
        }
        if ascii { return String(decoding: units, as: UTF8.self) }
        if let valid = String(validating: units, as: UTF8.self) { return valid }
        return String(String.UnicodeScalarView(units.map { Unicode.Scalar($0) }))
    }

    static func string(fromUTF16BigEndian raw: UnsafeRawBufferPointer) -> String {
        let count = raw.count / 2
        let units = [UInt16](unsafeUninitializedCapacity: count) { buffer, initialized in
            for index in 0..<count {
                buffer[index] = UInt16(bigEndian: raw.loadUnaligned(fromByteOffset: 2 * index, as: UInt16.self))
            }
            initialized = count
        }
        // Unpaired surrogates become U+FFFD rather than failing the whole file.
        return String(decoding: units, as: UTF16.self)
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }

    static func error(_ message: String, at offset: Int) -> GraftError {
        GraftError(.malformedInput, "binary property list: " + message, context: [.offset(offset)])
    }
}
