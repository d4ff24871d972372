import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs work that may take long and must not slow the commits beside it
/// (writing a snapshot) on a thread of its own at a lower priority, and
/// waits for it.
///
/// A thread of its own, because lowering a priority cannot be undone without
/// privileges on Linux: the caller's thread, or a thread of Dispatch's pool
/// that would run other work afterwards, must keep the one it has. The
/// thread ends with the work.
enum LowPriorityThread {
    /// The `nice` value the work runs at on Linux (0 is the default, 19 the lowest).
    static let niceness: Int32 = 10

    /// Runs `body` on a new low-priority thread and returns or rethrows its result.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        let result = Locked<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            lowerCurrentThreadPriority()
            result.withLock { $0 = Result { try body() } }
            done.signal()
        }
        #if canImport(Darwin)
        // Utility QoS lowers both the CPU and the I/O priority on Darwin.
        thread.qualityOfService = .utility
        #endif
        thread.start()
        done.wait()
        return try result.withLock { $0! }.get()
    }

    /// On Linux, `setpriority(PRIO_PROCESS, 0, …)` changes the calling
    /// thread alone (threads are scheduled as tasks; POSIX would have the
    /// whole process, and setpriority(2) lists this as a bug). A refusal keeps
    /// the default priority, which is only slower for the commits, so it is
    /// ignored. On Darwin the thread's quality of service does this.
    private static func lowerCurrentThreadPriority() {
        #if os(Linux)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness)
        #endif
    }
}
