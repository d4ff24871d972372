/// What the caller wants done with damage that is followed by valid records.
public enum RecoveryPolicy: Sendable, Equatable {
    /// Stop with ``LogError/corruption(file:offset:lsn:reason:)``.
    case strict
    /// Keep every record that verifies and report the ranges dropped.
    case salvage
}

/// How reading a log file ended, when it ended without an error.
public enum LogEnd: Sendable, Equatable {
    /// Every byte after `offset` is zero (or there is none): the normal end.
    case clean(offset: Int64)
    /// Unsynced writes were cut by a crash: `bytesDropped` non-zero bytes from
    /// `offset` were not records, and no record after them proves them durable.
    case tornTail(offset: Int64, bytesDropped: Int64, reason: DamageReason)
}

/// A stretch that `.salvage` skipped because it did not verify.
public struct DroppedRange: Sendable, Equatable {
    public var offset: Int64
    public var length: Int64
    /// The LSNs lost with it: `lostLSNs.lowerBound ..< lostLSNs.upperBound`.
    public var lostLSNs: Range<UInt64>
    public var reason: DamageReason
    /// What says the LSNs lost were durable.
    public var proof: DamageProof = .laterRecord

    public init(offset: Int64, length: Int64, lostLSNs: Range<UInt64>, reason: DamageReason, proof: DamageProof = .laterRecord) {
        self.offset = offset
        self.length = length
        self.lostLSNs = lostLSNs
        self.reason = reason
        self.proof = proof
    }
}

/// What proves that damaged bytes held durable records, and so are not
/// the torn tail of a crash.
public enum DamageProof: String, Sendable, Equatable {
    /// A valid record after the damage says it was durable (its `syncedLSN`).
    case laterRecord
    /// The store was closed cleanly through a later LSN (its `CLOSED` marker
    /// says so): every record up to the close was durable.
    case cleanClose
}

/// Reads the records of one log file, in order, and tells how it ended.
///
/// Damage is classified by proof, not by guess. Every record carries the
/// highest LSN its writer knew to be durable (`syncedLSN`). When the bytes
/// where LSN `n` should be do not verify, the reader looks at every valid
/// record after them: if one says LSN `n` was already durable when it was
/// written, the damage hit synced data — corruption, which `.strict` reports
/// and `.salvage` skips. If none does, the damage is a torn write of unsynced
/// data, the normal result of a power cut, and the log ends there quietly.
///
/// A reader opened on a file streams it through a bounded window of
/// ``defaultWindowSize`` bytes: memory is one window, or one record when a
/// record is larger, whatever the log's size — and the search past damage
/// streams too.
public struct LogReader: Sendable {
    public let path: String
    public let header: LogFileHeader
    /// The ranges `.salvage` skipped so far.
    public private(set) var dropped: [DroppedRange] = []
    /// Set once ``next()`` has returned nil.
    public private(set) var end: LogEnd?

    private var window: LogWindow
    private var policy: RecoveryPolicy
    private let seed: UInt32
    /// How records are opened: set when the log is encrypted.
    private let opening: RecordFrame.Opening?
    private var offset: Int
    private var expectedLSN: UInt64

    /// LSNs known durable from outside the log: a clean close recorded
    /// them (``CleanClose``). Under `.salvage`, damage at or before it is
    /// skipped to the next valid record even when no record after it
    /// proves it durable; the caller judges a log that ends early
    /// (``LogChain``). 0, the default, knows nothing.
    public var durableThrough: UInt64 = 0

    /// Opens the file at `path`, validates its header, and reads it as
    /// ``next()`` asks, through a window of 1 MiB.
    /// - Parameter cipher: the store's key; nil for a plain store. It must
    ///   fit the header: a plain log read with a key, or an encrypted one
    ///   without its key, throws before any record is read.
    /// - Throws: ``StorageError`` when the file cannot be read; ``LogError``
    ///   for a bad header, ``LogError/encryption(_:)`` when `cipher` does not fit.
    public init(fileSystem: any FileSystem, path: String, policy: RecoveryPolicy, cipher: (any PayloadCipher)? = nil) throws {
        try self.init(fileSystem: fileSystem, path: path, policy: policy, windowSize: LogReader.defaultWindowSize, cipher: cipher)
    }

    /// As ``init(fileSystem:path:policy:cipher:)``, with a window of `windowSize`
    /// bytes: tests make it small to cross window boundaries in a small log.
    @_spi(Testing)
    public init(fileSystem: any FileSystem, path: String, policy: RecoveryPolicy, windowSize: Int, cipher: (any PayloadCipher)? = nil) throws {
        let file = try fileSystem.openFile(at: path, mode: .readOnly)
        let window: LogWindow
        do {
            window = try LogWindow(file: file, path: path, windowSize: windowSize, closingWhenDone: true)
        } catch {
            file.close()
            throw error
        }
        try self.init(window: window, policy: policy, cipher: cipher)
    }

    /// Reads an open file, which the caller keeps open while the reader is
    /// in use and closes afterwards.
    /// - Throws: ``StorageError`` when the file cannot be read; ``LogError``
    ///   for a bad header, ``LogError/encryption(_:)`` when `cipher` does not fit.
    public init(
        file: any StoredFile, path: String, policy: RecoveryPolicy, windowSize: Int = LogReader.defaultWindowSize,
        cipher: (any PayloadCipher)? = nil
    ) throws {
        let window = try LogWindow(file: file, path: path, windowSize: windowSize, closingWhenDone: false)
        try self.init(window: window, policy: policy, cipher: cipher)
    }

    /// Reads a log held in memory; `path` names it in errors.
    public init(bytes: [UInt8], path: String, policy: RecoveryPolicy, cipher: (any PayloadCipher)? = nil) throws(LogError) {
        try self.init(window: LogWindow(bytes: bytes, path: path), policy: policy, cipher: cipher)
    }

    private init(window: LogWindow, policy: RecoveryPolicy, cipher: (any PayloadCipher)?) throws(LogError) {
        let header = try window.withBytes { raw, _ throws(LogError) in try LogFileHeader(decoding: raw, file: window.path) }
        do {
            try EncryptionError.check(header.encryption, against: cipher, file: window.path)
        } catch {
            throw .encryption(error)
        }
        self.header = header
        self.window = window
        path = window.path
        self.policy = policy
        seed = RecordFrame.seed(generation: header.generation)
        opening = cipher.map { RecordFrame.Opening(cipher: $0, generation: header.generation) }
        offset = header.size
        expectedLSN = header.firstLSN
    }

    /// The bytes a reader on a file holds at once, unless one record is larger.
    public static let defaultWindowSize = LogWindow.defaultSize

    /// The LSN the next record must have; after the end, one past the last record read.
    public var nextLSN: UInt64 { expectedLSN }

    /// The offset just past the last record read: where a writer would append.
    public var endOfRecords: Int64 { Int64(offset) }

    /// The next record, or nil at the end (see ``end``).
    /// - Throws: ``LogError/corruption(file:offset:lsn:reason:)`` under `.strict`
    ///   when damage is followed by a record proving it was durable;
    ///   ``LogError/unsupportedRecord(file:offset:lsn:reason:)`` for a newer record;
    ///   ``LogError/readFailed(file:cause:)`` when reading the file fails.
    public mutating func next() throws(LogError) -> LogRecord? {
        while end == nil {
            switch try window.parseFrame(at: offset, seed: seed) {
            case .frame(let frame) where frame.lsn == expectedLSN && frame.lsn > LogFormat.maxLSN:
                // No writer goes past maxLSN (2^64 − 2 commits), and no
                // record could follow this one to prove it: a torn tail.
                let lastNonZero = try window.lastNonZero(atOrAfter: offset)
                end = .tornTail(
                    offset: Int64(offset), bytesDropped: Int64(lastNonZero.map { $0 + 1 - offset } ?? 0), reason: .lsnOutOfSequence)
            case .frame(let frame) where frame.lsn == expectedLSN:
                switch try accept(frame) {
                case .record(let record): return record
                case .damaged(let reason): try damaged(reason, includingHere: false)
                }
            case .frame:
                try damaged(.lsnOutOfSequence, includingHere: true)
            case .zeros:
                try damaged(.zeroedRegion, includingHere: false)
            case .damage(let reason):
                try damaged(reason, includingHere: false)
            }
        }
        return nil
    }

    /// Decodes a verified frame with the expected LSN; why not when its
    /// payload is malformed or does not authenticate.
    private mutating func accept(_ frame: RecordFrame.Header) throws(LogError) -> Accepted {
        if let reason = RecordFrame.unsupported(frame) {
            throw .unsupportedRecord(file: path, offset: Int64(offset), lsn: frame.lsn, reason: reason)
        }
        let payload: [UInt8]
        switch window.payload(of: frame, at: offset, opening: opening) {
        case .payload(let opened): payload = opened
        case .damaged(let reason): return .damaged(reason)
        }
        let record = LogRecord(
            lsn: frame.lsn, type: RecordType(rawValue: frame.typeByte)!, payload: payload,
            offset: Int64(offset), frameSize: frame.frameSize, compressed: frame.flags.contains(.lz4),
            syncedLSN: frame.syncedLSN)
        offset += frame.frameSize
        expectedLSN += 1
        return .record(record)
    }

    /// What ``accept(_:)`` made of a frame.
    private enum Accepted {
        case record(LogRecord)
        case damaged(DamageReason)
    }

    /// The bytes at `offset` are not the record expected. Decides between the
    /// end of the log, a torn tail, and corruption.
    private mutating func damaged(_ reason: DamageReason, includingHere: Bool) throws(LogError) {
        let damageAt = offset
        let scan = try Resync.scan(
            &window, damageAt: damageAt, from: includingHere ? damageAt : damageAt + 1, expecting: expectedLSN, seed: seed)
        // A live writer may have filled the damaged bytes (preallocated
        // zeros) after they were read and before the scan read what follows:
        // then the record expected is there now, and the scan's finds are its
        // successors, not proof. A record vouches for an LSN only once that
        // LSN is synced, so damage still there after the scan is real. (Not
        // for a frame that verifies but does not decompress or authenticate:
        // it would verify again.)
        if reason != .decompressionFailed, reason != .authenticationFailed, scan.lastNonZero != nil,
           case .frame(let frame) = try window.parseFrameAgain(at: damageAt, seed: seed), frame.lsn == expectedLSN {
            return
        }
        // Salvage keeps what verifies after damage that a clean close
        // proves durable, as after damage a later record proves durable.
        let provenByCleanClose = policy == .salvage && expectedLSN <= durableThrough && scan.firstValid != nil
        guard scan.proof != nil || provenByCleanClose else {
            // Zero fill is not data: count up to the last non-zero byte after the damage.
            let dropped = Int64(scan.lastNonZero.map { max(0, $0 + 1 - damageAt) } ?? 0)
            end = dropped == 0 && reason == .zeroedRegion
                ? .clean(offset: Int64(damageAt))
                : .tornTail(offset: Int64(damageAt), bytesDropped: dropped, reason: reason)
            return
        }
        guard policy == .salvage, let resume = scan.firstValid else {
            throw .corruption(file: path, offset: Int64(damageAt), lsn: expectedLSN, reason: reason)
        }
        dropped.append(DroppedRange(
            offset: Int64(damageAt), length: Int64(resume.offset - damageAt),
            lostLSNs: expectedLSN..<resume.lsn, reason: reason, proof: scan.proof == nil ? .cleanClose : .laterRecord))
        offset = resume.offset
        expectedLSN = resume.lsn
    }
}

/// The search after damage for records that verify.
enum Resync {
    struct Found { var offset: Int; var lsn: UInt64 }
    struct Result {
        /// The first valid record with an LSN at or after the one expected.
        var firstValid: Found?
        /// A valid record whose `syncedLSN` covers the expected LSN.
        var proof: Found?
        /// The last byte at or after the damage that is not zero, if any.
        var lastNonZero: Int?
    }

    /// Tries every offset from `start`. A candidate must verify (CRC32C over
    /// the salted header and payload) and carry an LSN that could follow
    /// `expected` in the bytes left; the checksum is computed only for
    /// candidates that pass the cheap checks, so zero fill is skipped fast.
    /// The search streams through `window` like the reader: a candidate
    /// that claims a payload brings in that payload, and nothing more.
    static func scan(
        _ window: inout LogWindow, damageAt: Int, from start: Int, expecting expected: UInt64, seed: UInt32
    ) throws(LogError) -> Result {
        var result = Result(lastNonZero: try window.lastNonZero(atOrAfter: damageAt))
        guard let last = result.lastNonZero, start <= last else { return result }
        let maxLSN = expected &+ UInt64(window.count / LogFormat.frameHeaderSize)
        var candidate = start
        // A frame header that starts past the last non-zero byte is all
        // zeros: LSN 0, never a candidate.
        while candidate <= last, candidate + LogFormat.frameHeaderSize <= window.count {
            try window.ensure(candidate, LogFormat.frameHeaderSize)
            let lsn: UInt64 = window.buffer.withUnsafeBytes { $0.littleEndian(at: candidate - window.base + 8) }
            if lsn >= expected, lsn <= maxLSN,
               case .frame(let frame) = try window.parseFrame(at: candidate, seed: seed) {
                let found = Found(offset: candidate, lsn: frame.lsn)
                if result.firstValid == nil { result.firstValid = found }
                if frame.syncedLSN >= expected {
                    result.proof = found
                    return result
                }
                candidate += frame.frameSize
                continue
            }
            candidate += 1
        }
        return result
    }
}

extension LogReader {
    /// Whether this log, read in order from where the reader stands to its
    /// end, says LSN `lsn` was already durable: a record accepted in order
    /// whose synced LSN covers it, or damage at or after `lsn` that a later
    /// record proves durable (which covers `lsn` too). Asked where a header
    /// or the records before a log are missing: proof that synced data was lost.
    ///
    /// Leftovers past a torn point are not part of the log and prove
    /// nothing: they are what remains of a write that never completed, and
    /// an open that cut them and went on must not be judged by them later.
    /// A record of a newer format counts as proof, so that nothing is
    /// discarded on the strength of a record this version cannot read.
    ///
    /// Reads on a copy, so `self` stays where it is.
    /// - Throws: ``LogError/readFailed(file:cause:)`` only.
    public func vouches(for lsn: UInt64) throws(LogError) -> Bool {
        var reader = self
        reader.policy = .strict
        do {
            while let record = try reader.next() {
                if record.syncedLSN >= lsn { return true }
            }
            return false
        } catch {
            if case .readFailed = error { throw error }
            return true
        }
    }

    /// Reads an open log file whose header is damaged as if it had
    /// `assumed`, for salvage; the file itself is not changed. `assumed`
    /// names the encryption of `cipher` (the chain's), or none when nil.
    /// - Throws: ``StorageError`` when the file cannot be read.
    public init(
        file: any StoredFile, path: String, policy: RecoveryPolicy, assumedHeader assumed: LogFileHeader,
        windowSize: Int = LogReader.defaultWindowSize, cipher: (any PayloadCipher)? = nil
    ) throws {
        precondition(assumed.encryption == cipher?.encryption, "the assumed header must name the cipher it is read with")
        let window = try LogWindow(
            file: file, path: path, windowSize: windowSize, overlay: assumed.encoded(), closingWhenDone: false)
        // The laid-over header verifies by construction, and names `cipher`.
        try! self.init(window: window, policy: policy, cipher: cipher)
    }

    /// How many bytes of `file` are not zero, streamed through a window:
    /// what a log cut while new held, for the report.
    /// - Throws: ``StorageError`` when the file cannot be read.
    public static func nonZeroByteCount(
        file: any StoredFile, path: String, windowSize: Int = LogReader.defaultWindowSize
    ) throws -> Int {
        var window = try LogWindow(file: file, path: path, windowSize: windowSize, closingWhenDone: false)
        do {
            return try window.nonZeroCount()
        } catch .readFailed(_, let cause) {
            throw cause
        } catch {
            // nonZeroCount throws nothing but failed reads.
            throw StorageError(.ioError, .read, path: path)
        }
    }
}
