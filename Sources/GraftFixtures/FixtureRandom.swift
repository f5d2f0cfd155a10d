/// The generator's one source of chance: SplitMix64, started from the seed and the names of what is
/// being made (entity, property, object index), so that every value depends on those alone and on no
/// other object, run, library version or platform.
///
/// Only integer arithmetic decides a draw, and the hash of names is FNV-1a over their UTF-8 bytes, so
/// the same seed gives the same values everywhere.
struct FixtureRandom {
    private var state: UInt64

    /// A stream for one thing: the seed mixed with each part's bytes (parts are kept apart, so
    /// `("ab", "c")` and `("a", "bc")` differ).
    init(seed: UInt64, _ parts: String..., index: Int = 0) {
        self.init(seed: seed, names: Self.hash(parts), index: index)
    }

    /// A stream from names hashed once with ``hash(_:)``, for drawing object after object.
    init(seed: UInt64, names: UInt64, index: Int) {
        state = Self.finalize(seed ^ Self.finalize(names)) ^ Self.finalize(UInt64(bitPattern: Int64(index)) &+ 0x9e37)
    }

    /// FNV-1a over the parts' UTF-8 bytes, each part closed by a byte no UTF-8 text has.
    static func hash(_ parts: [String]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        for part in parts {
            for byte in part.utf8 { mix(byte) }
            mix(0xff)
        }
        return hash
    }

    private static func finalize(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        return Self.finalize(state)
    }

    /// A number in `range`, each about equally likely (the bias of a remainder is below 2⁻³⁰ for the
    /// ranges fixtures use).
    mutating func int(in range: ClosedRange<Int64>) -> Int64 {
        let width = UInt64(bitPattern: range.upperBound &- range.lowerBound) &+ 1
        guard width != 0 else { return Int64(bitPattern: next()) }  // the whole of Int64
        return range.lowerBound &+ Int64(bitPattern: next() % width)
    }

    mutating func int(in range: ClosedRange<Int>) -> Int {
        Int(int(in: Int64(range.lowerBound)...Int64(range.upperBound)))
    }

    /// A number in 0 ..< `count`.
    mutating func below(_ count: Int) -> Int { Int(next() % UInt64(max(count, 1))) }

    /// True about once in `odds` draws.
    mutating func oneIn(_ odds: Int) -> Bool { below(odds) == 0 }

    mutating func pick<T>(_ choices: [T]) -> T { choices[below(choices.count)] }

    mutating func bytes(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        while bytes.count < count {
            var word = next()
            for _ in 0..<min(8, count - bytes.count) {
                bytes.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return bytes
    }
}
