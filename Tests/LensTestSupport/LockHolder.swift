#if os(Linux) || os(macOS)
import Foundation

/// Another process holding a store's lock: `flock(1)` (util-linux) takes the
/// same `flock(2)` lock LensDB does, and holds it until ``release()``.
/// macOS has no `flock(1)`: tests that need one are skipped there
/// (``isAvailable``); iOS cannot start processes at all.
public final class LockHolder {
    private static let tool = "/usr/bin/flock"
    private let process = Process()

    /// Whether this machine has `flock(1)`.
    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: tool) }

    /// Starts the holder on `lockFile`. It takes the lock shortly after;
    /// callers retry until they see it held.
    public init(lockFile: String) throws {
        process.executableURL = URL(fileURLWithPath: Self.tool)
        // --no-fork: the process we kill is the one holding the lock.
        process.arguments = ["--no-fork", lockFile, "sleep", "30"]
        try process.run()
    }

    /// Kills the holder and waits (up to a second) for it to exit.
    public func release() {
        kill(process.processIdentifier, SIGKILL)
        for _ in 0..<500 where process.isRunning { usleep(2000) }
    }
}
#endif
