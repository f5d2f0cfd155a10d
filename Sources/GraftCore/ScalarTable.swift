import Foundation

/// Finds identical scalars (strings, numbers, dates, data, UIDs) among the objects of an encoder,
/// so each distinct value is written once.
///
/// "Identical" is stricter than `==` on `PropertyList`: strings compare by their exact UTF-8 bytes
/// (so "é" and "e\u{301}" stay apart) and reals and dates by their bit patterns (so 0.0 and -0.0
/// stay apart). An open-addressing table of object indexes with a seeded 64-bit hash: about twice
/// as fast as `Dictionary` with `Hasher` for the millions of lookups a large encode makes.
struct ScalarTable {
    /// A slot: the hash and the object index + 1 (0 for an empty slot), side by side so a probe
    /// touches one cache line.
    private struct Slot {
        var hash: UInt64
        var entry: Int
    }

    /// The capacity is a power of two, kept at most half full.
    private var slots: [Slot]
    private var count = 0
    private let seed = UInt64.random(in: .min ... .max) | 1

    init() {
        slots = Array(repeating: Slot(hash: 0, entry: 0), count: 64)
    }

    /// The index of an object identical to `value`; when there is none, records `newIndex` (where
    /// the caller then puts `value`) and returns `nil`. Arrays and dictionaries are never shared:
    /// for them the result is always `nil` and nothing is recorded.
    mutating func existingIndex(of value: PropertyList, orRecord newIndex: Int, in objects: [PropertyList]) -> Int? {
        guard let hash = Self.hash(value, seed: seed) else { return nil }
        let mask = slots.count - 1
        var position = Int(truncatingIfNeeded: hash) & mask
        while slots[position].entry != 0 {
            if slots[position].hash == hash, Self.identical(objects[slots[position].entry - 1], value) {
                return slots[position].entry - 1
            }
            position = (position + 1) & mask
        }
        slots[position] = Slot(hash: hash, entry: newIndex + 1)
        count += 1
        if count * 2 > slots.count { grow() }
        return nil
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: Slot(hash: 0, entry: 0), count: old.count * 2)
        let mask = slots.count - 1
        for slot in old where slot.entry != 0 {
            var position = Int(truncatingIfNeeded: slot.hash) & mask
            while slots[position].entry != 0 { position = (position + 1) & mask }
            slots[position] = slot
        }
    }

    // MARK: Hashing and comparing

    static func hash(_ value: PropertyList, seed: UInt64) -> UInt64? {
        switch value {
        case .array, .dictionary:
            return nil
        case .string(let string):
            var string = string
            return string.withUTF8 { hashBytes(UnsafeRawBufferPointer($0), seed: seed ^ 0x11) }
        case .integer(let integer):
            return mix(UInt64(bitPattern: integer) ^ seed ^ 0x22)
        case .unsignedInteger(let integer):
            // Equal to an `.integer` when it fits, so hash it alike.
            return integer <= UInt64(Int64.max) ? mix(integer ^ seed ^ 0x22) : mix(integer ^ seed ^ 0x33)
        case .real(let real):
            return mix(real.bitPattern ^ seed ^ 0x44)
        case .bool(let bool):
            return mix((bool ? 1 : 0) ^ seed ^ 0x55)
        case .date(let date):
            return mix(date.timeIntervalSinceReferenceDate.bitPattern ^ seed ^ 0x66)
        case .data(let data):
            return data.withUnsafeBytes { hashBytes($0, seed: seed ^ 0x77) }
        case .uid(let uid):
            return mix(uid ^ seed ^ 0x88)
        }
    }

    static func identical(_ a: PropertyList, _ b: PropertyList) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)):
            var x = x
            var y = y
            return x.withUTF8 { p in
                y.withUTF8 { q in
                    p.count == q.count && (p.isEmpty || memcmp(p.baseAddress!, q.baseAddress!, p.count) == 0)
                }
            }
        case (.integer(let x), .integer(let y)): return x == y
        case (.unsignedInteger(let x), .unsignedInteger(let y)): return x == y
        case (.integer(let x), .unsignedInteger(let y)), (.unsignedInteger(let y), .integer(let x)):
            return x >= 0 && UInt64(x) == y
        case (.real(let x), .real(let y)): return x.bitPattern == y.bitPattern
        case (.bool(let x), .bool(let y)): return x == y
        case (.date(let x), .date(let y)):
            return x.timeIntervalSinceReferenceDate.bitPattern == y.timeIntervalSinceReferenceDate.bitPattern
        case (.data(let x), .data(let y)): return x == y
        case (.uid(let x), .uid(let y)): return x == y
        default: return false
        }
    }

    /// A 64-bit finaliser that spreads every input bit over the output (from MurmurHash3).
    @inline(__always)
    static func mix(_ value: UInt64) -> UInt64 {
        var x = value
        x ^= x >> 33
        x = x &* 0xFF51_AFD7_ED55_8CCD
        x ^= x >> 33
        x = x &* 0xC4CE_B9FE_1A85_EC53
        x ^= x >> 33
        return x
    }

    /// Hashes bytes eight at a time.
    static func hashBytes(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
        var hash = seed ^ (UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15)
        var offset = 0
        while offset + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            hash = (hash ^ mix(word)) &* 0x9E37_79B9_7F4A_7C15
            hash = hash.rotatedLeft(by: 29)
            offset += 8
        }
        if offset < bytes.count {
            var tail: UInt64 = 0
            for index in offset..<bytes.count { tail = tail << 8 | UInt64(bytes[index]) }
            hash = (hash ^ mix(tail)) &* 0x9E37_79B9_7F4A_7C15
        }
        return mix(hash)
    }
}

extension UInt64 {
    @inline(__always)
    fileprivate func rotatedLeft(by count: UInt64) -> UInt64 { self << count | self >> (64 - count) }
}
