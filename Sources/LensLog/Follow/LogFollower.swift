/// Follows a store's chain of logs while another process writes and compacts
/// it, and hands on each transaction record once the store has proven it
/// durable: every LSN once, in order, across log swaps, compactions and
/// reopens. The engine of `logtool dump --follow`.
///
/// Takes no lock and changes no file (promise 7); its one effect on the
/// store is a sync of the log it reads, when a record waits for proof (see
/// "Committed means durable" below).
///
/// ## Committed means durable
/// A record that verifies in a log has been *written*, not necessarily
/// *committed*: a `.full` commit is acknowledged only after its sync, and
/// a write or sync that fails leaves records the program was told failed
/// (the writer then cuts them off), while a power cut loses whatever was
/// not synced — and the reopened store gives those LSNs to other
/// transactions. An export that printed such a record would hold a
/// transaction the store never kept. So a record is handed on only once it
/// is proven durable, by any of:
/// - a later record whose synced LSN covers it (every record carries the
///   highest LSN its writer knew durable);
/// - a snapshot whose last LSN covers it (a compaction syncs the old log
///   before it writes the snapshot);
/// - the `CLOSED` marker, present after the records were read (a clean close
///   flushed every record first);
/// - the follower's own sync of the log, once the record has waited one poll
///   for the proofs above. That sync proves only records written after the
///   follower opened the file: a failed writeback the writer had already
///   been told of before the open would go unreported to the follower.
///
/// Consequence after a crash: everything handed on is in the store the
/// next open recovers, so an export resumed from its last LSN + 1 is exact.
/// Records the writer had written but not synced are handed on only if a
/// proof arrives: after a process crash the next open writes them again
/// with the same LSNs and payloads (and its next commit proves them); after
/// a power cut they may be lost, and then they were never handed on.
///
/// Not thread-safe: one caller polls.
public struct LogFollower {
    public let directory: StoreDirectory
    /// The store's key; nil for a plain store.
    public let cipher: (any PayloadCipher)?
    /// The snapshot following started from, if any; LSNs up to its last are not in the logs.
    public private(set) var base: SnapshotSummary?

    /// The log being read.
    var current: LogTail?
    /// Logs of a later generation, opened as soon as they are listed (ascending generation).
    var later: [LogTail] = []
    /// The LSN the next log must hold when no log is being read yet.
    var expectedLSN: UInt64
    /// The last LSN read in order (handed on or pending).
    public private(set) var readLSN: UInt64
    /// The last LSN handed on.
    public private(set) var deliveredLSN: UInt64
    /// Records read but not yet proven durable, in LSN order from `deliveredLSN + 1`.
    var pending: [Pending] = []
    /// The highest generation of a log listed so far: later ones are new.
    var seenGeneration: UInt64 = 0
    var proof = Proof()
    /// Polls so far: a record read in an earlier poll than this one has waited a whole interval.
    var polls = 0
    /// Where the current log stopped in the last poll, and the last stop
    /// read whole and judged not to be corruption.
    var previousStop: StopPoint?
    var judgedStop: StopPoint?

    /// A record handed on, with the file it was read from.
    public struct FollowedRecord: Sendable, Equatable {
        public var record: LogRecord
        public var file: String
    }

    struct Pending {
        var followed: FollowedRecord
        var poll: Int
        var lsn: UInt64 { followed.record.lsn }
    }

    struct StopPoint: Equatable {
        var path: String
        var offset: Int64
    }

    /// Starts at the newest snapshot that verifies and whose log exists, as
    /// open chooses it, and passes it to `loadSnapshot` (called again, with
    /// the snapshot then newest, when a compaction removes files during the
    /// start: replace what an earlier call built). Opens every log of its
    /// generation and later at once, so that a compaction cannot delete one
    /// before it is read.
    /// - Throws: ``StorageError``, ``RecoveryError`` (no snapshot the logs
    ///   continue), or what `loadSnapshot` throws.
    ///
    /// `cipher` is the store's key (nil for a plain store): every file read
    /// must fit it, and a follower stops with ``LogError/encryption(_:)`` at
    /// a log that a key change wrote under another key.
    public init(directory: StoreDirectory, cipher: (any PayloadCipher)? = nil, loadSnapshot: (SnapshotFile) throws -> Void) throws {
        self.directory = directory
        self.cipher = cipher
        for attempt in 1... {
            do {
                let (base, logs, seen) = try Self.start(directory, cipher, loadSnapshot)
                self.base = base
                later = logs
                seenGeneration = seen
                break
            } catch let error as StorageError where error.code == .notFound && attempt < Self.startAttempts {
                continue  // a compaction removed a file between the listing and its read
            }
        }
        expectedLSN = (base?.lastLSN ?? 0) + 1
        readLSN = expectedLSN - 1
        deliveredLSN = readLSN
        proof.writer = readLSN
    }

    static let startAttempts = 8

    private static func start(
        _ directory: StoreDirectory, _ cipher: (any PayloadCipher)?, _ loadSnapshot: (SnapshotFile) throws -> Void
    ) throws -> (SnapshotSummary?, [LogTail], seen: UInt64) {
        let listing = try directory.list()
        var tails = try listing.logs.map { log in
            var tail = LogTail(
                path: log.path, generation: log.generation,
                file: try directory.fileSystem.openFile(at: log.path, mode: .readOnly), cipher: cipher)
            tail.prime()
            return tail
        }
        do {
            var report = RecoveryReport()
            let chain = LogChain(directory: directory, policy: .salvage, setAsideDamaged: false, cipher: cipher)
            let base = try chain.chooseSnapshot(listing: listing, report: &report, load: loadSnapshot)
            let older = tails.filter { $0.generation < (base?.generation ?? 0) }
            older.forEach { $0.file.close() }
            tails.removeAll { $0.generation < (base?.generation ?? 0) }
            return (base, tails, listing.logs.last?.generation ?? 0)
        } catch {
            tails.forEach { $0.file.close() }
            throw error
        }
    }

    /// The highest LSN read so far that is proven durable.
    public var provenLSN: UInt64 { min(proof.lsn, readLSN) }

    /// Reads what the logs gained since the last poll and returns the
    /// records proven durable since, in LSN order, each once.
    /// - Throws: ``FollowError`` (fell behind a compaction, corruption, a
    ///   record handed on that the store no longer holds), ``StorageError``,
    ///   ``LogError/unsupportedRecord(file:offset:lsn:reason:)``; and,
    ///   once every record read is handed on and the chain goes on only in
    ///   a log a newer LensDB wrote, that log's
    ///   ``LogError/unsupportedVersion(file:version:)`` or
    ///   ``LogError/unsupportedCipher(file:cipher:)``.
    public mutating func poll() throws -> [FollowedRecord] {
        polls += 1
        let listing = try directory.list()
        openNewLogs(listing)
        try readAvailable()
        try judgeStop()
        proveFromSnapshots(listing)
        try checkNotBehind()
        // After the reads: a marker seen now vouches for every record read before.
        if directory.fileSystem.fileExists(at: directory.closedMarkerPath) { proof.writer = max(proof.writer, readLSN) }
        proveBySyncingQuietTail()
        let delivered = deliverProven()
        proof.forgetOwnChecksums()
        // Once every record read is handed on: `readAvailable` stopped where
        // no log this LensDB reads continues the chain, and a newer
        // LensDB's log may be what does.
        if delivered.isEmpty, pending.isEmpty, let newer = later.lazy.compactMap(\.newerFormat).first { throw newer }
        return delivered
    }

    /// Closes every file the follower holds open.
    public func close() {
        current?.file.close()
        later.forEach { $0.file.close() }
    }

    /// Opens the logs listed for the first time. A log gone before it is
    /// opened was removed by an open (orphaned, cut while new) or compacted
    /// away; ``checkNotBehind()`` tells the second case.
    private mutating func openNewLogs(_ listing: StoreDirectory.Listing) {
        for log in listing.logs where log.generation > seenGeneration {
            seenGeneration = log.generation
            // A log removed between the listing and here holds nothing the chain still needs, or it fell behind: see above.
            guard let file = try? directory.fileSystem.openFile(at: log.path, mode: .readOnly) else { continue }
            var tail = LogTail(path: log.path, generation: log.generation, file: file, cipher: cipher)
            tail.prime()
            later.append(tail)
        }
        later.sort { $0.generation < $1.generation }
    }

    /// Reads the current log to its end, moving on to the next log of the
    /// chain whenever one continues it, until none does.
    private mutating func readAvailable() throws {
        while true {
            if var tail = current {
                let records = try tail.read()
                current = tail
                for record in records { try accept(record, from: tail.path) }
                if case .cutBack(let size) = tail.stop { try cutBack(to: size) }
            }
            guard let next = continuation() else { return }
            switchTo(next)
        }
    }

    /// The log that continues the chain where the current one stands: the
    /// oldest later log whose first LSN is at or before the next LSN the
    /// current log would hold, unless an even later log starts at or before
    /// its first LSN (then it is superseded entirely: the open that wrote
    /// records again after a crash starts a log so). The rules are open's
    /// (`LogChain`, the log format article, "Logs written again").
    mutating func continuation() -> Int? {
        let position = current.map { $0.nextLSN } ?? expectedLSN
        let known = later.indices.filter { later[$0].readHeader() }
        for index in known {
            guard let first = later[index].header?.firstLSN, first <= position else { continue }
            let superseded = known.contains { other in
                later[other].generation > later[index].generation && later[other].header!.firstLSN <= first
            }
            if !superseded { return index }
        }
        return nil
    }

    /// Makes `later[index]` the current log. Records pending from `first` on
    /// are read again from it; records handed on that it holds again are
    /// checked and skipped. Older logs are closed: the chain never goes back.
    private mutating func switchTo(_ index: Int) {
        let next = later.remove(at: index)
        let first = next.header!.firstLSN
        pending.removeAll { $0.lsn >= first }
        readLSN = max(deliveredLSN, min(readLSN, first - 1))
        current?.file.close()
        later.filter { $0.generation < next.generation }.forEach { $0.file.close() }
        later.removeAll { $0.generation < next.generation }
        current = next
    }

    /// Takes one record read in order from the current log.
    private mutating func accept(_ record: LogRecord, from file: String) throws {
        proof.writer = max(proof.writer, record.syncedLSN)
        guard record.lsn > readLSN else {
            // Written again by an open after a crash: the same transaction, or the store lost one handed on.
            if let sum = proof.ownlyProven[record.lsn], sum != CRC32C.checksum(record.payload) {
                throw FollowError.diverged(lsn: record.lsn, file: file)
            }
            return
        }
        precondition(record.lsn == readLSN + 1, "log tail skipped from \(readLSN) to \(record.lsn)")
        pending.append(Pending(followed: FollowedRecord(record: record, file: file), poll: polls))
        readLSN = record.lsn
    }

    /// The current log is shorter than the records read from it: its writer
    /// cut off a batch whose write or sync failed. Pending records there are
    /// forgotten and read again if they come back; a record handed on that
    /// was cut is an error.
    private mutating func cutBack(to size: Int64) throws {
        guard var tail = current else { return }
        let cut = pending.firstIndex { $0.followed.file == tail.path && $0.followed.record.offset + Int64($0.followed.record.frameSize) > size }
        guard let cut, pending[cut].followed.record.offset <= size else {
            throw FollowError.diverged(lsn: deliveredLSN, file: tail.path)
        }
        tail.rewind(to: pending[cut].followed.record.offset, lsn: pending[cut].lsn)
        current = tail
        readLSN = pending[cut].lsn - 1
        pending.removeSubrange(cut...)
    }

    /// Hands on the pending records the proofs cover, in order.
    private mutating func deliverProven() -> [FollowedRecord] {
        let proven = provenLSN
        let end = pending.prefix { $0.lsn <= proven }.count
        guard end > 0 else { return [] }
        let delivered = pending[..<end].map(\.followed)
        pending.removeSubrange(..<end)
        for followed in delivered where followed.record.lsn > proof.writer {
            proof.ownlyProven[followed.record.lsn] = CRC32C.checksum(followed.record.payload)
        }
        deliveredLSN = delivered.last!.record.lsn
        return delivered
    }
}
