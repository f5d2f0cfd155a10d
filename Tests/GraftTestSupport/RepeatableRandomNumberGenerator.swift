import Foundation

/// A seeded random number generator (SplitMix64): the same seed gives the same sequence on every
/// platform, so a failing property test can be replayed.
public struct RepeatableRandomNumberGenerator: RandomNumberGenerator {
    private var state: UInt64
    /// The seed the sequence started from, to print with a failure.
    public let seed: UInt64

    public init(seed: UInt64) {
        self.seed = seed
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The seed to use: `GRAFT_SEED` from the environment when set (to replay a failure), else `fixed`.
    public static func seed(default fixed: UInt64) -> UInt64 {
        ProcessInfo.processInfo.environment["GRAFT_SEED"].flatMap { UInt64($0) } ?? fixed
    }
}
