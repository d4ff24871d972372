// The numbers of log format v3. The article "Log format" in the LensDB
// documentation catalog (Sources/LensDB/LensDB.docc/LogFormat.md) is the spec:
// grammar, offsets, widths, a worked example and what a reader does with each
// kind of damage. Everything here is stored on disk — never renumber.

/// Constants of the log file format, version 3.
///
/// Versions: 1, the first; 2 adds transaction operations 5 and 6 (table and
/// root encodings); 3 adds operation 7 (a patch of one member of a root
/// document). Each changes nothing else, so a v3 reader reads v1 and v2
/// files as they are, and an older reader refuses a newer file by its header.
public enum LogFormat {
    /// "LENSLOG" and a zero byte: the first 8 bytes of every log file.
    public static let magic: [UInt8] = [0x4C, 0x45, 0x4E, 0x53, 0x4C, 0x4F, 0x47, 0x00]
    /// The format version this code writes, and the newest it reads.
    public static let version: UInt32 = 3

    /// File header: magic(8) version(4) reserved(4) generation(8) firstLSN(8) crc(4).
    public static let fileHeaderSize = 36
    /// Frame header: length(4) type(1) flags(1) reserved(2) lsn(8) syncedLSN(8) crc(4).
    public static let frameHeaderSize = 28

    /// The largest payload a record may carry, stored or decompressed (64 MiB).
    /// Readers reject larger length fields before allocating anything.
    public static let maxPayloadSize = 64 << 20

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

    /// The payload is `decompressedLength(u32 LE) ++ LZ4 block`.
    public static let lz4 = RecordFlags(rawValue: 1 << 0)

    /// Every flag this version understands; any other bit makes a record unsupported.
    public static let known: RecordFlags = [.lz4]
}
