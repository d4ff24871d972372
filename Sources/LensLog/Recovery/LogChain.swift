/// Recovery over a store directory: chooses the snapshot, then replays the
/// chain of logs after it. Shared by `Store` open, `logtool` and the fuzzer,
/// and free of the program's types: state arrives as raw items and records.
public struct LogChain {
    public let directory: StoreDirectory
    public let policy: RecoveryPolicy
    /// Whether damaged snapshots are renamed aside (false for read-only opens).
    public let setAsideDamaged: Bool
    /// What the store's `CLOSED` marker says, read before recovery; nil
    /// when there is none. Every record through its LSN was durable, so a
    /// chain that ends sooner lost them (``RecoveryError/lostAfterCleanClose(file:offset:firstLostLSN:closedLSN:reason:)``).
    public var cleanClose: CleanClose?
    /// The store's key; nil for a plain store. Every file the chain reads —
    /// the snapshot it starts from and each log it replays — must fit it
    /// (``EncryptionError``), so a store is read under one key or none,
    /// never half. Files it does not read (older snapshots, logs a
    /// snapshot covers or a later log supersedes) are not asked.
    public var cipher: (any PayloadCipher)?

    /// The bytes each log reader holds at once (``LogReader/defaultWindowSize``).
    let windowSize: Int

    public init(
        directory: StoreDirectory, policy: RecoveryPolicy, setAsideDamaged: Bool, cleanClose: CleanClose? = nil,
        cipher: (any PayloadCipher)? = nil
    ) {
        self.init(directory: directory, policy: policy, setAsideDamaged: setAsideDamaged, windowSize: LogReader.defaultWindowSize)
        self.cleanClose = cleanClose
        self.cipher = cipher
    }

    /// As ``init(directory:policy:setAsideDamaged:cleanClose:cipher:)``, reading logs through
    /// windows of `windowSize` bytes: tests make it small.
    @_spi(Testing)
    public init(
        directory: StoreDirectory, policy: RecoveryPolicy, setAsideDamaged: Bool, windowSize: Int, cipher: (any PayloadCipher)? = nil
    ) {
        self.directory = directory
        self.policy = policy
        self.setAsideDamaged = setAsideDamaged
        self.windowSize = windowSize
        self.cipher = cipher
    }

    /// Loads the newest usable snapshot through `loadSnapshot` (which must
    /// replace any state a failed earlier attempt built), then passes every
    /// record after it to `apply`, in LSN order. Then, and only when all
    /// that succeeded, sets aside (with `setAsideDamaged`) the damaged
    /// snapshots it passed over.
    ///
    /// - Throws: ``LogError`` (strict corruption, bad header of a synced log,
    ///   ``LogError/encryption(_:)`` for a log the key does not fit),
    ///   ``EncryptionError`` for a snapshot it does not fit,
    ///   ``RecoveryError``, ``StorageError``, or what the closures throw.
    public func recover(
        listing: StoreDirectory.Listing,
        loadSnapshot: (SnapshotFile) throws -> Void,
        apply: (LogRecord, _ file: String) throws -> Void
    ) throws -> RecoveryReport {
        var report = RecoveryReport()
        let base = try chooseSnapshot(listing: listing, report: &report, load: loadSnapshot)
        try replayLogs(listing: listing, after: base, into: &report, apply: apply)
        // Only now: a recovery that fails renames nothing, and the next
        // open, or `logtool repair`, finds every file as it was.
        try setAsideDamagedSnapshots(&report)
        return report
    }

    /// Replays the logs that continue `base` (all logs when nil), as
    /// ``recover(listing:loadSnapshot:apply:)`` does after choosing it.
    /// `logtool repair` calls this with a snapshot it salvaged chunk by chunk.
    ///
    /// Two rules make every open judge the same files alike (the log format
    /// article, "Logs written again"):
    /// - a log that a later log supersedes entirely is never read, not even
    ///   as proof; a log superseded in part is read only up to the later
    ///   log's first LSN;
    /// - only records a reader accepts in order count as proof: leftovers
    ///   past a torn point prove nothing;
    /// - a clean close (``cleanClose``) proves every LSN through its own:
    ///   a log that ends before it, torn or cleanly, is damage, not a crash.
    public func replayLogs(
        listing: StoreDirectory.Listing, after base: SnapshotSummary?, into report: inout RecoveryReport,
        apply: (LogRecord, _ file: String) throws -> Void
    ) throws {
        report.provenLSN = base?.lastLSN ?? 0
        var expected = (base?.lastLSN ?? 0) + 1
        let generation = base?.generation ?? 0
        let closedLSN = cleanClose?.lastLSN ?? 0
        report.obsoleteLogs = listing.logs.filter { $0.generation < generation }.map(\.path)
        let logs = listing.logs.filter { $0.generation >= generation }
        let starts = try logs.map { try firstLSN(of: $0.path) }
        var end: (file: String, offset: Int64)?
        for (index, log) in logs.enumerated() {
            // A later log that starts at or before an LSN this one holds was
            // started by an open that logged an unproven tail again (or by
            // the first write after a torn point): from there on, the later
            // log is the record of what happened.
            let cap = starts[(index + 1)...].compactMap { $0 }.min()
            if let cap, cap <= starts[index] ?? expected {
                report.supersededLogs.append(log.path)
                continue
            }
            // What the clean close proves of this log: LSNs past a later
            // log's start are that log's to prove.
            let durableThrough = min(closedLSN, (cap ?? .max) - 1)
            let file = try directory.fileSystem.openFile(at: log.path, mode: .readOnly)
            defer { file.close() }
            guard var reader = try openReader(file, log, expected: expected, durableThrough: durableThrough, report: &report) else { continue }
            reader.durableThrough = durableThrough
            let first = reader.header.firstLSN
            // Salvage reads a log that starts before `expected` past the
            // LSNs the chain holds already (``openReader``).
            let held = expected
            var capped = false
            while let record = try Self.next(&reader) {
                if let cap, record.lsn >= cap {
                    capped = true
                    break
                }
                if record.lsn < held { continue }
                try apply(record, log.path)
                report.recordsReplayed += 1
                report.provenLSN = max(report.provenLSN, record.syncedLSN)
            }
            // Damage among copies of LSNs the chain holds loses nothing.
            report.dropped += reader.dropped.filter { $0.lostLSNs.upperBound > held }.map { range in
                var range = range
                range.lostLSNs = max(range.lostLSNs.lowerBound, held)..<range.lostLSNs.upperBound
                return DroppedLogRange(file: log.path, range: range)
            }
            let next = max(held, reader.nextLSN)
            if !capped, case let .tornTail(offset, bytes, reason)? = reader.end {
                let torn = TornTail(file: log.path, offset: offset, bytesDropped: bytes, reason: reason)
                if next <= durableThrough {
                    try lostAfterCleanClose(torn, firstLost: next, isLastLog: cap == nil, into: &report)
                } else {
                    report.tornTails.append(torn)
                }
            }
            report.logBytes += reader.endOfRecords
            expected = max(held, capped ? cap! : next)
            report.logsRead.append(ReplayedLog(path: log.path, firstLSN: first, lastLSN: expected - 1))
            end = (log.path, reader.endOfRecords)
        }
        report.lastLSN = expected - 1
        if closedLSN > report.lastLSN, !report.dropped.contains(where: { $0.range.lostLSNs.upperBound > closedLSN }) {
            let place = end ?? (logs.last?.path ?? directory.path, 0)
            let missing = TornTail(file: place.file, offset: place.offset, bytesDropped: 0, reason: .endsBeforeCleanClose)
            try lostAfterCleanClose(missing, firstLost: expected, isLastLog: true, into: &report)
        }
        // The close proves what it covers, but where salvage dropped records
        // only the close proves lost, nothing on disk proves the ones kept
        // after them once the marker is gone: its proof ends with that drop,
        // and the open writes the rest again (``RecoveryReport/provenLSN``).
        let closeProof = report.dropped.filter { $0.range.proof == .cleanClose }
            .map { $0.range.lostLSNs.upperBound - 1 }.min().map { min($0, closedLSN) } ?? closedLSN
        report.provenLSN = max(report.provenLSN, min(closeProof, report.lastLSN))
    }

    /// Damage where a clean close proves records were durable, shaped like a
    /// torn tail: `.strict` stops; `.salvage` reports the LSNs lost. Where a
    /// later log follows, its start reports the gap instead (``openReader``).
    private func lostAfterCleanClose(_ damage: TornTail, firstLost: UInt64, isLastLog: Bool, into report: inout RecoveryReport) throws {
        let closedLSN = cleanClose?.lastLSN ?? 0
        guard policy == .salvage else {
            throw RecoveryError.lostAfterCleanClose(
                file: damage.file, offset: damage.offset, firstLostLSN: firstLost, closedLSN: closedLSN,
                reason: damage.reason ?? .endsBeforeCleanClose)
        }
        guard isLastLog else { return }
        report.dropped.append(DroppedLogRange(file: damage.file, range: DroppedRange(
            offset: damage.offset, length: damage.bytesDropped, lostLSNs: firstLost..<(closedLSN + 1),
            reason: damage.reason ?? .endsBeforeCleanClose, proof: .cleanClose)))
    }

    /// A reader positioned at the first record of `log`, or nil when the file
    /// holds nothing that continues the chain (reported as cut while new or orphaned).
    private func openReader(
        _ file: any StoredFile, _ log: (generation: UInt64, path: String), expected: UInt64, durableThrough: UInt64,
        report: inout RecoveryReport
    ) throws -> LogReader? {
        // A clean close through `expected` proves the LSNs this log should start with were durable.
        let closeProves = expected <= durableThrough
        let reader: LogReader
        do {
            reader = try LogReader(file: file, path: log.path, policy: policy, windowSize: windowSize, cipher: cipher)
        } catch let error as LogError where error.isNewerOrOtherKey {
            // A header that verifies and names another key (or none), or that
            // a newer LensDB wrote, is not damage: nothing is cut, read past
            // or removed for it.
            throw error
        } catch let error as LogError {
            // A log's header becomes durable with its first sync, so a bad
            // header with no record vouching for it is a log cut while new.
            // Its records are judged as the chain's key would seal them.
            let assumed = LogFileHeader(generation: log.generation, firstLSN: expected, encryption: cipher?.encryption)
            let salvaged = try LogReader(
                file: file, path: log.path, policy: policy, assumedHeader: assumed, windowSize: windowSize, cipher: cipher)
            guard try closeProves || Self.unwrappingReads({ () throws(LogError) in try salvaged.vouches(for: expected) }) else {
                // Counted in the file as it is, without the assumed header.
                let nonZero = try LogReader.nonZeroByteCount(file: file, path: log.path, windowSize: windowSize)
                report.tornTails.append(TornTail(file: log.path, offset: 0, bytesDropped: Int64(nonZero), reason: nil))
                report.logsCutWhileNew.append(log.path)
                return nil
            }
            guard policy == .salvage else { throw error }
            return salvaged
        }
        let first = reader.header.firstLSN
        if first == expected { return reader }
        // A gap: the log was started after a torn point that the chain no
        // longer reaches. Only proof makes that corruption.
        let vouched = try Self.unwrappingReads { () throws(LogError) in try reader.vouches(for: expected) }
        guard vouched || closeProves else {
            report.orphanedLogs.append(log.path)
            return nil
        }
        guard policy == .salvage else {
            throw RecoveryError.missingRecords(file: log.path, expectedLSN: expected, firstLSN: first)
        }
        if first < expected {
            // Starting early, the log holds again LSNs the chain has: its
            // copies of them are skipped (``replayLogs``), nothing is lost.
            report.skippedCopies.append(DroppedLogRange(file: log.path, range: DroppedRange(
                offset: 0, length: 0, lostLSNs: first..<expected, reason: .lsnOutOfSequence)))
        } else {
            report.dropped.append(DroppedLogRange(file: log.path, range: DroppedRange(
                offset: 0, length: 0, lostLSNs: expected..<first, reason: .lsnOutOfSequence, proof: vouched ? .laterRecord : .cleanClose)))
        }
        return reader
    }

    /// The first LSN of a log whose header verifies; nil for a log cut while new.
    public func firstLSN(of path: String) throws -> UInt64? {
        let file = try directory.fileSystem.openFile(at: path, mode: .readOnly)
        defer { file.close() }
        let head = try file.read(at: 0, count: LogFormat.maxFileHeaderSize)
        // A header that does not verify starts nothing: its log is judged by openReader.
        return try? head.withUnsafeBytes { try LogFileHeader(decoding: $0, file: path) }.firstLSN
    }

    /// The next record; a failed read surfaces as the ``StorageError`` it
    /// is, as it did when a log was read whole.
    private static func next(_ reader: inout LogReader) throws -> LogRecord? {
        try unwrappingReads { () throws(LogError) in try reader.next() }
    }

    private static func unwrappingReads<T>(_ body: () throws(LogError) -> T) throws -> T {
        do {
            return try body()
        } catch .readFailed(_, let cause) {
            throw cause
        }
    }
}
