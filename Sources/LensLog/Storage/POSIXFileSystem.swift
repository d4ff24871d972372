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

    /// Opens without blocking and refuses anything but a regular file
    /// (``StorageError/Code/notRegularFile``): a FIFO named like a log would
    /// otherwise hold `open(2)` until a writer came. A file it creates gets
    /// its directory's mode without the execute bits (``FilePermissions``),
    /// exactly: the process's umask does not narrow it.
    public func openFile(at path: String, mode: FileOpenMode) throws -> any StoredFile {
        let descriptor: Int32
        switch mode {
        case .readOnly: descriptor = try openExisting(path, O_RDONLY)
        case .readWrite: descriptor = try openExisting(path, O_RDWR)
        case .create: descriptor = try openCreating(path, orExisting: true)
        case .createNew: descriptor = try openCreating(path, orExisting: false)
        }
        return POSIXFile(descriptor: descriptor, path: path)
    }

    /// Opens a file that must exist, checking that it is a regular file
    /// before anything reads it.
    private func openExisting(_ path: String, _ access: Int32) throws -> Int32 {
        let descriptor = try Self.notRegularWhereOpenSaysSo(path) {
            try retryingEINTR(.open, path) { systemOpen(path, access | O_NONBLOCK | O_CLOEXEC) }
        }
        do {
            try Self.requireRegularFile(descriptor, path)
        } catch {
            closeDescriptor(descriptor)
            throw error
        }
        return descriptor
    }

    /// Creates the file with its directory's file mode; with `orExisting`,
    /// opens it when it exists already (as `O_CREAT` alone would).
    private func openCreating(_ path: String, orExisting: Bool) throws -> Int32 {
        let mode = Self.fileMode(inDirectoryOf: path)
        while true {
            let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode_t(mode))
            if descriptor >= 0 {
                // The umask may have narrowed the mode, and the directory's
                // is the store's choice. Its owner may always chmod a file it
                // just created; were it refused, the narrower mode is the safe side.
                _ = fchmod(descriptor, mode_t(mode))
                return descriptor
            }
            switch errno {
            case EINTR: continue
            case EEXIST where orExisting:
                do {
                    return try openExisting(path, O_RDWR)
                } catch let error as StorageError where error.code == .notFound {
                    // Removed between the two calls: create it after all. A
                    // name that is there but leads nowhere is a symbolic link
                    // to nothing, which O_EXCL meets forever: not a regular file.
                    var status = stat()
                    guard lstat(path, &status) != 0 else { throw StorageError(.notRegularFile, .open, path: path) }
                    continue
                }
            default: throw try Self.notRegularWhereOpenSaysSo(path) { throw StorageError(errno: errno, .open, path: path) }
            }
        }
    }

    /// `open(2)` itself refuses some files that are not regular: a directory
    /// opened for writing (EISDIR), a socket (ENXIO). Those are
    /// ``StorageError/Code/notRegularFile`` too.
    private static func notRegularWhereOpenSaysSo<T>(_ path: String, _ call: () throws -> T) throws -> T {
        do {
            return try call()
        } catch let error as StorageError where error.errno == EISDIR || error.errno == ENXIO {
            throw StorageError(.notRegularFile, .open, path: path, errno: error.errno)
        }
    }

    /// Throws ``StorageError/Code/notRegularFile`` unless `descriptor` is a
    /// regular file; clears the `O_NONBLOCK` it was opened with, which a
    /// regular file ignores anyway.
    private static func requireRegularFile(_ descriptor: Int32, _ path: String) throws {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw StorageError(errno: errno, .open, path: path) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw StorageError(.notRegularFile, .open, path: path) }
        let flags = fcntl(descriptor, F_GETFL)
        if flags >= 0 { _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) }
    }

    /// The mode a new file at `path` gets: its directory's, without execute
    /// (``FilePermissions/fileMode``).
    private static func fileMode(inDirectoryOf path: String) -> UInt16 {
        var status = stat()
        // A directory that cannot be examined gives the most private mode.
        guard stat(parentDirectory(of: path), &status) == 0 else { return FilePermissions.ownerOnly.fileMode }
        return FilePermissions(keeping: UInt16(truncatingIfNeeded: status.st_mode)).fileMode
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

    /// Creates `directory` with exactly `permissions` (the umask does not
    /// narrow them, and their group, when set, is given to it), or with the
    /// process's default mode (0777 less the umask) when nil; missing
    /// parents get the default mode, as `mkdir -p` gives them.
    public func createDirectory(at directory: String, permissions: FilePermissions?) throws {
        var prefix = directory.hasPrefix("/") ? "" : "."
        let components = directory.split(separator: "/")
        for (index, component) in components.enumerated() {
            prefix += "/" + component
            let own = index == components.count - 1 ? permissions : nil
            if mkdir(prefix, own.map { mode_t($0.directoryMode) } ?? 0o777) != 0 {
                guard errno == EEXIST else { throw StorageError(errno: errno, .createDirectory, path: prefix) }
            } else if let own {
                try Self.apply(own, toNewDirectory: prefix)
            }
        }
    }

    /// Gives a directory just created its exact mode and group.
    private static func apply(_ permissions: FilePermissions, toNewDirectory path: String) throws {
        // The group first: changing it clears setgid on some systems.
        if let group = permissions.group {
            // Best effort: an owner outside the group may not give it; the
            // directory then keeps the creator's group, and its owner keeps access.
            _ = chown(path, uid_t.max, gid_t(group))
        }
        guard chmod(path, mode_t(permissions.directoryMode)) == 0 else {
            throw StorageError(errno: errno, .createDirectory, path: path)
        }
    }

    public func directoryPermissions(at directory: String) throws -> FilePermissions {
        var status = stat()
        guard stat(directory, &status) == 0 else { throw StorageError(errno: errno, .list, path: directory) }
        var permissions = FilePermissions(keeping: UInt16(truncatingIfNeeded: status.st_mode))
        permissions.group = UInt32(status.st_gid)
        return permissions
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
        let descriptor: Int32
        do {
            descriptor = try openCreating(path, orExisting: true)
        } catch var error as StorageError {
            error.operation = .lock
            throw error
        }
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

/// `open(2)` of a file that exists (no `O_CREAT`, so no mode).
func systemOpen(_ path: String, _ flags: Int32) -> Int32 {
    open(path, flags)
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
