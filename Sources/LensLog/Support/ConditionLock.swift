#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex with a condition variable.
///
/// `Synchronization.Mutex` has no condition variable, and group commit needs
/// waiters to sleep until the write or sync turn they wait for ends. Users keep
/// their guarded state beside the lock and touch it only between ``lock()``
/// and ``unlock()``.
///
/// `@unchecked Sendable` is sound: the pthread objects live at stable heap
/// addresses for the object's whole life and pthread makes them thread-safe.
public final class ConditionLock: @unchecked Sendable {
    fileprivate let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` with the lock held.
    @inlinable
    public func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Releases the lock, sleeps until a ``broadcast()``, and takes it again.
    /// Call with the lock held. Wake-ups can be spurious: re-check in a loop.
    public func wait() { pthread_cond_wait(condition, mutex) }

    /// Wakes every thread in ``wait()``.
    public func broadcast() { pthread_cond_broadcast(condition) }

    /// Releases the lock, sleeps until `signal` is raised, and takes the lock
    /// again. Call with the lock held. Wake-ups can be spurious.
    public func wait(for signal: Signal) { pthread_cond_wait(signal.condition, mutex) }

    /// Like ``wait(for:)``, but gives up after `nanoseconds`.
    public func wait(for signal: Signal, nanoseconds: Int) {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let total = Int(deadline.tv_nsec) + nanoseconds
        deadline.tv_sec += total / 1_000_000_000
        deadline.tv_nsec = total % 1_000_000_000
        pthread_cond_timedwait(signal.condition, mutex, &deadline)
    }
}

/// A condition variable of one waiting thread, so that a thread can be woken
/// alone instead of the whole crowd. Used with ``ConditionLock/wait(for:)``.
///
/// `@unchecked Sendable` is sound for the same reason as ``ConditionLock``.
public final class Signal: @unchecked Sendable {
    fileprivate let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() { pthread_cond_init(condition, nil) }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
    }

    /// Wakes the thread waiting for this signal, if any. Call with the lock held.
    public func raise() { pthread_cond_signal(condition) }
}
