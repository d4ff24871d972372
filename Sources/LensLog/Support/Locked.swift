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
/// The mutex is error-checking: a thread that asks again for a lock it
/// holds is told so instead of hanging. ``withLock(reentry:_:)`` turns that
/// into a typed error (a store's `write` called from inside its own write
/// block); ``withLock(_:)`` into a precondition failure that says what
/// happened. The check costs nothing on the uncontended path: the mutex
/// records its owner anyway.
///
/// `@unchecked Sendable` is sound: `value` is reachable only through
/// ``withLock(_:)``, which holds the mutex, and the mutex lives at a stable
/// heap address for the object's whole life.
public final class Locked<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    ///
    /// A thread that already holds this lock (it is inside `body` of another
    /// call) stops with a precondition failure instead of waiting forever.
    @inlinable
    public func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        let locked = lock()
        precondition(locked, "a thread asked for a lock it already holds: a call back into the same object from inside a block that holds its lock")
        defer { unlock() }
        return try body(&storage)
    }

    /// Runs `body` with exclusive access to the value; when the calling
    /// thread already holds the lock, throws `reentry()` without running
    /// `body` and without touching the value, so the outer holder goes on
    /// as if nothing happened.
    @inlinable
    public func withLock<T, E: Error>(reentry: @autoclosure () -> E, _ body: (inout Value) throws(E) -> T) throws(E) -> T {
        guard lock() else { throw reentry() }
        defer { unlock() }
        return try body(&storage)
    }

    /// Holds the lock while `body` runs, without an access to the value:
    /// `body` reaches it through ``withLockOrHeld(_:)``, in accesses of its
    /// own, so that a call back from `body` on this thread (a program's
    /// block) can read it too. When the calling thread holds the lock
    /// already, throws `reentry()` without running `body`.
    @inlinable
    public func whileLocked<T, E: Error>(reentry: @autoclosure () -> E, _ body: () throws(E) -> T) throws(E) -> T {
        guard lock() else { throw reentry() }
        defer { unlock() }
        return try body()
    }

    /// Runs `body` with exclusive access to the value: under the lock, or,
    /// when the calling thread holds it already, inside the body of
    /// ``whileLocked(reentry:_:)`` and outside its accesses. Called back
    /// from inside a ``withLock(_:)`` body, it stops the process with an
    /// exclusivity violation: that body's access to the value is still open.
    @inlinable
    public func withLockOrHeld<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        let locked = lock()
        defer { if locked { unlock() } }
        return try body(&storage)
    }

    /// Takes the mutex; false when this thread holds it already.
    @usableFromInline func lock() -> Bool {
        let result = pthread_mutex_lock(mutex)
        if result == EDEADLK { return false }
        precondition(result == 0, "pthread_mutex_lock failed with errno \(result)")
        return true
    }
    @usableFromInline func unlock() { pthread_mutex_unlock(mutex) }
    @usableFromInline var storage: Value {
        get { value }
        _modify { yield &value }
    }
}
