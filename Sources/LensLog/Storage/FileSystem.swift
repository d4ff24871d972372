/// The one seam through which LensDB touches files.
///
/// Everything the engine does to disk goes through a `FileSystem`: the POSIX
/// implementation (``POSIXFileSystem``) in production, and the simulated one
/// (``SimulatedFileSystem``) in tests and the crash fuzzer, which knows per file
/// which bytes are durable and can lose the rest in a simulated power cut.
///
/// Paths are plain strings; a store never needs more than a directory and the
/// files directly inside it.
///
/// Thread-safety: implementations are safe to call from any thread.
/// Errors: every method throws ``StorageError`` and nothing else.
public protocol FileSystem: Sendable {
    /// Opens (and with `.create`, creates) the file at `path`.
    ///
    /// A created file's directory entry is durable only after
    /// ``syncDirectory(at:)`` on its parent. A created file gets its
    /// directory's mode without the execute bits (``FilePermissions``).
    /// Only regular files open: anything else at `path` (a FIFO, device,
    /// socket or directory) throws ``StorageError/Code/notRegularFile`` at
    /// once, without blocking.
    func openFile(at path: String, mode: FileOpenMode) throws -> any StoredFile

    /// Whether a file or directory exists at `path`.
    func fileExists(at path: String) -> Bool

    /// Removes the file at `path`. Durable after ``syncDirectory(at:)``.
    func removeFile(at path: String) throws

    /// Atomically replaces `destination` with `source`. Durable after
    /// ``syncDirectory(at:)``; until then a crash may leave either name.
    func rename(_ source: String, to destination: String) throws

    /// The names (not paths) of the entries directly inside `directory`, sorted.
    func listDirectory(_ directory: String) throws -> [String]

    /// Creates `directory` with `permissions`, or with the process's
    /// default mode (`mkdir`'s: 0777 less the umask) when nil, and missing
    /// parents with the default mode. Succeeds, changing nothing, if it
    /// exists. Files created in it later take its mode (``FilePermissions``).
    func createDirectory(at directory: String, permissions: FilePermissions?) throws

    /// The permissions of the existing `directory`, from its mode
    /// (``FilePermissions/init(keeping:)``): what a copy of the store keeps.
    func directoryPermissions(at directory: String) throws -> FilePermissions

    /// Makes creations, renames and removals inside `directory` durable:
    /// asks for ``SyncNeed/directoryEntries``, never a cheaper sync.
    func syncDirectory(at directory: String) throws

    /// Whether durable syncs of files in `directory` get the call the sync
    /// table plans (``SyncPlatform/plan(for:)``), or a fallback because the
    /// file system refuses it. An open reports the answer
    /// (`OpenStatistics.durableSync`). May itself sync `directory` once.
    func durableSyncSupport(in directory: String) throws -> SyncSupport

    /// Takes an exclusive advisory lock on the file at `path`, creating it.
    ///
    /// Fails at once, without waiting, with a ``StorageError`` whose `code` is
    /// `.locked` and whose `lockHolder` is the holder's process id when known.
    /// The lock lasts until ``FileLock/unlock()`` or process exit.
    func lockFile(at path: String) throws -> any FileLock
}

/// How ``FileSystem/openFile(at:mode:)`` opens a file.
public enum FileOpenMode: Sendable, Equatable {
    /// Read only; the file must exist.
    case readOnly
    /// Read and write; the file must exist.
    case readWrite
    /// Read and write; created empty if missing.
    case create
    /// Read and write; created, and fails with `.exists` if it already exists.
    case createNew
}

/// What durable syncs get in one directory: see
/// ``FileSystem/durableSyncSupport(in:)``.
public enum SyncSupport: Sendable, Equatable, CustomStringConvertible {
    /// The file system takes the planned call (F_FULLFSYNC on Darwin,
    /// fdatasync on Linux): a `.full` commit survives a power cut.
    case asPlanned(SyncCall)
    /// The file system refuses `refused` (a network or FAT volume on Darwin
    /// refuses F_FULLFSYNC), so syncs use `using` instead. When `using`
    /// reaches only the drive's cache, a power cut may lose acknowledged
    /// `.full` commits.
    case fallingBack(refused: SyncCall, using: SyncCall)

    /// One sentence for a program's log: which call durable syncs use.
    public var description: String {
        switch self {
        case .asPlanned(let call): "durable syncs use \(call.rawValue)"
        case let .fallingBack(refused, using):
            "the file system refuses \(refused.rawValue); durable syncs fall back to \(using.rawValue)"
        }
    }
}

/// An open file.
///
/// Thread-safety: positional reads and writes may come from any thread; LensDB
/// never writes one region from two threads at once. After ``close()`` every
/// call throws `.closed`.
public protocol StoredFile: AnyObject, Sendable {
    /// The path the file was opened at.
    var path: String { get }

    /// Reads up to `count` bytes at `offset`; fewer only at the end of the file.
    func read(at offset: Int64, count: Int) throws -> [UInt8]

    /// Writes all of `bytes` at `offset`, extending the file if needed.
    /// Not durable until ``sync(_:)``; a crash may keep, drop or tear it.
    /// On a throw, any prefix of `bytes` may have been written.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws

    /// The current size in bytes.
    func size() throws -> Int64

    /// Makes every write so far as durable as `need` says, with the calls
    /// ``SyncPlatform/plan(for:)`` gives it on this platform. A throw means
    /// some of them may be lost: callers must not retry and carry on (promise 6).
    func sync(_ need: SyncNeed) throws

    /// Starts writing `[offset, offset + length)` to the disk without waiting
    /// for it (`sync_file_range(SYNC_FILE_RANGE_WRITE)` on Linux; nothing on
    /// Darwin, which has no such call). Makes nothing durable: only
    /// ``sync(_:)`` does. A large file written in pieces and then synced
    /// calls it after each piece, so the final sync has little left to write
    /// and does not hold up other files' syncs for long.
    func startWriteback(at offset: Int64, length: Int64) throws

    /// Cuts or extends the file to `length` bytes (extension reads as zeros).
    func truncate(to length: Int64) throws

    /// Reserves disk space for `[offset, offset + length)`, extending the file
    /// with zeros, so later writes there cannot fail for space and a durable
    /// sync need not update the file size.
    func preallocate(at offset: Int64, length: Int64) throws

    /// Releases the descriptor. Idempotent.
    func close()
}

extension FileSystem {
    /// Creates `directory` as only its owner may use it
    /// (``FilePermissions/ownerOnly``); see ``createDirectory(at:permissions:)``.
    public func createDirectory(at directory: String) throws {
        try createDirectory(at: directory, permissions: .ownerOnly)
    }
}

extension StoredFile {
    /// Writes all of `bytes` at `offset`. See ``write(_:at:)-(UnsafeRawBufferPointer,_)``.
    public func write(_ bytes: [UInt8], at offset: Int64) throws {
        try bytes.withUnsafeBytes { try write($0, at: offset) }
    }

    /// Reads the whole file.
    public func readAll() throws -> [UInt8] {
        let length = try size()
        return try read(at: 0, count: Int(length))
    }
}

/// A held exclusive lock; see ``FileSystem/lockFile(at:)``.
public protocol FileLock: AnyObject, Sendable {
    /// Releases the lock. Idempotent.
    func unlock()
}
