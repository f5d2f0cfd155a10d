import Foundation
import GraftCore

/// Writes a keyed archive as a binary property list straight into a file, object by object.
///
/// `KeyedArchiver` builds the archive as a property-list tree and `BinaryPropertyList.encode` numbers
/// it before writing; for an object map of a million nodes that tree alone takes gigabytes. This
/// writer emits each object's bytes as soon as the object is complete and keeps only its offset, so
/// memory grows by a few bytes per object. Object references are always four bytes wide (readers
/// take any width the trailer names), and an object may be *reserved* first and written later, which
/// is how primary keys get their final numbers after every node has been written.
///
/// The archive it writes is an ordinary `NSKeyedArchiver` archive: `$archiver`, `$version` 100000,
/// `$top`, and `$objects` starting with `$null`.
struct ArchiveStream {
    typealias Ref = UInt32
    typealias UID = UInt64

    private let handle: FileHandle
    /// Bytes not yet handed to the file.
    private var buffer: [UInt8] = []
    /// Bytes of the property list already handed to the file.
    private var flushed = 0
    /// Each property-list object's offset from the start of the property list, in object order, as a
    /// compact log (a few bytes an object rather than four, for tens of millions of objects): the
    /// distance from the previous object written in turn (LEB128, at least 1), or 0 for an object
    /// reserved to be written later, whose offset is in `reservedOffsets`.
    private var offsetLog = ByteLog()
    private var objectTotal = 0
    private var lastOffset: UInt32 = 0
    private var largestOffset: UInt32 = 0
    /// Objects reserved with `reserve()`, in object order, and their offsets (0 until written).
    private var reservedRefs: [Ref] = []
    private var reservedOffsets: [UInt32] = []
    /// `$objects`: archive UID → property-list object, as a log of differences from the previous
    /// entry (zigzag LEB128).
    private var objectsLog = ByteLog()
    private var objectsTotal = 0
    private var lastObject: Ref = 0
    private var sharedStrings: [String: Ref] = [:]
    private var sharedReferences: [UID: Ref] = [:]
    private var classes: [[String]: Ref] = [:]
    private var falseRef: Ref?
    private var trueRef: Ref?
    private var nullRef: Ref?

    static let referenceSize = 4
    private static let flushSize = 1 << 22

    /// Starts a property list at the handle's current position.
    init(handle: FileHandle) throws {
        self.handle = handle
        buffer.reserveCapacity(Self.flushSize + 4096)
        buffer.append(contentsOf: Array("bplist00".utf8))
        _ = archive(try string("$null"))
    }

    /// The number of property-list objects so far.
    var objectCount: Int { objectTotal }

    private var position: Int { flushed + buffer.count }

    private mutating func flushIfNeeded() throws {
        if buffer.count >= Self.flushSize { try flush() }
    }

    private mutating func flush() throws {
        guard !buffer.isEmpty else { return }
        try handle.write(contentsOf: buffer)
        flushed += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }

    // MARK: Property-list objects

    /// A number for an object to be written later with ``writeInteger(_:at:)``.
    mutating func reserve() throws -> Ref {
        let ref = try nextRef()
        offsetLog.append(byte: 0)
        reservedRefs.append(ref)
        reservedOffsets.append(0)
        return ref
    }

    private mutating func nextRef() throws -> Ref {
        guard objectTotal < Int(UInt32.max) else {
            throw GraftError(.invalidOperation, "the object map would hold more than 2³² property-list objects")
        }
        objectTotal += 1
        return Ref(objectTotal - 1)
    }

    /// The current position as an offset, which must fit in 32 bits.
    private func currentOffset() throws -> UInt32 {
        guard position <= Int(UInt32.max) else {
            throw GraftError(.invalidOperation, "the object map would be larger than 4 GiB, which Graft does not write")
        }
        return UInt32(position)
    }

    private mutating func newObject() throws -> Ref {
        try flushIfNeeded()
        let ref = try nextRef()
        let offset = try currentOffset()
        offsetLog.appendLEB128(UInt64(offset - lastOffset))
        lastOffset = offset
        largestOffset = max(largestOffset, offset)
        return ref
    }

    mutating func string(_ string: String) throws -> Ref {
        let ref = try newObject()
        var string = string
        let ascii = string.withUTF8 { utf8 in !utf8.contains { $0 >= 0x80 } }
        if ascii {
            string.withUTF8 { utf8 in
                header(0x5, count: utf8.count)
                buffer.append(contentsOf: utf8)
            }
        } else {
            let units = Array(string.utf16)
            header(0x6, count: units.count)
            for unit in units {
                buffer.append(UInt8(truncatingIfNeeded: unit >> 8))
                buffer.append(UInt8(truncatingIfNeeded: unit))
            }
        }
        return ref
    }

    /// One string object per distinct name (keys, class names, entity and relationship names).
    mutating func sharedString(_ name: String) throws -> Ref {
        if let ref = sharedStrings[name] { return ref }
        let ref = try string(name)
        sharedStrings[name] = ref
        return ref
    }

    mutating func integer(_ value: Int64) throws -> Ref {
        let ref = try newObject()
        appendInteger(value)
        return ref
    }

    /// Writes a reserved object as an integer.
    mutating func writeInteger(_ value: Int64, at ref: Ref) throws {
        try flushIfNeeded()
        // Reserved objects are in object order: find this one.
        var low = 0
        var high = reservedRefs.count
        while low < high {
            let middle = (low + high) / 2
            if reservedRefs[middle] < ref { low = middle + 1 } else { high = middle }
        }
        guard low < reservedRefs.count, reservedRefs[low] == ref else {
            throw GraftError(.invalidOperation, "property-list object \(ref) was not reserved")
        }
        let offset = try currentOffset()
        reservedOffsets[low] = offset
        largestOffset = max(largestOffset, offset)
        appendInteger(value)
    }

    private mutating func appendInteger(_ value: Int64) {
        if value >= 0 && value <= Int64(UInt32.max) {
            let size = Self.byteCount(UInt64(value))
            buffer.append(0x10 | UInt8(size.trailingZeroBitCount))
            append(UInt64(value), size: size)
        } else {
            buffer.append(0x13)
            append(UInt64(bitPattern: value), size: 8)
        }
    }

    mutating func real(_ value: Double) throws -> Ref {
        let ref = try newObject()
        buffer.append(0x23)
        append(value.bitPattern, size: 8)
        return ref
    }

    mutating func bool(_ value: Bool) throws -> Ref {
        if let ref = value ? trueRef : falseRef { return ref }
        let ref = try newObject()
        buffer.append(value ? 0x09 : 0x08)
        if value { trueRef = ref } else { falseRef = ref }
        return ref
    }

    mutating func data(_ value: Data) throws -> Ref {
        let ref = try newObject()
        header(0x4, count: value.count)
        buffer.append(contentsOf: value)
        return ref
    }

    /// A data object of the given bytes.
    mutating func data(bytes: UnsafeRawBufferPointer) throws -> Ref {
        let ref = try newObject()
        header(0x4, count: bytes.count)
        buffer.append(contentsOf: bytes)
        return ref
    }

    mutating func array(_ elements: [Ref]) throws -> Ref {
        let ref = try newObject()
        header(0xA, count: elements.count)
        for element in elements { append(UInt64(element), size: Self.referenceSize) }
        return ref
    }

    mutating func dictionary(keys: [Ref], values: [Ref]) throws -> Ref {
        let ref = try newObject()
        header(0xD, count: keys.count)
        for key in keys { append(UInt64(key), size: Self.referenceSize) }
        for value in values { append(UInt64(value), size: Self.referenceSize) }
        return ref
    }

    // MARK: Archive objects

    /// Adds a property-list object to `$objects` and returns its UID.
    mutating func archive(_ ref: Ref) -> UID {
        let difference = Int64(ref) - Int64(lastObject)
        objectsLog.appendLEB128(UInt64(bitPattern: (difference << 1) ^ (difference >> 63)))
        lastObject = ref
        objectsTotal += 1
        return UID(objectsTotal - 1)
    }

    /// A new UID object referring to `uid`, to store in a field or collection.
    mutating func reference(to uid: UID) throws -> Ref {
        let ref = try newObject()
        let size = Self.byteCount(uid)
        buffer.append(0x80 | UInt8(size - 1))
        append(uid, size: size)
        return ref
    }

    /// One UID object per archive entry that many objects refer to (`$null`, names, classes).
    mutating func sharedReference(to uid: UID) throws -> Ref {
        if let ref = sharedReferences[uid] { return ref }
        let ref = try reference(to: uid)
        sharedReferences[uid] = ref
        return ref
    }

    /// The reference to `$null`.
    mutating func null() throws -> Ref {
        if let nullRef { return nullRef }
        let ref = try sharedReference(to: 0)
        nullRef = ref
        return ref
    }

    /// The reference to a string archived once (an entity or relationship name).
    mutating func sharedName(_ name: String) throws -> Ref {
        let key = "\u{0}name:" + name
        if let ref = sharedStrings[key] { return ref }
        let ref = try reference(to: archive(string(name)))
        sharedStrings[key] = ref
        return ref
    }

    /// The reference to the class entry for this class chain, written once.
    mutating func classReference(_ chain: [String]) throws -> Ref {
        if let ref = classes[chain] { return ref }
        let names = try chain.map { try sharedString($0) }
        let entry = try dictionary(
            keys: [sharedString("$classes"), sharedString("$classname")], values: [array(names), names[0]])
        let ref = try reference(to: archive(entry))
        classes[chain] = ref
        return ref
    }

    /// The shape of an archived object that is written many times: its class chain and field names,
    /// with their references once the first such object has been written.
    final class Layout {
        let classChain: [String]
        let fieldNames: [String]
        /// `$class`, the class entry, then each field name; empty until first use.
        fileprivate var keys: [Ref] = []

        init(classChain: [String], fieldNames: [String]) {
            self.classChain = classChain
            self.fieldNames = fieldNames
        }
    }

    /// Writes an archived object with the layout's fields, `values` giving each field's value by its
    /// position; the same bytes and the same new objects, in the same order, as
    /// ``object(classChain:fields:)`` with the same names and values.
    @inline(__always)
    mutating func object(_ layout: Layout, _ values: (Int) -> Ref) throws -> UID {
        if layout.keys.isEmpty {
            var keys = [try sharedString("$class"), try classReference(layout.classChain)]
            for name in layout.fieldNames { keys.append(try sharedString(name)) }
            layout.keys = keys
        }
        let ref = try newObject()
        let count = layout.fieldNames.count
        header(0xD, count: count + 1)
        layout.keys.withUnsafeBufferPointer { keys in
            append(UInt64(keys[0]), size: Self.referenceSize)
            for index in 0..<count { append(UInt64(keys[index + 2]), size: Self.referenceSize) }
            append(UInt64(keys[1]), size: Self.referenceSize)
        }
        for index in 0..<count { append(UInt64(values(index)), size: Self.referenceSize) }
        return archive(ref)
    }

    mutating func object(_ layout: Layout, _ value: Ref) throws -> UID {
        try object(layout) { _ in value }
    }

    /// Writes an archived object (`$class` first, then the fields) and adds it to `$objects`.
    mutating func object(classChain: [String], fields: [(key: String, value: Ref)]) throws -> UID {
        var keys = [try sharedString("$class")]
        var values = [try classReference(classChain)]
        keys.reserveCapacity(fields.count + 1)
        values.reserveCapacity(fields.count + 1)
        for field in fields {
            keys.append(try sharedString(field.key))
            values.append(field.value)
        }
        return archive(try dictionary(keys: keys, values: values))
    }

    // MARK: Finishing

    /// Writes `$objects`, `$top`, the archive's root dictionary, the offset table and the trailer.
    ///
    /// - Returns: the property list's length in bytes.
    mutating func finish(top: [(key: String, value: UID)]) throws -> Int {
        if let unwritten = reservedOffsets.firstIndex(of: 0) {
            throw GraftError(
                .invalidOperation, "property-list object \(reservedRefs[unwritten]) was reserved but never written")
        }
        // `$objects`, from its log.
        let objectsArray = try newObject()
        header(0xA, count: objectsTotal)
        var objectsReader = objectsLog.reader()
        var ref: Int64 = 0
        for _ in 0..<objectsTotal {
            let zigzag = objectsReader.nextLEB128()
            ref += Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
            append(UInt64(ref), size: Self.referenceSize)
            if buffer.count >= Self.flushSize { try flush() }
        }
        objectsLog = ByteLog()
        var topKeys: [Ref] = []
        var topValues: [Ref] = []
        for entry in top {
            topKeys.append(try sharedString(entry.key))
            topValues.append(try reference(to: entry.value))
        }
        let topDictionary = try dictionary(keys: topKeys, values: topValues)
        let root = try dictionary(
            keys: [
                sharedString("$version"), sharedString("$archiver"), sharedString("$top"), sharedString("$objects"),
            ],
            values: [integer(100_000), string("NSKeyedArchiver"), topDictionary, objectsArray])
        let tableStart = position
        let offsetSize = Self.byteCount(UInt64(largestOffset))
        var offsetReader = offsetLog.reader()
        var offset: UInt32 = 0
        var reserved = 0
        for _ in 0..<objectTotal {
            let distance = offsetReader.nextLEB128()
            if distance == 0 {
                append(UInt64(reservedOffsets[reserved]), size: offsetSize)
                reserved += 1
            } else {
                offset += UInt32(distance)
                append(UInt64(offset), size: offsetSize)
            }
            if buffer.count >= Self.flushSize { try flush() }
        }
        buffer.append(contentsOf: repeatElement(0, count: 6))
        buffer.append(UInt8(offsetSize))
        buffer.append(UInt8(Self.referenceSize))
        append(UInt64(objectTotal), size: 8)
        append(UInt64(root), size: 8)
        append(UInt64(tableStart), size: 8)
        try flush()
        return flushed
    }

    // MARK: Bytes

    private mutating func header(_ marker: UInt8, count: Int) {
        if count < 15 {
            buffer.append(marker << 4 | UInt8(count))
        } else {
            buffer.append(marker << 4 | 0x0F)
            let size = Self.byteCount(UInt64(count))
            buffer.append(0x10 | UInt8(size.trailingZeroBitCount))
            append(UInt64(count), size: size)
        }
    }

    @inline(__always)
    private mutating func append(_ value: UInt64, size: Int) {
        var shift = (size - 1) * 8
        while shift >= 0 {
            buffer.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            shift -= 8
        }
    }

    static func byteCount(_ value: UInt64) -> Int {
        if value <= 0xFF { return 1 }
        if value <= 0xFFFF { return 2 }
        if value <= 0xFFFF_FFFF { return 4 }
        return 8
    }
}

/// An append-only run of bytes kept in chunks of 1 MiB, so that it grows without copying (and
/// without the doubled peak of a growing array).
struct ByteLog {
    private static let chunkSize = 1 << 20
    private var chunks: [[UInt8]] = []

    @inline(__always)
    mutating func append(byte: UInt8) {
        if chunks.isEmpty || chunks[chunks.count - 1].count == Self.chunkSize {
            var chunk: [UInt8] = []
            chunk.reserveCapacity(Self.chunkSize)
            chunks.append(chunk)
        }
        chunks[chunks.count - 1].append(byte)
    }

    /// Appends `value` in LEB128 (seven bits a byte, least significant first).
    @inline(__always)
    mutating func appendLEB128(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            append(byte: UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        append(byte: UInt8(rest))
    }

    func reader() -> Reader { Reader(chunks: chunks) }

    /// Reads a log from its start.
    struct Reader {
        let chunks: [[UInt8]]
        var chunk = 0
        var position = 0

        @inline(__always)
        mutating func nextByte() -> UInt8 {
            while position == chunks[chunk].count {
                chunk += 1
                position = 0
            }
            let byte = chunks[chunk][position]
            position += 1
            return byte
        }

        mutating func nextLEB128() -> UInt64 {
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
