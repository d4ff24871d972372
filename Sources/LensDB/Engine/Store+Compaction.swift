import Dispatch
import LensLog

extension Store {
    /// Writes a snapshot of the current state and deletes the logs and
    /// snapshot it replaces.
    ///
    /// Atomic (promise 4): a crash at any instant leaves the old or the new
    /// snapshot in effect, never a mix, and loses nothing committed. Writers
    /// keep committing meanwhile; they are held only while the new log is
    /// swapped in, which writes a header to the page cache and nothing more.
    ///
    /// Steps, and what a crash after each leaves:
    /// 1. create and sync log G+1 (no header yet): old state; the empty log is ignored;
    /// 2. hold writers, write its header, swap it in: old snapshot + old logs + log G+1;
    /// 3. sync the old log: the snapshot never holds a commit the log could lose
    ///    (with `appleBarrierOnly` this sync only orders; step 4's F_FULLFSYNC
    ///    then empties the whole drive cache, the old log's writes with it);
    /// 4. write `snapshot-(G+1).snap.tmp` on a low-priority thread, synced in
    ///    bounded pieces as it grows, then once more at its end: a temporary
    ///    file, removed on open;
    /// 5. rename it into place, sync the directory: the new snapshot is in effect;
    /// 6. delete older snapshots and logs, sync the directory.
    ///
    /// - Throws: ``StoreError/readOnly(path:)`` and friends, including
    ///   ``StoreError/reentrantWrite(path:)`` from inside a write block of
    ///   this store (nothing done); `StorageError`
    ///   (the store keeps working on the old snapshot); ``StoreError/failed(path:cause:)``
    ///   when syncing the old log fails.
    public func compact() throws {
        try compact(progress: nil)
    }

    /// ``compact()``, reporting how much of the snapshot is written (`logtool compact`).
    func compact(progress: ProgressHandler?) throws {
        guard let directory else { return }
        // Asked first, so that it does not depend on whether another
        // compaction happens to be running.
        try refuseInsideWriteBlock()
        guard beginCompaction() else { return }
        defer { endCompaction() }
        let started = ContinuousClock.now
        do {
            let swapped = try swapInNextLog(directory)
            logCompactionStarted(swapped)
            let snapshotBytes = try writeSnapshot(after: swapped, in: directory, progress: progress)
            let took = ContinuousClock.now - started
            countCompaction(took: took, stall: swapped.stall)
            logCompactionFinished(swapped, snapshotBytes: snapshotBytes, took: took)
        } catch {
            logCompactionFailed(error)
            throw error
        }
    }

    /// Throws ``StoreError/reentrantWrite(path:)`` when this thread is
    /// inside a write block of this store, which holds the writers' lock.
    func refuseInsideWriteBlock() throws {
        try writer.withLock(reentry: StoreError.reentrantWrite(path: path ?? ":memory:")) { (_: inout WriterSide) throws(StoreError) in }
    }

    /// Claims the one compaction slot; false when a compaction is running.
    func beginCompaction() -> Bool {
        compaction.withLock { side in
            guard !side.running else { return false }
            side.running = true
            return true
        }
    }

    func endCompaction() {
        compaction.withLock { $0.running = false }
    }

    /// A log swapped in: the version the snapshot will hold and its generation.
    struct SwappedLog: Sendable {
        var version: StoreState
        var generation: UInt64
        /// The key the new log and the snapshot are sealed with.
        var key: EncryptionKey?
        /// How long writers were held for the swap.
        var stall: Duration
        /// Bytes of the logs the snapshot will replace.
        var replacedLogBytes: Int64
    }

    /// Steps 1–3. From here on, commits go to the new log while the snapshot
    /// is still to be written.
    func swapInNextLog(_ directory: StoreDirectory) throws -> SwappedLog {
        // The key cannot change before the swap: changing it takes the
        // compaction slot this compaction holds.
        let (generation, key) = try writer.withLock(reentry: StoreError.reentrantWrite(path: directory.path)) {
            side throws -> (UInt64, EncryptionKey?) in
            try checkWritable(side)
            return (try StoreError.generation(after: side.generation, path: directory.path), side.key)
        }
        let prepared = try PreparedLog(
            fileSystem: directory.fileSystem, path: directory.logPath(generation: generation),
            generation: generation, options: Store.logOptions(options), cipher: key)
        let (version, oldLog, stall) = try swapLog(to: prepared, generation: generation)
        if let oldLog {
            do { try oldLog.flush() } catch { throw fail(error) }
            compaction.withLock { $0.olderLogBytes += oldLog.endOffset }
            oldLog.close()
            retire(oldLog)
        }
        let replaced = compaction.withLock { $0.olderLogBytes }
        return SwappedLog(version: version, generation: generation, key: key, stall: stall, replacedLogBytes: replaced)
    }

    /// Steps 4–6; returns the snapshot's size.
    @discardableResult
    func writeSnapshot(after swapped: SwappedLog, in directory: StoreDirectory, progress: ProgressHandler? = nil) throws -> Int64 {
        // At a lower priority, so that the commits going on meanwhile get the
        // CPU first when their syncs return.
        let compression = options.compression
        let size = try LowPriorityThread.run {
            try Store.writeSnapshot(
                of: swapped.version, generation: swapped.generation, in: directory, compression: compression,
                key: swapped.key, progress: progress)
        }
        try Self.removeFiles(olderThan: swapped.generation, in: directory)
        compaction.withLock {
            $0.snapshotBytes = size
            $0.olderLogBytes = 0
        }
        if options.checksInvariants { assertInvariants() }
        return size
    }

    /// Step 2: the only part that holds writers; returns for how long it held them.
    private func swapLog(to prepared: PreparedLog, generation: UInt64) throws -> (StoreState, LogWriter?, Duration) {
        try writer.withLock { side throws -> (StoreState, LogWriter?, Duration) in
            let held = ContinuousClock.now
            do {
                try checkWritable(side)
                let old = side.log
                side.log = try prepared.start(firstLSN: side.head.lsn + 1, predecessor: old)
                side.drainingLog = old
                side.generation = generation
                return (side.head, old, ContinuousClock.now - held)
            } catch {
                prepared.discard()
                throw error
            }
        }
    }

    /// Steps 4–5: writes, syncs and renames `snapshot-<generation>.snap`.
    /// Entries are written in key order, so equal states give equal
    /// snapshots (plain ones byte for byte). With `key`, every chunk is
    /// sealed. Returns the snapshot's size. Also used by `logtool repair`
    /// and by ``changeEncryptionKey(to:)``.
    static func writeSnapshot(
        of state: StoreState, generation: UInt64, in directory: StoreDirectory, compression: StoreOptions.Compression,
        key: EncryptionKey?, progress: ProgressHandler? = nil
    ) throws -> Int64 {
        let path = directory.snapshotPath(generation: generation)
        let temporary = path + StoreDirectory.temporarySuffix
        let writer = try SnapshotWriter(
            fileSystem: directory.fileSystem, path: temporary, generation: generation,
            lastLSN: state.lsn, compression: compression == .lz4, cipher: key)
        var written = ProgressCounter(.writingSnapshot, total: Int64(state.itemCount), handler: progress)
        var items: Int64 = 0
        for (id, name) in state.tableNames.enumerated() {
            try writer.addTable(id: UInt64(id), name: name)
            if let encoding = state.encoding(ofTable: name) {
                try writer.addTableEncoding(table: UInt64(id), key: encoding.key.rawValue, value: encoding.value.rawValue)
            }
            try state.forEachEncodedEntry(in: name) { key, value in
                try writer.addEntry(table: UInt64(id), key: key, value: value)
                items += 1
                written.update(items)
            }
            for (index, positions) in state.indexOrders(in: name) {
                try writer.addIndexOrder(table: UInt64(id), index: index, positions: positions)
            }
        }
        for name in state.rootNames {
            if let encoding = state.encoding(ofRoot: name) { try writer.addRootEncoding(name: name, value: encoding.rawValue) }
            try writer.addRoot(name: name, value: state.root(named: name)!.bytes())
        }
        let size = try writer.finish()
        written.finish()
        try directory.fileSystem.rename(temporary, to: path)
        try directory.fileSystem.syncDirectory(at: directory.path)
        return size
    }

    /// Step 6. A crash midway leaves obsolete files that open ignores and
    /// removes. Returns the files removed.
    @discardableResult
    static func removeFiles(olderThan generation: UInt64, in directory: StoreDirectory) throws -> [String] {
        let listing = try directory.list()
        let old = listing.snapshots.filter { $0.generation < generation } + listing.logs.filter { $0.generation < generation }
        guard !old.isEmpty else { return [] }
        for file in old { try directory.fileSystem.removeFile(at: file.path) }
        try directory.fileSystem.syncDirectory(at: directory.path)
        return old.map(\.path)
    }

    /// Starts a background compaction when the logs have outgrown the policy.
    func compactIfDue() {
        guard let ratio = options.compactionLogRatio, directory != nil else { return }
        let logBytes = writer.withLock { $0.log?.endOffset ?? 0 }
        let due = compaction.withLock { side in
            let total = side.olderLogBytes + logBytes
            return !side.running && total >= options.compactionMinimumLogBytes
                && Double(total) >= ratio * Double(side.snapshotBytes)
        }
        guard due else { return }
        compactInBackground()
    }

    /// Compacts on a utility thread, unless the store does not compact on
    /// its own (``StoreOptions/compactionLogRatio`` is nil) or only reads.
    func compactInBackground() {
        guard options.compactionLogRatio != nil, directory != nil, !options.readOnly,
              writer.withLock({ !$0.closed && $0.failure == nil }) else { return }
        DispatchQueue.global(qos: .utility).async {
            // A failed background compaction leaves the old snapshot in
            // effect and has logged why; a failure that matters (the log's)
            // has already marked the store failed, and the next write reports
            // it. One that finds a compaction running, or the store closed,
            // has nothing to add.
            try? self.compact()
        }
    }
}
