#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension LogWriter {
    /// Returns once `lsn` is as durable as asked, leading a group commit when
    /// no other thread is. Thread-safe.
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
        var turnsLed = 0
        while true {
            if reached(lsn, durability) {
                // A leader whose own record is done serves what queued up
                // during its turn, a bounded number of times: the next sync
                // starts now, not after a sleeping waiter wakes up.
                guard turnsLed > 0, turnsLed <= Self.extraTurns, !state.queue.isEmpty,
                      state.failure == nil, !state.leaderActive else { return }
            } else if let failure = state.failure {
                throw failure
            } else if state.leaderActive {
                spinThenWait(signal)
                continue
            }
            lead(signal)
            turnsLed += 1
        }
    }

    /// Waits for the leader's turn to end: first by yielding the CPU while
    /// watching the turn counter, for up to one sync's time, since a sleeping
    /// thread takes longer to wake than a short sync takes; then asleep.
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
        if turnsEnded.withLock({ $0 }) == seen && state.leaderActive { lock.wait(for: signal) }
    }

    /// How many turns a leader may lead for others after its own commit.
    static var extraTurns: Int { 2 }

    private func reached(_ lsn: UInt64, _ durability: Durability) -> Bool {
        (durability == .full ? state.durableLSN : state.writtenLSN) >= lsn
    }

    /// After a turn: wakes the waiters it finished (or failed), and one that
    /// still waits, to lead the next turn. The others sleep on.
    private func wakeWaiters() {
        var nextLeader: Signal?
        for waiter in state.waiters {
            if state.failure != nil || reached(waiter.lsn, waiter.durability) {
                waiter.signal.raise()
            } else if nextLeader == nil {
                nextLeader = waiter.signal
            }
        }
        nextLeader?.raise()
        lock.broadcast()
    }

    /// One leader turn; called and returns with the lock held.
    /// What a crash during it leaves on disk: any prefix of the batch, torn at
    /// sector boundaries; readers see a torn tail, because every record in the
    /// batch claims only `syncedLSN` from before the batch.
    private func lead(_ signal: Signal) {
        state.leaderActive = true
        gather(signal)
        let batch = state.queue
        state.queue.removeAll(keepingCapacity: true)
        let offset = state.writeOffset
        let syncedLSN = state.durableLSN
        let needsSync = state.fullWaiters > 0
        let allocatedEnd = state.allocatedEnd
        let predecessor = needsSync ? state.predecessor : nil

        lock.unlock()
        var buffer: [UInt8] = []
        for record in batch {
            RecordFrame.append(
                to: &buffer, stored: record.stored, type: record.type, flags: record.flags,
                lsn: record.lsn, syncedLSN: syncedLSN, seed: seed)
        }
        let started = monotonicNanoseconds()
        let outcome = Result { () throws(StorageError) -> Int64 in
            if let predecessor { try Self.flush(predecessor) }
            return try writeAndSync(buffer, at: offset, allocatedEnd: allocatedEnd, sync: needsSync)
        }
        let took = monotonicNanoseconds() - started
        lock.lock()

        if needsSync { state.lastSyncNanoseconds = took }
        state.recentGroup = max(batch.count, state.recentGroup - 1)
        state.leaderActive = false
        turnsEnded.withLock { $0 += 1 }
        defer { wakeWaiters() }
        switch outcome {
        case .success(let newAllocatedEnd):
            state.allocatedEnd = newAllocatedEnd
            state.writeOffset = offset + Int64(buffer.count)
            if let last = batch.last { state.writtenLSN = last.lsn }
            if needsSync { state.durableLSN = state.writtenLSN }
            if predecessor != nil { state.predecessor = nil }
            state.statistics.records += batch.count
            state.statistics.batches += batch.isEmpty ? 0 : 1
            state.statistics.syncs += needsSync ? 1 : 0
            state.statistics.bytesWritten += Int64(buffer.count)
        case .failure(let error):
            // The batch's records were never acknowledged. Cutting the file
            // back is best effort: whatever stays is read as a torn tail.
            state.failure = .writerFailed(cause: error)
            try? file.truncate(to: offset)
        }
    }

    /// Before a sync, waits briefly for the commits that usually join one:
    /// with many committers, those woken by the last turn are still on their
    /// way back, and a sync without them would cover half the group. Waits
    /// at most a quarter of the last sync's time, and not at all for a lone
    /// committer (the recent group is 1).
    private func gather(_ signal: Signal) {
        let target = state.recentGroup
        guard state.fullWaiters > 0, state.queue.count < target, state.lastSyncNanoseconds > 0 else { return }
        state.gathering = (signal, target)
        lock.wait(for: signal, nanoseconds: min(state.lastSyncNanoseconds / 4, 2_000_000))
        state.gathering = nil
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
    /// needed, and syncs the data when asked. Returns the new allocated end.
    private func writeAndSync(_ buffer: [UInt8], at offset: Int64, allocatedEnd: Int64, sync: Bool) throws(StorageError) -> Int64 {
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
            if sync { try file.sync(options.commitSyncNeed) }
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(.ioError, .write, path: path)
        }
        return allocated
    }
}

/// Nanoseconds on the monotonic clock.
func monotonicNanoseconds() -> Int {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int(time.tv_sec) * 1_000_000_000 + Int(time.tv_nsec)
}
