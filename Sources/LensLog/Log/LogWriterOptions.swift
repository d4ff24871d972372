/// When a commit returns, relative to the disk.
public enum Durability: Sendable, Equatable {
    /// After the durable sync that covers it (``SyncNeed/durable``:
    /// `fdatasync` on Linux, `F_FULLFSYNC` on Darwin): survives a power cut
    /// (promise 1).
    case full
    /// After it is written to the operating system: survives a process crash;
    /// made durable by a later sync — a `.full` commit, ``LogWriter/flush()``,
    /// or the background interval.
    case buffered
    /// Like `.buffered` but never synced in the background (tests, scratch data).
    case none
}

/// Tuning of a ``LogWriter``.
public struct LogWriterOptions: Sendable {
    /// LZ4-compress payloads that shrink by it.
    public var compression = true
    /// The file grows by preallocated chunks of at least this many bytes, so an
    /// durable sync rarely has to update the file's size. 0 appends without it.
    public var preallocationChunk: Int64 = 4 << 20
    /// How often `.buffered` commits are synced in the background; nil never.
    public var backgroundSyncInterval: Duration? = .milliseconds(100)
    /// On macOS and iOS, sync commits with `F_BARRIERFSYNC` instead of
    /// `F_FULLFSYNC`: the trade-off SQLite makes when its `fullfsync` setting
    /// is off. Off by default.
    ///
    /// What changes: a `.full` commit still survives a crash of the program or
    /// of the system, and commits reach the disk in order, so reopening still
    /// yields a prefix of the commits (promise 2). But a power cut may lose
    /// the last acknowledged commits (promise 1 no longer holds). In
    /// exchange a commit no longer waits for the drive to empty its cache.
    ///
    /// Only the syncs of commits change (``commitSyncNeed``): creating a log,
    /// snapshots, directory entries, and a tail written again at open stay
    /// durable. On Linux nothing changes: its durable sync is also its
    /// cheapest ordered one.
    public var appleBarrierOnly = false

    /// What a sync of commits asks for: ``SyncNeed/durable``, or
    /// ``SyncNeed/ordered`` with ``appleBarrierOnly``.
    public var commitSyncNeed: SyncNeed { appleBarrierOnly ? .ordered : .durable }

    public init() {}
}

/// Counters of a ``LogWriter``, for tests and benchmarks.
public struct LogWriterStatistics: Sendable, Equatable {
    public var records = 0
    /// Write turns that wrote something.
    public var batches = 0
    /// Syncs that succeeded: records / syncs is the group size.
    public var syncs = 0
    public var bytesWritten: Int64 = 0

    /// All counters at zero.
    public init() {}
}
