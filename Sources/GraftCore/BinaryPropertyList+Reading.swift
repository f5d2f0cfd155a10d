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
            var reader = try BinaryPlistTreeReader(BinaryPlistView(bytes))
            return try reader.value(reader.view.topObject)
        }
    }
}

/// Builds the value tree of a binary property list from its view, decoding each object once (shared
/// objects are shared, so a file cannot blow up exponentially) and refusing reference cycles and nesting
/// deeper than ``BinaryPropertyList/maximumDepth``.
struct BinaryPlistTreeReader {
    let view: BinaryPlistView
    /// Decoded objects by number.
    private var cache: [PropertyList?]
    /// Containers being decoded right now, to detect cycles.
    private var inProgress: [Bool]
    private var depth = 0

    init(_ view: BinaryPlistView) {
        self.view = view
        cache = Array(repeating: nil, count: view.objectCount)
        inProgress = Array(repeating: false, count: view.objectCount)
    }

    mutating func value(_ reference: Int) throws -> PropertyList {
        if let cached = cache[reference] { return cached }
        let offset = try view.offset(of: reference)
        let object = try view.object(at: offset, reference: reference)
        let value: PropertyList
        switch object {
        case .integer(let integer): value = .integer(integer)
        case .unsignedInteger(let integer): value = .unsignedInteger(integer)
        case .real(let real): value = .real(real)
        case .bool(let bool): value = .bool(bool)
        case .date(let seconds): value = .date(Date(timeIntervalSinceReferenceDate: seconds))
        case .data(let start, let count): value = .data(view.data(start, count))
        case .asciiString, .utf16String: value = .string(view.string(object) ?? "")
        case .uid(let uid): value = .uid(uid)
        case .array(let start, let count):
            try enter(reference, at: offset)
            var elements: [PropertyList] = []
            elements.reserveCapacity(count)
            for position in 0..<count { elements.append(try self.value(view.element(position, from: start))) }
            leave(reference)
            value = .array(elements)
        case .dictionary(let start, let count):
            try enter(reference, at: offset)
            var dictionary = PropertyList.Dictionary(minimumCapacity: count)
            for position in 0..<count {
                let keyReference = try view.element(position, from: start)
                let key = try self.value(keyReference)
                guard case .string(let name) = key else {
                    throw view.failure(
                        "dictionary key \(position) is a \(key.typeName), not a string",
                        at: (try? view.offset(of: keyReference)) ?? offset)
                }
                dictionary[name] = try self.value(view.element(count + position, from: start))
            }
            leave(reference)
            value = .dictionary(dictionary)
        }
        cache[reference] = value
        return value
    }

    private mutating func enter(_ reference: Int, at offset: Int) throws {
        if inProgress[reference] {
            throw view.failure("object \(reference) contains itself (a reference cycle)", at: offset)
        }
        depth += 1
        if depth > BinaryPropertyList.maximumDepth {
            throw view.failure("containers are nested more than \(BinaryPropertyList.maximumDepth) deep", at: offset)
        }
        inProgress[reference] = true
    }

    private mutating func leave(_ reference: Int) {
        inProgress[reference] = false
        depth -= 1
    }
}
