/// Reads the records appended to one log file while its writer appends more:
/// the part of ``LogFollower`` that knows one file.
///
/// It holds the file open from the moment it is listed, so that a compaction
/// that deletes the file meanwhile does not take the records it holds away
/// (a POSIX file stays readable through an open descriptor after its name
/// is removed). Each ``read()`` starts where the last complete record ended
/// and reads only what is new, plus at most ``readAhead`` bytes of the
/// preallocated zeros after it, so a poll costs what was written since the
/// last one, not the size of the log.
///
/// It never guesses: a record is taken only when its frame verifies and its
/// LSN is the next one. Whatever else lies there — zeros, a frame the writer
/// is still copying, a torn write — stops the read, and the next read looks
/// again at the same offset. ``LogFollower`` decides what a stop that does
/// not go away means.
struct LogTail {
    /// Why the last ``read()`` stopped.
    enum Stop: Equatable {
        /// Zeros (preallocated space) or the end of the file: nothing more yet.
        case endOfRecords
        /// A frame that reaches past the end of the file: being written, or torn.
        case incomplete
        /// Bytes that are not the next record: being written, torn, or damaged.
        case damage(DamageReason)
        /// The file is shorter than the records read: a writer whose write or
        /// sync failed cut its unacknowledged batch off.
        case cutBack(size: Int64)
    }

    let path: String
    let generation: UInt64
    let file: any StoredFile
    /// nil until the header is written and verifies: a log is created (and
    /// preallocated) before the header that starts it.
    private(set) var header: LogFileHeader?
    /// Where the next record starts: the end of the last record read.
    private(set) var offset = Int64(LogFormat.fileHeaderSize)
    /// The LSN the next record must have.
    private(set) var nextLSN: UInt64 = 0
    /// The last LSN the file held when it was opened here (``prime()``):
    /// those records were written before this descriptor existed.
    private(set) var lastLSNAtOpen: UInt64?
    /// Records read but not yet returned by ``read()``.
    private var unreturned: [LogRecord] = []
    private(set) var stop = Stop.endOfRecords
    /// Set once a sync of this file through this descriptor failed: from then
    /// on, a sync here proves nothing (the kernel reports a failed writeback
    /// once, and may then call the lost pages clean).
    var syncFailed = false
    private var seed: UInt32 = 0
    /// The store's key, nil for a plain store (``LogFollower``'s).
    let cipher: (any PayloadCipher)?
    private var opening: RecordFrame.Opening?
    /// Set when the header names an encryption `cipher` does not fit:
    /// ``read()`` throws it, and the file is never read past its header.
    private(set) var keyProblem: EncryptionError?
    /// Set when the header is a newer LensDB's (a version or cipher this
    /// reader does not know): the file is never read, and a follower with
    /// nothing else to go on stops with it (``LogFollower/poll()``).
    private(set) var newerFormat: LogError?

    /// How many bytes beyond the last record a read looks at when it does not
    /// know how long the next frame is.
    static let readAhead = 64 << 10

    init(path: String, generation: UInt64, file: any StoredFile, cipher: (any PayloadCipher)?) {
        self.path = path
        self.generation = generation
        self.file = file
        self.cipher = cipher
    }

    /// Reads the header if it is not known yet; true once it is.
    mutating func readHeader() -> Bool {
        if header != nil { return true }
        // A newer LensDB's header stays one: not read again at every look.
        if newerFormat != nil { return false }
        // A header that cannot be read or does not verify is not written yet
        // (or never will be: a log cut while new); the chain ignores the log
        // until it verifies.
        guard let bytes = try? file.read(at: 0, count: LogFormat.maxFileHeaderSize) else { return false }
        let decoded: LogFileHeader
        do {
            decoded = try bytes.withUnsafeBytes { try LogFileHeader(decoding: $0, file: path) }
        } catch {
            // A header being written is never a newer one: a log is created
            // new and zero-filled before its header is written over the
            // zeros, so its version reads as this LensDB's or, not yet
            // there, 0 (damage, never newer).
            if let error = error as? LogError, error.isNewer { newerFormat = error }
            return false
        }
        header = decoded
        nextLSN = decoded.firstLSN
        offset = Int64(decoded.size)
        seed = RecordFrame.seed(generation: decoded.generation)
        do {
            try EncryptionError.check(decoded.encryption, against: cipher, file: path)
            opening = cipher.map { RecordFrame.Opening(cipher: $0, generation: decoded.generation) }
        } catch {
            keyProblem = error
        }
        return true
    }

    /// Reads what the file holds right after it was opened, to know which
    /// records predate the descriptor (``lastLSNAtOpen``); ``read()``
    /// returns them. A file without its header yet holds no record.
    mutating func prime() {
        guard readHeader(), keyProblem == nil else { return }
        do {
            try readMore()
            lastLSNAtOpen = nextLSN - 1
        } catch {
            // The next read meets the same error and reports it. Until then,
            // nothing is known to have been written after the open.
            lastLSNAtOpen = .max
        }
    }

    /// The records written since the last read, in order, each verified and
    /// with the next LSN; sets ``stop``.
    /// - Throws: ``StorageError``; ``LogError/unsupportedRecord(file:offset:lsn:reason:)``
    ///   for a valid record of a newer format; ``LogError/encryption(_:)``
    ///   when the log's key is not the follower's (its key changed). Records
    ///   read before a throw are returned by the next call.
    mutating func read() throws -> [LogRecord] {
        precondition(header != nil, "read() before the header is known")
        if let keyProblem { throw LogError.encryption(keyProblem) }
        // No header when the file was opened: every record came after.
        if lastLSNAtOpen == nil { lastLSNAtOpen = header!.firstLSN - 1 }
        try readMore()
        defer { unreturned = [] }
        return unreturned
    }

    private mutating func readMore() throws {
        let size = try file.size()
        guard size >= offset else {
            stop = .cutBack(size: size)
            return
        }
        var window = Window(file: file, start: offset, size: size)
        while let record = try next(&window) { unreturned.append(record) }
    }

    /// Goes back to the record at `offset` with LSN `lsn`, read before: the
    /// file was cut back below it.
    mutating func rewind(to offset: Int64, lsn: UInt64) {
        precondition(offset <= self.offset && lsn <= nextLSN, "rewind goes forward")
        self.offset = offset
        nextLSN = lsn
        unreturned.removeAll { $0.lsn >= lsn }
        // What is written there from now on was written after the open.
        lastLSNAtOpen = min(lastLSNAtOpen ?? .max, lsn - 1)
    }

    /// The record at ``offset``, or nil (with ``stop`` set) when there is none.
    private mutating func next(_ window: inout Window) throws -> LogRecord? {
        // Enough bytes for a frame header, then for the whole frame its length
        // field claims; the checksum decides whether that claim was true.
        try window.ensure(LogFormat.frameHeaderSize)
        if let length = window.lengthField(), length <= LogFormat.maxStoredSize {
            try window.ensure(LogFormat.frameHeaderSize + length)
        }
        let parsed = window.bytes.withUnsafeBytes { RecordFrame.parse($0, at: window.position, seed: seed) }
        switch parsed {
        // No record carries an LSN past maxLSN (LogReader refuses it alike).
        case .frame(let frame) where frame.lsn == nextLSN && frame.lsn <= LogFormat.maxLSN:
            if let reason = RecordFrame.unsupported(frame) {
                throw LogError.unsupportedRecord(file: path, offset: offset, lsn: frame.lsn, reason: reason)
            }
            let opened = window.bytes.withUnsafeBytes { RecordFrame.payload(of: frame, in: $0, at: window.position, opening: opening) }
            let payload: [UInt8]
            switch opened {
            case .payload(let bytes): payload = bytes
            case .damaged(let reason):
                stop = .damage(reason)
                return nil
            }
            let record = LogRecord(
                lsn: frame.lsn, type: RecordType(rawValue: frame.typeByte)!, payload: payload, offset: offset,
                frameSize: frame.frameSize, compressed: frame.flags.contains(.lz4), syncedLSN: frame.syncedLSN)
            window.position += frame.frameSize
            offset += Int64(frame.frameSize)
            nextLSN += 1
            return record
        case .frame:
            stop = .damage(.lsnOutOfSequence)
        case .zeros:
            stop = .endOfRecords
        case .damage(.truncatedFrameHeader), .damage(.truncatedPayload):
            stop = .incomplete
        case .damage(let reason):
            stop = .damage(reason)
        }
        return nil
    }

    /// The bytes of the file from the last record on, read as far as needed.
    private struct Window {
        let file: any StoredFile
        /// The file offset of `bytes[0]`.
        var start: Int64
        let size: Int64
        var bytes: [UInt8] = []
        /// Where in `bytes` the next frame starts.
        var position = 0

        init(file: any StoredFile, start: Int64, size: Int64) {
            self.file = file
            self.start = start
            self.size = size
        }

        /// Makes `count` bytes from `position` available, or as many as the file has.
        mutating func ensure(_ count: Int) throws {
            let here = start + Int64(position)
            let wanted = min(Int64(count), size - here)
            guard Int64(bytes.count - position) < wanted else { return }
            let reading = min(max(wanted, Int64(LogTail.readAhead)), size - here)
            bytes = try file.read(at: here, count: Int(reading))
            start = here
            position = 0
        }

        /// The frame's length field, when its header is here.
        func lengthField() -> Int? {
            guard bytes.count - position >= LogFormat.frameHeaderSize else { return nil }
            return Int(bytes.littleEndian(at: position, as: UInt32.self))
        }
    }
}
