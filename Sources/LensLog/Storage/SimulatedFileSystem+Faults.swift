#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A failure that ``SimulatedFileSystem/injectFault(_:)`` makes chosen calls meet.
///
/// A fault matches calls by operation and path suffix, fires on the Nth
/// matching call (or on every one from the Nth on), and then has an effect.
///
/// ```swift
/// fileSystem.injectFault(Fault(.noSpace, operations: [.write], trigger: .nthCall(3)))
/// fileSystem.injectFault(Fault(.failedSync, operations: [.sync], pathSuffix: ".log"))
/// ```
public struct Fault: Sendable, Equatable {
    /// What a firing fault does to the call.
    public enum Effect: Sendable, Equatable {
        /// The call does nothing and throws a ``StorageError`` for this errno.
        case error(errno: Int32)
        /// A write stores its first `keepingBytes` bytes, then throws ENOSPC.
        /// On any other call this is a plain ENOSPC.
        case shortWrite(keepingBytes: Int)
        /// A sync throws EIO and, as Linux does, drops the file's unsynced
        /// writes from the page cache: reads still see them, but no later sync
        /// makes them durable and a crash always loses them. On other calls
        /// this is a plain EIO.
        case failedSync

        /// The device is full.
        public static let noSpace = Effect.error(errno: ENOSPC)
        /// The device failed.
        public static let ioError = Effect.error(errno: EIO)
    }

    /// Which of the matching calls fail. Counting starts at 1 when the fault is injected.
    public enum Trigger: Sendable, Equatable {
        /// Only the Nth matching call.
        case nthCall(Int)
        /// The Nth matching call and every one after it.
        case fromNthCall(Int)
    }

    /// The operations matched; empty matches all.
    public var operations: Set<StorageError.Operation>
    /// Matches only paths ending with this, when set (e.g. ".log", "/LOCK").
    public var pathSuffix: String?
    public var trigger: Trigger
    public var effect: Effect

    /// A fault with `effect` on the calls `operations` and `pathSuffix` select.
    public init(
        _ effect: Effect,
        operations: Set<StorageError.Operation> = [],
        pathSuffix: String? = nil,
        trigger: Trigger = .nthCall(1)
    ) {
        self.effect = effect
        self.operations = operations
        self.pathSuffix = pathSuffix
        self.trigger = trigger
    }

    func matches(_ operation: StorageError.Operation, _ path: String) -> Bool {
        (operations.isEmpty || operations.contains(operation)) && (pathSuffix.map(path.hasSuffix) ?? true)
    }

    func fires(onMatch number: Int) -> Bool {
        switch trigger {
        case .nthCall(let n): number == n
        case .fromNthCall(let n): number >= n
        }
    }
}

/// A fault with the count of calls it has matched so far.
struct ArmedFault: Sendable {
    var fault: Fault
    var matched = 0
}

extension SimulatedState {
    /// The gate every call passes: refuses calls after a power cut or on a
    /// closed handle, counts the call, spends the power-cut budget, and
    /// returns the effect of the first fault that fires.
    mutating func admit(
        _ operation: StorageError.Operation,
        _ path: String,
        mutating: Bool,
        handle: Int? = nil
    ) throws(StorageError) -> Fault.Effect? {
        if poweredOff { throw StorageError(.ioError, operation, path: path, errno: EIO) }
        if let handle, !openHandles.contains(handle) {
            throw StorageError(.closed, operation, path: path, errno: EBADF)
        }
        callCounts[operation, default: 0] += 1
        if mutating {
            if let budget = powerCutBudget {
                guard budget > 0 else {
                    poweredOff = true
                    throw StorageError(.ioError, operation, path: path, errno: EIO)
                }
                powerCutBudget = budget - 1
            }
            mutatingCalls += 1
        }
        return firingFault(operation, path)
    }

    /// Like ``admit(_:_:mutating:handle:)`` for calls where every effect is a plain error.
    mutating func admitOrThrow(
        _ operation: StorageError.Operation,
        _ path: String,
        mutating: Bool,
        handle: Int? = nil
    ) throws(StorageError) {
        guard let effect = try admit(operation, path, mutating: mutating, handle: handle) else { return }
        throw effect.plainError(operation, path)
    }

    private mutating func firingFault(_ operation: StorageError.Operation, _ path: String) -> Fault.Effect? {
        var effect: Fault.Effect?
        for index in faults.indices where faults[index].fault.matches(operation, path) {
            faults[index].matched += 1
            if effect == nil && faults[index].fault.fires(onMatch: faults[index].matched) {
                effect = faults[index].fault.effect
            }
        }
        return effect
    }
}

extension Fault.Effect {
    /// The error this effect throws on a call that has no special behaviour for it.
    func plainError(_ operation: StorageError.Operation, _ path: String) -> StorageError {
        switch self {
        case .error(let errno): StorageError(errno: errno, operation, path: path)
        case .shortWrite: StorageError(errno: ENOSPC, operation, path: path)
        case .failedSync: StorageError(errno: EIO, operation, path: path)
        }
    }
}

// MARK: - Faults, call counts and power cuts

extension SimulatedFileSystem {
    /// Makes the calls `fault` selects fail; see ``Fault``. Faults stack: the
    /// first one injected that fires on a call decides its effect. A crash keeps them.
    public func injectFault(_ fault: Fault) {
        state.withLock { $0.faults.append(ArmedFault(fault: fault)) }
    }

    /// Removes every injected fault.
    public func clearFaults() {
        state.withLock { $0.faults = [] }
    }

    /// How many `operation` calls were admitted so far (failed ones included,
    /// calls refused for a power cut or a closed handle not). Never reset.
    public func callCount(_ operation: StorageError.Operation) -> Int {
        state.withLock { $0.callCounts[operation, default: 0] }
    }

    /// How many file and directory syncs asked for `need` so far (failed
    /// ones included, as in ``callCount(_:)``); a directory sync asks for
    /// ``SyncNeed/directoryEntries``. Never reset.
    public func syncCount(_ need: SyncNeed) -> Int {
        state.withLock { $0.syncCounts[need, default: 0] }
    }

    /// How many mutating calls completed or failed so far: writes, syncs,
    /// truncations, preallocations, renames, removals, directory creations and
    /// syncs, and opens in a creating mode. Never reset.
    public var mutatingCallCount: Int {
        state.withLock { $0.mutatingCalls }
    }

    /// Arms a power cut: the next `calls` mutating calls (see
    /// ``mutatingCallCount``) run normally; the one after them throws `.ioError`
    /// without any effect, and from then on every call throws `.ioError`
    /// (``fileExists(at:)`` answers false) until ``crash(seed:model:)``.
    ///
    /// This is how the crash fuzzer cuts a run at every boundary: run a
    /// workload once to learn its mutating-call count N, then for each n in
    /// 0...N replay it with `powerCut(afterMutatingCalls: n)`, crash, reopen
    /// and check.
    public func powerCut(afterMutatingCalls calls: Int) {
        precondition(calls >= 0, "a power cut needs a non-negative call budget")
        state.withLock { $0.powerCutBudget = calls }
    }

    /// Whether an armed power cut has happened and no crash has followed yet.
    public var isPoweredOff: Bool {
        state.withLock { $0.poweredOff }
    }
}
