@_spi(CrashTesting) import LensDB
@_spi(Testing) import LensLog

/// What running a workload up to its first failure did.
public struct CrashExecution: Sendable {
    /// Every transaction handed to `write`, in commit order, whether it returned or threw.
    public var attempted: [[ModelOperation]] = []
    /// How many of `attempted` were acknowledged durable: returned from a
    /// `.full` write, or followed by a flush or compaction that returned.
    public var durable = 0
    /// The error that stopped the run, if one did.
    public var stoppedBy: String?
    /// The key the store had when the run stopped.
    public var key: EncryptionKey?
    /// When the run stopped in a key change: the key it was changing to.
    /// The store must then open with exactly one of ``key`` and this one.
    public var changingTo: EncryptionKey??
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
    public static func options(_ fileSystem: SimulatedFileSystem, key: EncryptionKey? = nil) -> StoreOptions {
        var options = StoreOptions()
        options.encryptionKey = key
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
        execution.key = workload.initialKey.map { CrashWorkload.encryptionKeys[$0] }
        do {
            var store = try Store(at: storePath, options: options(fileSystem, key: execution.key))
            defer { store.close() }
            var paused: PausedCompaction?
            // Runs before the close above: a paused compaction would hold it.
            defer { paused?.abandon() }
            for step in workload.steps {
                switch step {
                case let .write(operations, durability):
                    execution.attempted.append(operations)
                    try store.write(durability: durability) { tx in for operation in operations { operation.apply(to: &tx) } }
                    if durability == .full { execution.durable = execution.attempted.count }
                case let .group(transactions, durability):
                    execution.attempted += transactions
                    try store.writeGroup(durability: durability, transactions.map { operations in
                        { tx in for operation in operations { operation.apply(to: &tx) } }
                    })
                    if durability == .full { execution.durable = execution.attempted.count }
                case .flush:
                    try store.flush()
                    execution.durable = execution.attempted.count
                case .compact:
                    try store.compact()
                    // With a compaction paused, compact() does nothing: one runs at a time.
                    if paused == nil { execution.durable = execution.attempted.count }
                case .beginCompaction:
                    guard paused == nil else { continue }
                    paused = try store.beginPausedCompaction()
                    // The swap syncs the old log: everything before it is durable.
                    execution.durable = execution.attempted.count
                case .finishCompaction:
                    let finishing = paused
                    paused = nil
                    try finishing?.finish()
                case .reopen:
                    paused?.abandon()
                    paused = nil
                    store.close()
                    store = try Store(at: storePath, options: options(fileSystem, key: execution.key))
                    // The open succeeded, so the power was on for the close's
                    // final flush too: every commit before it is durable.
                    execution.durable = execution.attempted.count
                case .changeKey(let index):
                    let key = index.map { CrashWorkload.encryptionKeys[$0] }
                    // A paused compaction holds the slot a key change waits for.
                    paused?.abandon()
                    paused = nil
                    execution.changingTo = .some(key)
                    try store.changeEncryptionKey(to: key)
                    execution.key = key
                    execution.changingTo = nil
                    // It syncs the log before its snapshot: everything before it is durable.
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
    /// crashes with `crashSeed`, and checks recovery the way programs meet it:
    ///
    /// 1. the first open may itself lose power, at one of its own mutating
    ///    calls chosen by the seed (while it re-logs an unproven tail, say),
    ///    and the one after it must still recover;
    /// 2. the open that succeeds shows a prefix holding every durable commit;
    /// 3. the power goes again before that store does anything: the next open
    ///    must show exactly the same state (two opens judge the files alike);
    /// 4. a commit and a clean close later, the next open shows the prefix and
    ///    that commit.
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
        let key: EncryptionKey?
        switch openingKey(execution, fileSystem) {
        case .success(let found): key = found
        case .failure(let problem): return violation(problem.description)
        }
        func options(_ fileSystem: SimulatedFileSystem) -> StoreOptions { CrashCheck.options(fileSystem, key: key) }
        // Two more recoveries per crash point would halve the fuzzer's pace:
        // one point in eight is enough to cross every kind of boundary.
        if crashSeed % 8 == 0, let difference = windowedRecoveryDiffers(fileSystem, key: key) { return violation(difference) }
        do {
            if let recoveryCut = recoveryCut(crashSeed) {
                cutPowerDuringOpen(afterMutatingCalls: recoveryCut, fileSystem, key: key)
                fileSystem.crash(seed: crashSeed &+ 1, model: model)
            }
            let store = try Store(at: storePath, options: options(fileSystem))
            let recovered = store.current
            guard let prefix = matchingPrefix(recovered, execution) else {
                return violation("reopened state (LSN \(recovered.lsn)) is no prefix of \(execution.attempted.count) attempted transactions holding the \(execution.durable) durable ones")
            }
            fileSystem.powerCut(afterMutatingCalls: 0)
            store.close()
            fileSystem.crash(seed: crashSeed &+ 2, model: model)
            let second = try Store(at: storePath, options: options(fileSystem))
            guard second.current.lsn == recovered.lsn, matchingPrefix(second.current, execution) == prefix else {
                return violation("a second open after recovery shows LSN \(second.current.lsn), not the recovered LSN \(recovered.lsn) and its state")
            }
            let marker: [ModelOperation] = [.put(table: "marker", key: [1], value: Array("after recovery".utf8))]
            try second.write { tx in marker[0].apply(to: &tx) }
            second.close()
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

    /// Recovery reads each log through a bounded window: with the smallest
    /// window, every record, proof search and damage crosses window
    /// boundaries. It must recover exactly what a default window recovers.
    static func windowedRecoveryDiffers(_ fileSystem: SimulatedFileSystem, key: EncryptionKey? = nil) -> String? {
        let directory = StoreDirectory(path: storePath, fileSystem: fileSystem)
        func recovered(windowSize: Int) -> String {
            var outcome: [String] = []
            do {
                let chain = LogChain(directory: directory, policy: .strict, setAsideDamaged: false, windowSize: windowSize, cipher: key)
                let report = try chain.recover(listing: directory.list(), loadSnapshot: { snapshot in
                    try snapshot.forEachItem { _ in }
                    outcome.append("snapshot \(snapshot.lastLSN)")
                },
                                               apply: { record, file in outcome.append("\(file) \(record.lsn) \(record.payload)") })
                outcome.append("\(report)")
            } catch {
                outcome.append("error \(error)")
            }
            return outcome.joined(separator: "\n")
        }
        let whole = recovered(windowSize: LogReader.defaultWindowSize)
        let windowed = recovered(windowSize: LogFormat.maxFileHeaderSize + LogFormat.frameHeaderSize)
        return whole == windowed ? nil : "recovery through a small window differs:\n\(windowed)\nfrom:\n\(whole)"
    }

    /// Where, if anywhere, the first open after a crash loses power too: in
    /// one check of three, after 0 to 11 of its mutating calls (an open that
    /// re-logs makes about ten).
    static func recoveryCut(_ crashSeed: UInt64) -> Int? {
        var random = SeededGenerator(seed: crashSeed ^ 0x5EED_0F_0BE7)
        guard Int.random(in: 0..<3, using: &random) == 0 else { return nil }
        return Int.random(in: 0..<12, using: &random)
    }

    /// Opens the store with a power cut armed after `calls` mutating calls.
    /// An open that needs fewer succeeds; the power then goes before its
    /// store can close cleanly. Either way, the caller crashes next.
    public static func cutPowerDuringOpen(afterMutatingCalls calls: Int, _ fileSystem: SimulatedFileSystem, key: EncryptionKey? = nil) {
        fileSystem.powerCut(afterMutatingCalls: calls)
        // A throw is the power cut meeting the open: what this step is for.
        guard let store = try? Store(at: storePath, options: options(fileSystem, key: key)) else { return }
        fileSystem.powerCut(afterMutatingCalls: 0)
        store.close()
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
        let key: EncryptionKey?
        switch openingKey(execution, fileSystem) {
        case .success(let found): key = found
        case .failure(let problem): return violation(problem.description)
        }
        func options(_ fileSystem: SimulatedFileSystem) -> StoreOptions { CrashCheck.options(fileSystem, key: key) }
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

    /// Which key opens the store after the run: its key, or, when the run
    /// stopped in a key change, exactly one of the old and the new key
    /// (read-only opens tell, changing nothing). Both may open only a store
    /// that holds nothing yet (no snapshot or log read, LSN 0): its first
    /// write creates its first file under whichever key it is given. A key
    /// that fits may still meet damage; that is the rest of the check's to judge.
    static func openingKey(_ execution: CrashExecution, _ fileSystem: SimulatedFileSystem) -> Result<EncryptionKey?, KeyProblem> {
        guard case .some(let next) = execution.changingTo, next?.id != execution.key?.id else { return .success(execution.key) }
        // For each key that fits: the LSN its read-only open recovers (nil when the open fails otherwise).
        var fitting: [(key: EncryptionKey?, lsn: UInt64?)] = []
        var errors: [String] = []
        for key in [execution.key, next] {
            var options = options(fileSystem, key: key)
            options.readOnly = true
            options.checksInvariants = false
            do {
                let store = try Store(at: storePath, options: options)
                fitting.append((key, store.current.lsn))
                store.close()
            } catch let error as StoreError {
                switch error {
                case .encryptionKeyRequired, .wrongEncryptionKey, .notEncrypted: continue
                default:
                    fitting.append((key, nil))
                    errors.append("\(error)")
                }
            } catch {
                fitting.append((key, nil))
                errors.append("\(error)")
            }
        }
        // Nothing committed is readable with either: the prefix check that
        // follows fails if a durable commit was lost.
        if fitting.count == 2, fitting.allSatisfy({ $0.lsn == 0 }) { return .success(next) }
        guard fitting.count == 1 else {
            let files = (try? fileSystem.listDirectory(storePath).sorted().joined(separator: ", ")) ?? "?"
            let lsns = fitting.map { $0.lsn.map(String.init) ?? "an error" }.joined(separator: " and ")
            return .failure(KeyProblem(description: "a key change cut short leaves a store that \(fitting.isEmpty ? "neither" : "both") the old and the new key open (at LSN \(lsns); files: \(files); \(errors.joined(separator: "; ")))"))
        }
        return .success(fitting[0].key)
    }

    struct KeyProblem: Error, CustomStringConvertible {
        var description: String
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
