#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small, fast, seedable generator (SplitMix64) for random tests and the
/// crash fuzzer: the same seed replays the same run.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    public let seed: UInt64
    private var state: UInt64

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

    /// A generator seeded from `LENSDB_SEED` when set, else from the clock.
    /// Prints the seed with `label`, so a failing run can be replayed with
    /// `LENSDB_SEED=<seed>`.
    public static func fromEnvironment(_ label: String) -> SeededGenerator {
        let seed: UInt64
        if let text = getenv("LENSDB_SEED"), let value = UInt64(String(cString: text)) {
            seed = value
        } else {
            var time = timespec()
            clock_gettime(CLOCK_REALTIME, &time)
            seed = UInt64(time.tv_sec) &* 1_000_000_007 &+ UInt64(time.tv_nsec)
        }
        print("\(label): seed \(seed) (replay with LENSDB_SEED=\(seed))")
        return SeededGenerator(seed: seed)
    }

    /// `count` random bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }
}
