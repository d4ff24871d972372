import Foundation
import LensDB
import LensLog
import LensTestSupport
import Testing

@Suite struct LogtoolRepairTests {
    @Test func repairInPlaceTwiceWithATrailingSlashGivesTheSameStateAndTwoBackups() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let (store, _, _) = try stores.flippedMidLog()
        let first = try logtool("repair", store + "/", "--in-place", "--json")
        #expect(first.status == 0, "\(first.err)")
        let report = try JSONSerialization.jsonObject(with: Data(first.out.utf8)) as? [String: Any]
        let lost = report?["lost"] as? [[String: Any]]
        #expect(lost?.first?["fromLSN"] as? Int == 2 && lost?.first?["toLSN"] as? Int == 3)
        let backup = try #require(report?["backup"] as? String)
        #expect(!backup.hasPrefix(store + "/"), "the backup lies beside the store, not inside it")
        #expect(try logtool("verify", backup).status == 1, "the backup is the damaged original")
        let afterFirst = try logtool("dump", store, "--snapshot", "--json").out
        let second = try logtool("repair", store, "--in-place")
        #expect(second.status == 0)
        #expect(second.out.contains("no transaction lost"))
        #expect(try logtool("dump", store, "--snapshot", "--json").out == afterFirst)
        #expect(try logtool("verify", store).out.hasSuffix("OK\n"))
        let entries = try FileManager.default.contentsOfDirectory(atPath: stores.directory.path)
        #expect(entries.filter { $0.contains(".backup-") }.count == 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store).allSatisfy { !$0.hasPrefix(".") })
    }

    /// Repair removes what an interrupted repair left in the directory it
    /// builds in, and nothing else: a directory of that name holding any
    /// other file is someone else's, and one holding a snapshot is a whole
    /// store; repair stops without touching either.
    /// Disk files, with a rename from a name ending `failingSource`, or a
    /// directory sync once `syncFailsAfterMoving` was renamed, made to fail.
    struct FailingMoves: FileSystem {
        let disk = POSIXFileSystem()
        var failingSource: String?
        var syncFailsAfterMoving: String?
        let moved = Locked(false)

        func openFile(at path: String, mode: FileOpenMode) throws -> any StoredFile { try disk.openFile(at: path, mode: mode) }
        func fileExists(at path: String) -> Bool { disk.fileExists(at: path) }
        func removeFile(at path: String) throws { try disk.removeFile(at: path) }
        func rename(_ source: String, to destination: String) throws {
            if let failingSource, source.hasSuffix(failingSource) { throw StorageError(.ioError, .rename, path: source, errno: EIO) }
            try disk.rename(source, to: destination)
            if source == syncFailsAfterMoving { moved.withLock { $0 = true } }
        }
        func listDirectory(_ directory: String) throws -> [String] { try disk.listDirectory(directory) }
        func createDirectory(at directory: String, permissions: FilePermissions?) throws {
            try disk.createDirectory(at: directory, permissions: permissions)
        }
        func directoryPermissions(at directory: String) throws -> FilePermissions { try disk.directoryPermissions(at: directory) }
        func syncDirectory(at directory: String) throws {
            if moved.withLock({ $0 }) { throw StorageError(.ioError, .syncDirectory, path: directory, errno: EIO) }
            try disk.syncDirectory(at: directory)
        }
        func durableSyncSupport(in directory: String) throws -> SyncSupport { try disk.durableSyncSupport(in: directory) }
        func lockFile(at path: String) throws -> any FileLock { try disk.lockFile(at: path) }
    }

    /// An in-place repair that fails once the original has moved names
    /// both stores, and its advice finishes the repair or undoes it.
    @Test func anInPlaceRepairCutShortSaysWhereEachStoreIs() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let (store, _, _) = try stores.flippedMidLog()
        let repairedState = try logtool("repair", store, "--output", store + ".expected").status
        #expect(repairedState == 0)
        let expected = try logtool("dump", store + ".expected", "--snapshot", "--json").out

        let failing = StoreInspector(path: store, fileSystem: FailingMoves(failingSource: ".repair"))
        let error = #expect(throws: InspectionError.self) { try failing.repairInPlace() }
        guard case let .repairCutShort(path, backup, repaired?, _)? = error else {
            Issue.record("expected repairCutShort naming the repaired store, got \(String(describing: error))")
            return
        }
        #expect(path == store && repaired == store + ".repair")
        #expect(!FileManager.default.fileExists(atPath: store))
        let text = "\(error!)"
        #expect(text.contains("rename \(repaired) to \(store) to finish") && text.contains("or \(backup) to \(store) to undo"), "\(text)")
        try FileManager.default.moveItem(atPath: repaired, toPath: store)
        #expect(try logtool("dump", store, "--snapshot", "--json").out == expected)
        #expect(try logtool("verify", backup).status == 1, "the original, damage and all, is at the backup")

        let syncFails = StoreInspector(path: store, fileSystem: FailingMoves(syncFailsAfterMoving: store))
        let afterSync = #expect(throws: InspectionError.self) { try syncFails.repairInPlace() }
        guard case let .repairCutShort(_, secondBackup, nil, _)? = afterSync else {
            Issue.record("expected repairCutShort after both moves, got \(String(describing: afterSync))")
            return
        }
        #expect(FileManager.default.fileExists(atPath: secondBackup))
        #expect(try logtool("verify", store).status == 0)
    }

    @Test func repairRemovesOnlyWhatAnInterruptedRepairLeft() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let (store, _, _) = try stores.flippedMidLog()
        let workspace = store + ".repair"
        // What a repair cut short leaves: a store's files. Removed, and the repair goes on.
        try FileManager.default.createDirectory(atPath: workspace, withIntermediateDirectories: false)
        #expect(FileManager.default.createFile(atPath: workspace + "/log-0000000000000001.log", contents: Data([1, 2])))
        #expect(FileManager.default.createFile(atPath: workspace + "/LENSDB", contents: Data()))
        let backup = stores.directory.path + "/backup-of-damaged"
        try FileManager.default.copyItem(atPath: store, toPath: backup)
        #expect(try logtool("repair", store, "--in-place").status == 0)

        // Someone's notes in a directory of that name: kept, and repair refuses.
        try FileManager.default.removeItem(atPath: store)
        try FileManager.default.moveItem(atPath: backup, toPath: store)
        try FileManager.default.createDirectory(atPath: workspace, withIntermediateDirectories: false)
        #expect(FileManager.default.createFile(atPath: workspace + "/notes.txt", contents: Data("mine".utf8)))
        let refused = try logtool("repair", store, "--in-place")
        #expect(refused.status == 1)
        #expect(refused.err.contains("(notes.txt); nothing was removed"), "\(refused.err)")
        #expect(FileManager.default.contents(atPath: workspace + "/notes.txt") == Data("mine".utf8))
        #expect(try logtool("verify", store).status == 1, "the store was left as it was")

        // A whole store there, as `repair --output STORE.repair` writes: kept too.
        try FileManager.default.removeItem(atPath: workspace)
        #expect(try logtool("repair", store, "--output", workspace).status == 0)
        let kept = try logtool("dump", workspace, "--snapshot", "--json").out
        let refusedAgain = try logtool("repair", store, "--in-place")
        #expect(refusedAgain.status == 1)
        #expect(refusedAgain.err.contains("snapshot-0000000000000001.snap); nothing was removed"), "\(refusedAgain.err)")
        #expect(try logtool("dump", workspace, "--snapshot", "--json").out == kept)
    }

    /// The advice of a failed open, followed: the open leaves the damaged
    /// snapshot in place, and `logtool repair` salvages every entry from it
    /// (only its trailer is damaged); from one an earlier LensDB set aside
    /// too. A crash after the compaction: no marker proves the history.
    @Test func repairAfterAFailedOpenSalvagesTheSnapshotInPlaceOrSetAside() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        for setAsideEarlier in [false, true] {
            let store = try stores.healthy(setAsideEarlier ? "set-aside" : "in-place", compacted: true)
            let expected = try logtool("dump", store, "--snapshot", "--json").out
            let directory = StoreDirectory(path: store, fileSystem: POSIXFileSystem())
            try POSIXFileSystem().removeFile(at: directory.closedMarkerPath)
            let snapshot = try stores.snapshotPath(store)
            try stores.edit(snapshot) { $0[$0.count - 1] ^= 0xFF }
            if setAsideEarlier { try directory.setAside(snapshot) }
            #expect(throws: RecoveryError.self) { try Store(at: store) }
            let output = "\(stores.directory.path)/\(setAsideEarlier ? "set-aside" : "in-place")-out.lensdb"
            let repair = try logtool("repair", store, "--output", output)
            #expect(repair.status == 0, "\(repair.err)")
            #expect(try logtool("dump", output, "--snapshot", "--json").out == expected, "setAsideEarlier: \(setAsideEarlier)")
        }
    }

    /// Two compactions, the first snapshot kept (a copy put back), then the
    /// newest snapshot's header damaged: no snapshot is usable, and the logs
    /// before the newest are gone. Returns the store, both snapshots, and
    /// the first snapshot's state.
    func twoSnapshotsNewestHeaderDamaged(
        _ stores: GoldenStores, name: String = "healthy"
    ) throws -> (store: String, older: String, newest: String, olderState: String, lastLSN: UInt64) {
        let store = try stores.healthy(name, compacted: true)
        let older = try stores.snapshotPath(store)
        let olderBytes = try Data(contentsOf: URL(fileURLWithPath: older))
        let olderState = try logtool("dump", store, "--snapshot", "--json").out
        let opened = try Store(at: store)
        try opened.write { tx in tx.put([9], for: [9], in: "later") }
        try opened.compact()
        let lastLSN = opened.current.lsn
        opened.close()
        let newest = try stores.snapshotPath(store)
        #expect(newest != older && !FileManager.default.fileExists(atPath: older))
        try olderBytes.write(to: URL(fileURLWithPath: older))
        try stores.edit(newest) { $0[12] ^= 0xFF }
        return (store, older, newest, olderState, lastLSN)
    }

    /// The advice of the failed open, pasted as it is: repair passes over
    /// the newest snapshot, whose header does not verify, keeps the older
    /// one, and lists the LSNs between as lost, both after a clean close
    /// and after a crash, when only the newest log's header says they
    /// existed. The repaired store numbers its next transaction after them.
    @Test(arguments: [true, false])
    func repairFallsBackToTheNewestSnapshotWhoseHeaderVerifies(closedCleanly: Bool) throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let (store, _, newest, olderState, lastLSN) = try twoSnapshotsNewestHeaderDamaged(stores)
        if !closedCleanly { try FileManager.default.removeItem(atPath: StoreDirectory(path: store, fileSystem: POSIXFileSystem()).closedMarkerPath) }
        let error = #expect(throws: RecoveryError.self) { try Store(at: store) }
        let advice = try #require(error.map { "\($0)" }?.split(separator: "`").first { $0.hasPrefix("logtool repair ") })
        let arguments = advice.split(separator: " ").dropFirst().map(String.init)
        #expect(arguments.count == 4 && arguments[2] == "--output", "\(advice)")

        let repair = try logtool(arguments)
        #expect(repair.status == 0, "\(repair.err)")
        #expect(repair.out.contains("\(newest): the snapshot header fails its checksum, so nothing in it could be kept"), "\(repair.out)")
        #expect(repair.out.contains("transactions lost:"), "\(repair.out)")
        #expect(repair.out.contains("last LSN \(lastLSN),"), "\(repair.out)")
        #expect(try logtool("dump", arguments[3], "--snapshot", "--json").out == olderState)
        #expect(try logtool("verify", arguments[3]).status == 0)
    }

    /// A store whose snapshot was removed by hand (or not copied with its
    /// logs): the logs start past LSN 1, so an open refuses it, changing no
    /// file, instead of opening it empty; its advice, a repair, keeps the
    /// logs (with a transaction written after the compaction, or none) and
    /// lists the LSNs before them as lost, once.
    @Test(arguments: [true, false])
    func aStoreWhoseSnapshotIsGoneIsRefusedAndRepairKeepsItsLogs(writtenSince: Bool) throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try stores.healthy(compacted: true)
        let opened = try Store(at: store)
        let compactedLSN = opened.current.lsn
        if writtenSince { try opened.write { tx in tx.put([7], for: [7], in: "later") } }
        opened.close()
        try FileManager.default.removeItem(atPath: try stores.snapshotPath(store))
        let before = try FileManager.default.contentsOfDirectory(atPath: store).sorted()
        for recovery in [RecoveryPolicy.strict, .salvage] {
            let error = #expect(throws: RecoveryError.noUsableSnapshot(directory: store, damaged: [])) {
                try Store(at: store, options: StoreOptions(recovery: recovery))
            }
            #expect(error.map { "\($0)" }?.contains("the store has no snapshot, yet no log whose header verifies starts at LSN 1") == true)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: store).sorted() == before, "a refused open changes no file")

        let output = "\(stores.directory.path)/kept.lensdb"
        let repair = try logtool("repair", store, "--output", output, "--json")
        #expect(repair.status == 0, "\(repair.err)")
        let report = try JSONDecoder().decode(RepairReport.self, from: Data(repair.out.utf8))
        let last = compactedLSN + (writtenSince ? 1 : 0)
        #expect(report.lost.map { $0.fromLSN..<$0.toLSN } == [1..<compactedLSN + 1])
        #expect(report.lastLSN == last)
        let kept = try Store(at: output)
        defer { kept.close() }
        #expect(kept.current.count(in: "later") == (writtenSince ? 1 : 0))
        #expect(kept.current.lsn == last)
    }

    /// With no snapshot whose header verifies, nothing says where the
    /// history starts: repair writes nothing and says to restore a backup.
    @Test func repairWithNoSnapshotHeaderThatVerifiesWritesNothing() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let (store, older, _, _, _) = try twoSnapshotsNewestHeaderDamaged(stores)
        try stores.edit(older) { $0[12] ^= 0xFF }
        let output = "\(stores.directory.path)/out.lensdb"
        let repair = try logtool("repair", store, "--output", output)
        #expect(repair.status == 1)
        #expect(repair.err.contains("no snapshot can be salvaged"), "\(repair.err)")
        #expect(repair.err.contains("Restore the store from a backup"), "\(repair.err)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test func repairOfATruncatedSnapshotWhoseLogsAreGoneKeepsWhatVerifiesAndPassesVerify() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try stores.healthy(compacted: true)
        try stores.edit(try stores.snapshotPath(store)) { $0.removeLast(10) }
        #expect(try logtool("info", store).status == 1, "open would fail: the logs the snapshot covered are gone")
        let output = "\(stores.directory.path)/out.lensdb"
        let repair = try logtool("repair", store, "--output", output)
        #expect(repair.status == 0, "\(repair.err)")
        #expect(repair.out.contains("damaged snapshots"))
        #expect(try logtool("verify", output).out.hasSuffix("OK\n"))
        #expect(try logtool("verify", store).status == 1, "the input is untouched")
    }

    @Test func snapshotOfANewerFormatVersionIsAProblemAndRepairRefusesToGuess() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try stores.healthy(compacted: true)
        try stores.edit(try stores.snapshotPath(store)) { bytes in
            bytes[8] = UInt8(SnapshotFormat.version + 1)
            let crc = CRC32C.checksum(Array(bytes[0..<32]))
            for index in 0..<4 { bytes[32 + index] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(index))) }
        }
        let verify = try logtool("verify", store)
        #expect(verify.status == 1)
        #expect(verify.out.contains("snapshot format version \(SnapshotFormat.version + 1) is newer than this LensDB reads"))
        let output = "\(stores.directory.path)/out.lensdb"
        let repair = try logtool("repair", store, "--output", output)
        #expect(repair.status == 1)
        #expect(repair.err.contains("use a newer LensDB"))
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test func compactReplacesTheLogsWithASnapshotAndKeepsTheState() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try stores.healthy()
        let before = try logtool("info", store, "--json").out
        let compact = try logtool("compact", store)
        #expect(compact.status == 0, "\(compact.err)")
        #expect(compact.out.contains("snapshot of"))
        let info = try logtool("info", store, "--json")
        let tables = { (json: String) in
            (try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])?["tables"] as? [[String: AnyHashable]]
        }
        #expect(try tables(info.out) == tables(before))
        #expect(info.out.contains("\"role\" : \"snapshot\""))
        let snapshot = try logtool("dump", store, "--snapshot", "--table", "people")
        #expect(snapshot.status == 0)
        #expect(snapshot.out.split(separator: "\n").count == 3)
        #expect(snapshot.out.contains("\"name\":\"Chloé\""))
        #expect(try logtool("verify", store).out.hasSuffix("OK\n"))
    }
}
