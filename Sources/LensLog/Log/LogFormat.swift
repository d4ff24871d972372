// The numbers of log format v4. The article "Log format" in the LensDB
// documentation catalog (Sources/LensDB/LensDB.docc/LogFormat.md) is the spec:
// grammar, offsets, widths, a worked example and what a reader does with each
// kind of damage. Everything here is stored on disk — never renumber.

/// Constants of the log file format, version 4.
///
/// Versions: 1, the first; 2 adds transaction operations 5 and 6 (table and
/// root encodings); 3 adds operation 7 (a patch of one member of a root
/// document); 4 adds encryption: a longer header naming the cipher and key
/// id, and the record flag ``RecordFlags/sealed``. Each changes nothing
/// else, so a v4 reader reads v1 to v3 files as they are, and an older
/// reader refuses a newer file by its header. A plain store's logs are
/// still written at version 3 (``plainVersion``), so every LensDB that
/// reads v3 keeps reading them; only an encrypted store's are v4.
public enum LogFormat {
    /// "LENSLOG" and a zero byte: the first 8 bytes of every log file.
    public static let magic: [UInt8] = [0x4C, 0x45, 0x4E, 0x53, 0x4C, 0x4F, 0x47, 0x00]
    /// The newest format version this code reads, and the one it writes for
    /// an encrypted log.
    public static let version: UInt32 = 4
    /// The version a plain (unencrypted) log is written with.
    public static let plainVersion: UInt32 = 3
    /// The first version whose header carries a cipher and key id.
    public static let firstEncryptedVersion: UInt32 = 4

    /// File header of versions 1–3: magic(8) version(4) reserved(4)
    /// generation(8) firstLSN(8) crc(4).
    public static let fileHeaderSize = 36
    /// File header of version 4: magic(8) version(4) cipher(1) reserved(3)
    /// generation(8) firstLSN(8) keyID(8) crc(4).
    public static let encryptedFileHeaderSize = 44
    /// The longest header of any version: what a reader reads before it
    /// knows the version.
    public static let maxFileHeaderSize = encryptedFileHeaderSize
    /// Frame header: length(4) type(1) flags(1) reserved(2) lsn(8) syncedLSN(8) crc(4).
    public static let frameHeaderSize = 28

    /// The largest LSN a record may carry: 2^64 − 2. LSNs start at 1 and
    /// rise by one a record, so no store reaches it; 2^64 − 1 is never a
    /// record's, which keeps "the LSN after the last" a number. A log
    /// header's first LSN is 1 through 2^64 − 1; a snapshot's or a clean
    /// close's last LSN is 0 (none) through this. Readers refuse any other
    /// value as damage, and a writer refuses to go past it
    /// (``LogError/lsnsExhausted(file:)``).
    public static let maxLSN: UInt64 = .max - 1

    /// The largest payload a record may carry, stored or decompressed (64 MiB).
    /// Readers reject larger length fields before allocating anything.
    public static let maxPayloadSize = 64 << 20
    /// The largest length field a frame may have: the largest payload in
    /// its envelope (``EncryptionFormat/envelopeOverhead``).
    public static let maxStoredSize = maxPayloadSize + EncryptionFormat.envelopeOverhead

    /// A compressed payload starts with its decompressed length (u32 LE).
    public static let compressedPrefixSize = 4
    /// LZ4 cannot expand data by more than 255:1; a larger claim is damage.
    public static let maxCompressionRatio = 255
    /// Payloads shorter than this are stored as they are: LZ4 cannot save enough.
    public static let compressionThreshold = 64
}

/// What a record holds. Stored on disk — never renumber.
public enum RecordType: UInt8, Sendable, Equatable, CaseIterable {
    // 0 is never written: an all-zero frame header is the preallocated end of the log.
    /// One transaction: the whole of it, so a transaction is atomic by construction.
    case transaction = 1
}

/// Per-record flags. Stored on disk — never renumber.
public struct RecordFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The payload is `decompressedLength(u32 LE) ++ LZ4 block`. With
    /// ``sealed``, that is what the envelope holds: compression comes first.
    public static let lz4 = RecordFlags(rawValue: 1 << 0)
    /// Since v4: the stored bytes are an envelope, `keyID nonce ciphertext
    /// tag` (``EncryptionFormat``). Set on every record of an encrypted log
    /// and on none of a plain one.
    public static let sealed = RecordFlags(rawValue: 1 << 1)

    /// Every flag this version understands; any other bit makes a record unsupported.
    public static let known: RecordFlags = [.lz4, .sealed]
}
