/// The public name of an encryption key: the first 8 bytes of an HKDF-SHA256
/// output under the key (``EncryptionFormat/keyIDInfo``), never the key or
/// anything it could be found from faster than by trying keys.
///
/// Stored in every encrypted file's header and envelope, so that a file says
/// which key it needs and an open with another key fails at once, by name,
/// instead of failing to decrypt. Printed as 16 hex digits.
public struct KeyID: Hashable, Sendable, CustomStringConvertible {
    /// The 8 stored bytes read as a u64, little-endian.
    public var rawValue: UInt64

    /// The key id whose stored bytes are `rawValue`, little-endian.
    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// 16 hex digits, most significant first: `0x9c1e3a7d5f20b864` prints
    /// as `9c1e3a7d5f20b864` (and is stored as `64 b8 20 5f 7d 3a 1e 9c`).
    public var description: String {
        let digits = String(rawValue, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// What a file's header says about encryption: which cipher, under which key.
public struct FileEncryption: Sendable, Hashable, CustomStringConvertible {
    /// The cipher that seals the file's records or chunks.
    public var algorithm: CipherAlgorithm
    /// The public name of the key they are sealed with.
    public var keyID: KeyID

    /// What a header says: `algorithm` under the key named `keyID`.
    public init(algorithm: CipherAlgorithm, keyID: KeyID) {
        self.algorithm = algorithm
        self.keyID = keyID
    }

    /// "AES-256-GCM, key id 9c1e3a7d5f20b864".
    public var description: String { "\(algorithm), key id \(keyID)" }
}
