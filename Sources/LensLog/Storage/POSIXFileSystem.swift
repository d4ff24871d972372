#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The production ``FileSystem``: POSIX calls, looping on EINTR and short
/// transfers, `O_CLOEXEC` on every descriptor, `flock` for the store lock.
public struct POSIXFileSystem: FileSystem {
    public init() {}

    public func openFile(at path: String, mode: FileOpenMode) throws -> any StoredFile {
        var flags = O_CLOEXEC
        switch mode {
        case .readOnly: flags |= O_RDONLY
        case .readWrite: flags |= O_RDWR
        case .create: flags |= O_RDWR | O_CREAT
        case .createNew: flags |= O_RDWR | O_CREAT | O_EXCL
        }
        let descriptor = try retryingEINTR(.open, path) { Glibc.open(path, flags, 0o644) }
        return POSIXFile(descriptor: descriptor, path: path)
    }

    public func fileExists(at path: String) -> Bool {
        access(path, F_OK) == 0
    }

    public func removeFile(at path: String) throws {
        _ = try retryingEINTR(.remove, path) { unlink(path) }
    }

    public func rename(_ source: String, to destination: String) throws {
        _ = try retryingEINTR(.rename, source) { Glibc.rename(source, destination) }
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
        let descriptor = try retryingEINTR(.syncDirectory, directory) { Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { Glibc.close(descriptor) }
        _ = try retryingEINTR(.syncDirectory, directory) { fsync(descriptor) }
    }

    public func lockFile(at path: String) throws -> any FileLock {
        let descriptor = try retryingEINTR(.lock, path) { Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) }
        let file = POSIXFile(descriptor: descriptor, path: path)
        // flock locks belong to the open file description: a second open of
        // the same store, in this process or another, conflicts.
        if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            let holder = (try? file.readAll()).flatMap { Int32(String(decoding: $0, as: UTF8.self).trimmingNewline) }
            file.close()
            var error = StorageError(errno: code, .lock, path: path)
            error.lockHolder = holder
            throw error
        }
        // The pid is advice for error messages; the lock is what counts.
        try? file.truncate(to: 0)
        try? file.write(Array("\(getpid())\n".utf8), at: 0)
        return POSIXLock(file: file)
    }
}

/// An open descriptor. `@unchecked Sendable`: the descriptor is an immutable
/// integer, positional I/O on it is thread-safe, and `closed` is guarded by `lock`.
final class POSIXFile: StoredFile, @unchecked Sendable {
    let path: String
    private let descriptor: Int32
    private var closed = false
    private let lock = ConditionLock()

    init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close() }

    func read(at offset: Int64, count: Int) throws -> [UInt8] {
        guard count > 0 else { return [] }
        var result = [UInt8](repeating: 0, count: count)
        var done = 0
        try result.withUnsafeMutableBytes { buffer in
            while done < count {
                let n = pread(descriptor, buffer.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if n < 0 {
                    if errno == EINTR { continue }
                    throw StorageError(errno: errno, .read, path: path)
                }
                if n == 0 { break }
                done += n
            }
        }
        result.removeLast(count - done)
        return result
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        var done = 0
        while done < bytes.count {
            let n = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw StorageError(errno: errno, .write, path: path)
            }
            done += n
        }
    }

    func size() throws -> Int64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw StorageError(errno: errno, .size, path: path) }
        return Int64(info.st_size)
    }

    func sync(_ mode: SyncMode) throws {
        #if canImport(Darwin)
        let result = mode == .full ? fcntl(descriptor, F_FULLFSYNC) : fsync(descriptor)
        #else
        let result = mode == .full ? fsync(descriptor) : fdatasync(descriptor)
        #endif
        // Never retried on failure (promise 6): the kernel may have dropped the dirty pages.
        guard result == 0 else { throw StorageError(errno: errno, .sync, path: path) }
    }

    func truncate(to length: Int64) throws {
        _ = try retryingEINTR(.truncate, path) { ftruncate(descriptor, off_t(length)) }
    }

    func preallocate(at offset: Int64, length: Int64) throws {
        #if os(Linux)
        let result = posix_fallocate(descriptor, off_t(offset), off_t(length))
        if result == 0 { return }
        guard result == EOPNOTSUPP || result == EINVAL else { throw StorageError(errno: result, .preallocate, path: path) }
        #endif
        // No fallocate here: extend with zeros through ftruncate, which at
        // least keeps the size stable for fdatasync.
        if try size() < offset + length { try truncate(to: offset + length) }
    }

    func close() {
        lock.withLock {
            guard !closed else { return }
            closed = true
            Glibc.close(descriptor)
        }
    }
}

/// A held `flock`; released by ``unlock()`` or when the process exits.
final class POSIXLock: FileLock {
    private let file: POSIXFile
    init(file: POSIXFile) { self.file = file }
    func unlock() { file.close() }
}

/// Runs a POSIX call until it does not fail with EINTR; throws for -1.
private func retryingEINTR(_ operation: StorageError.Operation, _ path: String, _ call: () -> Int32) throws -> Int32 {
    while true {
        let result = call()
        if result >= 0 { return result }
        if errno != EINTR { throw StorageError(errno: errno, operation, path: path) }
    }
}

extension String {
    var trimmingNewline: String {
        var text = self
        while text.last == "\n" || text.last == " " { text.removeLast() }
        return text
    }
}
