#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension LogWriter {
    /// Returns once `lsn` is as durable as asked, taking the write or the
    /// sync turn whenever one is free and has work. Thread-safe.
    /// - Throws: ``LogError/writerFailed(cause:)`` or ``LogError/writerClosed``.
    public func wait(for lsn: UInt64, durability: Durability) throws(LogError) {
        lock.lock()
        defer { lock.unlock() }
        let signal = Signal()
        state.waiters.append(Waiter(lsn: lsn, durability: durability, signal: signal))
        if durability == .full { state.fullWaiters += 1 }
        defer {
            if durability == .full { state.fullWaiters -= 1 }
            state.waiters.removeAll { $0.signal === signal }
        }
        var tookTurn = false
        var extraTurns = 0
        while true {
            if reached(lsn, durability) {
                // A thread whose own record is done takes what is free a
                // bounded number of times: the next turn starts now, not
                // after a sleeping waiter wakes up.
                guard tookTurn, extraTurns < Self.extraTurns, state.failure == nil,
                      let turn = freeTurn() else { return }
                take(turn)
                extraTurns += 1
            } else if let failure = state.failure {
                throw failure
            } else if let turn = freeTurn() {
                take(turn)
                tookTurn = true
            } else {
                spinThenWait(signal)
            }
        }
    }

    /// Makes every record appended before this call durable, and the file
    /// itself as it stands, header included, even when no record waits
    /// for a sync: what a log needs that must stand on its own while empty
    /// (a key change writes the snapshot that replaces it only after this).
    /// Takes both turns for the sync, so that no write or sync of the
    /// writer's runs beside it. Thread-safe.
    /// - Throws: ``LogError/writerFailed(cause:)``; the writer then accepts
    ///   nothing more (a failed sync is never retried, promise 6).
    public func syncFile() throws(LogError) {
        try flush()
        lock.lock()
        defer { lock.unlock() }
        while state.writing || state.syncing { lock.wait() }
        if let failure = state.failure { throw failure }
        (state.writing, state.syncing) = (true, true)
        lock.unlock()
        // Durable whatever the commits' sync need is: the file must outlast a power cut.
        let outcome = Result { () throws(StorageError) in
            do {
                try file.sync(.durable)
            } catch let error as StorageError {
                throw error
            } catch {
                throw StorageError(.ioError, .sync, path: path)
            }
        }
        lock.lock()
        (state.writing, state.syncing) = (false, false)
        defer { endTurn() }
        if case .failure(let error) = outcome {
            fail(error, cuttingTo: state.unsynced.first?.offset ?? state.writeOffset)
            throw .writerFailed(cause: error)
        }
    }

    enum Turn {
        case write
        case sync
    }

    /// The turn that is free and has work: writing first, so that a sync
    /// starting now covers as much as it can.
    private func freeTurn() -> Turn? {
        if !state.writing && !state.queue.isEmpty { return .write }
        if !state.syncing && syncWanted() { return .sync }
        return nil
    }

    /// A `.full` commit is written and waits for a sync, or a written batch
    /// holds `.buffered` acknowledgements back until one.
    private func syncWanted() -> Bool {
        guard state.issuedLSN > state.durableLSN else { return false }
        return !state.unsynced.isEmpty
            || state.waiters.contains { $0.durability == .full && $0.lsn > state.durableLSN && $0.lsn <= state.issuedLSN }
    }

    private func take(_ turn: Turn) {
        switch turn {
        case .write: writeTurn()
        case .sync: syncTurn()
        }
    }

    /// Waits for a turn to end: first by yielding the CPU while watching the
    /// turn counter, for up to one sync's time, since a sleeping thread takes
    /// longer to wake than a short sync takes; then asleep.
    /// Called and returns with the lock held.
    private func spinThenWait(_ signal: Signal) {
        let seen = turnsEnded.withLock { $0 }
        let budget = state.lastSyncNanoseconds
        lock.unlock()
        let start = monotonicNanoseconds()
        while turnsEnded.withLock({ $0 }) == seen && monotonicNanoseconds() - start < budget {
            sched_yield()
        }
        lock.lock()
        // Sleeps only while a turn runs: its end wakes whoever has work next.
        if turnsEnded.withLock({ $0 }) == seen && (state.writing || state.syncing) { lock.wait(for: signal) }
    }

    /// How many turns a thread may take for others after its own commit.
    static var extraTurns: Int { 2 }

    private func reached(_ lsn: UInt64, _ durability: Durability) -> Bool {
        (durability == .full ? state.durableLSN : state.writtenLSN) >= lsn
    }

    /// After a turn: wakes the waiters it finished (or failed), and, when a
    /// turn is free with work, up to two that still wait, to take the write
    /// and the sync turn. The others sleep on.
    private func endTurn() {
        turnsEnded.withLock { $0 += 1 }
        var candidates = freeTurn() == nil ? 0 : 2
        for waiter in state.waiters {
            if state.failure != nil || reached(waiter.lsn, waiter.durability) {
                waiter.signal.raise()
            } else if candidates > 0 {
                waiter.signal.raise()
                candidates -= 1
            }
        }
        lock.broadcast()
    }

    /// The write turn; called and returns with the lock held.
    /// What a crash during it leaves on disk: any prefix of the batch, torn at
    /// sector boundaries; readers see a torn tail, because every record in the
    /// batch claims only `syncedLSN` from before the batch.
    private func writeTurn() {
        state.writing = true
        let batch = state.queue
        state.queue.removeAll(keepingCapacity: true)
        let offset = state.writeOffset
        let syncedLSN = state.durableLSN
        // Held back until synced only when a `.full` commit waits for one of
        // its records; else its `.buffered` commits are done once it is written.
        let needsSync = state.fullWaiters > 0 && batch.first.map { first in
            state.waiters.contains { $0.durability == .full && $0.lsn >= first.lsn && $0.lsn <= batch.last!.lsn }
        } == true
        let allocatedEnd = state.allocatedEnd
        var nonces = state.nonces

        lock.unlock()
        // Sealed here, not when queued: the associated data binds each
        // record to its LSN and to the synced LSN of this batch, known only now.
        var buffer: [UInt8] = []
        // At its exact size: a large record is not copied as the buffer grows.
        buffer.reserveCapacity(batch.reduce(0) { $0 + RecordFrame.size(storedCount: $1.stored.count, sealed: cipher != nil) })
        for record in batch {
            let sealing = cipher.map { RecordFrame.Sealing(cipher: $0, generation: header.generation, nonce: nonces.next()) }
            RecordFrame.append(
                to: &buffer, stored: record.stored, type: record.type, flags: record.flags,
                lsn: record.lsn, syncedLSN: syncedLSN, seed: seed, sealing: sealing)
        }
        let outcome = Result { () throws(StorageError) -> Int64 in
            try write(buffer, at: offset, allocatedEnd: allocatedEnd)
        }
        lock.lock()

        state.writing = false
        // Every nonce taken stays taken, whether or not the batch landed.
        state.nonces = nonces
        defer { endTurn() }
        if let cut = state.cutOffset {
            // A failure came while this batch was in flight: it is not
            // acknowledged, so it goes the way of the rest.
            try? file.truncate(to: cut)
            return
        }
        switch outcome {
        case .success(let newAllocatedEnd):
            state.allocatedEnd = newAllocatedEnd
            state.writeOffset = offset + Int64(buffer.count)
            if let first = batch.first, let last = batch.last {
                if needsSync { state.unsynced.append(UnsyncedBatch(firstLSN: first.lsn, offset: offset)) }
                state.issuedLSN = last.lsn
            }
            advanceWritten()
            state.statistics.records += batch.count
            state.statistics.batches += batch.isEmpty ? 0 : 1
            state.statistics.bytesWritten += Int64(buffer.count)
        case .failure(let error):
            fail(error, cuttingTo: state.unsynced.first?.offset ?? offset)
        }
    }

    /// The sync turn; called and returns with the lock held. Runs beside a
    /// write turn: it covers only what was written before it started, so a
    /// record written during it waits for the next sync.
    private func syncTurn() {
        state.syncing = true
        gather()
        if state.failure != nil {
            // Never sync again after a failure: nothing it covers is vouched for.
            state.syncing = false
            endTurn()
            return
        }
        let target = state.issuedLSN
        let predecessor = state.predecessor
        let covered = readyGroup

        lock.unlock()
        let started = monotonicNanoseconds()
        let outcome = Result { () throws(StorageError) in
            if let predecessor { try Self.flush(predecessor) }
            try sync()
        }
        let took = monotonicNanoseconds() - started
        lock.lock()

        state.syncing = false
        defer { endTurn() }
        state.lastSyncNanoseconds = took
        state.recentGroup = max(covered, state.recentGroup - 1)
        // Only a failure that cut the file voids this sync; close() does not:
        // what it synced is durable, and a failed sync must still poison and cut.
        guard state.cutOffset == nil else { return }
        switch outcome {
        case .success:
            state.durableLSN = max(state.durableLSN, target)
            state.unsynced.removeAll { $0.firstLSN <= target }
            advanceWritten()
            if predecessor != nil { state.predecessor = nil }
            state.statistics.syncs += 1
        case .failure(let error):
            // Everything from the first unsynced batch on is unacknowledged;
            // what a `.buffered` commit was told is written stays.
            fail(error, cuttingTo: state.unsynced.first?.offset ?? state.writeOffset)
        }
    }

    /// `.buffered` commits are acknowledged up to the first batch that
    /// waits for a sync.
    private func advanceWritten() {
        let acknowledged = state.unsynced.first.map { $0.firstLSN - 1 } ?? state.issuedLSN
        state.writtenLSN = max(state.writtenLSN, max(acknowledged, state.durableLSN))
    }

    /// Poisons the writer (never retrying a sync) and cuts the file back to
    /// `offset`, the end of what was acknowledged. Cutting is best effort:
    /// whatever stays is read as a torn tail.
    private func fail(_ error: StorageError, cuttingTo offset: Int64) {
        state.failure = .writerFailed(cause: error)
        state.cutOffset = offset
        try? file.truncate(to: offset)
    }

    /// Before a sync, lets the commits that usually join one get written:
    /// with many committers, those woken by the last sync are still on their
    /// way back, and a sync without them would cover half the group. Yields
    /// the CPU (their writes need it) rather than sleeping, for at most a
    /// quarter of the last sync's time, and not at all for a lone committer
    /// (the recent group is 1). Holds the sync turn; releases the lock.
    private func gather() {
        let target = state.recentGroup
        let budget = min(state.lastSyncNanoseconds / 4, 2_000_000)
        guard target > 1, budget > 0 else { return }
        let start = monotonicNanoseconds()
        while state.failure == nil && readyGroup < target && monotonicNanoseconds() - start < budget {
            lock.unlock()
            sched_yield()
            lock.lock()
        }
    }

    /// The `.full` commits written and waiting for a sync: the group a sync
    /// now would serve. Called with the lock held.
    private var readyGroup: Int {
        state.waiters.reduce(0) { count, waiter in
            count + (waiter.durability == .full && waiter.lsn > state.durableLSN && waiter.lsn <= state.issuedLSN ? 1 : 0)
        }
    }

    /// Syncs the log this one continues; its failure is this log's failure.
    private static func flush(_ predecessor: LogWriter) throws(StorageError) {
        do {
            try predecessor.flush()
        } catch .writerFailed(let cause) {
            throw cause
        } catch {
            // Closed with records it never synced: they cannot be vouched for.
            throw StorageError(.closed, .sync, path: predecessor.path)
        }
    }

    /// Writes `buffer` at `offset`, growing the preallocated region first when
    /// needed. Returns the new allocated end.
    private func write(_ buffer: [UInt8], at offset: Int64, allocatedEnd: Int64) throws(StorageError) -> Int64 {
        var allocated = allocatedEnd
        let end = offset + Int64(buffer.count)
        do {
            if options.preallocationChunk > 0 && end > allocated {
                // Grow geometrically from 64 KiB up to the configured chunk, so
                // a small store does not carry megabytes of zeros.
                let step = min(max(allocated, LogWriter.initialPreallocation), options.preallocationChunk)
                let chunk = max(step, end - allocated)
                try file.preallocate(at: allocated, length: chunk)
                allocated += chunk
            }
            if !buffer.isEmpty { try file.write(buffer, at: offset) }
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(.ioError, .write, path: path)
        }
        return allocated
    }

    /// Syncs the data written so far, as the commits need it.
    private func sync() throws(StorageError) {
        do {
            try file.sync(options.commitSyncNeed)
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(.ioError, .sync, path: path)
        }
    }
}

/// Nanoseconds on the monotonic clock.
func monotonicNanoseconds() -> Int {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int(time.tv_sec) * 1_000_000_000 + Int(time.tv_nsec)
}
