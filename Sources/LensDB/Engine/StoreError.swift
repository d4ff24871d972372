import LensLog

/// Errors of the store itself. Lower layers' errors pass through unchanged:
/// ``StorageError`` (a file-system call failed), ``LogError`` and
/// ``SnapshotError`` (a damaged or newer file), ``RecoveryError`` (no state
/// recovery can vouch for).
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another process (or another `Store` in this one) holds the store's lock.
    case locked(path: String, holder: Int32?)
    /// The store was opened read-only.
    case readOnly(path: String)
    /// A write or sync failed earlier; the store is read-only until reopened (promise 6).
    case failed(path: String, cause: String)
    /// The store was closed.
    case closed(path: String)
    /// `write`, `flush` or `compact` was called from inside a write block of
    /// the same store, which holds the writers' lock. Nothing changed; the
    /// store and the outer write go on.
    case reentrantWrite(path: String)
    /// A stored record does not decode as a transaction.
    case malformedRecord(file: String, offset: Int64, lsn: UInt64)

    public var description: String {
        switch self {
        case let .locked(path, holder):
            "\(path) is locked by \(holder.map { "process \($0)" } ?? "another process"); close it there first"
        case let .readOnly(path): "\(path) was opened read-only"
        case let .failed(path, cause): "\(path) failed (\(cause)) and is read-only until reopened"
        case let .closed(path): "\(path) is closed"
        case let .reentrantWrite(path):
            "\(path): write called from inside a write block of the same store; make the change on that block's transaction instead"
        case let .malformedRecord(file, offset, lsn):
            "\(file) at offset \(offset): record \(lsn) verifies but is not a valid transaction; run `logtool verify`"
        }
    }
}
