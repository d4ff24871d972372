import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// Open after damage, on the simulated file system: what each policy does.
@Suite struct StoreRecoveryTests {
    let path = "/s.lensdb"

    func options(_ fileSystem: SimulatedFileSystem, _ policy: RecoveryPolicy = .strict) -> StoreOptions {
        var options = StoreOptions(recovery: policy)
        options.fileSystem = fileSystem
        options.checksInvariants = true
        options.compactionLogRatio = nil
        options.log.backgroundSyncInterval = nil
        return options
    }

    /// Ten committed transactions in one log; returns the log's path.
    func storeWithTenCommits(_ fileSystem: SimulatedFileSystem) throws -> String {
        let store = try Store(at: path, options: options(fileSystem))
        for index in 0..<10 { try store.write { tx in tx.put(bytes("value \(index)"), for: bytes("\(index)"), in: "t") } }
        store.close()
        return try StoreDirectory(path: path, fileSystem: fileSystem).list().logs.last!.path
    }

    @Test func flippedByteMidLogFailsStrictOpenWithFileAndOffset() throws {
        let fileSystem = SimulatedFileSystem()
        let log = try storeWithTenCommits(fileSystem)
        var reader = try LogReader(fileSystem: fileSystem, path: log, policy: .strict)
        var offsets: [Int64] = []
        while let record = try reader.next() { offsets.append(record.offset) }
        fileSystem.flip(byteAt: Int(offsets[4]) + LogFormat.frameHeaderSize + 2, inFile: log)
        #expect(throws: LogError.corruption(file: log, offset: offsets[4], lsn: 5, reason: .checksumMismatch)) {
            try Store(at: path, options: options(fileSystem))
        }
        let salvaged = try Store(at: path, options: options(fileSystem, .salvage))
        #expect(salvaged.current.count(in: "t") == 9)
        #expect(salvaged.current.value(in: "t", key: bytes("4")) == nil)
        #expect(salvaged.openStatistics.recovery.dropped.map(\.range.lostLSNs) == [5..<6])
    }

    struct Settings: Codable, Sendable, Equatable {
        var theme = "light"
        var fontSize = 14
    }

    /// Damage in the record that first wrote a root, when later records
    /// change parts of it through a lens: they cannot apply without it, so
    /// `.salvage` and `logtool repair` drop them with it and keep the rest.
    /// On disk, since repair renames directories.
    @Test func salvageDropsTheLensChangesOfARootADroppedRecordWrote() throws {
        let temporary = try TemporaryDirectory("lens-damage")
        defer { temporary.remove() }
        let path = temporary.path + "/s.lensdb"
        let store = try Store(at: path)
        let settings = try store.root(Settings.self, named: "settings", default: Settings())
        try store.write { tx in tx.put(bytes("1"), for: bytes("a"), in: "t") }                 // LSN 1
        try settings.lens(\.theme).set("dark")                                                 // LSN 2: the root, whole
        try settings.lens(\.fontSize).set(16)                                                  // LSN 3: a patch of it
        try store.write { tx in tx.put(bytes("4"), for: bytes("b"), in: "t") }                 // LSN 4
        store.close()
        let log = try StoreDirectory(path: path, fileSystem: POSIXFileSystem()).list().logs.last!.path
        var reader = try LogReader(fileSystem: POSIXFileSystem(), path: log, policy: .strict)
        var records: [LogRecord] = []
        while let record = try reader.next() { records.append(record) }
        let operations = try #require(TransactionFormat.decode(records[2].payload))
        #expect(operations.contains { $0.isPatch }, "the second lens change is logged as a patch")
        var file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: log)))
        file[Int(records[1].offset) + LogFormat.frameHeaderSize + 2] ^= 0xff
        try Data(file).write(to: URL(fileURLWithPath: log))

        #expect(throws: LogError.corruption(file: log, offset: records[1].offset, lsn: 2, reason: .checksumMismatch)) {
            try Store(at: path)
        }
        let salvaged = try Store(at: path, options: StoreOptions(recovery: .salvage))
        let dropped = salvaged.openStatistics.recovery.dropped
        #expect(dropped.map(\.range.lostLSNs) == [2..<3, 3..<4])
        #expect(dropped.map(\.range.reason) == [.checksumMismatch, .doesNotApply])
        #expect(dropped.last?.range.offset == records[2].offset)
        #expect(salvaged.current.count(in: "t") == 2)
        let reread = try salvaged.root(Settings.self, named: "settings", default: Settings())
        #expect(reread.value == Settings(), "the root is as if never written")
        try reread.lens(\.theme).set("blue")
        salvaged.close()

        let output = temporary.path + "/repaired.lensdb"
        let report = try StoreInspector(path: path).repair(to: output)
        #expect(report.lost.map(\.fromLSN) == [2, 3])
        #expect(report.lost.map(\.reason) == ["checksumMismatch", "doesNotApply"])
        let repaired = try Store(at: output)
        defer { repaired.close() }
        #expect(repaired.current.count(in: "t") == 2)
        #expect(try repaired.root(Settings.self, named: "settings", default: Settings()).value == Settings(theme: "blue"))
    }

    /// A snapshot through LSN 3 whose log starts at LSN 2, not 4, holding
    /// LSNs 2 to 5 (each record vouching for the one before): two files
    /// hold LSNs 2 and 3. `.strict` says so; `.salvage` keeps the
    /// snapshot's and replays the log from LSN 4.
    /// Keys a, b, c at LSNs 1 to 3, compacted; then, for each of `logs`,
    /// a log of that generation (past the snapshot's) in place of what is
    /// there, starting at `first`, one durable put of each key. Returns
    /// the snapshot's log.
    func compactedThenLogsStarting(
        _ fileSystem: SimulatedFileSystem, _ logs: [(generationsPast: UInt64, first: UInt64, keys: [String])]
    ) throws -> String {
        let store = try Store(at: path, options: options(fileSystem))
        for key in ["a", "b", "c"] { try store.write { tx in tx.put(bytes("1"), for: bytes(key), in: "t") } }
        try store.compact()
        store.close()
        let directory = StoreDirectory(path: path, fileSystem: fileSystem)
        let snapshotLog = try directory.list().logs.last!
        for (past, first, keys) in logs {
            let file = directory.logPath(generation: snapshotLog.generation + past)
            if fileSystem.fileExists(at: file) { try fileSystem.removeFile(at: file) }
            let writer = try LogWriter.create(fileSystem: fileSystem, path: file, generation: snapshotLog.generation + past, firstLSN: first)
            for key in keys {
                try writer.append(TransactionFormat.encode([.put(table: "t", key: bytes(key), value: .encoded(bytes("2")))]), durability: .full)
            }
            writer.close()
        }
        return snapshotLog.path
    }

    @Test func aLogStartingBeforeTheLSNsTheChainHoldsIsReadPastThemBySalvage() throws {
        let fileSystem = SimulatedFileSystem()
        let log = try compactedThenLogsStarting(fileSystem, [(0, 2, ["x", "y", "d", "e"])])

        let error = #expect(throws: RecoveryError.missingRecords(file: log, expectedLSN: 4, firstLSN: 2)) {
            try Store(at: path, options: options(fileSystem))
        }
        #expect(error.map { "\($0)" }?.contains("two files hold LSNs 2…3") == true)
        let problems = try StoreInspector(path: path, fileSystem: fileSystem).verify().problems
        #expect(problems.contains { $0.file == log && $0.message.hasPrefix("LSNs 2..<4 are held again by this log") }, "\(problems)")
        let recovery = try StoreInspector(path: path, fileSystem: fileSystem).info().recovery
        #expect(recovery.contains { $0.hasPrefix("skips \(log)'s copies of LSNs 2..<4") }, "\(recovery)")
        let salvaged = try Store(at: path, options: options(fileSystem, .salvage))
        #expect(salvaged.current.lsn == 5)
        #expect(salvaged.current.value(in: "t", key: bytes("x")) == nil, "the log's copy of LSN 2 is dropped")
        #expect(salvaged.current.value(in: "t", key: bytes("e")) != nil)
        #expect(salvaged.current.count(in: "t") == 5)
        #expect(salvaged.openStatistics.recovery.dropped.isEmpty, "nothing is lost")
        #expect(salvaged.openStatistics.recovery.skippedCopies.map(\.range.lostLSNs) == [2..<4])
        try salvaged.write { tx in tx.put(bytes("3"), for: bytes("f"), in: "t") }
        salvaged.close()
        let reopened = try Store(at: path, options: options(fileSystem, .salvage))
        defer { reopened.close() }
        #expect(reopened.current.lsn == 6)
        #expect(reopened.current.count(in: "t") == 6)
    }

    /// As above, and a later log starting at LSN 3 caps the first: the
    /// chain must not step back to LSN 3, which the snapshot holds, but
    /// skip the later log's copy of it too.
    @Test func aLaterLogCappingAnEarlyLogDoesNotTakeTheChainBack() throws {
        let fileSystem = SimulatedFileSystem()
        _ = try compactedThenLogsStarting(fileSystem, [(0, 2, ["w", "x", "y", "z"]), (1, 3, ["v", "d", "e"])])
        let salvaged = try Store(at: path, options: options(fileSystem, .salvage))
        defer { salvaged.close() }
        #expect(salvaged.current.lsn == 5)
        #expect(salvaged.current.value(in: "t", key: bytes("v")) == nil, "the later log's copy of LSN 3 is skipped")
        #expect(salvaged.current.count(in: "t") == 5)
        #expect(salvaged.openStatistics.recovery.skippedCopies.map(\.range.lostLSNs) == [2..<4, 3..<4])
    }

    /// A store never compacted whose first log's header is damaged: no log
    /// that verifies starts at LSN 1, as when a snapshot was removed, so
    /// every open refuses it and changes no file; repair, which reads that
    /// log from LSN 1, keeps every record. On disk, since repair renames
    /// directories.
    @Test func aDamagedFirstLogHeaderIsRefusedAndRepairKeepsEveryRecord() throws {
        let temporary = try TemporaryDirectory("first-header")
        defer { temporary.remove() }
        let path = temporary.path + "/s.lensdb"
        for commits in [0..<10, 10..<11] {
            let store = try Store(at: path)
            for index in commits { try store.write { tx in tx.put(bytes("v"), for: bytes("\(index)"), in: "t") } }
            store.close()
        }
        let logs = try StoreDirectory(path: path, fileSystem: POSIXFileSystem()).list().logs
        #expect(logs.count == 2)
        var file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: logs[0].path)))
        file[20] ^= 0xff
        try Data(file).write(to: URL(fileURLWithPath: logs[0].path))
        let before = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
        for policy in [RecoveryPolicy.strict, .salvage] {
            let error = #expect(throws: RecoveryError.noUsableSnapshot(directory: path, damaged: [])) {
                try Store(at: path, options: StoreOptions(recovery: policy))
            }
            #expect(error.map { "\($0)" }?.contains("or the header of the log that starts there is damaged") == true)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: path).sorted() == before, "a refused open changes no file")
        let output = temporary.path + "/repaired.lensdb"
        let report = try StoreInspector(path: path).repair(to: output)
        #expect(report.lost.isEmpty, "\(report.lost)")
        let repaired = try Store(at: output)
        defer { repaired.close() }
        #expect(repaired.current.count(in: "t") == 11)
        #expect(repaired.current.lsn == 11)
    }

    @Test func logCutWhileNewReportsTheNonZeroBytesOfTheFileAsItIs() throws {
        let fileSystem = SimulatedFileSystem()
        _ = try storeWithTenCommits(fileSystem)
        // A log whose header never reached the disk whole: two bytes of
        // magic, then preallocated zeros.
        let cut = StoreDirectory(path: path, fileSystem: fileSystem).logPath(generation: 9)
        let file = try fileSystem.openFile(at: cut, mode: .create)
        try file.write([0x4C, 0x45] + [UInt8](repeating: 0, count: 4094), at: 0)
        file.close()
        let store = try Store(at: path, options: options(fileSystem))
        #expect(store.current.count(in: "t") == 10)
        #expect(store.openStatistics.recovery.logsCutWhileNew == [cut])
        #expect(store.openStatistics.recovery.tornTails.first { $0.file == cut }?.bytesDropped == 2)
    }

    @Test func tornTailIsCutQuietlyAndReported() throws {
        let fileSystem = SimulatedFileSystem()
        let log = try storeWithTenCommits(fileSystem)
        // A crash leaves no clean-close marker: only then is a short log a torn tail.
        try fileSystem.removeFile(at: StoreDirectory(path: path, fileSystem: fileSystem).closedMarkerPath)
        let size = fileSystem.contents(of: log)!.count
        fileSystem.truncate(file: log, to: size - 5)
        let store = try Store(at: path, options: options(fileSystem))
        #expect(store.current.count(in: "t") == 9)
        #expect(store.openStatistics.recovery.tornTails.count == 1)
        #expect(store.openStatistics.recovery.tornBytes > 0)
    }

    /// One commit compacted into a snapshot, whose log is then empty, and
    /// no clean-close marker: a crash after the compaction. Returns the
    /// snapshot's path.
    func compactedThenCrashed(_ fileSystem: SimulatedFileSystem) throws -> String {
        let store = try Store(at: path, options: options(fileSystem))
        try store.write { tx in tx.put(bytes("v"), for: bytes("k"), in: "t") }
        try store.compact()
        store.close()
        let directory = StoreDirectory(path: path, fileSystem: fileSystem)
        try fileSystem.removeFile(at: directory.closedMarkerPath)
        return try directory.list().snapshots.last!.path
    }

    /// With no state to take instead, an open leaves the damaged snapshot
    /// where it is: the next open must find it again, not a store whose
    /// history starts after it, and `logtool repair` salvages it from there
    /// (LogtoolRepairTests). No marker: a crash after the compaction, so no
    /// clean close proves what the snapshot held.
    @Test func aDamagedSnapshotNothingReplacesStaysInPlaceAndEveryOpenSaysSo() throws {
        let fileSystem = SimulatedFileSystem()
        let snapshot = try compactedThenCrashed(fileSystem)
        fileSystem.flip(byteAt: 40, inFile: snapshot)
        let before = try fileSystem.listDirectory(path).sorted()
        for _ in 0..<2 {
            let error = #expect(throws: RecoveryError.self) { try Store(at: path, options: options(fileSystem)) }
            #expect(error.map { "\($0)" }?.contains("logtool repair") == true)
            guard case .noUsableSnapshot(_, let damaged)? = error else { continue }
            #expect(damaged.map(\.path) == [snapshot])
            #expect(damaged.first?.movedTo == nil)
        }
        #expect(try fileSystem.listDirectory(path).sorted() == before, "an open that fails changes no file")
    }

    /// An earlier LensDB set the snapshot aside even when the open then
    /// failed, and the next open took the logs after it for the whole
    /// history. That snapshot is named now, never taken as absent.
    @Test func aSnapshotSetAsideByAFailedOpenIsNamedNotSkipped() throws {
        let fileSystem = SimulatedFileSystem()
        let setAside = try StoreDirectory(path: path, fileSystem: fileSystem).setAside(try compactedThenCrashed(fileSystem))
        for policy in [RecoveryPolicy.strict, .salvage] {
            let error = #expect(throws: RecoveryError.self) { try Store(at: path, options: options(fileSystem, policy)) }
            guard case .noUsableSnapshot(_, let damaged)? = error else { continue }
            #expect(damaged.map(\.path) == [setAside])
        }
    }

    /// An open that logged every record again into a log starting at LSN 1
    /// (no record was proven), after falling back past a damaged snapshot,
    /// then crashed while removing the logs it replaced: a set-aside
    /// snapshot, a log from LSN 2 and the one from LSN 1. The log from
    /// LSN 1 holds the whole history, as replay reads it.
    @Test func aLaterLogFromLSN1HoldsTheHistoryBesideASetAsideSnapshot() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try Store(at: path, options: options(fileSystem))
        try store.write { tx in tx.put(bytes("v"), for: bytes("k"), in: "t") }
        let directory = StoreDirectory(path: path, fileSystem: fileSystem)
        var reader = try LogReader(fileSystem: fileSystem, path: try directory.list().logs[0].path, policy: .strict)
        let payload = try #require(try reader.next()).payload
        try store.compact()
        store.close()
        try fileSystem.removeFile(at: directory.closedMarkerPath)
        try directory.setAside(try directory.list().snapshots.last!.path)
        let next = try directory.list().newestGeneration + 1
        let relogged = try LogWriter.create(fileSystem: fileSystem, path: directory.logPath(generation: next), generation: next, firstLSN: 1)
        try relogged.append(payload, durability: .full)
        relogged.close()
        #expect(try directory.list().logs.count == 2)

        let reopened = try Store(at: path, options: options(fileSystem))
        defer { reopened.close() }
        #expect(reopened.current.count(in: "t") == 1)
    }

    /// A recovery that fails after passing over a damaged snapshot (here a
    /// log damaged before LSNs a clean close proves, under `.strict`) renames
    /// nothing; the one that succeeds (`.salvage`) sets the snapshot aside.
    @Test func aRecoveryThatFailsAfterChoosingSetsNothingAside() throws {
        let fileSystem = SimulatedFileSystem()
        let (newest, olderLog) = try twoCompactionsNewestDamaged(fileSystem, keysBetween: ["b", "c", "d"])
        let directory = StoreDirectory(path: path, fileSystem: fileSystem)
        // The second record of the older log: the clean close proves it was durable.
        var reader = try LogReader(fileSystem: fileSystem, path: olderLog, policy: .strict)
        _ = try reader.next()
        fileSystem.flip(byteAt: Int(try #require(try reader.next()).offset) + 40, inFile: olderLog)

        #expect(throws: RecoveryError.self) { try Store(at: path, options: options(fileSystem)) }
        #expect(try directory.list().snapshots.last?.path == newest, "set aside by a recovery that failed")
        let salvaged = try Store(at: path, options: options(fileSystem, .salvage))
        defer { salvaged.close() }
        #expect(salvaged.openStatistics.recovery.damagedSnapshots.first?.movedTo == newest + ".damaged")
        #expect(!fileSystem.fileExists(at: newest))
    }

    /// Key "a", a compaction, `keysBetween`, and another compaction whose
    /// snapshot is then damaged; the older generation's snapshot and log
    /// are kept, as a crash between the newer snapshot's rename and the
    /// deletion of what it replaces keeps them. Closed cleanly. Returns the
    /// damaged snapshot's path and the older log's.
    func twoCompactionsNewestDamaged(_ fileSystem: SimulatedFileSystem, keysBetween: [String]) throws -> (String, String) {
        let store = try Store(at: path, options: options(fileSystem))
        try store.write { tx in tx.put(bytes("1"), for: bytes("a"), in: "t") }
        try store.compact()
        for key in keysBetween { try store.write { tx in tx.put(bytes("2"), for: bytes(key), in: "t") } }
        let directory = StoreDirectory(path: path, fileSystem: fileSystem)
        let kept = try directory.list()
        let saved = (kept.snapshots + kept.logs).map { ($0.path, fileSystem.contents(of: $0.path)!) }
        try store.compact()
        store.close()
        for (file, contents) in saved where !fileSystem.fileExists(at: file) { fileSystem.setContents(contents, of: file) }
        let newest = try directory.list().snapshots.last!.path
        fileSystem.flip(byteAt: 50, inFile: newest)
        return (newest, kept.logs.last!.path)
    }

    @Test func damagedNewestSnapshotFallsBackToThePreviousWhenItsLogsRemain() throws {
        let fileSystem = SimulatedFileSystem()
        let (newest, _) = try twoCompactionsNewestDamaged(fileSystem, keysBetween: ["b"])
        let reopened = try Store(at: path, options: options(fileSystem))
        #expect(reopened.current.count(in: "t") == 2)
        #expect(reopened.openStatistics.recovery.damagedSnapshots.first?.movedTo == newest + ".damaged")
    }

    @Test func failedSyncMakesTheStoreReadOnlyUntilReopened() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try Store(at: path, options: options(fileSystem))
        try store.write { tx in tx.put(bytes("kept"), for: bytes("k"), in: "t") }
        fileSystem.injectFault(Fault(.failedSync, operations: [.sync], trigger: .nthCall(1)))
        #expect(throws: StoreError.self) { try store.write { tx in tx.put(bytes("lost"), for: bytes("j"), in: "t") } }
        #expect(store.failure != nil)
        fileSystem.clearFaults()
        // Never retried: the next write fails too, though the disk is fine now.
        #expect(throws: StoreError.self) { try store.write { tx in tx.put(bytes("x"), for: bytes("x"), in: "t") } }
        #expect(store.current.count(in: "t") == 1, "reads keep serving the last acknowledged state")
        store.close()
        let reopened = try Store(at: path, options: options(fileSystem))
        try reopened.write { tx in tx.put(bytes("y"), for: bytes("y"), in: "t") }
        #expect(reopened.current.value(in: "t", key: bytes("k")) != nil)
    }

    @Test func newerLogVersionIsAClearError() throws {
        let fileSystem = SimulatedFileSystem()
        let log = try storeWithTenCommits(fileSystem)
        var bytes = fileSystem.contents(of: log)!
        let newer = LogFormat.version + 1
        bytes[8] = UInt8(newer)
        // As a newer LensDB writes it, its checksum made for that version
        // (a changed version field alone is damage: HeaderVersionTests).
        let crc = CRC32C.checksum(Array(bytes[0..<(LogFormat.fileHeaderSize - 4)]))
        bytes.replaceSubrange((LogFormat.fileHeaderSize - 4)..<LogFormat.fileHeaderSize, with: withUnsafeBytes(of: crc.littleEndian, Array.init))
        fileSystem.setContents(bytes, of: log)
        #expect(throws: LogError.unsupportedVersion(file: log, version: newer)) { try Store(at: path, options: options(fileSystem)) }
    }

    @Test func automaticCompactionRunsWhenTheLogOutgrowsTheSnapshot() throws {
        let fileSystem = SimulatedFileSystem()
        var options = options(fileSystem)
        options.compactionLogRatio = 2
        options.compactionMinimumLogBytes = 4096
        let store = try Store(at: path, options: options)
        for index in 0..<200 { try store.write { tx in tx.put(bytes(String(repeating: "x", count: 100)), for: bytes("\(index % 10)"), in: "t") } }
        var snapshots = 0
        for _ in 0..<200 where snapshots == 0 {
            snapshots = try StoreDirectory(path: path, fileSystem: fileSystem).list().snapshots.count
            usleep(5000)
        }
        #expect(snapshots >= 1, "no compaction ran on its own")
        #expect(store.current.count(in: "t") == 10)
        // A later compaction may still be writing its snapshot beside the
        // one before (a slow run, under ThreadSanitizer, gets there): a
        // close waits for it, and its end removes the older one.
        store.close()
        #expect(try StoreDirectory(path: path, fileSystem: fileSystem).list().snapshots.count == 1)
    }

    #if os(Linux) || os(macOS)
    @Test(.enabled(if: LockHolder.isAvailable, "needs flock(1) to hold the lock from another process"))
    func secondProcessHoldingTheLockMakesOpenThrowLocked() throws {
        let directory = try TemporaryDirectory("lock")
        defer { directory.remove() }
        let path = directory.path + "/s.lensdb"
        try POSIXFileSystem().createDirectory(at: path)
        let holder = try LockHolder(lockFile: path + "/LOCK")
        defer { holder.release() }
        var options = StoreOptions()
        options.compactionLogRatio = nil
        var outcome: (any Error)?
        for _ in 0..<200 {
            do {
                let store = try Store(at: path, options: options)
                store.close()
                usleep(10_000)  // the other process has not taken the lock yet
            } catch {
                outcome = error
                break
            }
        }
        guard case StoreError.locked(let lockedPath, _)? = outcome as? StoreError else {
            Issue.record("expected StoreError.locked, got \(String(describing: outcome))")
            return
        }
        #expect(lockedPath == path)
    }
    #endif

    /// Records read back after an unclean end may live only in this boot's
    /// page cache. A commit acknowledged after reopening must survive a power
    /// cut that then loses them, and strict open must still succeed.
    @Test(arguments: ["failedSync", "noSpace", "processCrash"])
    func commitAfterReopeningFromAnUncleanEndSurvivesPowerLoss(ending: String) throws {
        let fileSystem = SimulatedFileSystem()
        let first = try Store(at: path, options: options(fileSystem))
        for index in 0..<3 { try first.write(durability: .full) { tx in tx.put(bytes("v\(index)"), for: bytes("\(index)"), in: "t") } }
        for index in 3..<5 { try first.write(durability: .buffered) { tx in tx.put(bytes("v\(index)"), for: bytes("\(index)"), in: "t") } }
        switch ending {
        case "processCrash":
            // kill -9: no close, no flush; the kernel releases the lock.
            _ = Unmanaged.passRetained(first)
            first.lock?.unlock()
        default:
            fileSystem.injectFault(ending == "failedSync"
                ? Fault(.failedSync, operations: [.sync], pathSuffix: ".log")
                : Fault(.noSpace, operations: [.write], pathSuffix: ".log"))
            #expect(throws: StoreError.self) { try first.write(durability: .full) { tx in tx.put(bytes("x"), for: bytes("x"), in: "t") } }
            first.close()
            fileSystem.clearFaults()
        }
        let second = try Store(at: path, options: options(fileSystem))
        #expect(second.current.count(in: "t") == 5)
        try second.write(durability: .full) { tx in tx.put(bytes("acknowledged"), for: bytes("acknowledged"), in: "t") }
        second.close()
        fileSystem.crash(seed: 3, model: .dropAll)
        let third = try Store(at: path, options: options(fileSystem))
        #expect(third.current.value(in: "t", key: bytes("acknowledged")) != nil)
        #expect(third.current.count(in: "t") == 6, "the commit's own prefix holds the records it built on")
    }

    @Test func oversizedTransactionFailsAloneAndTheStoreGoesOn() throws {
        let fileSystem = SimulatedFileSystem()
        var options = options(fileSystem)
        options.compression = .none
        let store = try Store(at: path, options: options)
        try store.write { tx in tx.put(bytes("small"), for: bytes("k"), in: "t") }
        let big = [UInt8](repeating: 7, count: LogFormat.maxPayloadSize + 1)
        #expect(throws: LogError.self) { try store.write { tx in tx.put(big, for: bytes("big"), in: "t") } }
        #expect(store.failure == nil)
        try store.write { tx in tx.put(bytes("after"), for: bytes("k2"), in: "t") }
        #expect(store.current.count(in: "t") == 2)
    }

    @Test func cleanCloseLetsTheNextOpenSkipLoggingTheTailAgain() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try Store(at: path, options: options(fileSystem))
        try store.write { tx in tx.put(bytes("v"), for: bytes("k"), in: "t") }
        store.close()
        let calls = fileSystem.mutatingCallCount
        let reopened = try Store(at: path, options: options(fileSystem))
        #expect(fileSystem.mutatingCallCount == calls + 2, "only the marker's removal and the directory sync that makes it durable: no new log")
        reopened.close()
    }
}
