import Foundation

/// Another process holding a store's lock: `flock(1)` (util-linux) takes the
/// same `flock(2)` lock LensDB does, and holds it until ``release()``.
public final class LockHolder {
    private let process = Process()

    /// Starts the holder on `lockFile`. It takes the lock shortly after;
    /// callers retry until they see it held.
    public init(lockFile: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
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
