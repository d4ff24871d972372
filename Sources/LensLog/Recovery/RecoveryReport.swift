/// What recovery found and did: the open statistics of a store, and what
/// `logtool info` and `verify` print.
public struct RecoveryReport: Sendable, Equatable {
    /// The snapshot the state started from, if any.
    public var snapshot: SnapshotSummary?
    /// Snapshots that failed validation, with why; set aside unless read-only.
    public var damagedSnapshots: [DamagedFile] = []
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

    public init() {}

    /// Bytes cut off as torn tails.
    public var tornBytes: Int64 { tornTails.reduce(0) { $0 + $1.bytesDropped } }
}

/// A log whose records recovery replayed.
public struct ReplayedLog: Sendable, Equatable {
    public var path: String
    /// The LSN of its first record (as its header says, or as salvage assumed).
    public var firstLSN: UInt64
    /// The last LSN replayed from it (first LSN − 1 when none was).
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
}

/// Recovery could not produce a state it can vouch for.
public enum RecoveryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Every snapshot is damaged or not continued by the logs, and the logs
    /// do not start at LSN 1.
    case noUsableSnapshot(directory: String, damaged: [DamagedFile])
    /// A log that should continue the chain starts too early or too late, and
    /// a later record proves the missing LSNs were durable.
    case missingRecords(file: String, expectedLSN: UInt64, firstLSN: UInt64)

    public var description: String {
        switch self {
        case let .noUsableSnapshot(directory, damaged):
            "\(directory): no snapshot can be used (\(damaged.map { "\($0.path): \($0.problem)" }.joined(separator: "; "))) and the logs do not cover the gap; run `logtool repair \(directory)`"
        case let .missingRecords(file, expected, first):
            "\(file): starts at LSN \(first) but LSN \(expected) was expected and durable; open with .salvage or run `logtool repair`"
        }
    }
}
