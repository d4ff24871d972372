#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs the sync table's plans on descriptors: the one place where a
/// ``SyncCall`` becomes a system call.
enum POSIXSync {
    /// Syncs `descriptor` as `need` requires on this platform. Returns the
    /// call that succeeded (a fallback only when the file system refused the
    /// calls before it); throws the errno of the call that failed.
    ///
    /// Never retries a failed call (promise 6): after a failure Linux may
    /// have marked the dirty pages clean, so a second call could succeed with
    /// the data lost. A refusal is not a failure: the file system did not
    /// implement the call and wrote nothing, so the next call in the plan is
    /// not a retry of it.
    static func sync(_ descriptor: Int32, _ need: SyncNeed) -> Result<SyncCall, Errno> {
        let plan = SyncPlatform.current.plan(for: need)
        var refused: Int32 = 0
        for call in plan.calls {
            if perform(call, on: descriptor) == 0 { return .success(call) }
            refused = errno
            guard refusals.contains(refused) else { return .failure(Errno(code: refused)) }
        }
        return .failure(Errno(code: refused))
    }

    /// An errno carried as an error.
    struct Errno: Error {
        var code: Int32
    }

    /// What a file system answers for a sync call it does not implement.
    /// Linux's plans have no fallbacks, so there these stay failures. (An
    /// array: on Linux ENOTSUP and EOPNOTSUPP are one value.)
    static let refusals: [Int32] = [ENOTSUP, EOPNOTSUPP, EINVAL, ENOTTY]

    /// One call; 0 or -1 with errno, as the system returns it.
    private static func perform(_ call: SyncCall, on descriptor: Int32) -> Int32 {
        #if canImport(Darwin)
        switch call {
        case .fullFsync: return fcntl(descriptor, F_FULLFSYNC)
        case .barrierFsync: return fcntl(descriptor, F_BARRIERFSYNC)
        case .fsync: return fsync(descriptor)
        case .fdatasync: preconditionFailure("Darwin has no fdatasync; the sync table never plans it there")
        }
        #else
        switch call {
        case .fdatasync: return fdatasync(descriptor)
        case .fsync: return fsync(descriptor)
        case .fullFsync, .barrierFsync:
            preconditionFailure("\(call.rawValue) exists only on Darwin; the sync table never plans it here")
        }
        #endif
    }
}
