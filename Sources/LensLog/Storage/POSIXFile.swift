#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An open descriptor from ``POSIXFileSystem``.
///
/// Sendable without `@unchecked`: the path is immutable, the descriptor lives
/// in a `Locked`, and positional I/O on a descriptor is thread-safe in POSIX.
/// Closing while another thread is inside a call on the same file is a
/// programmer error (that call may fail with `.closed`).
final class POSIXFile: StoredFile {
    let path: String
    private let state: Locked<Int32?>

    init(descriptor: Int32, path: String) {
        self.path = path
        state = Locked(descriptor)
    }

    deinit { close() }

    func read(at offset: Int64, count: Int) throws -> [UInt8] {
        let descriptor = try open(.read)
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
                if n == 0 { break }  // end of file: a short read is the answer
                done += n
            }
        }
        result.removeLast(count - done)
        return result
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        let descriptor = try open(.write)
        var done = 0
        while done < bytes.count {
            let n = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                // The prefix already written stays; the caller treats the whole write as failed.
                throw StorageError(errno: errno, .write, path: path)
            }
            done += n
        }
    }

    func size() throws -> Int64 {
        let descriptor = try open(.size)
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw StorageError(errno: errno, .size, path: path) }
        return Int64(info.st_size)
    }

    func sync(_ need: SyncNeed) throws {
        let descriptor = try open(.sync)
        if case .failure(let error) = POSIXSync.sync(descriptor, need) {
            throw StorageError(errno: error.code, .sync, path: path)
        }
    }

    func startWriteback(at offset: Int64, length: Int64) throws {
        let descriptor = try open(.writeback)
        #if os(Linux)
        // Where the C library lacks the call (musl before 1.1.x), the final sync does it all.
        guard let syncFileRange = Self.syncFileRange else { return }
        _ = try retryingEINTR(.writeback, path) {
            syncFileRange(descriptor, offset, length, Self.syncFileRangeWrite)
        }
        #else
        _ = descriptor  // Darwin has no call that starts writeback alone; the final sync does it all.
        #endif
    }

    #if os(Linux)
    /// `sync_file_range(2)`, looked up at run time: the C library declares it
    /// only under `_GNU_SOURCE`, which Swift's Glibc module does not set.
    private static let syncFileRange: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32)? = {
        // RTLD_DEFAULT, which glibc and musl define as a null handle.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sync_file_range") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32).self)
    }()

    /// `SYNC_FILE_RANGE_WRITE` from `<fcntl.h>`: start writeback, do not wait.
    private static let syncFileRangeWrite: UInt32 = 2
    #endif

    func truncate(to length: Int64) throws {
        let descriptor = try open(.truncate)
        _ = try retryingEINTR(.truncate, path) { ftruncate(descriptor, off_t(length)) }
    }

    func preallocate(at offset: Int64, length: Int64) throws {
        let descriptor = try open(.preallocate)
        #if os(Linux)
        let result = posix_fallocate(descriptor, off_t(offset), off_t(length))
        if result == 0 { return }
        guard result == EOPNOTSUPP || result == EINVAL else {
            throw StorageError(errno: result, .preallocate, path: path)
        }
        #elseif canImport(Darwin)
        if try reserveBlocks(descriptor, through: offset + length) { return }
        #endif
        try writeZeros(from: max(offset, try size()), to: offset + length)
    }

    #if canImport(Darwin)
    /// Darwin's posix_fallocate: `F_PREALLOCATE` reserves blocks past the
    /// file's allocated end (one contiguous run if the volume has one, else
    /// any), then `ftruncate` extends the size over them, reading as zeros.
    /// False where the file system cannot reserve (ENOTSUP, EINVAL), so the
    /// caller writes zeros. A crash between the two calls leaves blocks
    /// reserved past the end, which the next extension reuses.
    private func reserveBlocks(_ descriptor: Int32, through end: Int64) throws -> Bool {
        let current = try size()
        guard end > current else { return true }
        var request = fstore_t(
            fst_flags: UInt32(F_ALLOCATECONTIG | F_ALLOCATEALL), fst_posmode: F_PEOFPOSMODE,
            fst_offset: 0, fst_length: off_t(end - current), fst_bytesalloc: 0)
        var result = fcntl(descriptor, F_PREALLOCATE, &request)
        if result == -1 && errno != ENOTSUP && errno != EINVAL {
            // No contiguous run that long: any free blocks reserve the space as well.
            request.fst_flags = UInt32(F_ALLOCATEALL)
            result = fcntl(descriptor, F_PREALLOCATE, &request)
        }
        if result == -1 {
            let code = errno
            guard code == ENOTSUP || code == EINVAL else { throw StorageError(errno: code, .preallocate, path: path) }
            return false
        }
        _ = try retryingEINTR(.preallocate, path) { ftruncate(descriptor, off_t(end)) }
        return true
    }
    #endif

    /// The fallback where the file system cannot reserve space: real zeros
    /// allocate the blocks, so later writes there cannot fail for space.
    private func writeZeros(from start: Int64, to end: Int64) throws {
        let chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var position = start
        while position < end {
            let count = Int(min(Int64(chunk.count), end - position))
            try chunk.withUnsafeBytes { try write(UnsafeRawBufferPointer(rebasing: $0[..<count]), at: position) }
            position += Int64(count)
        }
    }

    func close() {
        state.withLock { descriptor in
            guard let open = descriptor else { return }
            descriptor = nil
            closeDescriptor(open)
        }
    }

    /// The descriptor, or `.closed` after ``close()``.
    private func open(_ operation: StorageError.Operation) throws -> Int32 {
        guard let descriptor = state.withLock({ $0 }) else {
            throw StorageError(.closed, operation, path: path, errno: EBADF)
        }
        return descriptor
    }
}
