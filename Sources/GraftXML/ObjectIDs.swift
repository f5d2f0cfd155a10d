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

/// The reader's map from object ids to entities and keys.
///
/// Ids `z<number>` are kept in an array indexed by number while the numbers stay dense (Core Data's are),
/// else in a dictionary; other ids in a dictionary by string.
final class ObjectIDTable {
    /// Entity index + 1 by id number; 0 where no object has that number.
    @exclusivity(unchecked) private var dense = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
    @exclusivity(unchecked) private var denseCount = 0
    private var sparse: [Int64: Int32] = [:]
    private var namedIndex: [String: Int] = [:]
    /// Ids of any other form, in document order, with their entity and (once assigned) key.
    private(set) var named: [(id: String, entity: Int32, key: Int64)] = []
    private(set) var count = 0
    /// The largest number of a `z<number>` id.
    private(set) var largestNumber: Int64 = -1

    deinit { dense.deallocate() }

    /// Adds an object; `false` when its id is already taken.
    func insert(_ pointer: UnsafePointer<UInt8>, _ length: Int, entity: Int32) -> Bool {
        if let number = ObjectIDs.number(pointer, length) {
            if number < denseCount {
                if dense[Int(number)] != 0 { return false }
                dense[Int(number)] = entity + 1
            } else if number < (1 << 28) && number <= 4 * Int64(count) + (1 << 20) {
                let newCount = max(Int(number) + 1, denseCount * 2)
                let larger = UnsafeMutablePointer<Int32>.allocate(capacity: newCount)
                larger.update(from: dense, count: denseCount)
                (larger + denseCount).initialize(repeating: 0, count: newCount - denseCount)
                dense.deallocate()
                dense = larger
                denseCount = newCount
                dense[Int(number)] = entity + 1
            } else {
                if sparse[number] != nil { return false }
                sparse[number] = entity + 1
            }
            largestNumber = max(largestNumber, number)
        } else {
            let id = Bytes.string(pointer, length)
            if namedIndex[id] != nil { return false }
            namedIndex[id] = named.count
            named.append((id, entity, -1))
        }
        count += 1
        return true
    }

    /// The entity and key of the object with this id.
    @inline(__always)
    func lookup(_ pointer: UnsafePointer<UInt8>, _ length: Int) -> (entity: Int, key: Int64)? {
        if let number = ObjectIDs.number(pointer, length) {
            let stored = number < denseCount ? dense[Int(number)] : (sparse[number] ?? 0)
            return stored == 0 ? nil : (Int(stored - 1), number)
        }
        guard let position = namedIndex[Bytes.string(pointer, length)] else { return nil }
        let entry = named[position]
        return (Int(entry.entity), entry.key)
    }

    func lookup(_ id: String) -> (entity: Int, key: Int64)? {
        var id = id
        return id.withUTF8 { buffer in buffer.baseAddress.flatMap { lookup($0, buffer.count) } }
    }

    /// The entity of the object with id `z<number>`.
    private func entity(ofNumber number: Int64) -> Int32? {
        let stored = number < denseCount ? dense[Int(number)] : (sparse[number] ?? 0)
        return stored == 0 ? nil : stored - 1
    }

    /// Replaces every entity by `mapping[entity]` (provisional numbers → model indices).
    func remapEntities(_ mapping: [Int32]) {
        for index in 0..<denseCount where dense[index] != 0 { dense[index] = mapping[Int(dense[index] - 1)] + 1 }
        for (number, stored) in sparse { sparse[number] = mapping[Int(stored - 1)] + 1 }
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
            if let number = ObjectIDs.suffixedNumber(entry.id) { next = max(next, number) }
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
            if let number = ObjectIDs.suffixedNumber(named[index].id) {
                let clashes = self.entity(ofNumber: number).map { root(Int($0)) == tree } ?? false
                if !clashes && claimed.insert(Pair(root: tree, key: number)).inserted {
                    named[index].key = number
                    continue
                }
            }
            named[index].key = next
            next += 1
        }
    }

    private struct Pair: Hashable {
        var root: Int
        var key: Int64
    }

    /// Each inheritance tree's highest key, and whether two trees use the same key (after `assignKeys`).
    func keyExtents(root: (Int) -> Int) -> (maxKeys: [Int: Int64], collide: Bool) {
        var maxKeys: [Int: Int64] = [:]
        var owners: [Int64: Int] = [:]
        var collide = false
        func note(_ entity: Int, _ key: Int64) {
            let tree = root(entity)
            maxKeys[tree] = max(maxKeys[tree] ?? 0, key)
            if let other = owners.updateValue(tree, forKey: key), other != tree { collide = true }
        }
        for number in 0..<denseCount where dense[number] != 0 { note(Int(dense[number] - 1), Int64(number)) }
        for (number, stored) in sparse { note(Int(stored - 1), number) }
        for entry in named where entry.key >= 0 { note(Int(entry.entity), entry.key) }
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
