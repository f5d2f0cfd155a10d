import Foundation

// Decoders for the Foundation objects NSKeyedArchiver writes.

extension ArchivedObject {
    /// The object as a string: a plain string, or an `NSString`/`NSMutableString` stored with
    /// `NS.string` or as UTF-8 `NS.bytes`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let name = try entity["NSEntityName"]?.decodeString()
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` when the object is not a string.
    public func decodeString() throws -> String {
        try decodeString(hops: 0)
    }

    private func decodeString(hops: Int) throws -> String {
        switch rawValue {
        case .string(let string):
            return string
        case .dictionary(let fields):
            if let value = fields["NS.string"] {
                switch value {
                case .string(let string): return string
                case .uid:
                    guard hops < 8, let target = try self["NS.string"] else {
                        throw failure("has an NS.string that does not lead to a string", key: "NS.string")
                    }
                    return try target.decodeString(hops: hops + 1)
                default:
                    throw failure("has an NS.string that is a \(value.typeName)", key: "NS.string")
                }
            }
            if case .data(let bytes)? = fields["NS.bytes"] {
                guard let string = String(validating: bytes, as: UTF8.self) else {
                    throw failure("has NS.bytes that are not UTF-8", key: "NS.bytes")
                }
                return string
            }
            throw failure("is not a string")
        default:
            throw failure("is not a string")
        }
    }

    /// The object as a number (`.integer`, `.unsignedInteger`, `.real` or `.bool`): NSNumber is
    /// archived as the plain value.
    ///
    /// For example:
    ///
    /// ```swift
    /// let number = try attribute["NSDefaultValue"]?.decodeNumber()
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` when the object is not a number.
    public func decodeNumber() throws -> PropertyList {
        switch rawValue {
        case .integer, .unsignedInteger, .real, .bool: return rawValue
        default: throw failure("is not a number")
        }
    }

    /// The object as an `Int64`: an integer, or a Boolean as 0 or 1.
    ///
    /// For example:
    ///
    /// ```swift
    /// let type = try attribute["NSAttributeType"]?.decodeInteger()   // 700 for a string attribute
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` when the object is not an integer or is above `Int64.max`.
    public func decodeInteger() throws -> Int64 {
        switch rawValue {
        case .integer(let integer): return integer
        case .bool(let bool): return bool ? 1 : 0
        case .unsignedInteger(let integer): throw failure("\(integer) is too large for a 64-bit signed integer")
        default: throw failure("is not an integer")
        }
    }

    /// The object as a `Double`: a real, or an integer converted.
    ///
    /// For example:
    ///
    /// ```swift
    /// let version = try model.double(forKey: "CDMCompilerToolVersion")
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` when the object is not a number.
    public func decodeDouble() throws -> Double {
        switch rawValue {
        case .real(let real): return real
        case .integer(let integer): return Double(integer)
        case .unsignedInteger(let integer): return Double(integer)
        default: throw failure("is not a number")
        }
    }

    /// The object as a Boolean: a Boolean, or an integer (non-zero is true).
    ///
    /// For example:
    ///
    /// ```swift
    /// let optional = try attribute.bool(forKey: "NSIsOptional") ?? false
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` when the object is neither.
    public func decodeBool() throws -> Bool {
        switch rawValue {
        case .bool(let bool): return bool
        case .integer(let integer): return integer != 0
        case .unsignedInteger: return true
        default: throw failure("is not a Boolean")
        }
    }

    /// The object as bytes: plain data (NSData), or an `NSMutableData` with `NS.data`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let hash = try entity.data(forKey: "NSVersionHash")
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` when the object is not data.
    public func decodeData() throws -> Data {
        switch rawValue {
        case .data(let data):
            return data
        case .dictionary(let fields):
            switch fields["NS.data"] {
            case .data(let data)?: return data
            case .uid?:
                guard let target = try self["NS.data"], case .data(let data) = target.rawValue else {
                    throw failure("has an NS.data that does not lead to data", key: "NS.data")
                }
                return data
            default: throw failure("is not data")
            }
        default:
            throw failure("is not data")
        }
    }

    /// The object as a date: an `NSDate` with `NS.time` (seconds since 2001-01-01 UTC).
    ///
    /// For example:
    ///
    /// ```swift
    /// let created = try object["created"]?.decodeDate()
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` when the object is not a date.
    public func decodeDate() throws -> Date {
        switch rawValue {
        case .date(let date):
            return date
        case .dictionary(let fields):
            guard let seconds = fields["NS.time"]?.doubleValue else { throw failure("is not a date (no NS.time)") }
            return Date(timeIntervalSinceReferenceDate: seconds)
        default:
            throw failure("is not a date")
        }
    }

    /// The object as a UUID: an `NSUUID` with 16 bytes of `NS.uuidbytes`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let id = try object["identifier"]?.decodeUUID()
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` when the object is not a UUID.
    public func decodeUUID() throws -> UUID {
        guard case .data(let bytes)? = rawValue["NS.uuidbytes"] else {
            throw failure("is not a UUID (no NS.uuidbytes)")
        }
        guard bytes.count == 16 else {
            throw failure("has \(bytes.count) NS.uuidbytes instead of 16", key: "NS.uuidbytes")
        }
        let b = [UInt8](bytes)
        return UUID(
            uuid: (
                b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]
            ))
    }

    /// The object as a URL: an `NSURL` with the string `NS.relative`, relative to the URL `NS.base`
    /// (or `$null`).
    ///
    /// For example:
    ///
    /// ```swift
    /// let url = try object["link"]?.decodeURL()
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` when the object is not a URL or its text does not parse.
    public func decodeURL() throws -> URL {
        try decodeURL(hops: 0)
    }

    private func decodeURL(hops: Int) throws -> URL {
        guard contains("NS.relative") else { throw failure("is not a URL (no NS.relative)") }
        guard let relative = try self["NS.relative"] else {
            throw failure("has a $null NS.relative", key: "NS.relative")
        }
        let text = try relative.decodeString()
        var base: URL? = nil
        if let baseObject = try self["NS.base"] {
            guard hops < 8 else { throw failure("has NS.base URLs nested too deep", key: "NS.base") }
            base = try baseObject.decodeURL(hops: hops + 1)
        }
        guard let url = URL(string: text, relativeTo: base) else {
            throw failure("has the NS.relative '\(text)', which is not a URL", key: "NS.relative")
        }
        return url
    }

    /// The elements of an array, set or ordered set (`NSArray`, `NSSet`, `NSOrderedSet` and their
    /// mutable kinds), stored as `NS.objects` or as `NS.object.0`, `NS.object.1`, ….
    ///
    /// For example:
    ///
    /// ```swift
    /// for identifier in try model["NSVersionIdentifiers"]?.decodeArray() ?? [] {
    ///     print(try identifier.decodeString())
    /// }
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` when the object is not a collection, an element is
    ///   `$null`, or a UID is out of range.
    public func decodeArray() throws -> [ArchivedObject] {
        try rawElements().enumerated().map { position, value in try element(value, position: position) }
    }

    /// The entries of a dictionary in either of its archived forms: `NSDictionary`/`NSMutableDictionary`
    /// (`NS.keys` and `NS.objects`), or `NSKnownKeysDictionary1` (keys in the `keys` array of its
    /// `searchMapping`, values in its `values` array, slots holding `emptyToken` left out).
    ///
    /// For example:
    ///
    /// ```swift
    /// for (key, value) in try userInfo.decodeDictionary() {
    ///     print(try key.decodeString(), value)
    /// }
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` when the object is not a dictionary, the key and value
    ///   counts differ, an entry is `$null`, or a UID is out of range.
    public func decodeDictionary() throws -> [(key: ArchivedObject, value: ArchivedObject)] {
        guard case .dictionary(let fields) = rawValue else { throw failure("is not a dictionary") }
        if fields["searchMapping"] != nil {
            return try decodeKnownKeysDictionary()
        }
        guard let keysValue = fields["NS.keys"], let valuesValue = fields["NS.objects"] else {
            throw failure("is not a dictionary (no NS.keys and NS.objects)")
        }
        let keys = try elements(of: keysValue, field: "NS.keys")
        let values = try elements(of: valuesValue, field: "NS.objects")
        guard keys.count == values.count else {
            throw failure("has \(keys.count) NS.keys but \(values.count) NS.objects")
        }
        var entries: [(key: ArchivedObject, value: ArchivedObject)] = []
        entries.reserveCapacity(keys.count)
        for position in keys.indices {
            entries.append(
                (
                    try element(keys[position], position: position, field: "NS.keys"),
                    try element(values[position], position: position, field: "NS.objects")
                ))
        }
        return entries
    }

    /// The entries of a dictionary whose keys are strings, in archive order.
    ///
    /// For example:
    ///
    /// ```swift
    /// let entities = try model["NSEntities"]?.decodeStringKeyedDictionary() ?? []
    /// let names = entities.map(\.key)
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` as ``decodeDictionary()`` does, and when a key is not a string.
    public func decodeStringKeyedDictionary() throws -> [(key: String, value: ArchivedObject)] {
        try decodeDictionary().map { (try $0.key.decodeString(), $0.value) }
    }

    private func decodeKnownKeysDictionary() throws -> [(key: ArchivedObject, value: ArchivedObject)] {
        guard let mapping = try self["searchMapping"] else {
            throw failure("has a $null searchMapping", key: "searchMapping")
        }
        guard let keysObject = try mapping["keys"] else { throw mapping.failure("has no keys", key: "keys") }
        let keys = try keysObject.rawElements()
        guard let valuesObject = try self["values"] else { throw failure("has no values", key: "values") }
        let values = try valuesObject.rawElements()
        if let length = mapping.rawField("length")?.intValue, length != keys.count {
            throw mapping.failure("has a length of \(length) but \(keys.count) keys", key: "length")
        }
        guard values.count >= keys.count else {
            throw failure("has \(keys.count) keys but only \(values.count) values")
        }
        let emptyToken = rawField("emptyToken")
        var entries: [(key: ArchivedObject, value: ArchivedObject)] = []
        entries.reserveCapacity(keys.count)
        for position in keys.indices {
            let value = values[position]
            if let emptyToken, value == emptyToken { continue }
            entries.append(
                (
                    try keysObject.element(keys[position], position: position),
                    try valuesObject.element(value, position: position)
                ))
        }
        return entries
    }

    /// The stored elements of a collection, UIDs not followed.
    func rawElements() throws -> [PropertyList] {
        guard case .dictionary(let fields) = rawValue else { throw failure("is not an array or set") }
        if fields["NS.keys"] != nil || fields["searchMapping"] != nil {
            throw failure("is a dictionary, not an array or set")
        }
        if let objects = fields["NS.objects"] { return try elements(of: objects, field: "NS.objects") }
        // NSOrderedSet (and some other archivers) number the elements as separate fields.
        var elements: [PropertyList] = []
        while let element = fields["NS.object.\(elements.count)"] { elements.append(element) }
        if elements.isEmpty && !(isKind(of: "NSArray") || isKind(of: "NSSet") || isKind(of: "NSOrderedSet")) {
            throw failure("is not an array or set (no NS.objects)")
        }
        return elements
    }

    private func elements(of value: PropertyList, field: String) throws -> [PropertyList] {
        guard case .array(let elements) = value else {
            throw failure("has a \(field) that is a \(value.typeName), not an array", key: field)
        }
        return elements
    }

    private func element(_ value: PropertyList, position: Int, field: String = "NS.objects") throws -> ArchivedObject {
        // Elements are references (or, leniently, plain values); a nested container stored inline
        // would escape the cycle and sharing checks that references get.
        switch value {
        case .array, .dictionary:
            throw failure(
                "has an inline \(value.typeName) at position \(position) where a reference belongs", key: field)
        default:
            break
        }
        guard let object = try storage.resolve(value, context: context("\(field)[\(position)]")) else {
            throw failure("has $null at position \(position)", key: field)
        }
        return object
    }
}

// MARK: - Field shortcuts

extension ArchivedObject {
    /// A field read as a string (see ``decodeString()``); `nil` when missing or `$null`.
    ///
    /// For example:
    ///
    /// ```swift
    /// let name = try entity.string(forKey: "NSEntityName")
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` when the field holds something else.
    public func string(forKey key: String) throws -> String? { try self[key]?.decodeString() }

    /// A field read as an integer (see ``decodeInteger()``); `nil` when missing or `$null`.
    public func integer(forKey key: String) throws -> Int64? { try self[key]?.decodeInteger() }

    /// A field read as a `Double` (see ``decodeDouble()``); `nil` when missing or `$null`.
    public func double(forKey key: String) throws -> Double? { try self[key]?.decodeDouble() }

    /// A field read as a Boolean (see ``decodeBool()``); `nil` when missing or `$null`.
    public func bool(forKey key: String) throws -> Bool? { try self[key]?.decodeBool() }

    /// A field read as data (see ``decodeData()``); `nil` when missing or `$null`.
    public func data(forKey key: String) throws -> Data? { try self[key]?.decodeData() }

    /// A field read as a date (see ``decodeDate()``); `nil` when missing or `$null`.
    public func date(forKey key: String) throws -> Date? { try self[key]?.decodeDate() }

    /// A field read as an array (see ``decodeArray()``); `nil` when missing or `$null`.
    public func array(forKey key: String) throws -> [ArchivedObject]? { try self[key]?.decodeArray() }

    /// A field read as a string-keyed dictionary (see ``decodeStringKeyedDictionary()``); `nil` when
    /// missing or `$null`.
    public func dictionary(forKey key: String) throws -> [(key: String, value: ArchivedObject)]? {
        try self[key]?.decodeStringKeyedDictionary()
    }
}

// MARK: - Whole values

extension ArchivedObject {
    /// The object converted, with everything it refers to, into a plain property list: strings,
    /// numbers, data, dates, arrays and sets (as arrays), string-keyed dictionaries; UUIDs and URLs
    /// become strings.
    ///
    /// For example:
    ///
    /// ```swift
    /// let userInfo = try entity["NSUserInfo"]?.decodePropertyList()   // .dictionary([...])
    /// ```
    ///
    /// - Throws: `GraftError.malformedInput` when the object graph has a cycle, nests deeper than
    ///   ``KeyedArchive/maximumDepth``, or holds an object that is not one of these Foundation types.
    public func decodePropertyList() throws -> PropertyList {
        var state = ConversionState()
        return try decodePropertyList(state: &state, depth: 0)
    }

    /// Objects on the current path (to find cycles) and objects already converted (so that an
    /// archive sharing objects many times over converts in linear time).
    private struct ConversionState {
        var visiting = Set<UInt64>()
        var converted: [UInt64: PropertyList] = [:]
    }

    private func decodePropertyList(state: inout ConversionState, depth: Int) throws -> PropertyList {
        guard depth < KeyedArchive.maximumDepth else {
            throw failure("is nested more than \(KeyedArchive.maximumDepth) deep")
        }
        switch rawValue {
        case .string, .integer, .unsignedInteger, .real, .bool, .date, .data:
            return rawValue
        case .uid(let uid):
            throw failure("is a bare UID \(uid)")
        case .array(let elements):
            // An inline array of UIDs, such as a field holding NS.objects itself.
            var converted: [PropertyList] = []
            converted.reserveCapacity(elements.count)
            for (position, value) in elements.enumerated() {
                let object = try element(value, position: position, field: "[]")
                converted.append(try object.decodePropertyList(state: &state, depth: depth + 1))
            }
            return .array(converted)
        case .dictionary:
            break
        }
        if let uid {
            if let done = state.converted[uid] { return done }
            guard state.visiting.insert(uid).inserted else { throw failure("contains itself (a reference cycle)") }
        }
        let value = try convertObject(state: &state, depth: depth)
        if let uid {
            state.visiting.remove(uid)
            state.converted[uid] = value
        }
        return value
    }

    private func convertObject(state: inout ConversionState, depth: Int) throws -> PropertyList {
        let chain = classChain
        if chain.contains("NSDictionary") || contains("searchMapping")
            || (contains("NS.keys") && contains("NS.objects"))
        {
            var dictionary = PropertyList.Dictionary()
            for (key, value) in try decodeDictionary() {
                let name = try key.decodeString()
                dictionary[name] = try value.decodePropertyList(state: &state, depth: depth + 1)
            }
            return .dictionary(dictionary)
        }
        if chain.contains("NSArray") || chain.contains("NSSet") || chain.contains("NSOrderedSet")
            || (chain.isEmpty && contains("NS.objects"))
        {
            var elements: [PropertyList] = []
            for element in try decodeArray() {
                elements.append(try element.decodePropertyList(state: &state, depth: depth + 1))
            }
            return .array(elements)
        }
        if chain.contains("NSString") || contains("NS.string") { return .string(try decodeString()) }
        if chain.contains("NSData") || contains("NS.data") { return .data(try decodeData()) }
        if chain.contains("NSDate") || contains("NS.time") { return .date(try decodeDate()) }
        if chain.contains("NSUUID") || contains("NS.uuidbytes") { return .string(try decodeUUID().uuidString) }
        if chain.contains("NSURL") || contains("NS.relative") { return .string(try decodeURL().absoluteString) }
        throw failure("cannot be turned into a property list")
    }
}

extension KeyedArchive {
    /// The deepest nesting ``ArchivedObject/decodePropertyList()`` follows.
    public static let maximumDepth = 512
}
