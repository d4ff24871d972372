#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import LensLog

extension Store {
    /// Rewrites the store under `newKey`: encrypts a plain store, re-keys an
    /// encrypted one, or, with nil, decrypts it. Runs as a compaction whose
    /// snapshot and new log are sealed with the new key; every later log and
    /// snapshot of this `Store` uses it, and the next open needs it
    /// (``StoreOptions/encryptionKey``).
    ///
    /// ```swift
    /// try store.changeEncryptionKey(to: newKey)
    /// ```
    ///
    /// Steps, and which key opens the store after a crash at each:
    /// 1. sync the current log, header included, or create it (empty,
    ///    durable) when this session has not written yet: old key. The old
    ///    key's files must stand on their own without the new snapshot: a
    ///    store whose only log is empty, its header never synced, would
    ///    otherwise hold after a crash in step 2 nothing but a snapshot
    ///    whose log is missing, which no open may take for an empty store;
    /// 2. write `snapshot-(G+1).snap` under the new key (temporary name,
    ///    synced, renamed): old key — a snapshot is in effect only once its
    ///    log exists, so open passes it by;
    /// 3. create `log-(G+1).log` under the new key, synced before it gets its
    ///    name: the switch. From its rename on, the new key, and only it:
    ///    snapshot G+1 and the logs after it are all the store has;
    /// 4. remove older snapshots and logs: new key.
    ///
    /// So the store is never readable only with both keys, and never half
    /// encrypted. An open with the key that no longer fits throws
    /// ``StoreError/wrongEncryptionKey(path:file:found:given:)``, naming the
    /// key the files need.
    ///
    /// Writers wait while it runs (steps 1–3: one snapshot's writing), unlike
    /// ``compact()``: a commit between the snapshot and the new log would
    /// land in the old log under the old key, after the snapshot that
    /// replaces it. Thread-safe; one compaction at a time, so it first
    /// waits for a running one.
    ///
    /// - Throws: ``StoreError/readOnly(path:)``, ``StoreError/closed(path:)``,
    ///   ``StoreError/reentrantWrite(path:)`` (nothing changed);
    ///   ``StoreError/failed(path:cause:)`` when a write or sync fails: the
    ///   store is then read-only until reopened, since what is in effect on
    ///   disk may already be under the new key; the reopen tells which key
    ///   it needs. An in-memory store only takes the key.
    public func changeEncryptionKey(to newKey: EncryptionKey?) throws {
        // Asked first: a write block of this store holds the writers' lock
        // that a running compaction, waited for below, may need.
        try refuseInsideWriteBlock()
        guard let directory else {
            writer.withLock { $0.key = newKey }
            return
        }
        while !beginCompaction() {
            var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
            nanosleep(&pause, nil)
        }
        defer { endCompaction() }
        var failedNow: StoreError?
        defer { if let failedNow { logFailStop(failedNow) } }
        let started = ContinuousClock.now
        let (oldLog, generation, snapshotBytes) = try writer.withLock(reentry: StoreError.reentrantWrite(path: directory.path)) {
            side throws -> (LogWriter?, UInt64, Int64) in
            try checkWritable(side)
            let generation = try StoreError.generation(after: side.generation, path: directory.path)
            do {
                if side.log == nil { side.log = try startLog(in: directory, side: side) }
                try side.log?.syncFile()
                let size = try Store.writeSnapshot(
                    of: side.head, generation: generation, in: directory, compression: options.compression, key: newKey)
                let log = try LogWriter.createHolding(
                    [], fileSystem: directory.fileSystem, path: directory.logPath(generation: generation),
                    generation: generation, firstLSN: side.head.lsn + 1, options: Store.logOptions(options), cipher: newKey)
                defer { (side.log, side.generation, side.key) = (log, generation, newKey) }
                return (side.log, generation, size)
            } catch {
                // What is in effect on disk may be under either key now; only
                // a reopen, which reads the directory afresh, knows which.
                let failure = side.failure ?? .failed(path: directory.path, after: error)
                if side.failure == nil { failedNow = failure }
                side.failure = failure
                throw failure
            }
        }
        if let oldLog {
            compaction.withLock { $0.olderLogBytes += oldLog.endOffset }
            oldLog.close()
            retire(oldLog)
        }
        try Self.removeFiles(olderThan: generation, in: directory)
        compaction.withLock {
            $0.snapshotBytes = snapshotBytes
            $0.olderLogBytes = 0
        }
        logKeyChanged(to: newKey, generation: generation, took: ContinuousClock.now - started)
        if options.checksInvariants { assertInvariants() }
    }
}
