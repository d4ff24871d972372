import Dispatch

/// Appends records to one log file, with group commit.
///
/// Committers call ``append(_:durability:)`` from any thread. Each is queued
/// with the next LSN. A waiting committer takes one of two turns, each held
/// by one thread at a time: the *write* turn frames everything queued into one
/// buffer and writes it with one call; the *sync* turn syncs everything
/// written before it started. The two overlap (a pipeline): the next batch is
/// written while the previous sync is in flight, and the sync after it covers
/// every batch written meanwhile. A `.full` commit is acknowledged only by a
/// sync that started after its write had completed.
///
/// Fail-stop (promise 6): when a write or sync fails, every commit not yet
/// acknowledged fails with ``LogError/writerFailed(cause:)``, the file is cut
/// back to the end of the last good write where possible, and every later
/// call throws the same error. An fsync is never retried.
///
/// `@unchecked Sendable` is sound: every mutable field is read and written
/// only with `lock` held; file I/O happens outside the lock but only by the
/// thread holding the write turn (`state.writing`: writes, preallocation) or
/// the sync turn (`state.syncing`), or in `close()` after both have ended.
public final class LogWriter: @unchecked Sendable {
    public let path: String
    public let header: LogFileHeader
    let file: any StoredFile
    let options: LogWriterOptions
    let seed: UInt32
    /// Seals every record when the log is encrypted (its header says so).
    let cipher: (any PayloadCipher)?
    let lock = ConditionLock()
    /// Turns (writes and syncs) completed: what waiters watch while they spin.
    let turnsEnded = Locked(0)
    var state: WriterState
    private var timer: DispatchSourceTimer?

    struct Pending {
        var lsn: UInt64
        var stored: [UInt8]
        var flags: RecordFlags
        var type: RecordType
    }

    struct Waiter {
        var lsn: UInt64
        var durability: Durability
        var signal: Signal
    }

    /// A written batch that a `.full` commit waited for, not yet synced:
    /// `.buffered` commits are not acknowledged from here on until it is,
    /// so that a failed sync cuts back only unacknowledged records.
    struct UnsyncedBatch {
        var firstLSN: UInt64
        var offset: Int64
    }

    struct WriterState {
        var queue: [Pending] = []
        var nextLSN: UInt64
        /// Acknowledged for `.buffered`: written, and not behind an unsynced batch.
        var writtenLSN: UInt64
        /// The last LSN whose write has completed; what the next sync covers.
        var issuedLSN: UInt64
        var durableLSN: UInt64
        var writeOffset: Int64 = 0
        var allocatedEnd: Int64 = 0
        /// A thread holds the write turn.
        var writing = false
        /// A thread holds the sync turn (gathering, or the sync in flight).
        var syncing = false
        var unsynced: [UnsyncedBatch] = []
        var fullWaiters = 0
        var failure: LogError?
        /// Where a failure cut the file back to: a write in flight when it
        /// came cuts there again once it lands.
        var cutOffset: Int64?
        var statistics = LogWriterStatistics()
        /// The largest recent group, decaying by one a sync: how many
        /// `.full` commits a sync may expect to serve. Commits, not records:
        /// a burst of records nobody waits on (`.none`, `.buffered`) is no
        /// group, and must not make the lone committer after it wait for
        /// company at each of its next syncs.
        var recentGroup = 1
        /// How long the last sync took, in nanoseconds.
        var lastSyncNanoseconds = 0
        /// Threads in ``LogWriter/wait(for:durability:)``, each woken alone.
        var waiters: [Waiter] = []
        /// The log this one continues, until a sync of this log has synced it
        /// first: a sync here must never vouch for records the older file lost.
        var predecessor: LogWriter?
        /// The nonces records are sealed with: a salt of this writer's own,
        /// drawn when it starts, and a counter. Taken out by the write turn
        /// and put back before it ends, under the lock both times.
        var nonces = NonceSequence()
    }

    /// Creates a new log file, writes its header, and makes file and directory
    /// entry durable before returning.
    ///
    /// With `cipher`, the log is encrypted: a v4 header names the cipher and
    /// key id, and every record is sealed.
    ///
    /// - Throws: ``StorageError`` (`.exists` when the file is already there).
    public static func create(
        fileSystem: any FileSystem, path: String, generation: UInt64, firstLSN: UInt64,
        options: LogWriterOptions = LogWriterOptions(), cipher: (any PayloadCipher)? = nil
    ) throws -> LogWriter {
        let prepared = try PreparedLog(fileSystem: fileSystem, path: path, generation: generation, options: options, cipher: cipher)
        let writer = try prepared.start(firstLSN: firstLSN, predecessor: nil)
        do {
            try writer.file.sync(.durable)
        } catch {
            writer.close()
            throw error
        }
        return writer
    }

    /// Creates a log that holds `payloads` from its first record on, and
    /// gives it its name only once every one of them is durable: the file is
    /// written under `path` + ".tmp", synced, renamed to `path`, and the
    /// directory synced. A crash before the rename leaves a temporary file,
    /// which open removes; after it, the whole log.
    ///
    /// Recovery writes an unproven tail again this way. A log that starts at
    /// an LSN earlier logs hold supersedes them from there on, so it must
    /// never be seen half written: that would hide records they hold.
    ///
    /// - Throws: ``StorageError``, ``LogError``; the temporary file may remain.
    public static func createHolding(
        _ payloads: [(type: RecordType, payload: [UInt8])], fileSystem: any FileSystem, path: String,
        generation: UInt64, firstLSN: UInt64, options: LogWriterOptions = LogWriterOptions(),
        cipher: (any PayloadCipher)? = nil
    ) throws -> LogWriter {
        let temporary = path + StoreDirectory.temporarySuffix
        let prepared = try PreparedLog(
            fileSystem: fileSystem, path: temporary, generation: generation, options: options, syncingDirectory: false,
            cipher: cipher)
        let writer = try prepared.start(firstLSN: firstLSN, predecessor: nil, naming: path)
        do {
            for record in payloads { _ = try writer.enqueue(record.payload, type: record.type) }
            try writer.flush()
            // The flush asked only for the commits' need; this log supersedes
            // older ones from its first LSN on, so it must be durable, not
            // merely ordered, before it gets its name.
            if payloads.isEmpty || options.commitSyncNeed != .durable { try writer.file.sync(.durable) }
            try fileSystem.rename(temporary, to: path)
            try fileSystem.syncDirectory(at: parentDirectory(of: path))
        } catch {
            writer.close()
            throw error
        }
        return writer
    }

    init(
        file: any StoredFile, path: String, header: LogFileHeader, options: LogWriterOptions, predecessor: LogWriter?,
        cipher: (any PayloadCipher)? = nil
    ) {
        precondition(header.encryption == cipher?.encryption, "a log's header names the cipher that seals its records")
        self.file = file
        self.path = path
        self.header = header
        self.options = options
        self.cipher = cipher
        seed = RecordFrame.seed(generation: header.generation)
        // Until the predecessor is synced, nothing before this log is known durable.
        let durable = predecessor?.durableLSN ?? header.firstLSN - 1
        state = WriterState(
            nextLSN: header.firstLSN, writtenLSN: header.firstLSN - 1, issuedLSN: header.firstLSN - 1, durableLSN: durable)
        state.predecessor = predecessor
        state.writeOffset = Int64(header.size)
        state.allocatedEnd = max(min(options.preallocationChunk, Self.initialPreallocation), Int64(header.size))
        startBackgroundSync()
    }

    deinit { timer?.cancel() }

    /// Appends one record and returns its LSN once it is as durable as asked.
    ///
    /// Thread-safe. - Throws: ``LogError/recordTooLarge(size:)`` or
    /// ``LogError/lsnsExhausted(file:)`` (nothing changed), ``LogError/writerFailed(cause:)`` (the record may or may not
    /// be in the file; it will not be replayed as acknowledged unless a later
    /// sync covered it).
    @discardableResult
    public func append(_ payload: [UInt8], type: RecordType = .transaction, durability: Durability) throws(LogError) -> UInt64 {
        let lsn = try enqueue(payload, type: type)
        try wait(for: lsn, durability: durability)
        return lsn
    }

    /// Queues one record and returns its LSN without waiting for any I/O.
    /// LSNs follow the order of `enqueue` calls. Pair with ``wait(for:durability:)``.
    /// - Throws: as ``append(_:type:durability:)`` does before it waits.
    public func enqueue(_ payload: [UInt8], type: RecordType = .transaction) throws(LogError) -> UInt64 {
        // Refused before it is compressed for nothing.
        guard payload.count <= LogFormat.maxPayloadSize else { throw .recordTooLarge(size: payload.count) }
        return try enqueue(PreparedRecord(payload, compress: options.compression), type: type)
    }

    /// ``enqueue(_:type:)`` for a payload whose stored form was made ahead,
    /// on any thread: the log stores exactly what it would have made of the
    /// payload. A record prepared for the other compression setting is
    /// made again here.
    public func enqueue(_ record: PreparedRecord, type: RecordType = .transaction) throws(LogError) -> UInt64 {
        guard record.payloadCount <= LogFormat.maxPayloadSize else { throw .recordTooLarge(size: record.payloadCount) }
        let (stored, flags) = record.compress == options.compression
            ? (record.stored, record.flags) : RecordFrame.store(record.payload, compress: options.compression)
        return try lock.withLock { () throws(LogError) -> UInt64 in
            if let failure = state.failure { throw failure }
            let lsn = state.nextLSN
            guard lsn <= LogFormat.maxLSN else { throw .lsnsExhausted(file: path) }
            state.nextLSN += 1
            state.queue.append(Pending(lsn: lsn, stored: stored, flags: flags, type: type))
            return lsn
        }
    }

    /// Makes every record appended before this call durable.
    /// - Throws: ``LogError/writerFailed(cause:)`` if the sync fails.
    public func flush() throws(LogError) {
        let last = lock.withLock { state.nextLSN - 1 }
        try wait(for: last, durability: .full)
    }

    /// The highest LSN known durable.
    public var durableLSN: UInt64 { lock.withLock { state.durableLSN } }
    /// The highest LSN a `.buffered` commit is acknowledged up to: written
    /// to the operating system, and not in or after a batch still waiting
    /// for a `.full` commit's sync (which could yet be cut back).
    public var writtenLSN: UInt64 { lock.withLock { state.writtenLSN } }
    /// The LSN the next record will get.
    public var nextLSN: UInt64 { lock.withLock { state.nextLSN } }
    /// Where the next batch will be written: the end of the records.
    public var endOffset: Int64 { lock.withLock { state.writeOffset } }
    public var statistics: LogWriterStatistics { lock.withLock { state.statistics } }
    /// The error that poisoned the writer, if one did.
    public var failure: LogError? { lock.withLock { state.failure } }

    /// Stops the writer: waiting commits fail with ``LogError/writerClosed``
    /// and the file is closed. Records not yet synced stay as durable as the
    /// operating system makes them. Call ``flush()`` first to keep them.
    public func close() {
        timer?.cancel()
        let end: Int64? = lock.withLock {
            let healthy = state.failure == nil
            if healthy { state.failure = .writerClosed }
            while state.writing || state.syncing { lock.wait() }
            lock.broadcast()
            return healthy && state.cutOffset == nil ? state.writeOffset : nil
        }
        // Give back the preallocated zeros. Not synced: a crash leaves the
        // old or the new size, and readers end at the zeros either way.
        if let end { try? file.truncate(to: end) }
        file.close()
    }

    /// The first preallocated extent of a new log; later ones double up to
    /// ``LogWriterOptions/preallocationChunk``.
    static let initialPreallocation: Int64 = 64 << 10

    private func startBackgroundSync() {
        guard let interval = options.backgroundSyncInterval else { return }
        let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "lensdb.log.sync"))
        let nanoseconds = Int(interval.components.seconds * 1_000_000_000 + interval.components.attoseconds / 1_000_000_000)
        source.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds))
        source.setEventHandler { [weak self] in self?.syncBuffered() }
        source.resume()
        timer = source
    }

    /// The background interval's work: sync what `.buffered` commits wrote.
    private func syncBuffered() {
        let target: UInt64? = lock.withLock {
            let behind = state.failure == nil && state.issuedLSN > state.durableLSN && !state.writing && !state.syncing
            return behind ? state.issuedLSN : nil
        }
        guard let target else { return }
        // A failure here poisons the writer, and the next commit reports it;
        // the timer has no caller to tell.
        try? wait(for: target, durability: .full)
    }
}

/// The directory part of `path` ("." when there is none).
public func parentDirectory(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}

/// A record's payload in the form the log stores it (compressed when asked
/// and smaller), made before it is queued: a writer holding the store's
/// lock can have it made on another core while it does other work. Only
/// the stored form is kept: a compressed record takes its compressed size.
public struct PreparedRecord: Sendable {
    let compress: Bool
    let stored: [UInt8]
    let flags: RecordFlags
    /// The payload's length.
    public let payloadCount: Int

    /// Compresses `payload` when `compress` is set and that saves space,
    /// as ``LogWriter/enqueue(_:type:)`` does.
    public init(_ payload: [UInt8], compress: Bool) {
        self.compress = compress
        payloadCount = payload.count
        (stored, flags) = RecordFrame.store(payload, compress: compress)
    }

    /// The payload, as it was given: decompressed again when stored
    /// compressed, so only for the rare record that needs it back.
    public var payload: [UInt8] {
        guard flags.contains(.lz4) else { return stored }
        guard case let .payload(payload) = stored.withUnsafeBytes({ RecordFrame.unstored($0, flags: flags) }) else {
            preconditionFailure("a block this process compressed does not decompress")
        }
        return payload
    }
}

/// A log file created and made durable, without its header yet: the slow part
/// of switching logs, done before the writers are held.
public struct PreparedLog: Sendable {
    let file: any StoredFile
    let generation: UInt64
    let options: LogWriterOptions
    let cipher: (any PayloadCipher)?

    /// Creates the file, preallocates it, and syncs it and (unless
    /// `syncingDirectory` is false, for a file renamed into place later)
    /// its directory entry. With `cipher`, the log will be encrypted.
    /// - Throws: ``StorageError`` (`.exists` when the file is already there).
    public init(
        fileSystem: any FileSystem, path: String, generation: UInt64, options: LogWriterOptions,
        syncingDirectory: Bool = true, cipher: (any PayloadCipher)? = nil
    ) throws {
        file = try fileSystem.openFile(at: path, mode: .createNew)
        do {
            if options.preallocationChunk > 0 {
                try file.preallocate(at: 0, length: min(options.preallocationChunk, LogWriter.initialPreallocation))
            }
            try file.sync(.durableWithMetadata)
            if syncingDirectory { try fileSystem.syncDirectory(at: parentDirectory(of: path)) }
        } catch {
            file.close()
            throw error
        }
        self.generation = generation
        self.options = options
        self.cipher = cipher
    }

    /// Writes the header (not synced: the writer's first sync covers it) and
    /// returns a writer whose first sync syncs `predecessor` before itself.
    /// Cheap: one write to the page cache. `path` names the log in errors
    /// when it will be renamed (default: where it was created).
    public func start(firstLSN: UInt64, predecessor: LogWriter?, naming path: String? = nil) throws -> LogWriter {
        let header = LogFileHeader(generation: generation, firstLSN: firstLSN, encryption: cipher?.encryption)
        try file.write(header.encoded(), at: 0)
        return LogWriter(
            file: file, path: path ?? file.path, header: header, options: options, predecessor: predecessor, cipher: cipher)
    }

    /// Closes the file without using it.
    public func discard() { file.close() }
}
