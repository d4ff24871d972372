/// What recovery found and did: the open statistics of a store, and what
/// `logtool info` and `verify` print.
public struct RecoveryReport: Sendable, Equatable {
    /// The snapshot the state started from, if any.
    public var snapshot: SnapshotSummary?
    /// Snapshots that failed validation, with why; set aside once a state
    /// without them is chosen, unless read-only.
    public var damagedSnapshots: [DamagedFile] = []
    /// The damaged snapshots in place that a successful recovery sets aside.
    var snapshotsToSetAside: [String] = []
    /// Log files whose records were replayed, in order.
    public var logsRead: [ReplayedLog] = []
    /// Logs older than the snapshot: fully covered by it, deleted by compaction.
    public var obsoleteLogs: [String] = []
    /// Logs after a torn point that hold only records that were never durable.
    public var orphanedLogs: [String] = []
    /// Logs whose header never reached the disk and that no record vouches
    /// for: cut while new, holding nothing durable.
    public var logsCutWhileNew: [String] = []
    /// Logs a later log supersedes entirely: it starts at or before the
    /// first LSN they would hold, because an open logged an unproven tail
    /// again there. Never read; a writable open removes them.
    public var supersededLogs: [String] = []
    public var recordsReplayed = 0
    /// Bytes of records (headers included, zero fill not) in the logs read.
    public var logBytes: Int64 = 0
    /// The LSN of the last transaction in the recovered state (0 for none).
    public var lastLSN: UInt64 = 0
    /// The highest LSN known durable: the snapshot's, or one a later record
    /// vouches for. Records after it were read but may exist only in the
    /// page cache of this boot; a writable open logs them again.
    public var provenLSN: UInt64 = 0
    /// Torn tails cut off quietly (promise 3): unsynced writes a crash tore.
    public var tornTails: [TornTail] = []
    /// What `.salvage` dropped around damage.
    public var dropped: [DroppedLogRange] = []
    /// Under `.salvage`, the LSNs a log that starts before the LSN expected
    /// holds again (`lostLSNs`): the chain had them already, so that log's
    /// copies were skipped and nothing is lost. `.strict` refuses such a
    /// log when a record or clean close proves it durable
    /// (``RecoveryError/missingRecords(file:expectedLSN:firstLSN:)``);
    /// unproven, it is orphaned under either policy.
    public var skippedCopies: [DroppedLogRange] = []

    public init() {}

    /// Bytes cut off as torn tails.
    public var tornBytes: Int64 { tornTails.reduce(0) { $0 + $1.bytesDropped } }
}

/// A log whose records recovery replayed.
public struct ReplayedLog: Sendable, Equatable {
    public var path: String
    /// The LSN of its first record (as its header says, or as salvage assumed).
    public var firstLSN: UInt64
    /// The last LSN the chain holds after reading it: the last replayed
    /// from it, or, when none was, the LSN before it (its first − 1, or for
    /// a log that starts early, the last the chain held already).
    public var lastLSN: UInt64
}

public struct SnapshotSummary: Sendable, Equatable {
    public var path: String
    public var generation: UInt64
    public var lastLSN: UInt64
    public var size: Int64

    public init(path: String, generation: UInt64, lastLSN: UInt64, size: Int64) {
        self.path = path
        self.generation = generation
        self.lastLSN = lastLSN
        self.size = size
    }
}

public struct DamagedFile: Sendable, Equatable {
    public var path: String
    /// Where it was moved, when recovery set it aside.
    public var movedTo: String?
    public var problem: String
}

public struct TornTail: Sendable, Equatable {
    public var file: String
    public var offset: Int64
    public var bytesDropped: Int64
    public var reason: DamageReason?
}

public struct DroppedLogRange: Sendable, Equatable {
    public var file: String
    public var range: DroppedRange

    public init(file: String, range: DroppedRange) {
        self.file = file
        self.range = range
    }
}

/// Recovery could not produce a state it can vouch for.
public enum RecoveryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Every snapshot is damaged or not continued by the logs (or none is in
    /// place, and one an earlier open set aside may hold the history, or
    /// there is none at all), and the logs do not start at LSN 1. Nothing
    /// was renamed: `logtool repair` salvages the newest snapshot whose
    /// header verifies, or with none at all, keeps the logs alone.
    case noUsableSnapshot(directory: String, damaged: [DamagedFile])
    /// A log that should continue the chain starts too late, and a later
    /// record (or a clean close) proves the missing LSNs were durable; or it
    /// starts too early, holding again LSNs the chain has. `.salvage` drops
    /// the missing LSNs, or the log's copies of those it holds again.
    case missingRecords(file: String, expectedLSN: UInt64, firstLSN: UInt64)
    /// The store was closed cleanly through `closedLSN`, so every record up
    /// to it was durable, yet the logs end (or are damaged) at `offset` of
    /// `file`, before `firstLostLSN`: a file was cut, damaged or removed
    /// after the close. Not a crash's torn tail, which a clean close rules out.
    case lostAfterCleanClose(file: String, offset: Int64, firstLostLSN: UInt64, closedLSN: UInt64, reason: DamageReason)

    public var description: String {
        switch self {
        case let .noUsableSnapshot(directory, damaged) where damaged.isEmpty:
            "\(directory): the store has no snapshot, yet no log whose header verifies starts at LSN 1: the snapshot that held the transactions before them is gone (removed, or not copied with the logs), or the header of the log that starts there is damaged. No file was changed. Run \(repairCommand(for: directory)), which keeps every record that verifies and lists the LSNs it cannot find as lost, or put the snapshot back from a backup"
        case let .noUsableSnapshot(directory, damaged):
            "\(directory): no snapshot can be used (\(damaged.map { "\($0.path): \($0.problem)" }.joined(separator: "; "))) and the logs do not reach back to LSN 1; no file was changed. Run \(repairCommand(for: directory)): it keeps what verifies of the newest snapshot whose header verifies, and the logs after it, and lists what is lost (when no snapshot's header verifies, restore the store from a backup)"
        case let .missingRecords(file, expected, first) where first < expected:
            "\(file): starts at LSN \(first), but the snapshot and logs before it already hold LSNs through \(expected - 1), so two files hold LSNs \(first)…\(expected - 1); run \(repairCommand(forFileIn: file)), or open with .salvage, to keep the LSNs read first and drop this log's copies of them"
        case let .missingRecords(file, expected, first):
            "\(file): starts at LSN \(first) but LSN \(expected) was expected and durable, so LSNs \(expected)…\(first - 1) are missing; run \(repairCommand(forFileIn: file)), or open with .salvage, to keep every record that verifies"
        case let .lostAfterCleanClose(file, offset, first, closed, reason):
            "\(file) at offset \(offset): the logs end (\(reason.rawValue)) before LSN \(first), but the store was closed cleanly through LSN \(closed), so LSNs \(first)…\(closed) were durable and are missing: a file was cut, damaged or removed after the close (or copied before it). Restore the store from a backup, or "
                + (first > 1 ? "keep LSN 1…\(first - 1)" : "keep what else verifies") + " with \(repairCommand(forFileIn: file)) or .salvage"
        }
    }
}

extension StoreDirectory {
    /// The logs a writable open removes after recovering `report`: those
    /// the snapshot covers, those a later log supersedes, and those that
    /// hold only records that were never durable (orphaned, cut while new).
    /// None holds a record the recovered state needs. The log of the
    /// snapshot in effect stays whatever it holds: its presence tells open
    /// that this snapshot is the current one (``LogChain``).
    public func logsRemovedByOpen(after report: RecoveryReport) -> [String] {
        let unneeded = report.obsoleteLogs + report.supersededLogs + report.orphanedLogs + report.logsCutWhileNew
        return unneeded.filter { $0 != logOfSnapshot(in: report) }
    }

    /// The log whose presence marks the snapshot `report` starts from as current.
    public func logOfSnapshot(in report: RecoveryReport) -> String? {
        report.snapshot.map { logPath(generation: $0.generation) }
    }
}
