/// Why a ``LogFollower`` cannot go on. Each description names the file or
/// LSN and says what to do.
public enum FollowError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The transactions from `lsn` on are in no log any more: compaction
    /// moved them into `snapshot` (which holds everything through
    /// `snapshotLSN`) before the follower read them. Either it started
    /// from an LSN a snapshot already holds, or a log was created and
    /// compacted away between two of its polls.
    case compactedAway(lsn: UInt64, snapshot: String, snapshotLSN: UInt64)
    /// Damage in a log followed by a record proving the damaged one was
    /// durable: the disk changed synced data.
    case corruption(file: String, offset: Int64, lsn: UInt64, reason: DamageReason)
    /// A transaction already handed on is not what the store holds under
    /// its LSN any more: a writer cut it off after its write or sync failed,
    /// or the disk lost it. What was exported holds a transaction the store
    /// does not.
    case diverged(lsn: UInt64, file: String)

    public var description: String {
        switch self {
        case let .compactedAway(lsn, snapshot, snapshotLSN):
            "transaction \(lsn) is no longer in any log: compaction moved it into \(snapshot), which holds everything through LSN \(snapshotLSN); take that state with `logtool dump \(pathWord(parentDirectory(of: snapshot))) --snapshot --json`, then follow with `--from \(snapshotLSN + 1)`, and poll more often (--interval): each log must be seen by one poll before the compaction that follows it deletes it"
        case let .corruption(file, offset, lsn, reason):
            "\(file) at offset \(offset): \(reason.rawValue) at LSN \(lsn), followed by records proving it was durable, so transaction \(lsn) is lost. \(Self.rebuilding(parentDirectory(of: file), repair: true))"
        case let .diverged(lsn, file):
            "\(file): transaction \(lsn) was handed on, but the store no longer holds it (a failed write or sync cut it off, or the disk lost it), so what was exported is ahead of the store. \(Self.rebuilding(parentDirectory(of: file), repair: false))"
        }
    }

    /// How to rebuild what was exported from the store at `store`: from one
    /// snapshot of all of it, then following on from there. The transactions
    /// repair keeps after damage go into its snapshot, never into a log, so
    /// only that snapshot hands them on.
    private static func rebuilding(_ store: String, repair: Bool) -> String {
        let first = repair
            ? "Stop the program that writes the store, run `logtool repair \(pathWord(store)) --in-place` (with --key-file when the store is encrypted), which keeps every record that verifies in one snapshot"
            : "Stop the program that writes the store, run `logtool compact \(pathWord(store))` (with --key-file when the store is encrypted), which puts all of it in one snapshot"
        return first + "; then rebuild what was exported from `logtool dump \(pathWord(store)) --snapshot --json`, and follow with `--from` one past the last LSN `logtool info \(pathWord(store))` reports, before the program writes again"
    }
}
