#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import LensLog
import Logging

/// A LensDB store: the whole state in memory, every commit in an append-only
/// log, snapshots compacting the log.
///
/// ```swift
/// let store = try Store(at: "state.lensdb")
/// try store.write { tx in tx.put(Array("v".utf8), for: Array("k".utf8), in: "things") }
/// let value = store.current.value(in: "things", key: Array("k".utf8))
/// ```
///
/// Thread-safety: every method may be called from any thread. Readers never
/// wait for writers: ``current`` is one committed version, held as long as
/// the caller likes (promise 8). Writers are serialized.
///
/// Durability: a write returns when it is as durable as
/// ``StoreOptions/durability`` says; with `.full`, it survives a power cut.
public final class Store: Sendable {
    /// The store's directory, or nil for an in-memory store.
    public let path: String?
    @usableFromInline let options: StoreOptions
    let directory: StoreDirectory?
    /// The state readers see: the newest version whose commit is as durable as asked.
    let published: Locked<StoreState>
    /// Serializes writers; holds the state they build on and the log.
    let writer: Locked<WriterSide>
    /// Published commits, handed to observers in order.
    let commitFeed = CommitFeed()
    /// The live-query registries, one per typed table (``LiveRegistry``).
    let liveRegistries = Locked<[String: any Sendable]>([:])
    /// Which table holds each entity type ("" when several do): where
    /// references are followed.
    let entityTables = Locked<[ObjectIdentifier: String]>([:])
    /// The lens notifier and whatever else the layers above keep per store.
    let attachments = StoreAttachments()
    /// One compaction at a time.
    let compaction = Locked<CompactionSide>(CompactionSide())
    let lock: (any FileLock)?
    /// Whether ``close()`` has run; its mutex serializes closes.
    private let closing = Locked(false)
    /// What a close ends: the store's open streams (``onClose(_:)``).
    private let closeHandlers = Locked(CloseHandlers())
    /// ``StoreOptions/logger`` with the store's path as metadata.
    let logger: Logger
    /// The counters of the records open wrote again, which are not commits
    /// of this session: ``statistics`` leaves them out.
    let relogStatistics: LogWriterStatistics
    /// What open found; fixed after open.
    public let openStatistics: OpenStatistics

    struct WriterSide: Sendable {
        /// The newest state, including commits still waiting for their sync.
        var head: StoreState
        var log: LogWriter?
        var generation: UInt64
        var failure: StoreError?
        var closed = false
        /// ``StoreStatistics/commits``: one increment under a lock the commit holds anyway.
        var commits = 0
        /// Counters of the logs compactions swapped out and synced.
        var retiredLogs = LogWriterStatistics()
        /// A log swapped out whose last records may still be syncing.
        var drainingLog: LogWriter?
        /// The key new logs and snapshots are sealed with: the open's
        /// ``StoreOptions/encryptionKey`` until ``Store/changeEncryptionKey(to:)``
        /// replaces it.
        var key: EncryptionKey?
    }

    struct CompactionSide: Sendable {
        var running = false
        /// Size of the snapshot in effect, for the automatic policy.
        var snapshotBytes: Int64 = 0
        /// Bytes in logs since that snapshot (before the current log).
        var olderLogBytes: Int64 = 0
        var compactions = 0
        var compactionTime: Duration = .zero
        var lastCompaction: Duration?
        var lastCompactionStall: Duration?
    }

    /// Opens the store at `path`, creating it if needed, and recovers its
    /// state: the newest valid snapshot plus the logs after it.
    ///
    /// Takes the store's lock unless ``StoreOptions/readOnly``.
    /// - Throws: ``StoreError/locked(path:holder:)`` when another process
    ///   writes the store; `LogError`, `SnapshotError` or
    ///   `RecoveryError` for damage `.strict` will not pass; `StorageError`.
    ///   A throw leaves the files as they were, except temporary files removed
    ///   and damaged snapshots set aside.
    public convenience init(at path: String, options: StoreOptions = StoreOptions()) throws {
        try self.init(at: path, options: options, progress: nil)
    }

    /// Opens as ``init(at:options:)`` does, reporting how much of the files
    /// recovery has read (`logtool compact`).
    convenience init(at path: String, options: StoreOptions, progress: ProgressHandler?) throws {
        let path = StoreDirectory.normalized(path)
        var opened = try Store.open(at: path, options: options, progress: progress)
        if options.readOnly {
            do {
                opened.state = try Store.undoingInterruptedMigration(opened.state, store: path)
            } catch {
                opened.lock?.unlock()
                throw error
            }
        }
        self.init(path: path, options: options, opened: opened)
        // A migration cut between its batches is undone before anything reads the store.
        if !options.readOnly {
            do { try undoInterruptedMigration() } catch {
                close()
                throw error
            }
        }
    }

    /// A store that lives only in memory: the same API, no files, nothing durable.
    public static func inMemory() -> Store {
        var options = StoreOptions()
        options.compactionLogRatio = nil
        let statistics = OpenStatistics(recovery: RecoveryReport(), items: 0, seconds: 0)
        return Store(path: nil, options: options, opened: Opened(state: StoreState(), log: nil, generation: 0, lock: nil, statistics: statistics, snapshotBytes: 0, olderLogBytes: 0))
    }

    init(path: String?, options: StoreOptions, opened: Opened) {
        self.path = path
        self.options = options
        directory = path.map { StoreDirectory(path: $0, fileSystem: options.fileSystem) }
        logger = Store.logger(for: path ?? ":memory:", options)
        relogStatistics = opened.log?.statistics ?? LogWriterStatistics()
        published = Locked(opened.state)
        writer = Locked(WriterSide(head: opened.state, log: opened.log, generation: opened.generation, key: options.encryptionKey))
        compaction.withLock {
            $0.snapshotBytes = opened.snapshotBytes
            $0.olderLogBytes = opened.olderLogBytes
        }
        lock = opened.lock
        openStatistics = opened.statistics
        if options.checksInvariants { assertInvariants() }
    }

    deinit { close() }

    /// The latest committed version. O(1); never waits for a writer.
    public var current: StoreState { published.withLock { $0 } }

    /// The error that made the store read-only, if one did.
    ///
    /// Thread-safe, and readable from inside a write block of this store
    /// (nil there: a block runs only while the store has not failed).
    public var failure: StoreError? { writer.withLockOrHeld { $0.failure } }

    /// Syncs every commit so far (a barrier for `.buffered` writes).
    /// - Throws: ``StoreError/failed(path:cause:)`` if the sync fails;
    ///   ``StoreError/reentrantWrite(path:)`` from inside a write block of
    ///   this store (its own commit is not logged yet, so nothing could cover it).
    public func flush() throws {
        let name = path ?? ":memory:"
        let log = try writer.withLock(reentry: StoreError.reentrantWrite(path: name)) { (side: inout WriterSide) throws(StoreError) -> LogWriter? in
            side.log
        }
        guard let log else { return }
        do { try log.flush() } catch { throw fail(error) }
    }

    /// Closes the store, so that another process (an app extension, say, or
    /// this program after it resumes) may open it.
    ///
    /// Safe from any thread, at any moment, any number of times: from a
    /// scene-phase or background-task handler, from several threads at once,
    /// and again after it returned. Never from inside a ``write(durability:_:)``
    /// block, whose writers' lock it needs.
    ///
    /// When it returns, from whichever call:
    /// - every commit acknowledged before the first call is as durable as
    ///   its durability promised; `.buffered` ones have been flushed too,
    ///   unless that flush failed (the next open then recovers as after a crash);
    /// - the log is closed, and no compaction of this store is writing: a
    ///   running one has finished its snapshot, since the next owner of the
    ///   lock must not meet it half written;
    /// - the lock is released;
    /// - every stream of the store has finished: ``changes(bound:)``, tables'
    ///   `changes`, live queries (``Query/values`` and the others) and
    ///   lenses' `values` and `changes`. Each has been handed every commit
    ///   acknowledged before it finished, a commit racing with the close
    ///   included, and a live query its result; a `for await` over one
    ///   takes those, then ends.
    ///
    /// A call that finds a close running waits for it to finish. A commit
    /// racing with the first call either completes before its flush or
    /// throws ``StoreError/closed(path:)``, as every later write does. Reads
    /// keep serving the last committed state from memory; to write again,
    /// open a new `Store`.
    ///
    /// Blocks the calling thread for one sync, plus the rest of a running
    /// compaction (at most the writing of one snapshot) and of commits
    /// being acknowledged meanwhile (microseconds). Never throws: a
    /// failed final flush has no caller left to act on it, and an
    /// acknowledged `.full` commit is durable already.
    ///
    /// On iOS, a store in an app-group container (shared with an extension)
    /// must be closed before the app is suspended: the system terminates a
    /// suspended app that holds a file lock there. Close it when the scene
    /// phase becomes `.background`, inside a background task, and open it
    /// again when the app becomes active.
    ///
    /// Calling it from inside a write block of this store is a programmer
    /// error and stops with a precondition failure.
    public func close() {
        // Held for the whole close, so a second caller returns only once the
        // first is done; nothing a close waits for takes this lock.
        closing.withLock { closed in
            guard !closed else { return }
            closed = true
            closeOnce()
            deliverStagedCommits()
            // Under `closing`, so a second caller returns only once the
            // streams have ended; no handler takes that lock. Outside
            // `closeHandlers`: ending a stream removes its handler there.
            let handlers = closeHandlers.withLock { side in
                side.closed = true
                defer { side.handlers = [:] }
                return side.handlers.sorted { $0.key < $1.key }.map(\.value)
            }
            for handler in handlers { handler() }
        }
    }

    /// Hands the observers every commit staged before the close, so that
    /// a stream's last elements come before its end. A commit publishes
    /// after its log wait, outside the writers' lock, so one acknowledged
    /// while the close ran may not have reached the feed yet: the close
    /// flushed its record, so it publishes, unless the store failed.
    private func deliverStagedCommits() {
        let head = writer.withLock { $0.head.lsn }
        // Bounded all the same: a close must not hang on a committer that
        // never comes back (a commit publishes microseconds after its wait).
        _ = waitForPublication(through: head, pauses: 100_000) { failure != nil }
        if commitFeed.isObserved { commitFeed.deliver { current.lsn } }
    }

    /// Runs `handler` once, when the store closes, or now when it has:
    /// how a stream of the store ends with it. Returns the token that
    /// ``removeCloseHandler(_:)`` takes; nil when `handler` ran at once.
    func onClose(_ handler: @escaping @Sendable () -> Void) -> Int? {
        let token = closeHandlers.withLock { side -> Int? in
            guard !side.closed else { return nil }
            defer { side.next += 1 }
            side.handlers[side.next] = handler
            return side.next
        }
        if token == nil { handler() }
        return token
    }

    /// Forgets a handler ``onClose(_:)`` took (nil, or one that ran: nothing).
    func removeCloseHandler(_ token: Int?) {
        guard let token else { return }
        closeHandlers.withLock { _ = $0.handlers.removeValue(forKey: token) }
    }

    /// Finishes `continuation`'s stream when the store closes (at once when
    /// it has), the finish run through `schedule` (a stream whose elements
    /// come from a queue finishes on it, after them); and makes the
    /// stream's termination run `release`, then forget that handler.
    /// Call once the stream is set up: on a closed store it ends here.
    func finishOnClose<Element: Sendable>(
        _ continuation: AsyncStream<Element>.Continuation,
        through schedule: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void = { $0() },
        release: @escaping @Sendable () -> Void
    ) {
        let closing = Locked<Int?>(nil)
        continuation.onTermination = { [weak self] _ in
            release()
            self?.removeCloseHandler(closing.withLock { $0 })
        }
        // Outside `closing`: on a closed store the handler runs at once, and
        // the termination it causes takes that lock.
        let token = onClose { schedule { continuation.finish() } }
        closing.withLock { $0 = token }
    }

    private func closeOnce() {
        let log = writer.withLock { side in
            defer { side.log = nil; side.closed = true }
            return side.log
        }
        // A failed final flush has nobody to tell; an acknowledged `.full`
        // commit is already durable, and `.buffered` ones promised no more.
        let flushed = log.map { (try? $0.flush()) != nil } ?? true
        log?.close()
        if let log { retire(log) }
        // The next owner of the lock must not meet this store's compaction
        // still writing its snapshot or deleting files.
        while compaction.withLock({ $0.running }) {
            var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
            nanosleep(&pause, nil)
        }
        if flushed && failure == nil, let directory, lock != nil { markClosedCleanly(directory) }
        lock?.unlock()
    }

    /// Tells the next open that every record through the last LSN is
    /// durable: it need not log the tail again, and a log that ends sooner
    /// is damage, not a crash (``CleanClose``). Written after the final
    /// flush, so the LSN it records is durable.
    private func markClosedCleanly(_ directory: StoreDirectory) {
        let lastLSN = writer.withLock { $0.head.lsn }
        // Best effort: without the marker, the next open only logs the tail
        // again and judges a short log as a crash's, as after any crash.
        try? directory.markClosedCleanly(CleanClose(lastLSN: lastLSN))
    }

    /// Marks the store failed (promise 6) and returns the error to throw.
    func fail(_ error: any Error) -> StoreError {
        let (failure, isNew) = writer.withLock { side in
            if let failure = side.failure { return (failure, false) }
            side.failure = .failed(path: path ?? ":memory:", after: error)
            return (side.failure!, true)
        }
        if isNew { logFailStop(failure) }
        return failure
    }
}

/// The handlers a close runs, and whether it ran them.
private struct CloseHandlers: Sendable {
    var closed = false
    var next = 0
    var handlers: [Int: @Sendable () -> Void] = [:]
}
