@_spi(GraftInternal) import GraftCore
import GraftModel

/// Object ids in an XML store, and how they map to snapshot keys.
///
/// Core Data gives every object of a document an id `z<number>` from one counter, so ids are unique
/// across the document. Graft's keys are unique only within an inheritance tree, so the writer maps
/// (root entity, key) to an id:
///
/// - the first tree to use a key gets `z<key>`;
/// - another tree using the same key gets `z<key>-<ROOT ENTITY NAME IN CAPITALS>`.
///
/// The reader maps ids back: `z<number>` gives key `number`, and so does `z<number>-<anything>`
/// unless that key is already taken in the object's tree; every other id (`ABF`, `atom0`, which
/// hand-edited files hold) and every clash gets a fresh key above all others, in document order.
enum ObjectIDs {
    /// The number of a canonical id `z<digits>` (no leading zeros), or `nil`.
    @inline(__always)
    static func number(_ pointer: UnsafePointer<UInt8>, _ length: Int) -> Int64? {
        guard length >= 2, length <= 20, pointer[0] == UInt8(ascii: "z") else { return nil }
        if pointer[1] == UInt8(ascii: "0") && length > 2 { return nil }
        var value: UInt64 = 0
        for index in 1..<length {
            let digit = pointer[index] &- 0x30
            guard digit < 10 else { return nil }
            value = value &* 10 &+ UInt64(digit)
        }
        // At most 19 digits: no overflow of UInt64.
        return value <= UInt64(Int64.max) ? Int64(value) : nil
    }

    /// The number in an id `z<digits>-<suffix>`, or `nil`.
    static func suffixedNumber(_ id: String) -> Int64? {
        let bytes = Array(id.utf8)
        guard let dash = bytes.firstIndex(of: UInt8(ascii: "-")), dash >= 2 else { return nil }
        return bytes.withUnsafeBufferPointer { number($0.baseAddress!, dash) }
    }
}

/// Non-zero values by number: pages of 4096 numbers allocated when first used while the numbers stay
/// dense enough (up to four times the numbers filed, and some), a dictionary beyond — four bytes a
/// number, without the slack and copying of a growing array.
final class NumberTable {
    private static let pageShift = 12
    private static let pageSize = 1 << pageShift
    @exclusivity(unchecked) private var pages: [UnsafeMutablePointer<Int32>?] = []
    private var sparse: [Int64: Int32] = [:]
    private(set) var count = 0
    /// How many numbers are filed in the dictionary before pages are used (for tables that are often
    /// small).
    private let minimumForPages: Int

    init(minimumForPages: Int = 0) { self.minimumForPages = minimumForPages }

    deinit {
        for page in pages { page?.deallocate() }
    }

    /// The value filed under `number`, or 0.
    @inline(__always)
    func value(_ number: Int64) -> Int32 {
        let page = Int(truncatingIfNeeded: number >> Int64(Self.pageShift))
        if number >= 0, page < pages.count, let storage = pages[page] {
            let stored = storage[Int(truncatingIfNeeded: number) & (Self.pageSize - 1)]
            if stored != 0 { return stored }
        }
        // A number filed while it lay beyond the pages stays in the dictionary, even once pages reach it.
        return sparse.isEmpty ? 0 : sparse[number] ?? 0
    }

    /// Files a non-zero value under `number`; `false` when the number is taken.
    func insert(_ number: Int64, _ value: Int32) -> Bool {
        guard self.value(number) == 0 else { return false }
        count += 1
        guard count > minimumForPages, number >= 0, number <= 4 * Int64(count) + (1 << 20) else {
            sparse[number] = value
            return true
        }
        let page = Int(number >> Int64(Self.pageShift))
        if page >= pages.count { pages.append(contentsOf: repeatElement(nil, count: page + 1 - pages.count)) }
        if pages[page] == nil {
            let storage = UnsafeMutablePointer<Int32>.allocate(capacity: Self.pageSize)
            storage.initialize(repeating: 0, count: Self.pageSize)
            pages[page] = storage
        }
        pages[page]![Int(number) & (Self.pageSize - 1)] = value
        return true
    }

    /// Calls `body` with every number and its value, which it may change (to another non-zero value).
    func forEach(_ body: (Int64, inout Int32) -> Void) {
        for (page, storage) in pages.enumerated() {
            guard let storage else { continue }
            for index in 0..<Self.pageSize where storage[index] != 0 {
                body(Int64(page) << Int64(Self.pageShift) + Int64(index), &storage[index])
            }
        }
        for number in Array(sparse.keys) { body(number, &sparse[number]!) }
    }
}

/// The reader's map from object ids to entities and keys.
///
/// Ids `z<number>` are kept by number (`NumberTable`, four bytes an object). Ids `z<number>-<suffix>`
/// (which Graft writes for keys that trees share) are kept by number in a table per suffix, the few
/// suffixes a document uses kept once, so that looking one up costs no string; every other id by its
/// text.
final class ObjectIDTable {
    /// Entity index + 1 by the number of a `z<number>` id.
    private let numbered = NumberTable()

    /// An object whose id is not `z<number>`: its entity and (once assigned) key, and its id — the
    /// number and suffix of `z<number>-<suffix>` (`suffix` its place in `suffixes`), or (`suffix` -1)
    /// the place of its text in `otherIDs`.
    struct Named {
        var number: Int64
        var suffix: Int32
        var entity: Int32
        var key: Int64
    }
    /// Objects whose id is not `z<number>`, in document order.
    private(set) var named: [Named] = []
    private var otherIDs: [String] = []
    private var otherIndex: [String: Int] = [:]
    /// The suffixes of `z<number>-<suffix>` ids, and their places by a hash of their bytes. Beyond
    /// `maxSuffixes` further ones are kept as text.
    private var suffixes: [[UInt8]] = []
    private var suffixesByHash: [UInt64: [Int32]] = [:]
    private static let maxSuffixes = 1 << 12
    /// Per suffix: the place in `named` + 1 by number.
    private var suffixed: [NumberTable] = []
    private(set) var count = 0
    /// The largest number of a `z<number>` id.
    private(set) var largestNumber: Int64 = -1

    /// The number and suffix bytes of an id `z<number>-<suffix>`.
    @inline(__always)
    private static func split(
        _ pointer: UnsafePointer<UInt8>, _ length: Int
    ) -> (
        number: Int64, suffix: UnsafeBufferPointer<UInt8>
    )? {
        var dash = 2
        while dash < length && pointer[dash] != UInt8(ascii: "-") { dash += 1 }
        guard dash < length, let number = ObjectIDs.number(pointer, dash) else { return nil }
        return (number, UnsafeBufferPointer(start: pointer + dash + 1, count: length - dash - 1))
    }

    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }

    /// The place of a suffix in `suffixes`, if it is there.
    @inline(__always)
    private func suffix(_ bytes: UnsafeBufferPointer<UInt8>) -> Int32? {
        guard !suffixes.isEmpty, let candidates = suffixesByHash[Self.hash(bytes)] else { return nil }
        for candidate in candidates where suffixes[Int(candidate)].elementsEqual(bytes) { return candidate }
        return nil
    }

    /// Adds an object; `false` when its id is already taken.
    func insert(_ pointer: UnsafePointer<UInt8>, _ length: Int, entity: Int32) -> Bool {
        if let number = ObjectIDs.number(pointer, length) {
            guard numbered.insert(number, entity + 1) else { return false }
            largestNumber = max(largestNumber, number)
        } else if let split = Self.split(pointer, length),
            let place = suffix(split.suffix) ?? addSuffix(split.suffix)
        {
            guard suffixed[Int(place)].insert(split.number, Int32(named.count + 1)) else { return false }
            named.append(Named(number: split.number, suffix: place, entity: entity, key: -1))
        } else {
            let id = Bytes.string(pointer, length)
            if otherIndex[id] != nil { return false }
            otherIndex[id] = named.count
            named.append(Named(number: Int64(otherIDs.count), suffix: -1, entity: entity, key: -1))
            otherIDs.append(id)
        }
        count += 1
        return true
    }

    /// What `insertKeying` found.
    enum Keying: Equatable {
        /// The id is already taken.
        case duplicate
        /// The key is certain.
        case settled(Int64)
        /// The key depends on ids further on.
        case unsettled
        /// The id contradicts a key given to an earlier id: the document cannot be read in one pass.
        case contradicted
    }

    /// How many suffixes `insertKeying` looks through for other ids with the same number; beyond, the keys
    /// of suffixed ids wait for the whole document.
    private static let suffixesSearched = 16

    /// Adds an object while the document is read once, before every id is known, and says the key its id
    /// gives when that can be told now (see `assignKeys(root:)`): always for `z<number>`; for
    /// `z<number>-<suffix>` when no earlier `z<number>-…` of the same tree claims the number and
    /// `z<number>`, if it came earlier, is of another tree; never for other ids, whose keys follow the
    /// largest number of the whole document. A `z<number>` that comes later and is of the same tree
    /// (which Graft never writes: it gives a suffix only to a number another tree has) contradicts the
    /// key given, and is reported as such.
    func insertKeying(_ pointer: UnsafePointer<UInt8>, _ length: Int, entity: Int32, root: (Int) -> Int) -> Keying {
        guard insert(pointer, length, entity: entity) else { return .duplicate }
        let tree = root(Int(entity))
        if let number = ObjectIDs.number(pointer, length) {
            // A suffixed id of this tree given this number as its key was given it wrongly.
            if suffixedEntry(number, tree: tree, root: root, where: { $0.key == number }) != nil {
                return .contradicted
            }
            return .settled(number)
        }
        let last = named.count - 1
        guard named[last].suffix >= 0, suffixes.count <= Self.suffixesSearched, otherIDs.isEmpty else {
            return .unsettled
        }
        let number = named[last].number
        // An earlier id with another suffix claims the number in this tree (the same suffix would be a
        // duplicate).
        if suffixedEntry(number, tree: tree, root: root, except: named[last].suffix) != nil { return .unsettled }
        if let owner = self.entity(ofNumber: number), root(Int(owner)) == tree { return .unsettled }
        named[last].key = number
        return .settled(number)
    }

    /// An object with an id `z<number>-<suffix>` of tree `tree` (and `condition`), looked for under every
    /// suffix but `except`.
    private func suffixedEntry(
        _ number: Int64, tree: Int, root: (Int) -> Int, except: Int32 = -1,
        where condition: (Named) -> Bool = { _ in true }
    ) -> Named? {
        for (place, table) in suffixed.enumerated() where place != Int(except) {
            let position = table.value(number)
            guard position != 0 else { continue }
            let entry = named[Int(position - 1)]
            if root(Int(entry.entity)) == tree && condition(entry) { return entry }
        }
        return nil
    }

    /// Adds a suffix to the table; `nil` when the table is full.
    private func addSuffix(_ bytes: UnsafeBufferPointer<UInt8>) -> Int32? {
        guard suffixes.count < Self.maxSuffixes else { return nil }
        let place = Int32(suffixes.count)
        suffixes.append(Array(bytes))
        suffixesByHash[Self.hash(bytes), default: []].append(place)
        // Most suffixes name a handful of objects: a dictionary until one has many.
        suffixed.append(NumberTable(minimumForPages: 1024))
        return place
    }

    /// The entity and key of the object with this id.
    @inline(__always)
    func lookup(_ pointer: UnsafePointer<UInt8>, _ length: Int) -> (entity: Int, key: Int64)? {
        if let number = ObjectIDs.number(pointer, length) {
            let found = numbered.value(number)
            return found == 0 ? nil : (Int(found - 1), number)
        }
        if let split = Self.split(pointer, length), let place = suffix(split.suffix) {
            let position = suffixed[Int(place)].value(split.number)
            guard position != 0 else { return nil }
            let entry = named[Int(position - 1)]
            return (Int(entry.entity), entry.key)
        }
        // An id with a suffix the table does not have is kept as text only once the table is full.
        if otherIndex.isEmpty { return nil }
        guard let position = otherIndex[Bytes.string(pointer, length)] else { return nil }
        let entry = named[position]
        return (Int(entry.entity), entry.key)
    }

    func lookup(_ id: String) -> (entity: Int, key: Int64)? {
        var id = id
        return id.withUTF8 { buffer in buffer.baseAddress.flatMap { lookup($0, buffer.count) } }
    }

    /// The entity of the object with id `z<number>`.
    func entity(ofNumber number: Int64) -> Int32? {
        let found = numbered.value(number)
        return found == 0 ? nil : found - 1
    }

    /// The number of an id `z<number>-<suffix>`.
    private func suffixedNumber(_ entry: Named) -> Int64? {
        entry.suffix >= 0 ? entry.number : ObjectIDs.suffixedNumber(otherIDs[Int(entry.number)])
    }

    /// Replaces every entity by `mapping[entity]` (provisional numbers → model indices).
    func remapEntities(_ mapping: [Int32]) {
        numbered.forEach { _, stored in stored = mapping[Int(stored - 1)] + 1 }
        for index in named.indices { named[index].entity = mapping[Int(named[index].entity)] }
    }

    /// Gives every id that is not `z<number>` its key (see `ObjectIDs`).
    ///
    /// - Parameter root: the root entity of an entity's inheritance tree.
    /// - Throws: `GraftError.malformedInput` when the keys after the largest number an id has would pass
    ///   Int64's largest value.
    func assignKeys(root: (Int) -> Int) throws {
        guard !named.isEmpty else { return }
        var next = largestNumber
        for entry in named {
            if let number = suffixedNumber(entry) { next = max(next, number) }
        }
        func noKeysLeft() -> GraftError {
            GraftError(
                .malformedInput,
                "no keys are left for the \(Wording.counted(named.count, "object")) whose ids are not z<number>: "
                    + "the ids' numbers reach \(next), and keys cannot pass \(Int64.max)")
        }
        guard next < Int64.max - Int64(named.count) else { throw noKeysLeft() }
        next = max(next, 0) + 1
        var claimed = Set<Pair>()
        for index in named.indices {
            let entity = Int(named[index].entity)
            let tree = root(entity)
            // A key given while the document was read (`insertKeying`) is the one this gives.
            let early = named[index].key
            if let number = suffixedNumber(named[index]) {
                let clashes = self.entity(ofNumber: number).map { root(Int($0)) == tree } ?? false
                if !clashes && claimed.insert(Pair(root: tree, key: number)).inserted {
                    guard early < 0 || early == number else { throw inconsistent(early) }
                    named[index].key = number
                    continue
                }
            }
            guard early < 0 else { throw inconsistent(early) }
            named[index].key = next
            next += 1
        }
    }

    private func inconsistent(_ key: Int64) -> GraftError {
        GraftError(
            .malformedInput, "the key \(key) was given to an id before all ids were known, wrongly (a bug in Graft)")
    }

    private struct Pair: Hashable {
        var root: Int
        var key: Int64
    }

    /// Each inheritance tree's highest key, and whether two trees use the same key (after `assignKeys`).
    ///
    /// Numbers of `z<number>` ids are distinct, and the keys given to other ids are either fresh (above
    /// every number) or a suffixed id's number: only those can be used twice.
    func keyExtents(root: (Int) -> Int) -> (maxKeys: [Int: Int64], collide: Bool) {
        var maxKeys: [Int: Int64] = [:]
        var highest: [Int64] = []
        numbered.forEach { number, stored in
            let entity = Int(stored - 1)
            if entity >= highest.count {
                highest.append(contentsOf: repeatElement(-1, count: entity + 1 - highest.count))
            }
            highest[entity] = max(highest[entity], number)
        }
        for (entity, key) in highest.enumerated() where key >= 0 {
            maxKeys[root(entity), default: 0] = max(maxKeys[root(entity)] ?? 0, key)
        }
        var owners: [Int64: Int] = [:]
        var collide = false
        for entry in named where entry.key >= 0 {
            let tree = root(Int(entry.entity))
            maxKeys[tree] = max(maxKeys[tree] ?? 0, entry.key)
            if let numbered = entity(ofNumber: entry.key), root(Int(numbered)) != tree { collide = true }
            if let other = owners.updateValue(tree, forKey: entry.key), other != tree { collide = true }
        }
        return (maxKeys, collide)
    }
}

/// The writer's map from (root entity, key) to ids: see `ObjectIDs`.
struct ObjectIDWriter {
    /// Root ordinal by entity index.
    private let rootOrdinal: [UInt16]
    /// `-` and the root entity's name in capitals, by root ordinal.
    private let suffixes: [[UInt8]]
    /// Root ordinal + 1 that first used a key; empty when the model has one inheritance tree.
    private var dense: [UInt16] = []
    private var sparse: [Int64: UInt16] = [:]
    private var claims = 0
    /// The largest key written in an id (for `nextObjectID`).
    private(set) var largestKey: Int64 = Int64.min

    init(model: Model) {
        var ordinals: [Int: UInt16] = [:]
        var suffixes: [[UInt8]] = []
        var rootOrdinal: [UInt16] = []
        for entity in model.descriptions {
            if ordinals[entity.rootIndex] == nil {
                ordinals[entity.rootIndex] = UInt16(suffixes.count)
                let name = model.descriptions[entity.rootIndex].name.uppercased()
                // Keep the id a valid XML name: letters, digits, `.`, `-`, `_` and anything beyond ASCII.
                let safe = name.utf8.map { byte -> UInt8 in
                    switch byte {
                    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"),
                        UInt8(ascii: "_"), 0x80...0xFF:
                        return byte
                    default:
                        return UInt8(ascii: "_")
                    }
                }
                suffixes.append([UInt8(ascii: "-")] + safe)
            }
            rootOrdinal.append(ordinals[entity.rootIndex]!)
        }
        self.rootOrdinal = rootOrdinal
        self.suffixes = suffixes
    }

    private var isSingleTree: Bool { suffixes.count <= 1 }

    /// Appends the id of the object `(entity, key)`.
    @inline(__always)
    mutating func append(entity: Int, key: Int64, to output: ByteBuffer) {
        output.append(UInt8(ascii: "z"))
        output.append(decimal: key)
        if key > largestKey { largestKey = key }
        guard !isSingleTree else { return }
        let ordinal = rootOrdinal[entity]
        let owner = claim(key, ordinal + 1)
        if owner != ordinal + 1 { output.append(suffixes[Int(ordinal)]) }
    }

    /// The owner of `key`, claiming it for `owner` when nobody has.
    @inline(__always)
    private mutating func claim(_ key: Int64, _ owner: UInt16) -> UInt16 {
        // A key claimed while it lay beyond the dense table stays in `sparse`, even once the table has
        // grown past it.
        if !sparse.isEmpty, let current = sparse[key] { return current }
        if key >= 0 && key < dense.count {
            let current = dense[Int(key)]
            if current != 0 { return current }
            dense[Int(key)] = owner
            claims += 1
            return owner
        }
        if key >= 0 && key < (1 << 28) && key <= 4 * Int64(claims) + (1 << 20) {
            dense.append(contentsOf: repeatElement(0, count: max(Int(key) + 1, dense.count * 2) - dense.count))
            dense[Int(key)] = owner
            claims += 1
            return owner
        }
        sparse[key] = owner
        claims += 1
        return owner
    }
}

/// Which objects a writer has written and which it has referred to, per inheritance tree, so that it
/// can refuse an object written twice, and a document that refers to objects it does not hold (which
/// no reader could resolve).
struct ObjectTally {
    /// A set of keys: a bitmap while keys stay dense, a hash set beyond.
    struct KeySet {
        private(set) var bits: [UInt64] = []
        private(set) var others = Set<Int64>()
        private var count = 0

        /// Adds a key; `false` when it was there already.
        @inline(__always)
        mutating func insert(_ key: Int64) -> Bool {
            // A key added while it lay beyond the bitmap stays in `others`, even once the bitmap has
            // grown past it.
            if !others.isEmpty && others.contains(key) { return false }
            if key >= 0 && key < Int64(bits.count) * 64 {
                let word = Int(key >> 6)
                let bit = UInt64(1) << UInt64(key & 63)
                if bits[word] & bit != 0 { return false }
                bits[word] |= bit
                count += 1
                return true
            }
            if key >= 0 && key < (1 << 32) && key <= 4 * Int64(count) + (1 << 20) {
                let words = max(Int(key >> 6) + 1, bits.count * 2)
                bits.append(contentsOf: repeatElement(0, count: words - bits.count))
                return insert(key)
            }
            others.insert(key)
            count += 1
            return true
        }

        /// Whether `predicate` holds for every key (asked in no particular order, until it fails).
        func allSatisfy(_ predicate: (Int64) -> Bool) -> Bool {
            for (word, value) in bits.enumerated() where value != 0 {
                var rest = value
                while rest != 0 {
                    guard predicate(Int64(word * 64 + rest.trailingZeroBitCount)) else { return false }
                    rest &= rest - 1
                }
            }
            return others.allSatisfy(predicate)
        }

        func contains(_ key: Int64) -> Bool {
            if key >= 0 && key < Int64(bits.count) * 64 && bits[Int(key >> 6)] & (UInt64(1) << UInt64(key & 63)) != 0 {
                return true
            }
            return !others.isEmpty && others.contains(key)
        }

        /// Keys in `self` that `other` lacks, at most `limit` of them.
        func subtracting(_ other: KeySet, limit: Int) -> [Int64] {
            var found: [Int64] = []
            for (word, value) in bits.enumerated() where value != 0 {
                var rest = value
                while rest != 0 && found.count < limit {
                    let bit = rest.trailingZeroBitCount
                    let key = Int64(word * 64 + bit)
                    if !other.contains(key) { found.append(key) }
                    rest &= rest - 1
                }
                if found.count >= limit { return found }
            }
            for key in others.sorted() where found.count < limit && !other.contains(key) { found.append(key) }
            return found
        }
    }

    private let rootOrdinal: [Int]
    /// The root entity's index, by root ordinal.
    let roots: [Int]
    private var written: [KeySet]
    private var referenced: [KeySet]

    init(model: Model) {
        var ordinals: [Int: Int] = [:]
        var roots: [Int] = []
        rootOrdinal = model.descriptions.map { entity in
            if let ordinal = ordinals[entity.rootIndex] { return ordinal }
            ordinals[entity.rootIndex] = roots.count
            roots.append(entity.rootIndex)
            return roots.count - 1
        }
        self.roots = roots
        written = Array(repeating: KeySet(), count: roots.count)
        referenced = Array(repeating: KeySet(), count: roots.count)
    }

    /// Records an object as written; `false` when it was written before.
    @inline(__always)
    mutating func write(entity: Int, key: Int64) -> Bool {
        written[rootOrdinal[entity]].insert(key)
    }

    /// Records a reference to an object.
    @inline(__always)
    mutating func refer(entity: Int, key: Int64) {
        _ = referenced[rootOrdinal[entity]].insert(key)
    }

    /// Objects referred to but not written (root entity index and key), at most `limit`.
    func missing(limit: Int) -> [(root: Int, key: Int64)] {
        var found: [(root: Int, key: Int64)] = []
        for ordinal in roots.indices where found.count < limit {
            for key in referenced[ordinal].subtracting(written[ordinal], limit: limit - found.count) {
                found.append((roots[ordinal], key))
            }
        }
        return found
    }
}
