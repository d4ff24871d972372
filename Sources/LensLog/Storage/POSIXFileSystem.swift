#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The production ``FileSystem``: POSIX calls, looping on EINTR and short
/// transfers, `O_CLOEXEC` on every descriptor, `flock` for the store lock.
///
/// Thread-safety: a stateless value; every method may be called from any thread.
/// Errors: each failed call throws a ``StorageError`` built from its errno, with
/// the path it concerned.
public struct POSIXFileSystem: FileSystem {
    /// A file system over the process's own view of the disk.
    public init() {}

    public func openFile(at path: String, mode: FileOpenMode) throws -> any StoredFile {
        var flags = O_CLOEXEC
        switch mode {
        case .readOnly: flags |= O_RDONLY
        case .readWrite: flags |= O_RDWR
        case .create: flags |= O_RDWR | O_CREAT
        case .createNew: flags |= O_RDWR | O_CREAT | O_EXCL
        }
        let descriptor = try retryingEINTR(.open, path) { systemOpen(path, flags) }
        return POSIXFile(descriptor: descriptor, path: path)
    }

    public func fileExists(at path: String) -> Bool {
        access(path, F_OK) == 0
    }

    public func removeFile(at path: String) throws {
        _ = try retryingEINTR(.remove, path) { unlink(path) }
    }

    public func rename(_ source: String, to destination: String) throws {
        _ = try retryingEINTR(.rename, source) { systemRename(source, destination) }
    }

    public func listDirectory(_ directory: String) throws -> [String] {
        guard let handle = opendir(directory) else { throw StorageError(errno: errno, .list, path: directory) }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    public func createDirectory(at directory: String) throws {
        var prefix = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw StorageError(errno: errno, .createDirectory, path: prefix)
            }
        }
    }

    public func syncDirectory(at directory: String) throws {
        let descriptor = try openDirectory(directory)
        defer { closeDescriptor(descriptor) }
        if case .failure(let error) = POSIXSync.sync(descriptor, .directoryEntries) {
            throw StorageError(errno: error.code, .syncDirectory, path: directory)
        }
    }

    /// Where the plan has no fallback (Linux), nothing can be refused and no
    /// call is made. Elsewhere the directory is synced once with the durable
    /// plan: which call succeeds is the answer, since the files of a store
    /// live on its directory's file system.
    public func durableSyncSupport(in directory: String) throws -> SyncSupport {
        let plan = SyncPlatform.current.plan(for: .durable)
        guard !plan.fallbacks.isEmpty else { return .asPlanned(plan.call) }
        let descriptor = try openDirectory(directory)
        defer { closeDescriptor(descriptor) }
        switch POSIXSync.sync(descriptor, .durable) {
        case .success(let call) where call == plan.call: return .asPlanned(call)
        case .success(let call): return .fallingBack(refused: plan.call, using: call)
        case .failure(let error): throw StorageError(errno: error.code, .syncDirectory, path: directory)
        }
    }

    private func openDirectory(_ directory: String) throws -> Int32 {
        try retryingEINTR(.syncDirectory, directory) {
            systemOpen(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }
    }

    public func lockFile(at path: String) throws -> any FileLock {
        let descriptor = try retryingEINTR(.lock, path) { systemOpen(path, O_RDWR | O_CREAT | O_CLOEXEC) }
        let file = POSIXFile(descriptor: descriptor, path: path)
        // flock locks belong to the open file description: a second open of
        // the same store, in this process or another, conflicts.
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            defer { file.close() }
            var error = StorageError(errno: code, .lock, path: path)
            if code == EWOULDBLOCK { error.lockHolder = Self.holder(recordedIn: file) }
            throw error
        }
        // The pid is advice for error messages and tools; the flock is what
        // excludes. Failing to record it must not fail the open, so the errors
        // are dropped: a conflicting opener then reports no holder.
        try? file.truncate(to: 0)
        try? file.write(Array("\(getpid())\n".utf8), at: 0)
        return POSIXLock(file: file)
    }

    /// The pid the lock's holder wrote into the lock file, if it is readable.
    private static func holder(recordedIn file: POSIXFile) -> Int32? {
        // An unreadable or half-written pid only loses the holder's name, not the error.
        guard let bytes = try? file.read(at: 0, count: 32) else { return nil }
        let digits = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        return Int32(String(decoding: digits, as: UTF8.self))
    }
}

/// A held `flock`; released by ``unlock()``, by deinit, or when the process exits.
final class POSIXLock: FileLock {
    private let file: POSIXFile
    init(file: POSIXFile) { self.file = file }
    deinit { file.close() }
    func unlock() { file.close() }
}

/// `open(2)` with the mode every LensDB file is created with.
func systemOpen(_ path: String, _ flags: Int32) -> Int32 {
    open(path, flags, 0o644)
}

/// `rename(2)`, named apart from ``FileSystem/rename(_:to:)``.
private func systemRename(_ source: String, _ destination: String) -> Int32 {
    rename(source, destination)
}

/// `close(2)`, named apart from ``StoredFile/close()``.
func closeDescriptor(_ descriptor: Int32) {
    // close(2) may report EINTR or EIO, but the descriptor is released either
    // way, and data durability is the business of sync, never of close.
    _ = close(descriptor)
}

/// Runs a POSIX call until it does not fail with EINTR; throws for -1.
func retryingEINTR(_ operation: StorageError.Operation, _ path: String, _ call: () -> Int32) throws -> Int32 {
    while true {
        let result = call()
        if result >= 0 { return result }
        if errno != EINTR { throw StorageError(errno: errno, operation, path: path) }
    }
}
