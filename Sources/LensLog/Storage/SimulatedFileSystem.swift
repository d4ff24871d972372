#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An in-memory ``FileSystem`` that knows, per file and per directory, what is
/// durable, and can lose the rest in a simulated power cut.
///
/// The model is SQLite's crash-test VFS:
/// - A file has *current* bytes (what reads see) and *durable* bytes (what a
///   crash starts from), plus its unsynced writes, truncations and
///   preallocations in call order. ``StoredFile/sync(_:)`` makes the current
///   content durable, size included, whatever ``SyncNeed`` it asks for: the
///   simulation has no drive cache, so it cannot show what an `.ordered`
///   sync (or a platform's cache-only call) would lose. It counts syncs by
///   need instead (``syncCount(_:)``), so tests see what LensDB asked for.
/// - A directory has a *current* and a *durable* map of names. Creating,
///   renaming and removing change the current map; ``syncDirectory(at:)``
///   makes it durable. Strictly: a created file's name is durable only after
///   its directory is synced, however often the file itself is synced.
/// - ``crash(seed:model:)`` is the power cut: see there for what survives.
///
/// For the crash fuzzer, ``powerCut(afterMutatingCalls:)`` stops the world at
/// any write, sync or rename boundary, and ``injectFault(_:)`` makes chosen
/// calls fail (ENOSPC, EIO, short writes, failed fsyncs).
///
/// Paths: "/" separated; "", "." and repeated slashes are ignored, so
/// "store/0001.log" and "./store//0001.log" are one file. `..` is not resolved.
///
/// Thread-safety: all state sits behind one `Locked` (a pthread mutex); every method may be
/// called from any thread.
///
/// ```swift
/// let fileSystem = SimulatedFileSystem()
/// try fileSystem.createDirectory(at: "store")
/// let file = try fileSystem.openFile(at: "store/a", mode: .create)
/// try file.write([1, 2, 3], at: 0)
/// fileSystem.crash(seed: 7, model: .dropAll)   // "store" itself was never made durable
/// fileSystem.fileExists(at: "store")            // false
/// ```
public final class SimulatedFileSystem: FileSystem {
    let state = Locked(SimulatedState())
    private let observer = Locked<(@Sendable (StorageError.Operation, String) -> Void)?>(nil)
    /// The process id that ``lockFile(at:)`` reports as the holder of a held lock.
    public let processID: Int32

    /// What ``durableSyncSupport(in:)`` answers, for every directory.
    public let durableSync: SyncSupport

    /// An empty file system: only the root directory exists, durably.
    /// `durableSync` plays a file system that takes the planned durable call,
    /// or (`.fallingBack`) one that refuses it.
    public init(
        processID: Int32 = getpid(),
        durableSync: SyncSupport = .asPlanned(SyncPlatform.current.plan(for: .durable).call)
    ) {
        self.processID = processID
        self.durableSync = durableSync
    }

    public func openFile(at path: String, mode: FileOpenMode) throws -> any StoredFile {
        notify(.open, path)
        let (handle, inode) = try state.withLock { state throws(StorageError) in try state.open(path, mode) }
        return SimulatedFile(fileSystem: self, path: path, handle: handle, inode: inode, writable: mode != .readOnly)
    }

    /// Whether `path` names a file or directory now. Never counted as a call;
    /// false while the power is cut.
    public func fileExists(at path: String) -> Bool {
        state.withLock { !$0.poweredOff && $0.entry(at: path) != nil }
    }

    public func removeFile(at path: String) throws {
        notify(.remove, path)
        try state.withLock { state throws(StorageError) in try state.remove(path) }
    }

    public func rename(_ source: String, to destination: String) throws {
        notify(.rename, source)
        try state.withLock { state throws(StorageError) in try state.rename(source, to: destination) }
    }

    public func listDirectory(_ directory: String) throws -> [String] {
        notify(.list, directory)
        return try state.withLock { state throws(StorageError) in try state.list(directory) }
    }

    public func createDirectory(at directory: String, permissions: FilePermissions?) throws {
        notify(.createDirectory, directory)
        try state.withLock { state throws(StorageError) in try state.createDirectory(directory, permissions: permissions ?? .ownerOnly) }
    }

    /// The permissions `directory` was created with. Never counted as a call.
    public func directoryPermissions(at directory: String) throws -> FilePermissions {
        try state.withLock { state throws(StorageError) in
            guard let found = state.directories[SimulatedPath.key(directory)] else {
                throw StorageError(errno: ENOENT, .list, path: directory)
            }
            return found.permissions
        }
    }

    public func syncDirectory(at directory: String) throws {
        notify(.syncDirectory, directory)
        try state.withLock { state throws(StorageError) in try state.syncDirectory(directory) }
    }

    /// ``durableSync``, whatever the directory. Never counted as a call.
    public func durableSyncSupport(in directory: String) throws -> SyncSupport {
        durableSync
    }

    /// Locks `path` (creating the file, not durably) exclusively among live
    /// locks of this file system. A conflict throws `.locked` with
    /// ``processID`` as the holder. Locks end at unlock or ``crash(seed:model:)``.
    public func lockFile(at path: String) throws -> any FileLock {
        notify(.lock, path)
        let holder = processID
        let id = try state.withLock { state throws(StorageError) in try state.lock(path, holder: holder) }
        return SimulatedLock(fileSystem: self, key: SimulatedPath.key(path), id: id)
    }

    /// Calls `observer` with each call's operation and path before the call
    /// runs (outside the lock, so it may use the file system); nil removes it.
    public func observeCalls(_ observer: (@Sendable (StorageError.Operation, String) -> Void)?) {
        self.observer.withLock { $0 = observer }
    }

    func notify(_ operation: StorageError.Operation, _ path: String) {
        observer.withLock { $0 }?(operation, path)
    }
}

// MARK: - Inspecting and corrupting files in tests

extension SimulatedFileSystem {
    /// The bytes a read of `path` would see now, or nil if no file is there.
    /// Not counted as a call; works while the power is cut.
    public func contents(of path: String) -> [UInt8]? {
        state.withLock { state in state.inode(at: path).map { state.inodes[$0]!.current } }
    }

    /// The bytes of the file that `path` durably names, as a crash that drops
    /// every unsynced change would leave them; nil if the name is not durable
    /// in its directory (whether that directory's own name is durable is not checked).
    public func durableContents(of path: String) -> [UInt8]? {
        state.withLock { state in
            guard let (parent, name) = SimulatedPath.split(path),
                  case .file(let inode)? = state.directories[parent]?.durable[name] else { return nil }
            return state.inodes[inode]!.durable
        }
    }

    /// Makes `path` hold exactly `bytes`, durably, name and missing parent
    /// directories included; forgets the file's unsynced changes. Open handles
    /// see the new bytes. Not counted as a call; a test's way to plant damage.
    public func setContents(_ bytes: [UInt8], of path: String) {
        state.withLock { $0.plant(bytes, at: path) }
    }
}
