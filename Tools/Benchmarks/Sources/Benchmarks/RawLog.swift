import Foundation

/// The disk's own rate for a log: a `pwrite` of some bytes and an
/// `fdatasync`, over and over, in one file and nothing else. What the log
/// benchmark weighs LensDB's log against, and the sync floors of the
/// tables benchmark: the most any design that syncs each commit reaches.
final class RawLog {
    /// Where the writes go.
    enum Region {
        /// The end of a file that grows with each write: a sync also
        /// writes the file's new size.
        case growing
        /// 64 MiB that `posix_fallocate` reserved, as LensDB's log
        /// preallocates: blocks that exist but were never written.
        case reserved
        /// 4 MiB written and synced first, so that a sync writes no
        /// metadata at all.
        case written
    }

    private let descriptor: Int32
    /// Where writes go back to the start: the region's end.
    private let limit: Int
    private var offset = 0
    /// Bytes to write, as many as one write has taken so far.
    private var bytes: [UInt8] = []

    init(path: String, region: Region) throws {
        descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Self.failure() }
        switch region {
        case .growing:
            limit = .max
        case .reserved:
            limit = 64 << 20
            let result = posix_fallocate(descriptor, 0, off_t(limit))
            guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
        case .written:
            limit = 4 << 20
            let zeros = [UInt8](repeating: 0, count: limit)
            guard pwrite(descriptor, zeros, zeros.count, 0) == zeros.count else { throw Self.failure() }
        }
        // Setting the region up is metadata; what follows measures data syncs.
        guard fsync(descriptor) == 0 else { throw Self.failure() }
    }

    deinit { close(descriptor) }

    /// Writes `count` bytes after the last write, then syncs them; back at
    /// the region's start when they would not fit before its end, so that
    /// no write into a region grows the file.
    func commit(_ count: Int) throws {
        if bytes.count < count { bytes = [UInt8](repeating: 0x5A, count: count) }
        if offset + count > limit { offset = 0 }
        guard pwrite(descriptor, bytes, count, off_t(offset)) == count, fdatasync(descriptor) == 0 else { throw Self.failure() }
        offset += count
    }

    /// Commits of `count` bytes until `deadline`; how many.
    func run(_ count: Int, until deadline: Double) throws -> Int {
        var commits = 0
        while now() < deadline {
            try commit(count)
            commits += 1
        }
        return commits
    }

    private static func failure() -> POSIXError { POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
}
