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
    }

    /// The call that failed.
    public enum Operation: String, Sendable, Equatable {
        case open, read, write, size, sync, truncate, preallocate, rename, remove
        case list, createDirectory, syncDirectory, lock
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

    public var description: String {
        var text = "\(operation.rawValue) \(path): \(code)"
        if errno != 0 { text += " (errno \(errno): \(String(cString: strerror(errno))))" }
        if let lockHolder { text += "; held by process \(lockHolder)" }
        return text
    }
}
