#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file-system call failed.
///
/// Carries what a person needs to act: the operation, the path, the errno, and
/// for a lock conflict the holder's process id.
public struct StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, grouped by what a caller can do about it.
    public enum Code: Sendable, Equatable {
        /// The device is full (ENOSPC, EDQUOT).
        case noSpace
        /// The device reported an I/O error (EIO) or another unexpected errno.
        case ioError
        /// The path does not exist (ENOENT).
        case notFound
        /// The path already exists (EEXIST).
        case exists
        /// The process may not do this (EACCES, EPERM, EROFS).
        case permissionDenied
        /// Another open file description holds the lock (EWOULDBLOCK).
        case locked
        /// The file was closed, or belongs to a simulated file system that has crashed since.
        case closed
        /// The path names a FIFO, device, socket or directory where LensDB
        /// expects a regular file; LensDB never opens it, so it never blocks on one.
        case notRegularFile
    }

    /// The call that failed.
    public enum Operation: String, Sendable, Equatable {
        case open, read, write, size, sync, truncate, preallocate, rename, remove
        case list, createDirectory, syncDirectory, lock
        /// ``StoredFile/startWriteback(at:length:)``.
        case writeback
    }

    public var code: Code
    public var operation: Operation
    public var path: String
    /// The errno the system returned (0 for simulated faults that have none).
    public var errno: Int32
    /// The process holding the lock, when `code == .locked` and it is known.
    public var lockHolder: Int32?

    public init(_ code: Code, _ operation: Operation, path: String, errno: Int32 = 0, lockHolder: Int32? = nil) {
        self.code = code
        self.operation = operation
        self.path = path
        self.errno = errno
        self.lockHolder = lockHolder
    }

    /// Classifies a POSIX errno.
    public init(errno: Int32, _ operation: Operation, path: String) {
        let code: Code
        switch errno {
        case ENOSPC, EDQUOT: code = .noSpace
        case ENOENT: code = .notFound
        case EEXIST: code = .exists
        case EACCES, EPERM, EROFS: code = .permissionDenied
        case EWOULDBLOCK: code = .locked
        case EBADF: code = .closed
        default: code = .ioError
        }
        self.init(code, operation, path: path, errno: errno)
    }

    /// One sentence: which call on which path failed, and why, e.g.
    /// `preallocating /s.lensdb/log-0000000000000001.log failed: No space left on device (errno 28)`.
    public var description: String {
        "\(operation.gerund) \(path) failed: \(reason)"
    }

    /// Why the call failed: the lock holder, the system's text for the
    /// errno, or (for simulated faults without one) the code in words.
    private var reason: String {
        switch code {
        case .locked: "it is locked by \(lockHolder.map { "process \($0)" } ?? "another process")"
        case .notRegularFile:
            "it is not a regular file (a FIFO, device, socket or directory has the name of a LensDB file); move it out of the store's directory"
        case _ where errno != 0: "\(String(cString: strerror(errno))) (errno \(errno))"
        case .noSpace: "no space left on the device"
        case .ioError: "an I/O error"
        case .notFound: "no such file or directory"
        case .exists: "the file already exists"
        case .permissionDenied: "permission denied"
        case .closed: "the file is closed"
        }
    }
}

extension StorageError.Operation {
    /// The operation as the subject of a sentence: "syncing", "renaming".
    var gerund: String {
        switch self {
        case .open: "opening"
        case .read: "reading"
        case .write: "writing"
        case .size: "reading the size of"
        case .sync: "syncing"
        case .truncate: "truncating"
        case .preallocate: "preallocating"
        case .rename: "renaming"
        case .remove: "removing"
        case .list: "listing"
        case .createDirectory: "creating the directory"
        case .syncDirectory: "syncing the directory"
        case .lock: "locking"
        case .writeback: "starting the writeback of"
        }
    }
}
