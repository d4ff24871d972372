import Dispatch
import LensLog

extension Store {
    /// Runs `body` on a transaction and commits its changes atomically: all
    /// or nothing, logged as one record.
    ///
    /// Serialized with every other writer. If `body` throws, nothing changes
    /// and the error is rethrown. Returns when the commit is as durable as
    /// `durability` (``write(_:)`` takes the store's).
    ///
    /// `body` must make its changes on the transaction it is given: a
    /// `write`, ``flush()`` or ``compact()`` of this store called from inside
    /// it throws ``StoreError/reentrantWrite(path:)`` at once and changes
    /// nothing. The outer write goes on: if `body` lets the error out, the
    /// outer write throws it and commits nothing; if `body` catches it, the
    /// outer write commits what `body` did on its transaction. Writes to
    /// another store from inside `body` are allowed.
    ///
    /// - Throws: what `body` throws (nothing changed);
    ///   ``StoreError/reentrantWrite(path:)`` when called from inside a write
    ///   block of this store (nothing changed, the store goes on);
    ///   ``StoreError/readOnly(path:)``, ``StoreError/closed(path:)``;
    ///   `LogError.recordTooLarge` for a transaction larger than a record
    ///   holds, and `LogError.lsnsExhausted` when the store has given out
    ///   its last LSN (nothing written, the store goes on);
    ///   ``StoreError/failed(path:cause:)`` when the log write or sync fails —
    ///   this commit is then not acknowledged, every later write throws, and
    ///   reads keep serving the last acknowledged state.
    @inlinable @discardableResult
    public func write<T>(durability: Durability, _ body: (inout Transaction) throws -> T) throws -> T {
        // Compiled in the caller's module for its `T`, with `stage`, around
        // staging that is not generic: generic code the caller cannot
        // specialize asks the runtime for the metadata of `T?` and of each
        // tuple of `T` it handles, about 4,000 instructions a commit.
        let (result, commit) = try stage(body)
        try finish(commit, durability: durability)
        return result
    }

    /// ``write(durability:_:)`` as durable as the store's
    /// ``StoreOptions/durability``: the same contract.
    ///
    /// Two functions rather than an optional parameter, so that
    /// `write(durability: .none)` means `Durability.none` and not "the
    /// store's default".
    @inlinable @discardableResult
    public func write<T>(_ body: (inout Transaction) throws -> T) throws -> T {
        try write(durability: options.durability, body)
    }

    /// The half of a write that holds the writers' lock: runs `body` on the
    /// newest state and queues its record, without waiting for any I/O.
    /// The record's LSN is fixed here; ``finish(_:durability:)`` waits for it.
    @inlinable
    func stage<T>(_ body: (inout Transaction) throws -> T) throws -> (T, Commit) {
        var result: T?
        let commit = try stage { tx in
            result = try body(&tx)
            return nil
        }
        return (result!, commit)
    }

    /// ``write(durability:_:)`` for a transaction that may be logged as
    /// several records: `body` returns, beside its result, the operation
    /// lists to log in place of the transaction's own (nil: its own, as one
    /// record). Replayed in order from the transaction's base, they must
    /// give exactly its state. They are logged and published together, in
    /// one hold of the writers' lock: no other commit comes between them, and
    /// readers see the state before the first or after the last. A cut can
    /// still leave a prefix of them in the log (``MigrationJournal``).
    func write<T>(durability: Durability, records body: (inout Transaction) throws -> (T, [[Operation]]?)) throws -> T {
        var result: T?
        let commit = try stage { tx in
            let (value, split) = try body(&tx)
            result = value
            return split
        }
        try finish(commit, durability: durability)
        return result!
    }

    /// Runs `body` under the writers' lock and logs what it did: the
    /// operation lists it returns, each as a record, or (nil) the
    /// transaction's own as one.
    @usableFromInline
    func stage(_ body: (inout Transaction) throws -> [[Operation]]?) throws -> Commit {
        // Logged once the writers' lock is released: a log handler may be slow.
        var failedNow: StoreError?
        defer { if let failedNow { logFailStop(failedNow) } }
        // The writers' mutex knows its owner: a write from inside this
        // store's own write block fails here instead of waiting for itself.
        return try writer.whileLocked(reentry: StoreError.reentrantWrite(path: path ?? ":memory:")) { () throws -> Commit in
            var transaction = try writer.withLockOrHeld { side throws(StoreError) in
                try checkWritable(side)
                return Transaction(
                    base: side.head, store: ObjectIdentifier(self), recordCompression: directory == nil ? nil : options.compression == .lz4)
            }
            // The block runs outside any access to the writers' side, so
            // that what it calls back on this thread (`statistics`, a new
            // stream of this store) reads the side as the lock holder.
            var split = try body(&transaction)
            return try writer.withLockOrHeld { side throws -> Commit in
                // Handed over, not shared: the records made from it free
                // each operation list as it is encoded.
                try logTransaction(&transaction, split: split.take(), side: &side, failedNow: &failedNow)
            }
        }
    }

    /// `stage`'s second half, under the writers' lock: logs the
    /// transaction the block made and makes its version the head.
    private func logTransaction(
        _ transaction: inout Transaction, split: consuming [[Operation]]?, side: inout WriterSide, failedNow: inout StoreError?
    ) throws -> Commit {
        // An empty transaction still returns only once the state it read
        // is as durable as asked, so `.full` is a barrier either way.
        guard !transaction.isEmpty else { return Commit(state: side.head, log: side.log) }
        // The feed reads the operations after the record is made;
        // otherwise the record takes them, and frees each once written
        // (a record made ahead has its bytes already: its operations
        // are freed at the end of this block or, when many, by
        // `finish`, as below). No observer can be added while this
        // lock is held; one removed meanwhile only leaves the feed
        // operations nobody reads.
        let observed = commitFeed.isObserved
        let operationCount = transaction.operationCount, operationBytes = split == nil ? transaction.operationBytes : nil
        // A record a batch had made ahead, continued with what came after it.
        let madeAhead = split == nil ? Result { try transaction.recordOfEveryOperation() } : .success(nil)
        var records = split ?? [observed ? transaction.operations : transaction.takeOperations()]
        // Refused before a log is started or a record made: the
        // transaction fails, the store goes on.
        try Self.checkLSNs(
            records.count, after: side.head.lsn, log: side.log?.path ?? directory?.logPath(generation: side.generation) ?? ":memory:")
        var next = transaction.state
        next.lsn = side.head.lsn + UInt64(records.count)
        if side.log == nil, let directory { side.log = try startLog(in: directory, side: side) }
        if let log = side.log {
            var enqueued = 0
            do {
                for index in records.indices {
                    let lsn: UInt64
                    if index == 0, let record = try madeAhead.get() {
                        lsn = try log.enqueue(record)
                    } else {
                        let payload = observed
                            ? try TransactionFormat.encode(records[index], operationBytes: operationBytes)
                            : try TransactionFormat.encode(draining: &records[index], operationBytes: operationBytes)
                        lsn = try log.enqueue(payload)
                    }
                    enqueued += 1
                    let expected = side.head.lsn + UInt64(enqueued)
                    precondition(lsn == expected, "log LSN \(lsn) out of step with state LSN \(expected)")
                    // Each record but the last is written (not synced)
                    // before the next is made: only one is held in memory.
                    if enqueued < records.count { try log.wait(for: lsn, durability: .none) }
                }
            } catch {
                // A record that does not encode, or is too large, refused
                // before any I/O: this transaction fails, the store goes on.
                if enqueued == 0, Self.refusedBeforeIO(error) { throw error }
                // A failed log, or records before this one that may reach
                // it: the store stops, and the next open recovers.
                let failure = side.failure ?? .failed(path: path ?? ":memory:", after: error)
                if side.failure == nil { failedNow = failure }
                side.failure = failure
                throw failure
            }
        }
        // A record made ahead leaves the operations to free: a large
        // batch's tens of thousands of arrays, most made on the thread
        // that encoded them. Freed at the end of this block, in the
        // writers' lock, they took 3.3 ms of a commit of 10k updates;
        // they leave with the commit, whose `finish` hands them to the
        // reclaimer's thread as it does the version replaced, or frees
        // them itself, outside the lock, when that thread is behind.
        // An observed commit's are the feed's, freed after delivery.
        var madeAheadOperations: [[Operation]] = []
        if !observed, case .success(.some) = madeAhead, operationCount >= Self.reclaimedAsideFrom {
            swap(&madeAheadOperations, &records)
        }
        if observed {
            commitFeed.stage(CommittedTransaction(lsn: next.lsn, before: side.head, after: next, operations: transaction.operations))
        }
        side.head = next
        side.commits += 1
        return Commit(state: next, log: side.log, operations: operationCount, madeAheadOperations: madeAheadOperations)
    }

    /// Throws ``LogError/lsnsExhausted(file:)``, naming `log`, when `count`
    /// records after LSN `lsn` would carry an LSN past ``LogFormat/maxLSN``.
    static func checkLSNs(_ count: Int, after lsn: UInt64, log: String) throws(LogError) {
        guard UInt64(count) <= LogFormat.maxLSN - lsn else { throw .lsnsExhausted(file: log) }
    }

    /// Whether `error`, thrown while a record was made or queued, left the
    /// log untouched: an encoding error, a record over the log's limit, or
    /// a log out of LSNs.
    static func refusedBeforeIO(_ error: any Error) -> Bool {
        switch error as? LogError {
        case nil, .recordTooLarge, .lsnsExhausted: true
        default: false
        }
    }

    @usableFromInline
    struct Commit {
        var state: StoreState
        var log: LogWriter?
        /// How many operations the transaction made: how much of the
        /// version it replaces only that version holds, near enough.
        var operations = 0
        /// The operations of a record made ahead, which nothing reads any
        /// more, left for ``Store/finish(_:durability:)`` to free outside
        /// the writers' lock.
        var madeAheadOperations: [[Operation]] = []
    }

    /// Waits for the commit's durability outside the writers' lock, so that
    /// concurrent commits share one sync, then publishes it.
    @usableFromInline
    func finish(_ commit: consuming Commit, durability: Durability) throws {
        if let log = commit.log {
            do { try log.wait(for: commit.state.lsn, durability: durability) } catch { throw fail(error) }
        }
        // A later version contains this one, and its log position is later:
        // publish whichever is newest, never move back.
        var replaced = StoreState()
        published.withLock { version in
            if version.lsn < commit.state.lsn {
                swap(&replaced, &version)
                version = commit.state
            }
        }
        // The version replaced takes with it the nodes the commit copied. A
        // large transaction's go to the reclaimer's thread, not freed here
        // between the commit and its caller (unless that thread is behind);
        // a small one's, a few paths, cost less to free here than waking
        // that thread would. A commit that made a table held as its
        // snapshot stored it into a hash map replaced that table whole,
        // however few its operations.
        let thawed = replaced.snapshotTables.count != commit.state.snapshotTables.count
        if commit.operations >= Self.reclaimedAsideFrom || thawed { Self.reclaim(&replaced, leaving: StoreState()) }
        if !commit.madeAheadOperations.isEmpty { Self.reclaim(&commit.madeAheadOperations, leaving: []) }
        if commitFeed.isObserved { commitFeed.deliver { current.lsn } }
        if options.checksInvariants { assertInvariants() }
        compactIfDue()
    }

    /// Runs ``write(durability:_:)`` off the caller's thread: the same
    /// contract, including ``StoreError/reentrantWrite(path:)`` for a `write`
    /// of this store made from inside `body`.
    public func asyncWrite<T: Sendable>(
        durability: Durability, _ body: @escaping @Sendable (inout Transaction) throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try self.write(durability: durability, body) })
            }
        }
    }

    /// ``asyncWrite(durability:_:)`` as durable as the store's
    /// ``StoreOptions/durability``.
    public func asyncWrite<T: Sendable>(_ body: @escaping @Sendable (inout Transaction) throws -> T) async throws -> T {
        try await asyncWrite(durability: options.durability, body)
    }

    /// Creates the log of the store's current generation, continuing the head.
    func startLog(in directory: StoreDirectory, side: WriterSide) throws -> LogWriter {
        try LogWriter.create(
            fileSystem: directory.fileSystem, path: directory.logPath(generation: side.generation),
            generation: side.generation, firstLSN: side.head.lsn + 1, options: Store.logOptions(options), cipher: side.key)
    }

    func checkWritable(_ side: WriterSide) throws(StoreError) {
        let name = path ?? ":memory:"
        if side.closed { throw .closed(path: name) }
        if options.readOnly { throw .readOnly(path: name) }
        if let failure = side.failure { throw failure }
    }
}

extension Store {
    /// Where replaced versions, and the operations of large commits, are
    /// dropped: one serial queue for every store, below the program's own
    /// work, which takes a few at a time (``Reclaimer/waitingAtMost``). A
    /// version a reader still holds lives on; the nodes only it held are
    /// freed there.
    private static let reclaimer = Reclaimer(label: "LensDB.reclaim", waitingAtMost: 4)
    /// The operations from which a commit's replaced version, and its
    /// operations when its record was made ahead, are handed to the
    /// reclaimer.
    static let reclaimedAsideFrom = 256

    /// Drops `value` (a replaced version, or a commit's operations) on the
    /// reclaimer's thread, or here when that thread is behind:
    /// ``Reclaimer/reclaim(_:leaving:)``.
    static func reclaim<Value: Sendable>(_ value: inout Value, leaving empty: Value) {
        reclaimer.reclaim(&value, leaving: empty)
    }
}

/// A thread where values are freed, off the threads that drop them.
final class Reclaimer: Sendable {
    private let queue: DispatchQueue
    /// How many values may wait for the queue at once. Past that,
    /// ``reclaim(_:leaving:)`` frees the value on the caller's thread: a
    /// program whose large commits come faster than the queue frees what
    /// they replace (it runs below the program's own work) then holds at
    /// most this many of them besides its own, instead of a backlog that
    /// grows without bound.
    let waitingAtMost: Int
    /// The values handed to the queue and not yet freed there.
    private let waiting = Locked(0)

    init(label: String, waitingAtMost: Int) {
        queue = DispatchQueue(label: label, qos: .utility)
        self.waitingAtMost = waitingAtMost
    }

    /// Drops `value` on the queue's thread instead of this one, leaving
    /// `empty` in its place; or here, before returning, when
    /// ``waitingAtMost`` values already wait for that thread. The value
    /// travels as an unmanaged reference owned by the block alone: a local
    /// reference released after the block ran would free it here after all.
    func reclaim<Value: Sendable>(_ value: inout Value, leaving empty: Value) {
        let queued = waiting.withLock { waiting in
            guard waiting < waitingAtMost else { return false }
            waiting += 1
            return true
        }
        guard queued else {
            value = empty
            return
        }
        let token = Unmanaged.passRetained(Reclaimed(value))
        value = empty
        queue.async { [waiting] in
            token.release()
            waiting.withLock { $0 -= 1 }
        }
    }

    /// Runs `body` on the queue's thread once every value handed over
    /// before has been freed.
    func afterWaiting(_ body: @escaping @Sendable () -> Void) {
        queue.async(execute: body)
    }

    /// A value on its way to the queue.
    private final class Reclaimed<Value: Sendable>: Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }
}
