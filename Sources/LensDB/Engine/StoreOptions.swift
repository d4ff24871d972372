import LensLog
import Logging

/// How a ``Store`` is opened and how it commits.
public struct StoreOptions: Sendable {
    /// When a write returns, relative to the disk. Default `.full`.
    public var durability: Durability = .full
    /// LZ4 for log records and snapshot chunks. Default `.lz4`.
    public var compression: Compression = .lz4
    /// What open does with damage followed by valid records. Default `.strict`.
    public var recovery: RecoveryPolicy = .strict
    /// Open without the lock and without changing any file; writes throw
    /// ``StoreError/readOnly(path:)``. For tools; works while another process writes.
    public var readOnly = false
    /// Compact automatically once the logs exceed this multiple of the
    /// snapshot's size (and ``compactionMinimumLogBytes``). nil: only on demand.
    public var compactionLogRatio: Double? = 2
    /// Logs smaller than this are never compacted automatically.
    public var compactionMinimumLogBytes: Int64 = 4 << 20
    /// Calls ``Store/checkInvariants()`` after every commit, compaction and
    /// open, and traps on a violation. For tests and debugging: slow.
    public var checksInvariants = false
    /// Who may read and write a store this open creates: its directory's
    /// mode, from which its files take theirs (`FilePermissions`).
    /// Default `FilePermissions/ownerOnly` (0700, files 0600), as
    /// PostgreSQL and etcd keep their data: a store often holds
    /// credentials. An existing store keeps the mode its directory has.
    public var permissions: FilePermissions = .ownerOnly
    /// Whether an open may create a store in a directory that already
    /// holds other files (left alone: LensDB only ever touches the names it
    /// writes, listed in `StoreDirectory`). Default false: such a
    /// directory is refused with ``StoreError/notAStore(path:foreignEntries:)``,
    /// so a mistyped path never turns someone's folder into a store.
    public var adoptsNonEmptyDirectory = false
    /// The key the store's files are encrypted with; nil (the default) for
    /// a plain store. A store is encrypted as a whole or not at all: a key
    /// that does not fit what the files say — none for an encrypted store,
    /// one for a plain store, another key — fails the open with
    /// ``StoreError/encryptionKeyRequired(path:file:keyID:)``,
    /// ``StoreError/notEncrypted(path:file:given:)`` or
    /// ``StoreError/wrongEncryptionKey(path:file:found:given:)``, before any
    /// record is decrypted and without changing a file. A new store opened
    /// with a key is encrypted from its first write. To encrypt, decrypt or
    /// re-key an existing store, open it with the key it has and call
    /// ``Store/changeEncryptionKey(to:)``. The "Encryption at rest" article
    /// has the format and the guarantees.
    public var encryptionKey: EncryptionKey?
    /// The file system; tests and the crash fuzzer pass a simulated one.
    public var fileSystem: any FileSystem = POSIXFileSystem()
    /// Tuning of the log writer.
    public var log = LogWriterOptions()
    /// Where the store reports what an operator wants to know: recovery
    /// (torn tails cut, records written again, logs removed, what
    /// `.salvage` dropped), compactions with their sizes and times, the
    /// fail-stop and its cause, and lock contention. Never an event per
    /// commit. Default: drops everything. Each event carries the metadata
    /// key `store`; the events are listed in the "Durability and recovery" article.
    public var logger: Logger = Store.silentLogger

    public enum Compression: Sendable, Equatable {
        case none, lz4
    }

    public init(
        durability: Durability = .full, compression: Compression = .lz4, recovery: RecoveryPolicy = .strict,
        encryptionKey: EncryptionKey? = nil
    ) {
        self.durability = durability
        self.compression = compression
        self.recovery = recovery
        self.encryptionKey = encryptionKey
    }
}

/// What opening a store found and did: ``Store/openStatistics``.
public struct OpenStatistics: Sendable {
    /// Snapshot chosen, records replayed, torn tails cut, damage dropped.
    public var recovery: RecoveryReport
    /// Table entries and root documents in the opened state.
    public var items: Int
    /// Wall time of the open, in seconds.
    public var seconds: Double
    /// Whether durable syncs in the store's directory get the call the sync
    /// table plans, or fall back because the file system refuses it (on
    /// Darwin: F_FULLFSYNC refused, fsync used, so a power cut may lose
    /// acknowledged `.full` commits). nil for read-only and in-memory opens,
    /// which sync nothing.
    public var durableSync: SyncSupport? = nil
}
