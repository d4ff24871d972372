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

    /// The typed tables open in this process (``Store/table(_:named:indexes:onUndecodable:)``),
    /// by name: their entities, their encodings' size and what they take in memory.
    public var tables: [TableStatistics] = []

    /// Log records per sync: the size of a group commit. 0 before the first sync.
    public var recordsPerSync: Double { syncs == 0 ? 0 : Double(recordsLogged) / Double(syncs) }

    public init() {}
}

/// One typed table's size in one version: ``StoreStatistics/tables``.
///
/// `residentBytes` over `encodedBytes` is what holding the table decoded
/// costs against its bytes on disk before compression.
public struct TableStatistics: Sendable, Equatable {
    /// The table's name.
    public var name: String
    /// Entities it holds.
    public var entities: Int
    /// Entries kept as bytes because they did not decode (``UndecodablePolicy/quarantine``).
    public var quarantined: Int
    /// The bytes of the entities' encodings, added up: what the table's
    /// values take in a snapshot before compression. An entity read from
    /// bytes an earlier shape of its type wrote counts those bytes until it
    /// is put again; a snapshot stores it re-encoded, which the next open counts.
    public var encodedBytes: Int
    /// The heap the table takes, near enough: the entities' boxes, the nodes of its row tree and of every index,
    /// and its quarantined entries. Storage an entity points to (a string
    /// longer than 15 UTF-8 bytes, an array) is not counted: only the
    /// process's resident size tells that.
    public var residentBytes: Int
    /// Its secondary indexes.
    public var indexes: Int
    /// How many of them the open that decoded the table built in the order
    /// the snapshot stored, instead of sorting.
    public var indexesInStoredOrder: Int

    public init(name: String, entities: Int, quarantined: Int, encodedBytes: Int, residentBytes: Int, indexes: Int, indexesInStoredOrder: Int) {
        self.name = name
        self.entities = entities
        self.quarantined = quarantined
        self.encodedBytes = encodedBytes
        self.residentBytes = residentBytes
        self.indexes = indexes
        self.indexesInStoredOrder = indexesInStoredOrder
    }
}

extension Store {
    /// Counters since open: commits, syncs, records per sync, bytes logged,
    /// compactions and how long they took and stalled writers.
    ///
    /// Thread-safe and cheap: the counters are the ones the log writers and
    /// the compaction keep anyway; reading them takes the writers' lock for a
    /// copy of four fields, and each log's lock for its counters. A commit
    /// pays only an integer increment for it. The tables' figures walk their
    /// trees' nodes (about one per 24 entries), never the entities.
    /// Readable from inside a write block of this store too: it then counts
    /// what was committed before that block, and the tables as readers see them.
    public var statistics: StoreStatistics {
        let (commits, retired, logs) = writer.withLockOrHeld { side in
            (side.commits, side.retiredLogs, [side.drainingLog, side.log].compactMap { $0 })
        }
        // The log open wrote again is counted once, current or retired.
        let total = logs.reduce(retired) { $0 + $1.statistics } - relogStatistics
        var statistics = StoreStatistics()
        statistics.commits = commits
        statistics.recordsLogged = total.records
        statistics.syncs = total.syncs
        statistics.bytesLogged = total.bytesWritten
        statistics.tables = current.typed.values.map(\.statistics).sorted { $0.name < $1.name }
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
