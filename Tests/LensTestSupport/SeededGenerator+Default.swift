#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension SeededGenerator {
    /// A generator seeded from `LENSDB_SEED` when set, else from `seed`, so a
    /// test is deterministic by default and any run can be replayed. Prints
    /// `seed: N`.
    public static func fromEnvironment(default seed: UInt64) -> SeededGenerator {
        let chosen = getenv("LENSDB_SEED").flatMap { UInt64(String(cString: $0)) } ?? seed
        print("seed: \(chosen) (replay with LENSDB_SEED=\(chosen))")
        return SeededGenerator(seed: chosen)
    }
}
