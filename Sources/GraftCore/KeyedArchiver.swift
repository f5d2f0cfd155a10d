import Foundation

/// Builds an `NSKeyedArchiver`-compatible archive, in time linear in its size.
///
/// Add objects bottom-up — each `encode…` call appends to `$objects` and returns the new object's
/// ``UID`` to store in the fields of later objects — then call ``finish(top:)`` for the archive's
/// property list, and encode it as binary. For object graphs with cycles (an entity refers to its
/// model, which refers to the entity), reserve a UID first with ``reserveObject()`` and fill it in
/// later with ``defineObject(_:classChain:fields:)``.
///
/// `$objects[0]` is `$null`; class entries (`$classname`, `$classes`) are written once per class
/// chain; plain strings and numbers are written once per value; `$version` is 100000 and `$archiver`
/// is `NSKeyedArchiver`. Foundation's own `NSKeyedArchiver` on Linux is quadratic in the number of
/// dictionaries; this writer is not.
///
/// For example:
///
/// ```swift
/// var archiver = KeyedArchiver()
/// let name = archiver.encode("Ann")
/// let tags = archiver.encodeArray([archiver.encode("a"), archiver.encode("b")])
/// let person = archiver.encodeObject(classChain: ["Person", "NSObject"],
///                                    fields: ["name": .reference(name), "tags": .reference(tags), "age": 42])
/// let data = archiver.finish(top: ["root": person]).encode(format: .binary)
/// ```
public struct KeyedArchiver: Sendable {
    /// A reference to an object in the archive being built: its index in `$objects`.
    public struct UID: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt64
        public init(rawValue: UInt64) { self.rawValue = rawValue }

        /// `$null`, the reference that stands for nil.
        public static let null = UID(rawValue: 0)

        /// The UID as a field value.
        public var propertyList: PropertyList { .uid(rawValue) }

        public var description: String { "UID(\(rawValue))" }
    }

    private var objects: [PropertyList] = ["$null"]
    private var classEntries: [[String]: UID] = [:]
    private var scalars = ScalarTable()
    private var reserved = Set<UInt64>()

    /// An empty archive (holding only `$null`).
    public init() {}

    /// The number of entries in `$objects` so far, `$null` and class entries included.
    public var objectCount: Int { objects.count }

    // MARK: Objects

    /// Appends an object of the class `classChain[0]` (whose superclasses follow it) with these fields.
    ///
    /// Field values are stored as given: use ``UID/propertyList`` (or `PropertyList.reference(_:)`)
    /// for references to other objects, and plain integers, reals, Booleans, strings or data for
    /// inline values.
    ///
    /// For example:
    ///
    /// ```swift
    /// let attribute = archiver.encodeObject(
    ///     classChain: ["NSAttributeDescription", "NSPropertyDescription", "NSObject"],
    ///     fields: ["NSPropertyName": .reference(name), "NSAttributeType": 700, "_P": 243])
    /// ```
    @discardableResult
    public mutating func encodeObject(classChain: [String], fields: PropertyList.Dictionary) -> UID {
        objects.append(.string("$null"))
        let uid = UID(rawValue: UInt64(objects.count - 1))
        objects[Int(uid.rawValue)] = object(classChain: classChain, fields: fields)
        return uid
    }

    /// Reserves a place in `$objects` for an object defined later, so that objects can refer to each
    /// other in a cycle.
    ///
    /// For example:
    ///
    /// ```swift
    /// let model = archiver.reserveObject()
    /// let entity = archiver.encodeObject(classChain: ["NSEntityDescription", "NSObject"],
    ///                                    fields: ["NSManagedObjectModel": .reference(model)])
    /// archiver.defineObject(model, classChain: ["NSManagedObjectModel", "NSObject"], fields: [...])
    /// ```
    public mutating func reserveObject() -> UID {
        objects.append(.string("$null"))
        let uid = UID(rawValue: UInt64(objects.count - 1))
        reserved.insert(uid.rawValue)
        return uid
    }

    /// Fills in an object reserved with ``reserveObject()``.
    ///
    /// A reserved object that is never defined is left as the string `$null`.
    public mutating func defineObject(_ uid: UID, classChain: [String], fields: PropertyList.Dictionary) {
        precondition(reserved.remove(uid.rawValue) != nil, "\(uid) was not reserved or is already defined")
        objects[Int(uid.rawValue)] = object(classChain: classChain, fields: fields)
    }

    /// Appends a plain value (a string, number, data, …) as an object of its own, or returns the UID
    /// of an identical value appended before. Arrays and dictionaries are appended as they are, never shared.
    ///
    /// For example:
    ///
    /// ```swift
    /// let answer = archiver.encodeValue(42)
    /// ```
    public mutating func encodeValue(_ value: PropertyList) -> UID {
        if let existing = scalars.existingIndex(of: value, orRecord: objects.count, in: objects) {
            return UID(rawValue: UInt64(existing))
        }
        objects.append(value)
        return UID(rawValue: UInt64(objects.count - 1))
    }

    private mutating func object(classChain: [String], fields: PropertyList.Dictionary) -> PropertyList {
        var object = PropertyList.Dictionary(minimumCapacity: fields.count + 1)
        object["$class"] = classEntry(classChain).propertyList
        for (key, value) in fields where key != "$class" { object[key] = value }
        return .dictionary(object)
    }

    /// The UID of the class entry for this chain, appended the first time it is used.
    public mutating func classEntry(_ classChain: [String]) -> UID {
        if let existing = classEntries[classChain] { return existing }
        precondition(!classChain.isEmpty, "a class chain names at least the class itself")
        objects.append([
            "$classname": .string(classChain[0]),
            "$classes": .array(classChain.map(PropertyList.string)),
        ])
        let uid = UID(rawValue: UInt64(objects.count - 1))
        classEntries[classChain] = uid
        return uid
    }

    // MARK: Foundation objects

    /// A string (`NSString`), archived as a plain string; equal strings share one entry.
    ///
    /// For example:
    ///
    /// ```swift
    /// let name = archiver.encode("Employee")
    /// ```
    public mutating func encode(_ string: String) -> UID {
        // The string "$null" must not collide with the $null entry, so it is never shared with it.
        encodeValue(.string(string))
    }

    /// An integer (`NSNumber`), archived as a plain number; equal numbers share one entry.
    public mutating func encode(_ integer: Int64) -> UID { encodeValue(.integer(integer)) }

    /// An integer (`NSNumber`), archived as a plain number; equal numbers share one entry.
    public mutating func encode(_ integer: Int) -> UID { encodeValue(.integer(Int64(integer))) }

    /// A real (`NSNumber`), archived as a plain number; equal numbers share one entry.
    public mutating func encode(_ real: Double) -> UID { encodeValue(.real(real)) }

    /// A Boolean (`NSNumber`), archived as a plain Boolean.
    public mutating func encode(_ bool: Bool) -> UID { encodeValue(.bool(bool)) }

    /// Bytes (`NSData`), archived as plain data; equal data share one entry.
    public mutating func encode(_ data: Data) -> UID { encodeValue(.data(data)) }

    /// An `NSMutableString`, archived with `NS.string`.
    public mutating func encodeMutableString(_ string: String) -> UID {
        encodeObject(classChain: ["NSMutableString", "NSString", "NSObject"], fields: ["NS.string": .string(string)])
    }

    /// An `NSMutableData`, archived with `NS.data`.
    public mutating func encodeMutableData(_ data: Data) -> UID {
        encodeObject(classChain: ["NSMutableData", "NSData", "NSObject"], fields: ["NS.data": .data(data)])
    }

    /// A date (`NSDate`), archived with `NS.time`, seconds since 2001-01-01 UTC.
    ///
    /// For example:
    ///
    /// ```swift
    /// let created = archiver.encode(Date())
    /// ```
    public mutating func encode(_ date: Date) -> UID {
        encodeObject(
            classChain: ["NSDate", "NSObject"], fields: ["NS.time": .real(date.timeIntervalSinceReferenceDate)])
    }

    /// A UUID (`NSUUID`), archived with its 16 `NS.uuidbytes`.
    public mutating func encode(_ uuid: UUID) -> UID {
        let bytes = withUnsafeBytes(of: uuid.uuid) { Data($0) }
        return encodeObject(classChain: ["NSUUID", "NSObject"], fields: ["NS.uuidbytes": .data(bytes)])
    }

    /// A URL (`NSURL`), archived with `NS.base` `$null` and its absolute string as `NS.relative`.
    public mutating func encode(_ url: URL) -> UID {
        let relative = encode(url.absoluteString)
        return encodeObject(
            classChain: ["NSURL", "NSObject"],
            fields: ["NS.base": UID.null.propertyList, "NS.relative": relative.propertyList])
    }

    /// An array (`NSArray`, or `NSMutableArray` when `mutable`) of objects added before.
    ///
    /// For example:
    ///
    /// ```swift
    /// let list = archiver.encodeArray([archiver.encode("a"), archiver.encode("b")])
    /// ```
    public mutating func encodeArray(_ elements: [UID], mutable: Bool = false) -> UID {
        encodeObject(
            classChain: mutable ? ["NSMutableArray", "NSArray", "NSObject"] : ["NSArray", "NSObject"],
            fields: ["NS.objects": .array(elements.map(\.propertyList))])
    }

    /// A set (`NSSet`, or `NSMutableSet` when `mutable`) of objects added before.
    public mutating func encodeSet(_ elements: [UID], mutable: Bool = false) -> UID {
        encodeObject(
            classChain: mutable ? ["NSMutableSet", "NSSet", "NSObject"] : ["NSSet", "NSObject"],
            fields: ["NS.objects": .array(elements.map(\.propertyList))])
    }

    /// A dictionary (`NSDictionary`, or `NSMutableDictionary` when `mutable`), archived as `NS.keys`
    /// and `NS.objects`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let info = archiver.encodeDictionary([(archiver.encode("key"), archiver.encode("value"))])
    /// ```
    public mutating func encodeDictionary(_ entries: [(key: UID, value: UID)], mutable: Bool = false) -> UID {
        encodeObject(
            classChain: mutable ? ["NSMutableDictionary", "NSDictionary", "NSObject"] : ["NSDictionary", "NSObject"],
            fields: [
                "NS.keys": .array(entries.map(\.key.propertyList)),
                "NS.objects": .array(entries.map(\.value.propertyList)),
            ])
    }

    /// A string-keyed dictionary of objects added before; the keys are archived as strings.
    public mutating func encodeDictionary(_ entries: KeyValuePairs<String, UID>, mutable: Bool = false) -> UID {
        let pairs = entries.map { (key: encode($0.key), value: $0.value) }
        return encodeDictionary(pairs, mutable: mutable)
    }

    /// A plain property list as Foundation objects: strings, numbers and data as plain values,
    /// dates as `NSDate`, arrays as `NSArray`, dictionaries as `NSDictionary`; a UID is kept as a
    /// reference.
    ///
    /// For example:
    ///
    /// ```swift
    /// let userInfo = archiver.encodePropertyList(["note": "kept", "weight": 2])
    /// ```
    public mutating func encodePropertyList(_ value: PropertyList) -> UID {
        switch value {
        case .string, .integer, .unsignedInteger, .real, .bool, .data:
            return encodeValue(value)
        case .date(let date):
            return encode(date)
        case .uid(let uid):
            return UID(rawValue: uid)
        case .array(let elements):
            return encodeArray(elements.map { encodePropertyList($0) })
        case .dictionary(let dictionary):
            return encodeDictionary(dictionary.map { (key: encode($0.key), value: encodePropertyList($0.value)) })
        }
    }

    // MARK: Finishing

    /// The archive's property list, with these top-level objects (`["root": uid]` for most archives).
    ///
    /// For example:
    ///
    /// ```swift
    /// let plist = archiver.finish(top: ["root": model])
    /// let data = BinaryPropertyList.encode(plist)
    /// ```
    public func finish(top: [String: UID]) -> PropertyList {
        var topDictionary = PropertyList.Dictionary(minimumCapacity: top.count)
        for key in top.keys.sorted() { topDictionary[key] = top[key]!.propertyList }
        return [
            "$version": 100_000,
            "$archiver": "NSKeyedArchiver",
            "$top": .dictionary(topDictionary),
            "$objects": .array(objects),
        ]
    }
}

extension PropertyList {
    /// A reference to an object in a keyed archive being built, as a field value.
    ///
    /// For example:
    ///
    /// ```swift
    /// let fields: PropertyList.Dictionary = ["NSEntity": .reference(entity)]
    /// ```
    public static func reference(_ uid: KeyedArchiver.UID) -> PropertyList { .uid(uid.rawValue) }
}
