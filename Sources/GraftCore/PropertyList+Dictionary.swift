extension PropertyList {
    /// A property-list dictionary: string keys in insertion (document) order, looked up in constant time.
    ///
    /// Keys keep the position of their first insertion; assigning to an existing key replaces its
    /// value in place, and assigning `nil` removes it. Two dictionaries are equal when they hold the
    /// same keys and values, whatever their order — as property lists define it.
    ///
    /// For example:
    ///
    /// ```swift
    /// var info: PropertyList.Dictionary = ["b": 1, "a": 2]
    /// info["c"] = "three"
    /// print(info.keys)          // ["b", "a", "c"]
    /// for (key, value) in info { print(key, value) }
    /// ```
    public struct Dictionary: Sendable {
        @usableFromInline var storedKeys: [String]
        @usableFromInline var storedValues: [PropertyList]
        /// Key → position, kept only once the dictionary outgrows a linear scan.
        @usableFromInline var positions: [String: Int]?

        /// Up to this many keys, a linear scan beats hashing.
        @usableFromInline static let linearScanLimit = 8

        /// An empty dictionary.
        public init() {
            storedKeys = []
            storedValues = []
            positions = nil
        }

        /// An empty dictionary with room for `minimumCapacity` entries.
        public init(minimumCapacity: Int) {
            self.init()
            storedKeys.reserveCapacity(minimumCapacity)
            storedValues.reserveCapacity(minimumCapacity)
        }

        /// A dictionary of these pairs in this order; a repeated key keeps its first position and last value.
        ///
        /// For example:
        ///
        /// ```swift
        /// let counts = PropertyList.Dictionary(names.map { ($0, PropertyList.integer(1)) })
        /// ```
        public init<S: Sequence>(_ pairs: S) where S.Element == (String, PropertyList) {
            self.init()
            for (key, value) in pairs { self[key] = value }
        }

        /// The number of entries.
        public var count: Int { storedKeys.count }

        /// Whether there are no entries.
        public var isEmpty: Bool { storedKeys.isEmpty }

        /// The keys, in order.
        public var keys: [String] { storedKeys }

        /// The values, in key order.
        public var values: [PropertyList] { storedValues }

        /// The position of `key`, or `nil` when it is absent.
        @inlinable
        public func index(forKey key: String) -> Int? {
            if let positions { return positions[key] }
            return storedKeys.firstIndex(of: key)
        }

        /// The value for `key`; setting `nil` removes the entry.
        ///
        /// For example:
        ///
        /// ```swift
        /// var metadata: PropertyList.Dictionary = [:]
        /// metadata["NSStoreType"] = "SQLite"
        /// ```
        @inlinable
        public subscript(key: String) -> PropertyList? {
            get {
                guard let position = index(forKey: key) else { return nil }
                return storedValues[position]
            }
            set {
                if let newValue {
                    updateValue(newValue, forKey: key)
                } else {
                    removeValue(forKey: key)
                }
            }
        }

        /// The value for `key`, or `defaultValue` when absent.
        public subscript(key: String, default defaultValue: @autoclosure () -> PropertyList) -> PropertyList {
            self[key] ?? defaultValue()
        }

        /// Sets the value for `key`, appending the key when it is new.
        ///
        /// - Returns: the value that was replaced, or `nil` when the key is new.
        @inlinable
        @discardableResult
        public mutating func updateValue(_ value: PropertyList, forKey key: String) -> PropertyList? {
            if let position = index(forKey: key) {
                let old = storedValues[position]
                storedValues[position] = value
                return old
            }
            storedKeys.append(key)
            storedValues.append(value)
            if positions != nil {
                positions![key] = storedKeys.count - 1
            } else if storedKeys.count > Self.linearScanLimit {
                buildPositions()
            }
            return nil
        }

        /// Removes `key` and its value, keeping the order of the others.
        ///
        /// - Returns: the removed value, or `nil` when the key was absent.
        @inlinable
        @discardableResult
        public mutating func removeValue(forKey key: String) -> PropertyList? {
            guard let position = index(forKey: key) else { return nil }
            storedKeys.remove(at: position)
            let old = storedValues.remove(at: position)
            if storedKeys.count > Self.linearScanLimit {
                buildPositions()
            } else {
                positions = nil
            }
            return old
        }

        @usableFromInline
        mutating func buildPositions() {
            var table = [String: Int](minimumCapacity: storedKeys.count)
            for (position, key) in storedKeys.enumerated() { table[key] = position }
            positions = table
        }
    }
}

extension PropertyList.Dictionary: RandomAccessCollection {
    public typealias Element = (key: String, value: PropertyList)
    public typealias Index = Int

    public var startIndex: Int { 0 }
    public var endIndex: Int { storedKeys.count }

    public subscript(position: Int) -> (key: String, value: PropertyList) {
        (storedKeys[position], storedValues[position])
    }
}

extension PropertyList.Dictionary: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, PropertyList)...) {
        self.init(minimumCapacity: elements.count)
        for (key, value) in elements { self[key] = value }
    }
}

extension PropertyList.Dictionary: Hashable {
    /// Equal when both hold the same keys with equal values, in any order.
    public static func == (lhs: PropertyList.Dictionary, rhs: PropertyList.Dictionary) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.storedKeys == rhs.storedKeys { return lhs.storedValues == rhs.storedValues }
        for (position, key) in lhs.storedKeys.enumerated() {
            guard let other = rhs[key], other == lhs.storedValues[position] else { return false }
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        // Order-independent: combine the entries' own hashes with a commutative sum.
        var sum = 0
        for (position, key) in storedKeys.enumerated() {
            var entry = Hasher()
            entry.combine(key)
            entry.combine(storedValues[position])
            sum = sum &+ entry.finalize()
        }
        hasher.combine(storedKeys.count)
        hasher.combine(sum)
    }
}

extension PropertyList.Dictionary: CustomStringConvertible {
    public var description: String { PropertyList.dictionary(self).description }
}
