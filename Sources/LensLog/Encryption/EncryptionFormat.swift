// The numbers of encryption at rest: what log format v4 and snapshot format
// v4 add. The article "Encryption at rest" in the LensDB documentation
// catalog (Sources/LensDB/LensDB.docc/EncryptionAtRest.md) is the spec: the
// sealed envelope, the associated data of a record and of a chunk, the
// nonce, the key id, and a worked example of real bytes. "Log format" and
// "Snapshot format" give the v4 headers. Everything here is stored on
// disk — never renumber.

/// Constants of the sealed envelope that log records and snapshot chunks of
/// an encrypted store carry in place of their stored bytes.
///
/// ```text
/// envelope = keyID(u64 LE) nonce(12) ciphertext(n) tag(16)
/// ```
///
/// The ciphertext is the bytes a plain file would store (already
/// LZ4-compressed where that saves space), sealed with AES-256-GCM.
public enum EncryptionFormat {
    /// Width of the key id that starts every envelope (and sits in every v4 header).
    public static let keyIDSize = 8
    /// Width of an AES-GCM nonce: 96 bits, `salt(u64 LE) counter(u32 LE)`.
    public static let nonceSize = 12
    /// Width of the AES-GCM tag at the end of every envelope.
    public static let tagSize = 16
    /// Bytes an envelope adds to what it seals: key id, nonce and tag.
    public static let envelopeOverhead = keyIDSize + nonceSize + tagSize

    /// Width of the associated data of a log record: the log magic,
    /// the file's generation, and frame header bytes 4..<24 (type, flags,
    /// reserved, LSN, synced LSN).
    public static let recordAssociatedDataSize = 8 + 8 + 20
    /// Width of the associated data of a snapshot chunk: the snapshot magic,
    /// generation, last LSN, the chunk's index, and chunk header bytes
    /// 4..<12 (raw length, flags, reserved).
    public static let chunkAssociatedDataSize = 8 + 8 + 8 + 8 + 8

    /// A writer draws a new nonce salt after this many nonces, so that its
    /// 32-bit counter never wraps.
    public static let noncesPerSalt: UInt64 = 1 << 32

    /// The info strings of HKDF-SHA256 that derive, from the 32 bytes an
    /// application gives, the AES key and the key id. The application's
    /// key itself never meets a file.
    public static let cipherKeyInfo = Array("LensDB AES-256-GCM key v1".utf8)
    public static let keyIDInfo = Array("LensDB key id v1".utf8)
}

/// Which cipher seals a file's records or chunks. Stored in the header of
/// every v4 file, covered by its checksum. Stored on disk — never renumber.
public enum CipherAlgorithm: UInt8, Sendable, Equatable, CaseIterable, CustomStringConvertible {
    // 0 is "none": a plain file (a v4 header may say so; LensDB writes plain files at v3).
    /// AES-256 in Galois/Counter Mode, 96-bit nonces, 128-bit tags.
    case aes256GCM = 1

    public var description: String {
        switch self {
        case .aes256GCM: "AES-256-GCM"
        }
    }
}
