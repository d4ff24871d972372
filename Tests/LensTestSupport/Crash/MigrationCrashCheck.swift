@_spi(CrashTesting) import LensDB
import LensLog

/// The crash oracle of migrations: a power cut at any call of an open that
/// migrates leaves the store in exactly the state of an uncut run of the
/// first k migrations, its history naming those k, with k equal to all of
/// them once `migrate` returned; and migrating again ends where an uncut
/// run of all of them does.
public enum MigrationCrashCheck {
    /// Every table's rows and every root, as bytes: two states that compare
    /// equal hold the same data.
    public typealias Contents = [String: [[UInt8]: [UInt8]]]

    /// The contents of `state`. The migration history is taken as what it
    /// says, without the LSN of each migration: a migration that a cut
    /// interrupted between its batches runs again after the records that
    /// undid it, so at another LSN than in an uncut run.
    public static func contents(_ state: StoreState) -> Contents {
        var result: Contents = [:]
        for table in state.tableNames {
            var rows: [[UInt8]: [UInt8]] = [:]
            // Entries in memory encode: they were encoded when committed.
            for (key, value) in state.entries(in: table) { rows[key] = try? value.bytes() }
            result["table " + table] = rows
        }
        for root in state.rootNames { result["root " + root] = [[]: (try? state.root(named: root)?.bytes()) ?? []] }
        if let bytes = try? state.root(named: MigrationHistory.rootName)?.bytes(), var history = try? Document(decodingBinary: bytes),
           case let .array(applied) = history["applied"] {
            history["applied"] = .array(applied.map { entry in
                var entry = entry
                entry.removeValue(forKey: "lsn")
                return entry
            })
            result["root " + MigrationHistory.rootName] = [[]: history.binaryEncoded()]
        }
        return result
    }

    /// The contents after an uncut run of the first k migrations, for k
    /// from 0 through all of them (a migration that throws stops the run:
    /// the states after it repeat the one before).
    public static func expectedStates(_ workload: MigrationWorkload) throws -> [Contents] {
        try (0...workload.migrations.count).map { count in
            let fileSystem = try populated(workload)
            let store = try Store(at: CrashCheck.storePath, options: CrashCheck.options(fileSystem))
            defer { store.close() }
            // A step that cannot apply (a key conflict) stops every run alike.
            _ = try? workload.migrator(first: count).migrate(store)
            return contents(store.current)
        }
    }

    /// How many mutating calls an uncut open-and-migrate makes.
    public static func mutatingCalls(of workload: MigrationWorkload) throws -> Int {
        let fileSystem = try populated(workload)
        let before = fileSystem.mutatingCallCount
        _ = openAndMigrate(workload, fileSystem)
        return fileSystem.mutatingCallCount - before
    }

    /// Cuts the power after `cutPoint` calls of an open that migrates,
    /// crashes with `crashSeed` under `model`, and checks the reopened store.
    public static func check(
        _ workload: MigrationWorkload, expected: [Contents], cutPoint: Int, crashSeed: UInt64, model: CrashModel
    ) -> CrashViolation? {
        func violation(_ detail: String) -> CrashViolation {
            CrashViolation(workloadSeed: workload.seed, cutPoint: cutPoint, detail: "migration workload: " + detail)
        }
        do {
            let fileSystem = try populated(workload)
            fileSystem.powerCut(afterMutatingCalls: cutPoint)
            let finished = openAndMigrate(workload, fileSystem)
            fileSystem.crash(seed: crashSeed, model: model)
            let store = try Store(at: CrashCheck.storePath, options: CrashCheck.options(fileSystem))
            defer { store.close() }
            let applied = try store.migrationHistory().applied.count
            guard applied < expected.count, contents(store.current) == expected[applied] else {
                return violation("the store recorded \(applied) migrations and holds another state than an uncut run of \(applied)")
            }
            if finished && applied != workload.migrations.count {
                return violation("migrate returned, and the reopened store lacks migrations after the \(applied) it recorded")
            }
            // A step that cannot apply throws here as in the uncut run; the
            // comparison below is what judges the outcome.
            _ = try? workload.migrator().migrate(store)
            guard contents(store.current) == expected.last! else {
                return violation("migrating again after the crash ends elsewhere than an uncut run (\(applied) were recorded)")
            }
            try store.checkInvariants()
            return nil
        } catch {
            return violation("reopen failed: \(error)")
        }
    }

    /// A simulated disk holding the workload's rows, closed cleanly.
    static func populated(_ workload: MigrationWorkload) throws -> SimulatedFileSystem {
        let fileSystem = SimulatedFileSystem()
        let store = try Store(at: CrashCheck.storePath, options: CrashCheck.options(fileSystem))
        defer { store.close() }
        try workload.populate(store)
        return fileSystem
    }

    /// Opens the store and migrates it; whether both returned.
    static func openAndMigrate(_ workload: MigrationWorkload, _ fileSystem: SimulatedFileSystem) -> Bool {
        do {
            let store = try Store(at: CrashCheck.storePath, options: CrashCheck.options(fileSystem))
            defer { store.close() }
            try workload.migrator().migrate(store)
            return true
        } catch {
            return false
        }
    }
}
