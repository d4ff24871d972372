/// Which system call makes writes durable, on each platform LensDB builds for.
///
/// Callers of ``StoredFile/sync(_:)`` say what they *need* (``SyncNeed``);
/// this table, and nothing else, decides which call gives it where. It is
/// pure — no system call, no host check except ``SyncPlatform/current`` — so
/// tests read every platform's row on any machine. The article "Durability on
/// each platform" shows it as a table with what each durability mode promises.
///
/// Why the rows differ: on Linux, `fsync` and `fdatasync` return only once
/// the drive has written its volatile cache (the kernel sends a cache flush),
/// so both reach stable storage. On Darwin, `fsync(2)` hands the writes to the
/// drive and returns; the drive may keep them in its cache, in any order, and
/// lose them in a power cut. `fcntl(F_FULLFSYNC)` also asks the drive to flush
/// its cache; `fcntl(F_BARRIERFSYNC)` only orders the writes before later ones.

/// What a sync must achieve before it returns.
public enum SyncNeed: String, Sendable, Hashable, CaseIterable {
    /// The file's data, and the metadata needed to read it back (its size),
    /// survive a power cut. Log batches, the first sync of a new log, snapshots.
    case durable
    /// Like ``durable``, and all other metadata of the file or directory as
    /// well: directory entries (``SyncNeed/directoryEntries``) and new files.
    case durableWithMetadata
    /// The writes reach the disk before any write issued after the sync
    /// returns, but a power cut may lose them (with everything after them).
    /// Asked only by a log writer with ``LogWriterOptions/appleBarrierOnly``.
    case ordered

    /// What ``FileSystem/syncDirectory(at:)`` asks for: names are metadata
    /// of the directory, and a created, renamed or removed name must survive
    /// a power cut before LensDB relies on it.
    public static let directoryEntries = SyncNeed.durableWithMetadata
}

/// A system call that pushes a file's writes toward the disk.
public enum SyncCall: String, Sendable, Hashable, CaseIterable {
    /// `fdatasync(2)`. Linux; Darwin's headers do not declare it.
    case fdatasync
    /// `fsync(2)`.
    case fsync
    /// `fcntl(fd, F_FULLFSYNC)`. Darwin only.
    case fullFsync = "F_FULLFSYNC"
    /// `fcntl(fd, F_BARRIERFSYNC)`. Darwin only.
    case barrierFsync = "F_BARRIERFSYNC"
}

/// How far the writes a sync covers have got once the call returns.
public enum SyncReach: Int, Sendable, Comparable {
    /// To the drive, which may hold them in its volatile cache and write them
    /// in any order: a power cut may lose any of them.
    case driveCache
    /// To the drive, ordered before every later write: a power cut may lose
    /// them, but never keeps a later write while losing them.
    case ordered
    /// To stable storage: a power cut keeps them.
    case stableStorage

    /// Whether `a` gets the writes less far than `b`.
    public static func < (a: SyncReach, b: SyncReach) -> Bool { a.rawValue < b.rawValue }
}

/// The calls one ``SyncNeed`` uses on one platform.
public struct SyncPlan: Sendable, Equatable {
    /// The call that gives the need.
    public var call: SyncCall
    /// Tried in order only while the file system *refuses* the calls before
    /// (ENOTSUP, EINVAL, ENOTTY: it does not implement them, and nothing was
    /// written). Never after a call that failed: a failed sync is never
    /// retried (promise 6). A fallback may reach less far than ``call``; an
    /// open says so in ``SyncSupport``.
    public var fallbacks: [SyncCall] = []

    /// A plan that uses `call`, and `fallbacks` where a file system refuses it.
    public init(call: SyncCall, fallbacks: [SyncCall] = []) {
        self.call = call
        self.fallbacks = fallbacks
    }

    /// ``call`` followed by ``fallbacks``.
    public var calls: [SyncCall] { [call] + fallbacks }
}

/// The platforms LensDB builds for, as far as syncing is concerned.
public enum SyncPlatform: String, Sendable, CaseIterable {
    /// Linux, with glibc or musl.
    case linux
    /// macOS 13 or later.
    case macOS
    /// iOS 16 or later, including Mac Catalyst and the simulator.
    case iOS

    /// The platform this program was built for.
    public static var current: SyncPlatform {
        #if os(Linux)
        .linux
        #elseif os(macOS)
        .macOS
        #elseif os(iOS)
        .iOS
        #else
        // A platform without a row here would sync with calls nobody checked.
        #error("LensDB's sync table has no row for this platform: add one to SyncPlatform")
        #endif
    }

    /// macOS and iOS (with Mac Catalyst and the simulator, which are iOS builds).
    public var isDarwin: Bool { self != .linux }

    /// The table: which calls `need` uses here.
    public func plan(for need: SyncNeed) -> SyncPlan {
        switch (isDarwin, need) {
        case (false, .durable):
            SyncPlan(call: .fdatasync)
        case (false, .durableWithMetadata):
            SyncPlan(call: .fsync)
        case (false, .ordered):
            // Linux has no ordering-only sync; the durable call is the cheapest that orders.
            SyncPlan(call: .fdatasync)
        case (true, .durable), (true, .durableWithMetadata):
            // F_FULLFSYNC syncs data and metadata alike; network and FAT
            // volumes refuse it, and there fsync is the most there is.
            SyncPlan(call: .fullFsync, fallbacks: [.fsync])
        case (true, .ordered):
            SyncPlan(call: .barrierFsync, fallbacks: [.fullFsync, .fsync])
        }
    }

    /// How far `call` gets here; nil where the platform has no such call.
    public func reach(of call: SyncCall) -> SyncReach? {
        switch (isDarwin, call) {
        case (false, .fdatasync), (false, .fsync): .stableStorage
        case (false, .fullFsync), (false, .barrierFsync): nil
        case (true, .fullFsync): .stableStorage
        case (true, .barrierFsync): .ordered
        case (true, .fsync): .driveCache
        case (true, .fdatasync): nil
        }
    }
}
