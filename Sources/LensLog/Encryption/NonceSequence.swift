/// The nonces one writer seals with: `salt(u64 LE) counter(u32 LE)`, the
/// salt drawn from the system's random source when the writer starts, the
/// counter counting from 0.
///
/// Why a nonce never repeats under one key (the "Encryption at rest"
/// article argues it in full): within one writer the counter never repeats,
/// and a new salt is drawn before it would wrap. Every log writer and every
/// snapshot writer draws its own salt: each open, each compaction (new log,
/// new snapshot), each tail an open writes again after a crash — the case
/// where one LSN is written twice under one key with other bytes — and each
/// store `logtool repair` writes. Two writers share a salt with probability
/// about w²/2⁶⁵ for w writers under one key: below 2⁻²⁵ even after a
/// million opens and compactions. Nothing is derived from LSNs, generations
/// or chunk positions, which do repeat across crashes.
///
/// Not thread-safe: the log writer takes nonces only in its write turn, a
/// snapshot writer on its one thread.
public struct NonceSequence: Sendable {
    /// The salt of the nonces taken now.
    public private(set) var salt: UInt64
    private var counter: UInt64 = 0

    /// A sequence with a fresh random salt.
    public init() {
        var random = SystemRandomNumberGenerator()
        self.init(salt: random.next())
    }

    /// A sequence with a chosen salt: for tests and the format's worked
    /// examples only, which need the same bytes on every run. A store never
    /// uses it.
    @_spi(Testing)
    public init(salt: UInt64) {
        self.salt = salt
    }

    /// The next nonce's salt and counter.
    public mutating func next() -> (salt: UInt64, counter: UInt32) {
        if counter == EncryptionFormat.noncesPerSalt {
            var random = SystemRandomNumberGenerator()
            salt = random.next()
            counter = 0
        }
        defer { counter += 1 }
        return (salt, UInt32(counter))
    }
}
