/// What the `CLOSED` marker of a store says: the session before closed
/// cleanly, every record through ``lastLSN`` durable when it did.
///
/// A clean close flushes the log (a durable sync) before it writes the
/// marker, so every record up to the close is proven: after it, a log that
/// ends sooner was cut or damaged, not torn by a crash, and recovery says so
/// (``RecoveryError/lostAfterCleanClose(file:offset:firstLostLSN:closedLSN:reason:)``)
/// instead of cutting the records quietly.
///
/// The marker, 28 bytes (the log format article, "The CLOSED marker"):
///
/// | offset | width | field |
/// |---|---|---|
/// | 0 | 8 | magic `LENSCLOS` |
/// | 8 | 4 | version, u32 LE: 1 |
/// | 12 | 4 | reserved, zero |
/// | 16 | 8 | last LSN, u64 LE |
/// | 24 | 4 | CRC32C of bytes 0..<24, u32 LE |
///
/// The marker is written without a sync: a power cut soon after the close
/// may leave it empty or garbled, and an earlier LensDB wrote it empty.
/// Either way it still says the close was clean (it was created only after
/// the log was durable) but proves no LSN: ``lastLSN`` is nil.
public struct CleanClose: Sendable, Equatable {
    /// The last LSN of the closed session, durable at the close; nil when
    /// the marker does not say (empty, garbled, or of an earlier LensDB).
    public var lastLSN: UInt64?

    public init(lastLSN: UInt64?) {
        self.lastLSN = lastLSN
    }

    /// "LENSCLOS". Stored on disk — never change.
    public static let magic: [UInt8] = Array("LENSCLOS".utf8)
    /// The marker version this code writes and reads. Stored on disk.
    public static let version: UInt32 = 1
    public static let size = 28

    /// The marker's bytes; `lastLSN` nil writes an empty marker.
    public func encoded() -> [UInt8] {
        guard let lastLSN else { return [] }
        var bytes = Self.magic
        bytes.appendLittleEndian(Self.version)
        bytes.appendLittleEndian(UInt32(0))
        bytes.appendLittleEndian(lastLSN)
        bytes.appendLittleEndian(CRC32C.checksum(bytes))
        return bytes
    }

    /// Reads a marker's bytes: anything but a whole, verifying marker of a
    /// known version, naming an LSN a record can carry (``LogFormat/maxLSN``),
    /// proves no LSN. Never throws: the marker only adds proof.
    public init(decoding bytes: [UInt8]) {
        guard bytes.count == Self.size, bytes.starts(with: Self.magic) else {
            self.init(lastLSN: nil)
            return
        }
        let fields = bytes.withUnsafeBytes { raw in
            (version: raw.littleEndian(at: 8, as: UInt32.self), reserved: raw.littleEndian(at: 12, as: UInt32.self),
             lsn: raw.littleEndian(at: 16, as: UInt64.self), crc: raw.littleEndian(at: 24, as: UInt32.self))
        }
        let verifies = fields.crc == CRC32C.checksum(Array(bytes[0..<24]))
            && fields.version == Self.version && fields.reserved == 0 && fields.lsn <= LogFormat.maxLSN
        self.init(lastLSN: verifies ? fields.lsn : nil)
    }
}

extension StoreDirectory {
    /// What the `CLOSED` marker says; nil when there is none (the last
    /// session crashed, failed, or is still running).
    /// - Throws: ``StorageError`` when the marker exists but cannot be read.
    public func cleanClose() throws -> CleanClose? {
        guard fileSystem.fileExists(at: closedMarkerPath) else { return nil }
        let file = try fileSystem.openFile(at: closedMarkerPath, mode: .readOnly)
        defer { file.close() }
        // A marker is 28 bytes; more is not a marker this version wrote.
        return CleanClose(decoding: try file.read(at: 0, count: CleanClose.size + 1))
    }

    /// Writes the `CLOSED` marker, without a sync (see ``CleanClose``).
    public func markClosedCleanly(_ close: CleanClose) throws {
        let file = try fileSystem.openFile(at: closedMarkerPath, mode: .create)
        defer { file.close() }
        try file.truncate(to: 0)
        try file.write(close.encoded(), at: 0)
    }

    /// Removes the `CLOSED` marker durably, so that if this session does
    /// not close cleanly, no later open takes its records as proven.
    public func removeCleanClose() throws {
        guard fileSystem.fileExists(at: closedMarkerPath) else { return }
        try fileSystem.removeFile(at: closedMarkerPath)
        try fileSystem.syncDirectory(at: path)
    }
}
