extension LogWriter {
    /// Returns once `lsn` is as durable as asked, leading a group commit when
    /// no other thread is. Thread-safe.
    /// - Throws: ``LogError/writerFailed(cause:)`` or ``LogError/writerClosed``.
    public func wait(for lsn: UInt64, durability: Durability) throws(LogError) {
        lock.lock()
        defer { lock.unlock() }
        if durability == .full { state.fullWaiters += 1 }
        defer { if durability == .full { state.fullWaiters -= 1 } }
        while true {
            let reached = durability == .full ? state.durableLSN : state.writtenLSN
            if reached >= lsn { return }
            if let failure = state.failure { throw failure }
            if state.leaderActive {
                lock.wait()
            } else {
                lead()
            }
        }
    }

    /// One leader turn; called and returns with the lock held.
    /// What a crash during it leaves on disk: any prefix of the batch, torn at
    /// sector boundaries; readers see a torn tail, because every record in the
    /// batch claims only `syncedLSN` from before the batch.
    private func lead() {
        state.leaderActive = true
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
        let outcome = Result { () throws(StorageError) -> Int64 in
            if let predecessor { try Self.flush(predecessor) }
            return try writeAndSync(buffer, at: offset, allocatedEnd: allocatedEnd, sync: needsSync)
        }
        lock.lock()

        state.leaderActive = false
        defer { lock.broadcast() }
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
            if sync { try file.sync(.data) }
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(.ioError, .write, path: path)
        }
        return allocated
    }
}
