#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value behind a pthread mutex.
///
/// LensDB uses this instead of `Synchronization.Mutex` because
/// ThreadSanitizer on Linux does not see the happens-before edges of
/// `Mutex` in this toolchain and reports every access it guards as a race;
/// pthread mutexes it understands, so a TSan run stays meaningful (promise 8).
///
/// `@unchecked Sendable` is sound: `value` is reachable only through
/// ``withLock(_:)``, which holds the mutex, and the mutex lives at a stable
/// heap address for the object's whole life.
public final class Locked<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable
    public func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body(&storage)
    }

    @usableFromInline func lock() { pthread_mutex_lock(mutex) }
    @usableFromInline func unlock() { pthread_mutex_unlock(mutex) }
    @usableFromInline var storage: Value {
        get { value }
        _modify { yield &value }
    }
}
