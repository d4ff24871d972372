import LensDB
import LensLog

/// What running a workload up to its first failure did.
public struct CrashExecution: Sendable {
    /// Every transaction handed to `write`, in commit order, whether it returned or threw.
    public var attempted: [[ModelOperation]] = []
    /// How many of `attempted` were acknowledged durable: returned from a
    /// `.full` write, or followed by a flush or compaction that returned.
    public var durable = 0
    /// The error that stopped the run, if one did.
    public var stoppedBy: String?
}

/// A promise broken: what a person needs to replay it.
public struct CrashViolation: Error, Sendable, CustomStringConvertible {
    public var workloadSeed: UInt64
    public var cutPoint: Int
    public var detail: String
    public var description: String {
        "violation: workload seed \(workloadSeed), cut after \(cutPoint) mutating calls: \(detail)"
    }
}

/// The crash oracle (promises 1, 2 and 4): after a power cut anywhere, the
/// reopened state equals the reference model after some prefix k of the
/// attempted transactions, with k ≥ every acknowledged durable commit.
public enum CrashCheck {
    public static let storePath = "/store.lensdb"

    /// Options for a deterministic run: no background threads, invariants checked.
    public static func options(_ fileSystem: SimulatedFileSystem) -> StoreOptions {
        var options = StoreOptions()
        options.fileSystem = fileSystem
        options.compactionLogRatio = nil
        options.checksInvariants = true
        options.log.backgroundSyncInterval = nil
        // Small extents: the zero tail is still exercised, and debug builds stay fast.
        options.log.preallocationChunk = 4096
        return options
    }

    /// Runs `workload` until it ends or an operation throws.
    public static func execute(_ workload: CrashWorkload, on fileSystem: SimulatedFileSystem) -> CrashExecution {
        var execution = CrashExecution()
        do {
            let store = try Store(at: storePath, options: options(fileSystem))
            defer { store.close() }
            for step in workload.steps {
                switch step {
                case let .write(operations, durability):
                    execution.attempted.append(operations)
                    try store.write(durability: durability) { tx in for operation in operations { operation.apply(to: &tx) } }
                    if durability == .full { execution.durable = execution.attempted.count }
                case .flush:
                    try store.flush()
                    execution.durable = execution.attempted.count
                case .compact:
                    try store.compact()
                    execution.durable = execution.attempted.count
                }
            }
        } catch {
            execution.stoppedBy = "\(error)"
        }
        return execution
    }

    /// How many mutating calls the whole workload makes without a crash:
    /// the cut points to try are 0 through this.
    public static func mutatingCalls(of workload: CrashWorkload) -> Int {
        let fileSystem = SimulatedFileSystem()
        _ = execute(workload, on: fileSystem)
        return fileSystem.mutatingCallCount
    }

    /// Cuts the power after `cutPoint` mutating calls (or meets `fault`),
    /// crashes with `crashSeed`, reopens and checks the oracle; then commits
    /// one more transaction and reopens again, to check that the recovered
    /// store keeps working.
    public static func check(
        _ workload: CrashWorkload, cutPoint: Int, crashSeed: UInt64, model: CrashModel = .default, fault: Fault? = nil
    ) -> CrashViolation? {
        let fileSystem = SimulatedFileSystem()
        if let fault { fileSystem.injectFault(fault) } else { fileSystem.powerCut(afterMutatingCalls: cutPoint) }
        let execution = execute(workload, on: fileSystem)
        fileSystem.clearFaults()
        func violation(_ detail: String) -> CrashViolation {
            CrashViolation(workloadSeed: workload.seed, cutPoint: cutPoint, detail: detail + " (stopped by: \(execution.stoppedBy ?? "nothing"))")
        }
        if fault != nil {
            return checkReopenInTheSameBoot(execution, fileSystem: fileSystem, crashSeed: crashSeed, model: model, violation)
        }
        fileSystem.crash(seed: crashSeed, model: model)
        do {
            let store = try Store(at: storePath, options: options(fileSystem))
            guard let prefix = matchingPrefix(store.current, execution) else {
                return violation("reopened state (LSN \(store.current.lsn)) is no prefix of \(execution.attempted.count) attempted transactions holding the \(execution.durable) durable ones")
            }
            let marker: [ModelOperation] = [.put(table: "marker", key: [1], value: Array("after recovery".utf8))]
            try store.write { tx in marker[0].apply(to: &tx) }
            store.close()
            let again = try Store(at: storePath, options: options(fileSystem))
            defer { again.close() }
            var expected = ReferenceModel()
            for transaction in execution.attempted.prefix(prefix) + [marker] { expected.apply(transaction) }
            guard expected.matches(again.current) else { return violation("a commit after recovery was lost or mixed up on the next open") }
            return nil
        } catch {
            return violation("reopen failed: \(error)")
        }
    }

    /// After an I/O error the program reopens at once, as promise 6 asks,
    /// reading what may exist only in the page cache, and commits; then the
    /// power goes. The commit must survive, on top of exactly the prefix the
    /// reopened store showed.
    private static func checkReopenInTheSameBoot(
        _ execution: CrashExecution, fileSystem: SimulatedFileSystem, crashSeed: UInt64, model: CrashModel,
        _ violation: (String) -> CrashViolation
    ) -> CrashViolation? {
        let marker: [ModelOperation] = [.put(table: "marker", key: [2], value: Array("after reopening".utf8))]
        do {
            let reopened = try Store(at: storePath, options: options(fileSystem))
            guard let prefix = matchingPrefix(reopened.current, execution) else {
                return violation("the store reopened after an I/O error is no prefix holding the durable commits")
            }
            try reopened.write(durability: .full) { tx in marker[0].apply(to: &tx) }
            reopened.close()
            fileSystem.crash(seed: crashSeed, model: model)
            let recovered = try Store(at: storePath, options: options(fileSystem))
            defer { recovered.close() }
            var expected = ReferenceModel()
            for transaction in execution.attempted.prefix(prefix) + [marker] { expected.apply(transaction) }
            return expected.matches(recovered.current) ? nil
                : violation("a commit acknowledged after reopening from an I/O error did not survive with the prefix it built on")
        } catch {
            return violation("reopen failed: \(error)")
        }
    }

    /// The k in durable...attempted whose model equals `state`, if any.
    static func matchingPrefix(_ state: StoreState, _ execution: CrashExecution) -> Int? {
        var model = ReferenceModel()
        for transaction in execution.attempted.prefix(execution.durable) { model.apply(transaction) }
        for k in execution.durable...execution.attempted.count {
            if k > execution.durable { model.apply(execution.attempted[k - 1]) }
            if model.matches(state) { return k }
        }
        return nil
    }
}
