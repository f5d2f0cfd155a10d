import Foundation

extension BinaryPropertyList {
    /// Encodes a property list in the binary format (`bplist00`).
    ///
    /// Equal strings, numbers, dates, data and UIDs are written once and shared; arrays and
    /// dictionaries are written as often as they occur. Integers, offsets and object references use
    /// the fewest bytes that hold them. ASCII strings are written as ASCII, others as UTF-16, as
    /// Apple's writer does; reals are always 8 bytes, so every value survives a round trip exactly.
    ///
    /// For example:
    ///
    /// ```swift
    /// let data = BinaryPropertyList.encode(["NSStoreType": "SQLite", "NSStoreModelVersionHashesVersion": 3])
    /// try FileAccess.writeAtomically(data, to: url)
    /// ```
    public static func encode(_ value: PropertyList) -> Data {
        var writer = BinaryPlistWriter()
        return writer.encode(value)
    }
}

/// Writes one binary property list: first numbers every object (sharing equal scalars), then writes
/// objects, offset table and trailer. Both passes are linear.
struct BinaryPlistWriter {
    /// Every object to write, in reference order; the top object is 0.
    private var objects: [PropertyList] = []
    /// For containers: where their child references start in `references`.
    private var childStart: [Int] = []
    /// Child references of all containers, concatenated (a dictionary's keys, then its values).
    private var references: [Int] = []
    /// Scalars already numbered.
    private var scalars = ScalarTable()
    private var output: [UInt8] = []

    mutating func encode(_ top: PropertyList) -> Data {
        number(top)
        return write()
    }

    // MARK: Numbering

    private mutating func number(_ top: PropertyList) {
        _ = reference(for: top)
        var next = 0
        // Breadth first, iteratively: `objects` grows as containers are expanded.
        while next < objects.count {
            switch objects[next] {
            case .array(let elements):
                childStart[next] = references.count
                for element in elements { references.append(reference(for: element)) }
            case .dictionary(let dictionary):
                childStart[next] = references.count
                for key in dictionary.keys { references.append(reference(for: .string(key))) }
                for value in dictionary.values { references.append(reference(for: value)) }
            default:
                break
            }
            next += 1
        }
    }

    private mutating func reference(for value: PropertyList) -> Int {
        if let existing = scalars.existingIndex(of: value, orRecord: objects.count, in: objects) { return existing }
        return append(value)
    }

    private mutating func append(_ value: PropertyList) -> Int {
        objects.append(value)
        childStart.append(0)
        return objects.count - 1
    }

    // MARK: Writing

    private mutating func write() -> Data {
        let referenceSize = Self.byteCount(UInt64(objects.count - 1))
        output.reserveCapacity(8 + objects.count * 4 + references.count * referenceSize + 32)
        output.append(contentsOf: BinaryPropertyList.magic)
        var offsets: [Int] = []
        offsets.reserveCapacity(objects.count)
        for index in objects.indices {
            offsets.append(output.count)
            writeObject(index, referenceSize: referenceSize)
        }
        let offsetTableStart = output.count
        let offsetSize = Self.byteCount(UInt64(offsets.last ?? 0))
        for offset in offsets { appendBigEndian(UInt64(offset), size: offsetSize) }
        // Trailer: 5 unused bytes, sort version, offset size, reference size, object count, top object,
        // offset table start.
        output.append(contentsOf: repeatElement(0, count: 6))
        output.append(UInt8(offsetSize))
        output.append(UInt8(referenceSize))
        appendBigEndian(UInt64(objects.count), size: 8)
        appendBigEndian(0, size: 8)
        appendBigEndian(UInt64(offsetTableStart), size: 8)
        return Data(output)
    }

    private mutating func writeObject(_ index: Int, referenceSize: Int) {
        switch objects[index] {
        case .string(let string):
            writeString(string)
        case .integer(let integer):
            writeInteger(integer)
        case .unsignedInteger(let integer):
            if integer <= UInt64(Int64.max) {
                writeInteger(Int64(integer))
            } else {
                output.append(BinaryMarker.integer << 4 | 4)
                appendBigEndian(0, size: 8)
                appendBigEndian(integer, size: 8)
            }
        case .real(let real):
            output.append(BinaryMarker.real << 4 | 3)
            appendBigEndian(real.bitPattern, size: 8)
        case .bool(let bool):
            output.append(bool ? BinaryMarker.trueValue : BinaryMarker.falseValue)
        case .date(let date):
            output.append(BinaryMarker.dateValue)
            appendBigEndian(date.timeIntervalSinceReferenceDate.bitPattern, size: 8)
        case .data(let data):
            writeHeader(BinaryMarker.data, count: data.count)
            output.append(contentsOf: data)
        case .uid(let uid):
            let size = Self.byteCount(uid)
            output.append(BinaryMarker.uid << 4 | UInt8(size - 1))
            appendBigEndian(uid, size: size)
        case .array(let elements):
            writeHeader(BinaryMarker.array, count: elements.count)
            writeReferences(from: childStart[index], count: elements.count, size: referenceSize)
        case .dictionary(let dictionary):
            writeHeader(BinaryMarker.dictionary, count: dictionary.count)
            writeReferences(from: childStart[index], count: 2 * dictionary.count, size: referenceSize)
        }
    }

    private mutating func writeString(_ string: String) {
        var string = string
        let isASCII = string.withUTF8 { utf8 in
            for byte in utf8 where byte >= 0x80 { return false }
            return true
        }
        if isASCII {
            string.withUTF8 { utf8 in
                writeHeader(BinaryMarker.asciiString, count: utf8.count)
                output.append(contentsOf: utf8)
            }
        } else {
            let utf16 = string.utf16
            writeHeader(BinaryMarker.utf16String, count: utf16.count)
            for unit in utf16 {
                output.append(UInt8(truncatingIfNeeded: unit >> 8))
                output.append(UInt8(truncatingIfNeeded: unit))
            }
        }
    }

    private mutating func writeInteger(_ integer: Int64) {
        // Non-negative values take the fewest of 1, 2, 4 bytes (read back as unsigned); the rest 8 bytes.
        if integer >= 0 && integer <= Int64(UInt32.max) {
            let size = Self.byteCount(UInt64(integer))
            output.append(BinaryMarker.integer << 4 | UInt8(size.trailingZeroBitCount))
            appendBigEndian(UInt64(integer), size: size)
        } else {
            output.append(BinaryMarker.integer << 4 | 3)
            appendBigEndian(UInt64(bitPattern: integer), size: 8)
        }
    }

    private mutating func writeHeader(_ marker: UInt8, count: Int) {
        if count < 15 {
            output.append(marker << 4 | UInt8(count))
        } else {
            output.append(marker << 4 | 0x0F)
            let size = Self.byteCount(UInt64(count))
            output.append(BinaryMarker.integer << 4 | UInt8(size.trailingZeroBitCount))
            appendBigEndian(UInt64(count), size: size)
        }
    }

    private mutating func writeReferences(from start: Int, count: Int, size: Int) {
        for position in start..<(start + count) { appendBigEndian(UInt64(references[position]), size: size) }
    }

    @inline(__always)
    private mutating func appendBigEndian(_ value: UInt64, size: Int) {
        switch size {
        case 1:
            output.append(UInt8(truncatingIfNeeded: value))
        case 2:
            output.append(UInt8(truncatingIfNeeded: value >> 8))
            output.append(UInt8(truncatingIfNeeded: value))
        default:
            var shift = (size - 1) * 8
            while shift >= 0 {
                output.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
                shift -= 8
            }
        }
    }

    /// The fewest of 1, 2, 4 or 8 bytes that hold `value`.
    static func byteCount(_ value: UInt64) -> Int {
        if value <= UInt64(UInt8.max) { return 1 }
        if value <= UInt64(UInt16.max) { return 2 }
        if value <= UInt64(UInt32.max) { return 4 }
        return 8
    }
}
