import Foundation
import LensLog
import LensTestSupport
import Testing
@_spi(CrashTesting) @testable import LensDB

/// Operation 7 below the lenses: patches apply in memory, in replay and
/// through compaction alike, and a patch that cannot apply fails the open.
@Suite struct RootPatchTests {
    let path = "/p.lensdb"

    func options(_ fileSystem: SimulatedFileSystem) -> StoreOptions {
        var options = StoreOptions()
        options.fileSystem = fileSystem
        options.checksInvariants = true
        options.compactionLogRatio = nil
        options.log.backgroundSyncInterval = nil
        return options
    }

    @Test func patchesAreReplayedFromTheLogAndKeptWholeBySnapshots() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try Store(at: path, options: options(fileSystem))
        let start: Document = ["protection": ["enabled": false, "retries": 3], "flags": ["beta": true, "gamma": false]]
        try store.write { tx in tx.setRoot(.encoded(start.binaryEncoded()), named: "app", encoding: .valueFormat) }
        try store.write { tx in
            tx.patchRoot(named: "app", at: ["protection", "enabled"], to: Document.bool(true).binaryEncoded())
            tx.patchRoot(named: "app", at: ["flags", "beta"], to: nil)
            tx.patchRoot(named: "app", at: ["flags", "absent"], to: nil)
        }
        var expected = start
        expected["protection"]["enabled"] = true
        expected["flags"].removeValue(forKey: "beta")
        #expect(try Document(decodingBinary: store.current.root(named: "app")!.bytes()) == expected)
        store.close()
        let replayed = try Store(at: path, options: options(fileSystem))
        #expect(try replayed.current.root(named: "app")!.bytes() == expected.binaryEncoded())
        try replayed.compact()
        replayed.close()
        let fromSnapshot = try Store(at: path, options: options(fileSystem))
        defer { fromSnapshot.close() }
        #expect(fromSnapshot.openStatistics.recovery.snapshot != nil)
        #expect(try fromSnapshot.current.root(named: "app")!.bytes() == expected.binaryEncoded())
    }

    /// A record that verifies but holds a patch that does not apply (LSN 2,
    /// after a put in the same record), then a put (LSN 3): `.strict` names
    /// the record; `.salvage` drops it whole, put and all, and goes on.
    @Test(arguments: [
        ("missing", ["a"]),                // the root does not exist
        ("app", ["scalar", "below"]),      // a member on the way is not an object
        ("app", ["none", "below"]),        // a member on the way is missing
    ])
    func aPatchThatDoesNotApplyFailsAStrictOpenAndSalvageDropsItsRecordWhole(root: String, keys: [String]) throws {
        let fileSystem = SimulatedFileSystem()
        let store = try Store(at: path, options: options(fileSystem))
        let document: Document = ["scalar": 1]
        try store.write { tx in tx.setRoot(.encoded(document.binaryEncoded()), named: "app", encoding: .valueFormat) }
        store.close()
        let directory = StoreDirectory(path: path, fileSystem: fileSystem)
        let logPath = directory.logPath(generation: 2)
        let log = try LogWriter.create(fileSystem: fileSystem, path: logPath, generation: 2, firstLSN: 2, options: LogWriterOptions())
        _ = try log.enqueue(TransactionFormat.encode([
            .put(table: "t", key: [1], value: .encoded([1])), .patchRoot(name: root, path: keys, value: .encoded([0x02])),
        ]))
        _ = try log.enqueue(TransactionFormat.encode([.put(table: "t", key: [2], value: .encoded([2]))]))
        try log.flush()
        log.close()
        let offset = Int64(LogFormat.fileHeaderSize)
        #expect {
            try Store(at: path, options: options(fileSystem))
        } throws: { error in
            guard case let .recordDoesNotApply(file, at, lsn, problem) = error as? StoreError else { return false }
            return file == logPath && at == offset && lsn == 2 && problem.hasPrefix("a patch of root \(root)")
        }

        var salvaging = options(fileSystem)
        salvaging.recovery = .salvage
        let salvaged = try Store(at: path, options: salvaging)
        defer { salvaged.close() }
        let dropped = salvaged.openStatistics.recovery.dropped
        #expect(dropped.map(\.file) == [logPath])
        #expect(dropped.map(\.range.offset) == [offset])
        #expect(dropped.map(\.range.lostLSNs) == [2..<3])
        #expect(dropped.map(\.range.reason) == [.doesNotApply])
        #expect(salvaged.current.value(in: "t", key: [1]) == nil, "the put beside the patch is dropped with it")
        #expect(salvaged.current.value(in: "t", key: [2]) != nil)
        #expect(try salvaged.current.root(named: "app")!.bytes() == document.binaryEncoded())
        #expect(salvaged.current.lsn == 3)
        let problems = try StoreInspector(path: path, fileSystem: fileSystem).verify().problems
        #expect(problems.contains { $0.lsn == 2 && $0.message.contains("verifies but does not apply") }, "\(problems)")
    }

    /// Records of several root operations under `.salvage`: one whose last
    /// patch fails leaves every root as before, whatever the operations
    /// before it did to them; one whose patch needs an earlier operation of
    /// the same record applies whole.
    @Test func aRecordOfSeveralRootOperationsAppliesWholeOrNotAtAll() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try Store(at: path, options: options(fileSystem))
        let document: Document = ["scalar": 1, "nested": ["deep": "x"]]
        try store.write { tx in tx.setRoot(.encoded(document.binaryEncoded()), named: "app", encoding: .valueFormat) }
        store.close()
        let directory = StoreDirectory(path: path, fileSystem: fileSystem)
        let logPath = directory.logPath(generation: 2)
        let log = try LogWriter.create(fileSystem: fileSystem, path: logPath, generation: 2, firstLSN: 2, options: LogWriterOptions())
        let fresh: Document = ["made": true]
        let failing: [[LensDB.Operation]] = [
            [.patchRoot(name: "app", path: ["scalar"], value: .encoded(Document.int(2).binaryEncoded())),
             .patchRoot(name: "app", path: ["nested", "deep"], value: nil),
             .patchRoot(name: "app", path: ["scalar", "below"], value: nil)],
            [.removeRoot(name: "app"), .patchRoot(name: "app", path: ["scalar"], value: nil)],
            [.declareRoot(name: "other", encoding: .valueFormat), .setRoot(name: "other", value: .encoded(fresh.binaryEncoded())),
             .patchRoot(name: "app", path: ["none", "below"], value: nil)],
        ]
        for operations in failing { _ = try log.enqueue(TransactionFormat.encode(operations)) }
        _ = try log.enqueue(TransactionFormat.encode([
            .declareRoot(name: "made", encoding: .valueFormat), .setRoot(name: "made", value: .encoded(fresh.binaryEncoded())),
            .patchRoot(name: "made", path: ["more"], value: .encoded(Document.int(3).binaryEncoded())),
        ]))
        try log.flush()
        log.close()

        var salvaging = options(fileSystem)
        salvaging.recovery = .salvage
        let salvaged = try Store(at: path, options: salvaging)
        defer { salvaged.close() }
        #expect(salvaged.openStatistics.recovery.dropped.map(\.range.lostLSNs) == [2..<3, 3..<4, 4..<5])
        #expect(salvaged.openStatistics.recovery.recordsReplayed == 2, "the first commit and the last")
        #expect(try #require(salvaged.current.root(named: "app")).bytes() == document.binaryEncoded(), "the root's own bytes")
        #expect(salvaged.current.root(named: "other") == nil)
        #expect(try Document(decodingBinary: #require(salvaged.current.root(named: "made")).bytes()) == ["made": true, "more": 3])
        #expect(salvaged.current.lsn == 5)
    }

    /// A store written by log format v2 (`Tests/Fixtures/format-v2.lensdb`:
    /// a snapshot and a v2 log) opens under v3 with everything it held;
    /// the next write goes to a new v3 log, and the v2 log keeps its version.
    @Test func aStoreOfLogFormatVersion2OpensAndGrowsAVersion3Log() throws {
        let fileSystem = SimulatedFileSystem()
        try Fixtures.plant("format-v2", at: path, on: fileSystem)
        let store = try Store(at: path, options: options(fileSystem))
        let state = store.current
        #expect(state.lsn == 3)
        #expect(try state.value(in: "raw", key: bytes("k2"))?.bytes() == bytes("two"))
        #expect(state.value(in: "raw", key: bytes("k1")) == nil)
        #expect(state.count(in: "typed") == 2 && state.encoding(ofTable: "typed") == TableEncoding(key: .int64, value: .valueFormat))
        #expect(try state.root(named: "blob")?.bytes() == bytes("bytes") && state.encoding(ofRoot: "blob") == .raw)
        let settings = try Document(decodingBinary: #require(state.root(named: "settings")).bytes())
        #expect(settings == ["theme": "light", "protection": ["enabled": false], "retries": 4])
        try store.write { tx in tx.patchRoot(named: "settings", at: ["theme"], to: Document.string("sepia").binaryEncoded()) }
        store.close()
        let logs = try StoreDirectory(path: path, fileSystem: fileSystem).list().logs
        let versions = try logs.map { try LogReader(fileSystem: fileSystem, path: $0.path, policy: .strict).header.version }
        #expect(versions == [2, 3])
        let reopened = try Store(at: path, options: options(fileSystem))
        defer { reopened.close() }
        #expect(try Document(decodingBinary: #require(reopened.current.root(named: "settings")).bytes())["theme"] == "sepia")
        #expect(reopened.current.count(in: "typed") == 2)
    }
}
