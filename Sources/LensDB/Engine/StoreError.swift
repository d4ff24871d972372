#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import LensLog

/// Errors of the store itself. Lower layers' errors pass through unchanged:
/// `StorageError` (a file-system call failed), `LogError` and
/// `SnapshotError` (a damaged or newer file), `RecoveryError` (no state
/// recovery can vouch for).
///
/// Each description is one sentence that names the store or file, says
/// what happened and what to do about it.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another process (or another `Store` in this one) holds the store's
    /// lock. `holder` is the pid the holder recorded; this process's own
    /// when another `Store` here has it open.
    case locked(path: String, holder: Int32?)
    /// The directory holds files that are not a store's (`foreignEntries`,
    /// their paths) and nothing of a store, so open would not make it one:
    /// it creates stores only in new or empty directories, unless
    /// ``StoreOptions/adoptsNonEmptyDirectory`` says otherwise. Nothing changed.
    case notAStore(path: String, foreignEntries: [String])
    /// `path` exists and is not a directory. Nothing changed.
    case notADirectory(path: String)
    /// A read-only open of a path where there is nothing: it creates no store.
    case noStore(path: String)
    /// The store was opened read-only.
    case readOnly(path: String)
    /// A write or sync failed earlier; the store is read-only until reopened
    /// (promise 6). `cause` says which call on which file failed, and why.
    case failed(path: String, cause: String)
    /// The store was closed.
    case closed(path: String)
    /// A call that writes the store (`write`, `flush`, `compact`,
    /// `changeEncryptionKey`, or opening a table or a root) was made from inside a write block of the same store, which
    /// holds the writers' lock. Nothing changed; the store and the outer
    /// write go on.
    case reentrantWrite(path: String)
    /// A stored record does not decode as a transaction.
    case malformedRecord(file: String, offset: Int64, lsn: UInt64)
    /// A stored record decodes, but its change does not apply to the state
    /// the records before it built (`problem` says which change, and why):
    /// it builds on a record that is missing, or LensDB did not write it.
    /// Thrown under `.strict`; `.salvage` drops the record whole and
    /// reports it (`DamageReason.doesNotApply`).
    case recordDoesNotApply(file: String, offset: Int64, lsn: UInt64, problem: String)
    /// The store is encrypted (its file `file` says so, under the key
    /// named `keyID`) and the open was given no key
    /// (``StoreOptions/encryptionKey``). Nothing was read past the headers
    /// and nothing changed.
    case encryptionKeyRequired(path: String, file: String, keyID: KeyID)
    /// The store is encrypted under the key named `found`, and the open
    /// was given another (`given`). Nothing was decrypted and nothing changed.
    case wrongEncryptionKey(path: String, file: String, found: KeyID, given: KeyID)
    /// The store is not encrypted (`file` is plain) and the open was given
    /// a key: a store is never half encrypted, so it is neither read as if
    /// protected nor encrypted from the next write on. Open it without a
    /// key, then ``Store/changeEncryptionKey(to:)`` encrypts it whole.
    case notEncrypted(path: String, file: String, given: KeyID)
    /// The store's files are numbered up to the last generation a file name
    /// holds (`ffffffffffffffff`), so it cannot start another log or
    /// snapshot: a writable open, a compaction or a key change refuses
    /// before it changes a log or snapshot. No LensDB numbers files that
    /// far, so a file was named by hand; a read-only open still reads the
    /// store, and `logtool repair` writes it anew from generation 1.
    case generationsExhausted(path: String)

    public var description: String {
        switch self {
        case let .locked(path, holder) where holder == getpid():
            "\(path) is already open in this process: another Store of it holds the lock; use that Store, or close it, then open the store again"
        case let .locked(path, holder):
            "\(path) is locked by \(holder.map { "process \($0)" } ?? "another process"), which has the store open; close it there, then open it again"
        case let .notAStore(path, entries):
            "\(path) is not a LensDB store: it holds \(Self.listing(entries)) and no store's files, so it was left as it is; open a new or empty directory, or set StoreOptions.adoptsNonEmptyDirectory to create a store beside those files"
        case let .noStore(path):
            "\(path) does not exist; a read-only open reads an existing store and creates none (open without StoreOptions.readOnly to create it)"
        case let .notADirectory(path):
            "\(path) is not a directory, so it cannot be a store; choose a path that is a directory or does not exist yet"
        case let .readOnly(path):
            "\(path) was opened read-only, so it cannot be written; open it without StoreOptions.readOnly to write"
        case let .failed(path, cause):
            "\(path) is read-only until it is reopened because \(cause); reads still work: fix the cause (free space, check the device), then reopen the store"
        case let .closed(path):
            "\(path) is closed; open it again with a new Store to write"
        case let .reentrantWrite(path):
            "\(path): a call that writes the store (write, flush, compact, changeEncryptionKey, or opening a table or a root) was made inside one of its write blocks, whose writers' lock that block holds; nothing changed. Make a change on that block's transaction, and make the other calls after the block returns"
        case let .encryptionKeyRequired(path, file, keyID):
            "\(path) is encrypted (\(file) needs the key whose id is \(keyID)) and no key was given; set StoreOptions.encryptionKey to that key"
        case let .wrongEncryptionKey(path, file, found, given):
            "\(path) is encrypted with the key whose id is \(found) (\(file) says so), not with the key given (id \(given)); open it with key \(found): a key change that a crash cut short before its new log was in place leaves the store under its old key, which is then this one"
        case let .notEncrypted(path, file, given):
            "\(path) is not encrypted (\(file) is plain), but a key was given (id \(given)); open it without StoreOptions.encryptionKey, then call changeEncryptionKey(to:) to encrypt it"
        case let .generationsExhausted(path):
            "\(path): the store's files are numbered up to generation ffffffffffffffff, the last a file name holds, so it cannot start another log; no LensDB numbers files that far, so one was named by hand. No log or snapshot changed, and a read-only open still reads the store: run `logtool repair \(pathWord(path)) --in-place`, which writes it anew from generation 1"
        case let .recordDoesNotApply(file, offset, lsn, problem):
            "\(file) at offset \(offset): record \(lsn) verifies, but it holds \(problem), so it builds on a record that is missing or was not written by LensDB; open the store with RecoveryPolicy.salvage, or run \(repairCommand(forFileIn: file)), to drop this record and keep every other"
        case let .malformedRecord(file, offset, lsn):
            "\(file) at offset \(offset): record \(lsn) passes its checksum but is not a transaction this version of LensDB can read; open the store with the version that wrote it, or look at the record with `logtool dump \(pathWord(parentDirectory(of: file))) --from \(lsn) --to \(lsn)`"
        }
    }

    /// The generation after `generation`, which names the next log and snapshot.
    /// - Throws: ``generationsExhausted(path:)`` when `generation` is the last.
    static func generation(after generation: UInt64, path: String) throws(StoreError) -> UInt64 {
        guard generation < .max else { throw .generationsExhausted(path: path) }
        return generation + 1
    }

    /// The open of the store at `path` met `error`: the key does not fit a file.
    static func encryption(_ error: EncryptionError, path: String) -> StoreError {
        switch error {
        case let .keyRequired(file, found): .encryptionKeyRequired(path: path, file: file, keyID: found.keyID)
        case let .wrongKey(file, found, given): .wrongEncryptionKey(path: path, file: file, found: found, given: given)
        case let .notEncrypted(file, given): .notEncrypted(path: path, file: file, given: given)
        }
    }

    /// "report.tmp", or "3 other entries (a, b, c)".
    private static func listing(_ entries: [String]) -> String {
        let names = entries.map { $0.split(separator: "/").last.map(String.init) ?? $0 }
        let shown = names.prefix(3).joined(separator: ", ") + (names.count > 3 ? ", …" : "")
        return names.count == 1 ? shown : "\(names.count) other entries (\(shown))"
    }

    /// The store at `path` failed because of `error` (promise 6). The cause
    /// is the failed call itself: a log writer's own "accepts no more
    /// records" is what this error says already.
    static func failed(path: String, after error: any Error) -> StoreError {
        switch error {
        case LogError.writerFailed(let cause): .failed(path: path, cause: "\(cause)")
        case LogError.writerClosed: .failed(path: path, cause: "its log was closed before the commit was durable")
        default: .failed(path: path, cause: "\(error)")
        }
    }
}
