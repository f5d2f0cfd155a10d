import Foundation
@_spi(GraftInternal) import GraftCore

/// Writes a keyed archive as a binary property list straight into a file, object by object.
///
/// `KeyedArchiver` builds the archive as a property-list tree and `BinaryPropertyList.encode` numbers
/// it before writing; for an object map of a million nodes that tree alone takes gigabytes. This
/// writer emits each object's bytes as soon as the object is complete and keeps only its offset, so
/// memory grows by a few bytes per object. The bytes are GraftCore's ``BinaryPlistWriter``'s; this
/// stream adds the keyed archive (`$objects`, shared names and classes, archived objects by layout).
/// Object references are always four bytes wide (readers take any width the trailer names), and an
/// object may be *reserved* first and written later, which is how primary keys get their final
/// numbers after every node has been written.
///
/// The archive it writes is an ordinary `NSKeyedArchiver` archive: `$archiver`, `$version` 100000,
/// `$top`, and `$objects` starting with `$null`.
struct ArchiveStream {
    typealias Ref = UInt32
    typealias UID = UInt64

    /// The property list's bytes on their way to the file, handed on in chunks.
    private var plist: BinaryPlistWriter<ByteBuffer>
    /// `$objects`: archive UID → property-list object, as a log of differences from the previous
    /// entry (zigzag LEB128), kept in a temporary file until the end.
    private let objectsLog: SpilledLog
    private var objectsTotal = 0
    private var lastObject: Ref = 0
    private var sharedNames: [String: Ref] = [:]
    private var sharedReferences: [UID: Ref] = [:]
    private var classes: [[String]: Ref] = [:]
    private var nullRef: Ref?

    static let referenceSize = 4

    /// Starts a property list at the new file's current position (the file stays the caller's).
    ///
    /// - Parameter folder: where the `$objects` log waits, in a temporary file removed as it is made.
    init(writingTo file: FileReplacement, folder: URL) throws {
        plist = BinaryPlistWriter(
            output: ByteBuffer(capacity: 0) { bytes in try file.append(bytes) }, referenceSize: Self.referenceSize)
        objectsLog = SpilledLog(folder: folder)
        _ = archive(try string("$null"))
    }

    /// The number of property-list objects so far.
    var objectCount: Int { plist.objectCount }

    // MARK: Property-list objects

    /// Hands full chunks to the file; before each object.
    @inline(__always)
    private mutating func flushIfNeeded() throws {
        try plist.output.flushIfFull()
        try objectsLog.flushIfFull()
    }

    /// Writes one object, after handing full chunks to the file.
    @inline(__always)
    private mutating func write(_ object: (inout BinaryPlistWriter<ByteBuffer>) -> Int) throws -> Ref {
        try flushIfNeeded()
        return Ref(truncatingIfNeeded: object(&plist))
    }

    /// A number for an object to be written later with ``writeInteger(_:at:)``.
    mutating func reserve() throws -> Ref {
        Ref(truncatingIfNeeded: plist.reserve())
    }

    mutating func string(_ string: String) throws -> Ref {
        try write { $0.string(string) }
    }

    /// One string object per distinct name (keys, class names, entity and relationship names).
    mutating func sharedString(_ name: String) throws -> Ref {
        try write { $0.sharedString(name) }
    }

    mutating func integer(_ value: Int64) throws -> Ref {
        try write { $0.integer(value) }
    }

    /// Writes a reserved object as an integer.
    mutating func writeInteger(_ value: Int64, at ref: Ref) throws {
        try flushIfNeeded()
        try plist.integer(value, at: Int(ref))
    }

    mutating func real(_ value: Double) throws -> Ref {
        try write { $0.real(value) }
    }

    mutating func bool(_ value: Bool) throws -> Ref {
        try write { $0.sharedBool(value) }
    }

    mutating func data(_ value: Data) throws -> Ref {
        try write { $0.data(value) }
    }

    /// A data object of the given bytes.
    mutating func data(bytes: UnsafeRawBufferPointer) throws -> Ref {
        try write { $0.data(bytes) }
    }

    mutating func array(_ elements: [Ref]) throws -> Ref {
        try write { $0.array(elements) }
    }

    /// Writes an array of `count` elements, which `elements` gives one by one to the function it is
    /// called with, handing full chunks to the file as they come (the object map's arrays hold one
    /// element per node).
    ///
    /// - Throws: `GraftError.invalidOperation` when `elements` gives another number of elements.
    mutating func array(count: Int, _ elements: ((Ref) throws -> Void) throws -> Void) throws -> Ref {
        try flushIfNeeded()
        let ref = Ref(truncatingIfNeeded: plist.beginObject())
        plist.header(BinaryMarker.array, count: count)
        var given = 0
        try elements { element in
            given += 1
            guard given <= count else { return }
            plist.appendReference(element)
            if given & 0xFFF == 0 { try plist.output.flushIfFull() }
        }
        guard given == count else {
            throw GraftError(.invalidOperation, "an array of \(count) objects was given \(given)")
        }
        return ref
    }

    mutating func dictionary(keys: [Ref], values: [Ref]) throws -> Ref {
        try write { $0.dictionary(keys: keys, values: values) }
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
        try write { $0.uid(uid) }
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
        if let ref = sharedNames[name] { return ref }
        let ref = try reference(to: archive(string(name)))
        sharedNames[name] = ref
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
        try flushIfNeeded()
        let ref = Ref(truncatingIfNeeded: plist.beginObject())
        let count = layout.fieldNames.count
        plist.header(BinaryMarker.dictionary, count: count + 1)
        layout.keys.withUnsafeBufferPointer { keys in
            plist.appendReference(keys[0])
            for index in 0..<count { plist.appendReference(keys[index + 2]) }
            plist.appendReference(keys[1])
        }
        for index in 0..<count { plist.appendReference(values(index)) }
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
        // `$objects`, from its log.
        try flushIfNeeded()
        let objectsArray = Ref(truncatingIfNeeded: plist.beginObject())
        plist.header(BinaryMarker.array, count: objectsTotal)
        var objectsReader = objectsLog.reader()
        var ref: Int64 = 0
        for _ in 0..<objectsTotal {
            let zigzag = try objectsReader.nextLEB128()
            ref += Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
            plist.appendReference(ref)
            try flushIfNeeded()
        }
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
        let length = try plist.finish(top: Int(root))
        try plist.output.flush()
        return length
    }
}
