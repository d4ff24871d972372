/// Why a stretch of a log file could not be read, or applied, as records. Stored nowhere;
/// reported by the reader, `logtool verify` and open statistics.
public enum DamageReason: String, Sendable, Equatable, CaseIterable {
    /// Fewer bytes than a frame header remain, and they are not all zero.
    case truncatedFrameHeader
    /// The length field reaches past the end of the file.
    case truncatedPayload
    /// The length field exceeds ``LogFormat/maxPayloadSize``.
    case lengthTooLarge
    /// The checksum does not match the frame and payload.
    case checksumMismatch
    /// The record's LSN is not the next one expected.
    case lsnOutOfSequence
    /// A compressed payload does not decompress to its declared length.
    case decompressionFailed
    /// A frame of an encrypted log verifies its checksum but its envelope
    /// does not authenticate under the log's key (or a plain frame sits in
    /// an encrypted log, or a sealed one in a plain log). A crash tears a
    /// write; it does not produce a checksum that verifies over bytes the
    /// tag rejects, so this is damage or tampering, judged by proof as
    /// ``decompressionFailed`` is.
    case authenticationFailed
    /// An all-zero frame header followed by bytes that are not zero.
    case zeroedRegion
    /// The chain of logs ends, cleanly, before the last LSN a clean close
    /// recorded: the file was cut, or a log removed, after the close.
    case endsBeforeCleanClose
    /// A record that verifies, but whose change does not apply to the
    /// state the records before it built: it changes a root document that
    /// a dropped record (or a lost stretch of a salvaged snapshot) held, or
    /// LensDB did not write it. Found by replay, not by the log reader;
    /// `.salvage` and `logtool repair` drop the record whole.
    case doesNotApply
}

/// Why a valid record could not be understood by this version.
public enum UnsupportedReason: Sendable, Equatable {
    case unknownRecordType(UInt8)
    case unknownFlags(UInt8)
    /// The reserved frame field is set: a newer format uses it.
    case reservedField(UInt16)
}

/// Errors of the log layer: opening, reading and writing log files.
public enum LogError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file is shorter than a log header (a crash during creation leaves this).
    case truncatedHeader(file: String, size: Int64)
    /// The file does not start with the log magic: not a LensDB log.
    case badMagic(file: String)
    /// The file was written by a newer LensDB; open it with that version.
    /// A version field that damage changed is ``badHeader(file:)``
    /// instead: 0, above 255, or a value that a version read here, put
    /// back, makes verify.
    case unsupportedVersion(file: String, version: UInt32)
    /// The header names a cipher this version does not know: a newer LensDB wrote it.
    case unsupportedCipher(file: String, cipher: UInt8)
    /// The key given does not fit the file (none for an encrypted log, one
    /// for a plain log, or another key): nothing was read past the header.
    case encryption(EncryptionError)
    /// The header's checksum or reserved field is wrong.
    case badHeader(file: String)
    /// The header verifies but says the log starts at LSN 0; LSNs start
    /// at 1 (``LogFormat/maxLSN``), so the header is damaged.
    case firstLSNOutOfRange(file: String, firstLSN: UInt64)
    /// Damage followed by valid records (promise 3): `.strict` stops here.
    case corruption(file: String, offset: Int64, lsn: UInt64, reason: DamageReason)
    /// Reading the file failed part way: `cause` says why.
    case readFailed(file: String, cause: StorageError)
    /// A valid record this version cannot interpret.
    case unsupportedRecord(file: String, offset: Int64, lsn: UInt64, reason: UnsupportedReason)
    /// A payload larger than ``LogFormat/maxPayloadSize`` was offered for writing.
    case recordTooLarge(size: Int)
    /// An earlier write or sync failed; the log accepts nothing until reopened (promise 6).
    case writerFailed(cause: StorageError)
    /// The writer was closed.
    case writerClosed
    /// The next record would need an LSN past ``LogFormat/maxLSN``: the log
    /// accepts no more records, and nothing was written. No store commits
    /// that often; a store gets here only from a snapshot or log whose
    /// header claims LSNs it never had.
    case lsnsExhausted(file: String)

    /// Whether a newer LensDB wrote the file: its version or its cipher is
    /// one this reader does not know. Never damage.
    var isNewer: Bool {
        switch self {
        case .unsupportedVersion, .unsupportedCipher: true
        default: false
        }
    }

    /// Whether the header verifies but the file is not this reader's to
    /// read as it is: a newer LensDB's version or cipher, or another key
    /// than the one given. Recovery never treats such a file as damage.
    var isNewerOrOtherKey: Bool {
        if case .encryption = self { return true }
        return isNewer
    }

    public var description: String {
        switch self {
        case let .truncatedHeader(file, size):
            "\(file): only \(size) bytes, shorter than a log header: it was cut while being created, or cut short since; run \(repairCommand(forFileIn: file)) to keep every record that verifies"
        case let .badMagic(file):
            "\(file): not a LensDB log (bad magic)"
        case let .unsupportedVersion(file, version):
            "\(file): log format version \(version) is newer than this LensDB reads (\(LogFormat.version)); use a newer LensDB. If no newer LensDB has written to this store, the header is damaged past what repair reads: restore the store from a backup"
        case let .unsupportedCipher(file, cipher):
            "\(file): encrypted with cipher \(cipher), which this LensDB does not know; use a newer LensDB"
        case let .encryption(error):
            error.description
        case let .badHeader(file):
            "\(file): the log header fails its checksum; run \(repairCommand(forFileIn: file)) to keep every record that verifies"
        case let .firstLSNOutOfRange(file, firstLSN):
            "\(file): the log header says its first LSN is \(firstLSN), but LSNs start at 1; the header is damaged: run \(repairCommand(forFileIn: file)) to keep every record that verifies"
        case let .corruption(file, offset, lsn, reason):
            "\(file) at offset \(offset): \(reason.rawValue) before LSN \(lsn), followed by valid records; open with .salvage, or run \(repairCommand(forFileIn: file)), to drop the damage and keep the rest"
        case let .readFailed(file, cause):
            "\(file): reading the log failed (\(cause)); check the device, then try again"
        case let .unsupportedRecord(file, offset, lsn, reason):
            "\(file) at offset \(offset), LSN \(lsn): \(reason); written by a newer LensDB"
        case let .recordTooLarge(size):
            "a record of \(size) bytes exceeds the maximum of \(LogFormat.maxPayloadSize)"
        case let .writerFailed(cause):
            "the log accepts no more records because \(cause)"
        case .writerClosed:
            "the log writer is closed"
        case let .lsnsExhausted(file):
            "\(file): the log has given out its last LSN (\(LogFormat.maxLSN)) and accepts no more records; "
                + "no store commits that often, so a file of the store claims LSNs it never had. Reads still work: copy the data into a new store"
        }
    }
}
