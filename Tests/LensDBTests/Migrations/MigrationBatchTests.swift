import Foundation
import LensLog
import LensTestSupport
import Testing
@testable import LensDB

/// Migrations larger than ``Migrator/maximumBatchBytes``: logged in
/// several records, still all or nothing for readers, for a throw, and
/// across a cut between the records.
@Suite struct MigrationBatchTests {
    static let rows = 300
    static let path = "/batches.lensdb"

    /// People with a name long enough that 300 of them take many batches of 2 KiB.
    static func populate(_ store: Store) throws {
        try store.write { tx in
            for id in 1...Int64(rows) {
                let person: Document = ["n": .int(id), "name": .string("person number \(id) of the batch tests")]
                tx.put(.encoded(person.binaryEncoded()), for: OrderedKey.int64(id), in: "people",
                       encoding: TableEncoding(key: .int64, value: .valueFormat))
            }
        }
    }

    /// Four steps over every row: fields added and renamed, rows moved, a table renamed.
    static func migrator(batchBytes: Int) -> Migrator {
        var migrator = Migrator()
        migrator.maximumBatchBytes = batchBytes
        migrator.registerMigration("reshape") { migration in
            try migration.addField("nickname", default: "", inTable: "people")
            try migration.renameField("name", to: "fullName", inTable: "people")
            try migration.moveRows(from: "people", to: "archive") { row in
                guard case let .int(number) = row["n"] else { return false }
                return number % 3 == 0
            }
            try migration.renameTable("people", to: "contacts")
        }
        return migrator
    }

    static func options(_ fileSystem: SimulatedFileSystem, readOnly: Bool = false) -> StoreOptions {
        var options = CrashCheck.options(fileSystem)
        options.readOnly = readOnly
        return options
    }

    /// A simulated disk holding the people, closed cleanly, and its contents.
    static func populated() throws -> (SimulatedFileSystem, MigrationCrashCheck.Contents) {
        let fileSystem = SimulatedFileSystem()
        let store = try Store(at: path, options: options(fileSystem))
        defer { store.close() }
        try populate(store)
        return (fileSystem, MigrationCrashCheck.contents(store.current))
    }

    /// The contents after the migration logged as one record.
    static func migratedInOneRecord() throws -> MigrationCrashCheck.Contents {
        let (fileSystem, _) = try populated()
        let store = try Store(at: path, options: options(fileSystem))
        defer { store.close() }
        try migrator(batchBytes: 64 << 20).migrate(store)
        return MigrationCrashCheck.contents(store.current)
    }

    /// The history as recovery leaves it, before any open undoes a running migration.
    static func recoveredHistory(_ fileSystem: SimulatedFileSystem) throws -> MigrationHistory {
        try MigrationHistory(Store.open(at: path, options: options(fileSystem, readOnly: true)).state, store: path)
    }

    @Test func aLargeMigrationIsLoggedInBatchesAndEndsAsOneRecordDoes() throws {
        let expected = try Self.migratedInOneRecord()
        let (fileSystem, _) = try Self.populated()
        let store = try Store(at: Self.path, options: Self.options(fileSystem))
        let before = store.current.lsn
        try Self.migrator(batchBytes: 2048).migrate(store)
        let applied = try #require(try store.migrationHistory().applied.first)
        // Each batch is a record: the history names the last one's LSN.
        #expect(applied.lsn == store.current.lsn)
        #expect(applied.lsn - before > 10, "300 rows of four steps in batches of 2 KiB took \(applied.lsn - before) records")
        #expect(Self.same(store, expected))
        #expect(!store.current.rootNames.contains { $0.hasPrefix(MigrationHistory.rootName + ".") }, "an undo root outlived the migration")
        store.close()
        let reopened = try Store(at: Self.path, options: Self.options(fileSystem))
        defer { reopened.close() }
        #expect(Self.same(reopened, expected), "replaying the batches gave another state")
        #expect(try Self.recoveredHistory(fileSystem).running == nil)
    }

    /// A batched migration takes several LSNs at once. On a store with
    /// fewer left (its snapshot says it holds nearly the last LSN a record
    /// can carry), it is refused before a log is started or a record made,
    /// and the store goes on to use the LSNs it has, one commit each.
    @Test func aBatchedMigrationNeedingMoreLSNsThanAreLeftIsRefusedBeforeAnyRecord() throws {
        let (populated, _) = try Self.populated()
        let reader = try Store(at: Self.path, options: Self.options(populated, readOnly: true))
        var state = reader.current
        reader.close()
        state.lsn = LogFormat.maxLSN - 2
        let fileSystem = SimulatedFileSystem()
        try fileSystem.createDirectory(at: Self.path, permissions: nil)
        let directory = StoreDirectory(path: Self.path, fileSystem: fileSystem)
        try directory.writeIdentity()
        _ = try Store.writeSnapshot(of: state, generation: 1, in: directory, compression: .lz4, key: nil)
        try LogWriter.create(fileSystem: fileSystem, path: directory.logPath(generation: 1), generation: 1, firstLSN: state.lsn + 1).close()

        let store = try Store(at: Self.path, options: Self.options(fileSystem))
        defer { store.close() }
        let files = try fileSystem.listDirectory(Self.path).sorted()
        #expect(throws: LogError.lsnsExhausted(file: Self.path)) { try Self.migrator(batchBytes: 2048).migrate(store) }
        #expect(try fileSystem.listDirectory(Self.path).sorted() == files, "no log was started for it")
        #expect(store.current.lsn == LogFormat.maxLSN - 2)
        #expect(try store.migrationHistory().applied.isEmpty)
        try Self.migrator(batchBytes: 64 << 20).migrate(store)
        try store.write { tx in tx.setRoot([1], named: "marker") }
        #expect(store.current.lsn == LogFormat.maxLSN)
        #expect(throws: LogError.lsnsExhausted(file: directory.logPath(generation: 2))) {
            try store.write { tx in tx.removeRoot(named: "marker") }
        }
    }

    /// A row too large to share a record with its undo keeps the
    /// migration in one record, as before batches: it still runs.
    @Test func aMigrationOfARowTooLargeForABatchIsOneRecord() throws {
        let store = try Store(at: Self.path, options: Self.options(SimulatedFileSystem()))
        defer { store.close() }
        let encoding = TableEncoding(key: .int64, value: .valueFormat)
        let large: Document = ["n": 0, "blob": .string(String(repeating: "x", count: MigrationJournal.largestBatch + 1))]
        try store.write { tx in
            tx.put(.encoded(large.binaryEncoded()), for: OrderedKey.int64(0), in: "people", encoding: encoding)
            for id in 1...Int64(40) {
                tx.put(.encoded((["n": .int(id)] as Document).binaryEncoded()), for: OrderedKey.int64(id), in: "people", encoding: encoding)
            }
        }
        let before = store.current.lsn
        var migrator = Migrator()
        migrator.maximumBatchBytes = 64
        migrator.registerMigration("flag") { try $0.addField("flag", default: true, inTable: "people") }
        try migrator.migrate(store)
        #expect(store.current.lsn == before + 1, "logged as \(store.current.lsn - before) records")
        #expect(store.current.count(in: "people") == 41)
    }

    @Test func aBatchedMigrationThatThrowsChangesNothing() throws {
        let (fileSystem, before) = try Self.populated()
        let store = try Store(at: Self.path, options: Self.options(fileSystem))
        defer { store.close() }
        let lsn = store.current.lsn
        var migrator = Self.migrator(batchBytes: 2048)
        migrator.registerMigration("fails-late") { migration in
            try migration.addField("late", default: 1, inTable: "contacts")
            throw MigrationError.tableExists(store: Self.path, migration: "fails-late", table: "x")
        }
        #expect(throws: MigrationError.self) { try migrator.migrate(store) }
        // The first migration is committed; the one that threw wrote nothing.
        #expect(try store.migrationHistory().applied.map(\.name) == ["reshape"])
        #expect(Self.same(store, try Self.migratedInOneRecord()))
        #expect(store.current.lsn > lsn)
        #expect(!Self.same(store, before))
    }

    /// A reader polling while a migration is logged in many batches sees
    /// the rows all old or all new: the batches are published together.
    @Test func aConcurrentReaderNeverSeesAMigrationHalfDone() throws {
        let (fileSystem, before) = try Self.populated()
        let expected = try Self.migratedInOneRecord()
        let store = try Store(at: Self.path, options: Self.options(fileSystem))
        defer { store.close() }
        // A class the thread's closure holds a reference to: a noncopyable
        // Mutex captured by the closure is a variable both threads access,
        // which ThreadSanitizer reports as a race however it locks.
        let seen = Locked((done: false, reads: 0, mixes: 0))
        let reader = Thread {
            while !seen.withLock({ $0.done }) {
                let contents = MigrationCrashCheck.contents(store.current)
                seen.withLock {
                    $0.reads += 1
                    if contents != before && contents != expected { $0.mixes += 1 }
                }
            }
        }
        reader.start()
        try Self.migrator(batchBytes: 2048).migrate(store)
        while seen.withLock({ $0.reads }) < 3 { usleep(1000) }
        let (reads, mixes) = seen.withLock { seen in
            seen.done = true
            return (seen.reads, seen.mixes)
        }
        #expect(mixes == 0, "\(mixes) of \(reads) reads saw a half-migrated store")
    }

    /// Power cuts while the batches are written. Some leave a prefix of
    /// them in the log; every open undoes that (a read-only one in memory,
    /// without writing), `logtool info` says so, and migrating again ends
    /// as an uncut run.
    @Test func aCutBetweenBatchesIsUndoneByTheNextOpen() throws {
        let expected = try Self.migratedInOneRecord()
        let (counter, before) = try Self.populated()
        let setup = counter.mutatingCallCount
        try Self.migrate(counter)
        let calls = counter.mutatingCallCount - setup
        var random = SeededGenerator.fromEnvironment(default: 0xBA7C_4E5)
        var interrupted = 0
        // Every cut, under one crash model each; the read-only and logtool
        // checks on the first few interrupted stores, migrating again on
        // every sixth (CrashFuzz runs the same cuts at length).
        for cut in 0...calls {
            for model in [cut % 3 == 0 ? CrashModel.default : .tearAll] {
                let (fileSystem, _) = try Self.populated()
                fileSystem.powerCut(afterMutatingCalls: cut)
                try? Self.migrate(fileSystem)
                fileSystem.crash(seed: random.next(), model: model)
                guard try Self.recoveredHistory(fileSystem).running != nil else { continue }
                interrupted += 1
                if interrupted <= 8 {
                    try Self.checkReadOnlyViews(of: fileSystem, before: before, cut: cut)
                }
                let store = try Store(at: Self.path, options: Self.options(fileSystem))
                #expect(Self.same(store, before), "cut \(cut) (\(model)): the open did not undo the batches")
                store.close()
                #expect(try Self.recoveredHistory(fileSystem).running == nil, "cut \(cut): the undo was not durable")
                guard interrupted % 6 == 1 else { continue }
                try Self.migrate(fileSystem)
                let again = try Store(at: Self.path, options: Self.options(fileSystem))
                #expect(Self.same(again, expected), "cut \(cut): migrating again ended elsewhere")
                again.close()
            }
        }
        print("migrationBatches: \(interrupted) cuts left a migration between its batches, over \(calls) calls")
        #expect(interrupted > 0, "no cut fell between the batches: the test checks nothing")
    }

    /// A read-only open of a store cut between batches sees it before the
    /// migration and writes nothing; `logtool info` shows it so and says why.
    static func checkReadOnlyViews(of fileSystem: SimulatedFileSystem, before: MigrationCrashCheck.Contents, cut: Int) throws {
        let readOnly = try Store(at: path, options: options(fileSystem, readOnly: true))
        #expect(same(readOnly, before), "cut \(cut): a read-only open saw the cut migration")
        readOnly.close()
        #expect(try recoveredHistory(fileSystem).running != nil, "cut \(cut): a read-only open wrote")
        let info = try StoreInspector(path: path, fileSystem: fileSystem).info()
        #expect(info.recovery.contains { $0.contains("migration reshape was cut after") }, "cut \(cut): \(info.recovery)")
        #expect(info.tables.map(\.name) == ["people"])
    }

    /// Cuts while an open undoes a cut migration: each later open finishes the undo.
    @Test func aCutWhileUndoingIsUndoneByTheNextOpen() throws {
        let expected = try Self.migratedInOneRecord()
        var random = SeededGenerator.fromEnvironment(default: 0x0DD0_2E5)
        // A cut and crash seed that leave the log between the batches: the
        // same pair rebuilds the same disk.
        func disk(cut: Int, seed: UInt64) throws -> SimulatedFileSystem {
            let (fileSystem, _) = try Self.populated()
            fileSystem.powerCut(afterMutatingCalls: cut)
            try? Self.migrate(fileSystem)
            fileSystem.crash(seed: seed, model: .tearAll)
            return fileSystem
        }
        var found: (cut: Int, seed: UInt64)?
        for cut in 0..<400 where found == nil {
            let seed = random.next()
            if try Self.recoveredHistory(disk(cut: cut, seed: seed)).running != nil { found = (cut, seed) }
        }
        let interrupted = try #require(found, "no cut left the migration between its batches")
        let (_, before) = try Self.populated()
        var cut = 0
        while true {
            let fileSystem = try disk(cut: interrupted.cut, seed: interrupted.seed)
            fileSystem.powerCut(afterMutatingCalls: cut)
            let undone = (try? Store(at: Self.path, options: Self.options(fileSystem)).close()) != nil
            fileSystem.crash(seed: random.next(), model: .default)
            let store = try Store(at: Self.path, options: Self.options(fileSystem))
            #expect(Self.same(store, before), "cut \(cut) of the undo: the next open is not back before the migration")
            try Self.migrator(batchBytes: 2048).migrate(store)
            #expect(Self.same(store, expected))
            store.close()
            if undone { break }
            cut += 1
        }
        #expect(cut > 2, "the undo took \(cut) calls: too few to have cut it")
    }

    /// A running migration whose undo is missing, does not decode, or is not
    /// what LensDB writes (a put without its table's encoding) is a typed
    /// error at open, read-only or not, and the files stay as they are.
    @Test func aRunningMigrationWithADamagedUndoIsATypedErrorAtOpen() throws {
        let running: Document = ["format": 2, "applied": [], "versions": [:], "running": ["name": "reshape", "batches": 1]]
        let undos: [[UInt8]?] = [nil, [0xFF, 0x01], try TransactionFormat.encode([.put(table: "people", key: [1], value: .encoded([2]))])]
        for undo in undos {
            let fileSystem = SimulatedFileSystem()
            do {
                let store = try Store(at: Self.path, options: Self.options(fileSystem))
                defer { store.close() }
                try Self.populate(store)
                try store.write { tx in
                    tx.setRoot(.encoded(running.binaryEncoded()), named: MigrationHistory.rootName, encoding: .valueFormat)
                    if let undo { tx.setRoot(undo, named: MigrationJournal.undoRoot(0)) }
                }
            }
            for readOnly in [true, false] {
                #expect(throws: MigrationError.self, "\(undo.map { "\($0)" } ?? "no undo"), read-only \(readOnly)") {
                    _ = try Store(at: Self.path, options: Self.options(fileSystem, readOnly: readOnly))
                }
            }
            #expect(try Self.recoveredHistory(fileSystem).running?.name == "reshape", "a refused open changed the store")
        }
    }

    /// Whether `store` holds `contents`: a Bool, so that a failure names the
    /// case rather than every byte of both.
    static func same(_ store: Store, _ contents: MigrationCrashCheck.Contents) -> Bool {
        MigrationCrashCheck.contents(store.current) == contents
    }

    static func migrate(_ fileSystem: SimulatedFileSystem) throws {
        let store = try Store(at: path, options: options(fileSystem))
        defer { store.close() }
        try migrator(batchBytes: 2048).migrate(store)
    }
}
