import LensLog

/// Counters of a store since it was opened: ``Store/statistics``.
///
/// What they tell: `recordsPerSync` is how well group commit shares each
/// `fdatasync` among concurrent writers (1 for a lone `.full` writer);
/// `lastCompactionStall` is how long the last compaction held writers while
/// it swapped in a new log (promise 4: one in-memory swap).
public struct StoreStatistics: Sendable, Equatable {
    /// Transactions that changed something and were handed to the log (an
    /// empty transaction writes nothing and is not counted). A commit whose
    /// write or sync failed is counted too; after it the store takes no more.
    public var commits = 0
    /// Log records written to the operating system since open; records an
    /// open wrote again after a crash are not counted.
    public var recordsLogged = 0
    /// `fdatasync` calls on the logs since open.
    public var syncs = 0
    /// Bytes of records written to the logs (frames and payloads, as stored).
    public var bytesLogged: Int64 = 0
    /// Compactions finished since open.
    public var compactions = 0
    /// Wall time of those compactions, added up.
    public var compactionTime: Duration = .zero
    /// Wall time of the last compaction; nil before the first.
    public var lastCompaction: Duration?
    /// How long the last compaction held writers to swap in a new log; nil before the first.
    public var lastCompactionStall: Duration?

    /// Log records per sync: the size of a group commit. 0 before the first sync.
    public var recordsPerSync: Double { syncs == 0 ? 0 : Double(recordsLogged) / Double(syncs) }

    public init() {}
}

extension Store {
    /// Counters since open: commits, syncs, records per sync, bytes logged,
    /// compactions and how long they took and stalled writers.
    ///
    /// Thread-safe and cheap: the counters are the ones the log writers and
    /// the compaction keep anyway; reading them takes the writers' lock for a
    /// copy of four fields, and each log's lock for its counters. A commit
    /// pays only an integer increment for it. Not to be read from inside a
    /// write block of this store (a precondition failure).
    public var statistics: StoreStatistics {
        let (commits, retired, logs) = writer.withLock { side in
            (side.commits, side.retiredLogs, [side.drainingLog, side.log].compactMap { $0 })
        }
        // The log open wrote again is counted once, current or retired.
        let total = logs.reduce(retired) { $0 + $1.statistics } - relogStatistics
        var statistics = StoreStatistics()
        statistics.commits = commits
        statistics.recordsLogged = total.records
        statistics.syncs = total.syncs
        statistics.bytesLogged = total.bytesWritten
        compaction.withLock { side in
            statistics.compactions = side.compactions
            statistics.compactionTime = side.compactionTime
            statistics.lastCompaction = side.lastCompaction
            statistics.lastCompactionStall = side.lastCompactionStall
        }
        return statistics
    }

    /// Counts a finished compaction.
    func countCompaction(took: Duration, stall: Duration) {
        compaction.withLock { side in
            side.compactions += 1
            side.compactionTime += took
            side.lastCompaction = took
            side.lastCompactionStall = stall
        }
    }

    /// A log a compaction swapped out and synced, or the one `close` closed:
    /// its counters move to the store's, so that they outlive it.
    func retire(_ log: LogWriter) {
        writer.withLock { side in
            side.retiredLogs = side.retiredLogs + log.statistics
            if side.drainingLog === log { side.drainingLog = nil }
        }
    }
}

extension LogWriterStatistics {
    static func + (lhs: Self, rhs: Self) -> Self {
        var sum = lhs
        sum.records += rhs.records
        sum.batches += rhs.batches
        sum.syncs += rhs.syncs
        sum.bytesWritten += rhs.bytesWritten
        return sum
    }

    static func - (lhs: Self, rhs: Self) -> Self {
        var difference = lhs
        difference.records -= rhs.records
        difference.batches -= rhs.batches
        difference.syncs -= rhs.syncs
        difference.bytesWritten -= rhs.bytesWritten
        return difference
    }
}
