import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// What migrations promise when things go wrong: a store from a newer
/// release is refused untouched, and a power cut during migrations leaves
/// each one either not run or run, never half.
@Suite struct MigrationSafetyTests {
    @Test func aStoreMigratedByANewerReleaseIsRefusedAndLeftByteIdentical() throws {
        let directory = try TemporaryDirectory("migrations")
        defer { directory.remove() }
        let path = "\(directory.path)/app.lensdb"
        let release1 = try Store(at: path)
        try release1.table(ContactV1.self, named: "contacts").put(MigrationFixtures.contacts)
        release1.close()
        try Store(at: path, migrator: MigrationFixtures.release2).close()
        let before = try Self.files(in: path)

        var older = Migrator()
        older.registerMigration("add-phone") { try $0.addField("phone", default: "", inTable: "contacts") }
        older.registerMigration("rename-name") { try $0.renameField("name", to: "fullName", inTable: "contacts") }
        #expect(throws: MigrationError.unknownMigrations(store: path, names: ["rename-email", "age-as-number"])) {
            try Store(at: path, migrator: older).close()
        }
        #expect(try Self.files(in: path) == before, "refusing a newer store changed its files")
        // The refused open closed the store: the newer release can open it again.
        try Store(at: path, migrator: MigrationFixtures.release2).close()
    }

    @Test func anUnreadableHistoryIsRefused() throws {
        let store = Store.inMemory()
        try store.write { tx in
            tx.setRoot(.encoded(try ValueEncoder().encode(["format": 2] as Document)), named: MigrationHistory.rootName, encoding: .valueFormat)
        }
        #expect(throws: MigrationError.self) { try MigrationFixtures.release2.migrate(store) }
        #expect(try store.table(ContactV1.self, named: "contacts").count == 0)
    }

    /// Cuts the power at every mutating call of an open that runs four
    /// migrations, under three crash models. The store that reopens holds
    /// exactly the state after some number k of migrations, with a history
    /// of those k (never a migration half applied or applied unrecorded),
    /// and migrating it again ends in the state of an uncut run.
    @Test func powerCutAtEveryCallLeavesEachMigrationRunOrNot() throws {
        let migrations = MigrationFixtures.release2
        let expected = try (0...migrations.migrationNames.count).map { count -> [String: [[UInt8]: [UInt8]]] in
            let fileSystem = SimulatedFileSystem()
            try MigrationFixtures.release1Store(fileSystem, checkingInvariants: false).close()
            let store = try tableStore(fileSystem, checkingInvariants: false)
            defer { store.close() }
            try Self.prefix(migrations, count).migrate(store)
            return MigrationFixtures.contents(store.current)
        }
        let counter = SimulatedFileSystem()
        try MigrationFixtures.release1Store(counter, checkingInvariants: false).close()
        let setupCalls = counter.mutatingCallCount
        try Self.openAndMigrate(counter, migrations)
        let calls = counter.mutatingCallCount - setupCalls
        var random = SeededGenerator.fromEnvironment(default: 0x313C_5A7E)
        var points = 0
        for cut in 0...calls {
            for model in [CrashModel.default, .tearAll, .keepAll] {
                let fileSystem = SimulatedFileSystem()
                try MigrationFixtures.release1Store(fileSystem, checkingInvariants: false).close()
                fileSystem.powerCut(afterMutatingCalls: cut)
                // The power cut throws: whether it let migrate return is all that matters.
                let finished = (try? Self.openAndMigrate(fileSystem, migrations)) != nil
                fileSystem.crash(seed: random.next(), model: model)
                let store = try tableStore(fileSystem)
                defer { store.close() }
                let applied = try store.migrationHistory().applied.count
                // Compared first, so a failure names the cut, not every byte of both states.
                let matches = MigrationFixtures.contents(store.current) == expected[applied]
                #expect(matches,
                        "cut \(cut) (\(model)): the store after \(applied) recorded migrations differs from an uncut run of \(applied)")
                #expect(!finished || applied == expected.count - 1, "cut \(cut): a migration acknowledged durable was lost")
                try migrations.migrate(store)
                let finishes = MigrationFixtures.contents(store.current) == expected.last!
                #expect(finishes, "cut \(cut): migrating again did not finish the job")
                try store.checkInvariants()
                points += 1
            }
        }
        print("migrationCrash: \(points) crash points over \(calls) calls")
    }

    /// Random migration workloads, cut at every call: each of eight kinds
    /// of step, on tables that appear and go, under the oracle the crash
    /// fuzzer runs at length.
    @Test func powerCutAtEveryCallOfRandomMigrationsLeavesEachRunOrNot() throws {
        var random = SeededGenerator.fromEnvironment(default: 0x0A11_5E7)
        var points = 0
        for _ in 0..<2 {
            let workload = MigrationWorkload(seed: random.next())
            let expected = try MigrationCrashCheck.expectedStates(workload)
            let calls = try MigrationCrashCheck.mutatingCalls(of: workload)
            for cut in 0...calls {
                for model in [CrashModel.default, .tearAll, .keepAll] {
                    let violation = MigrationCrashCheck.check(workload, expected: expected, cutPoint: cut, crashSeed: random.next(), model: model)
                    #expect(violation == nil, "\(violation.map(String.init(describing:)) ?? "") — steps: \(workload.migrations)")
                    if violation != nil { return }
                    points += 1
                }
            }
        }
        print("randomMigrationCrash: \(points) crash points")
    }

    static func openAndMigrate(_ fileSystem: SimulatedFileSystem, _ migrator: Migrator) throws {
        let store = try tableStore(fileSystem, checkingInvariants: false)
        defer { store.close() }
        try migrator.migrate(store)
    }

    /// The first `count` migrations of `migrator`, by name: the app as an
    /// earlier release shipped it.
    static func prefix(_ migrator: Migrator, _ count: Int) -> Migrator {
        var shorter = Migrator()
        for migration in migrator.registered.prefix(count) { shorter.registerMigration(migration.name, migration.body) }
        return shorter
    }

    /// Every file under the store's directory with its bytes.
    static func files(in path: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: path) {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(name)"))
        }
        return files
    }
}
