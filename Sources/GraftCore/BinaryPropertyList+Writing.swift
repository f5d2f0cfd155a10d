import Foundation

extension BinaryPropertyList {
    /// Encodes a property list in the binary format (`bplist00`).
    ///
    /// Equal strings, numbers, dates, data and UIDs are written once and shared; arrays and
    /// dictionaries are written as often as they occur. Integers use the fewest bytes that hold them,
    /// offsets the fewest that reach the offset table and references the fewest that hold the number of
    /// objects, as Apple's CFBinaryPList picks them (its reader refuses narrower ones). ASCII strings
    /// are written as ASCII, others as UTF-16, as Apple's writer does; reals are always 8 bytes, so
    /// every value survives a round trip exactly.
    ///
    /// For example:
    ///
    /// ```swift
    /// let data = BinaryPropertyList.encode(["NSStoreType": "SQLite", "NSStoreModelVersionHashesVersion": 3])
    /// try FileAccess.writeAtomically(data, to: url)
    /// ```
    public static func encode(_ value: PropertyList) -> Data {
        var encoder = BinaryPlistTreeWriter()
        return encoder.encode(value)
    }
}

/// Writes a value tree: first numbers every object (sharing equal scalars), breadth first from the top
/// object 0, then writes them in that order through a ``BinaryPlistWriter``. Both passes are linear.
struct BinaryPlistTreeWriter {
    /// Every object to write, in reference order; the top object is 0.
    private var objects: [PropertyList] = []
    /// For containers: where their child references start in `references`.
    private var childStart: [Int] = []
    /// Child references of all containers, concatenated (a dictionary's keys, then its values).
    private var references: [Int] = []
    /// Scalars already numbered.
    private var scalars = ScalarTable()

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
        objects.append(value)
        childStart.append(0)
        return objects.count - 1
    }

    // MARK: Writing

    private func write() -> Data {
        // References as wide as the number of objects, as CFBinaryPList writes them.
        let referenceSize = BinaryPlistWriter<[UInt8]>.byteCount(UInt64(objects.count))
        var writer = BinaryPlistWriter(output: [UInt8](), referenceSize: referenceSize)
        writer.output.reserveCapacity(8 + objects.count * 4 + references.count * referenceSize + 32)
        for index in objects.indices {
            switch objects[index] {
            case .string(let string): _ = writer.string(string)
            case .integer(let integer): _ = writer.integer(integer)
            case .unsignedInteger(let integer): _ = writer.unsignedInteger(integer)
            case .real(let real): _ = writer.real(real)
            case .bool(let bool): _ = writer.bool(bool)
            case .date(let date): _ = writer.date(date.timeIntervalSinceReferenceDate)
            case .data(let data): _ = writer.data(data)
            case .uid(let uid): _ = writer.uid(uid)
            case .array(let elements):
                let start = childStart[index]
                _ = writer.array(references[start..<(start + elements.count)])
            case .dictionary(let dictionary):
                let start = childStart[index]
                let count = dictionary.count
                _ = writer.dictionary(
                    keys: references[start..<(start + count)], values: references[(start + count)..<(start + 2 * count)]
                )
            }
        }
        // Nothing is reserved, and the reference size holds every object.
        _ = try? writer.finish(top: 0)
        return Data(writer.output)
    }
}
