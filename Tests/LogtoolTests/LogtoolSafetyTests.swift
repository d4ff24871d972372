import Foundation
import LensDB
import LensTestSupport
import Testing

/// `logtool` judges a directory as an open would, says so when asked for
/// something the store does not have, and never hangs on a file that is
/// not regular.
@Suite struct LogtoolSafetyTests {
    @Test func aForeignDirectoryIsNotAStoreForLogtoolAsForAnOpen() throws {
        let temporary = try TemporaryDirectory("foreign")
        defer { temporary.remove() }
        let folder = try Fixtures.copyDirectory("foreign-directory", into: temporary)
        for command in ["info", "verify", "dump"] {
            let result = try logtool(command, folder)
            #expect(result.status == 1, "\(command)")
            #expect(result.err.contains("is not a LensDB store: it holds 2 other entries"), "\(command): \(result.err)")
        }
        #expect(throws: StoreError.notAStore(path: folder, foreignEntries: ["\(folder)/notes.txt", "\(folder)/report.tmp"])) {
            try Store(at: folder)
        }
    }

    @Test func aStoreOpenedButNeverWrittenIsAnEmptyStore() throws {
        let temporary = try TemporaryDirectory("fresh")
        defer { temporary.remove() }
        let path = "\(temporary.path)/fresh.lensdb"
        try Store(at: path).close()
        let info = try logtool("info", path)
        #expect(info.status == 0, "\(info.err)")
        #expect(info.out.contains("last LSN 0"))
        #expect(try logtool("verify", path).status == 0)
    }

    @Test func aTruncatedLogAfterACleanCloseFailsVerifyTheSameWayTwice() throws {
        let temporary = try TemporaryDirectory("fixture")
        defer { temporary.remove() }
        let store = try Fixtures.copy("truncated-after-clean-close", into: temporary)
        let log = "\(store)/log-0000000000000001.log"
        var outputs: [String] = []
        for _ in 1...2 {
            let verify = try logtool("verify", store)
            #expect(verify.status == 1)
            #expect(verify.out.contains("problem: \(log) at offset 188 (LSN 2): truncatedPayload: LSNs 2..<4 are missing, though the store was closed cleanly"))
            outputs.append(verify.out)
            let info = try logtool("info", store)
            #expect(info.out.contains("open would fail: \(log) at offset 188"))
            #expect(info.out.contains("finds a clean close through LSN 3"))
        }
        #expect(outputs[0] == outputs[1])
        let repaired = "\(temporary.path)/repaired.lensdb"
        let repair = try logtool("repair", store, "--output", repaired)
        #expect(repair.status == 0, "\(repair.err)")
        #expect(repair.out.contains("LSNs 2..<4"), "\(repair.out)")
        #expect(repair.out.contains("last LSN 3,"), "numbered after the LSNs lost: \(repair.out)")
        #expect(try logtool("verify", repaired).status == 0)
    }

    @Test func dumpOfATableTheStoreNeverHeldSaysSoAndExitsOne() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try stores.healthy()
        let dump = try logtool("dump", store, "--table", "nosuchtable")
        #expect(dump.status == 1)
        #expect(dump.out.isEmpty)
        #expect(dump.err.contains("has no table nosuchtable; its tables: orders, people"), "\(dump.err)")
        #expect(try logtool("dump", store, "--table", "people").status == 0)

        let compacted = try stores.healthy("compacted", compacted: true)
        let snapshot = try logtool("dump", compacted, "--snapshot", "--table", "nosuchtable")
        #expect(snapshot.status == 1)
        #expect(snapshot.err.contains("has no table nosuchtable"), "\(snapshot.err)")
    }

    @Test func dumpOfTheSnapshotOfAStoreNeverCompactedSaysItHasNone() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try stores.healthy()
        let dump = try logtool("dump", store, "--snapshot")
        #expect(dump.status == 1)
        #expect(dump.err.contains("has no snapshot yet (it was never compacted)"), "\(dump.err)")
        #expect(!dump.err.contains("not a LensDB store"))
    }

    /// A compacted store whose empty log lost a header byte: before an open
    /// and after one that writes, `verify` and `info` agree with what the
    /// open does, which keeps that log (its name marks the snapshot).
    @Test func aCompactedStoresDamagedEmptyLogIsJudgedAlikeBeforeAndAfterAnOpen() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try stores.healthy("compacted", compacted: true)
        let log = try stores.logPath(store)
        try stores.edit(log) { $0[20] ^= 0xFF }
        let before = try logtool("verify", store)
        #expect(before.status == 0, "\(before.out)")
        let info = try logtool("info", store).out
        #expect(!info.contains("removes \(log)"), "info must not promise a removal open does not make:\n\(info)")
        #expect(info.contains("keeps \(log)"))

        let opened = try Store(at: store)
        try opened.write { tx in tx.put([1], for: [1], in: "after") }
        opened.close()
        #expect(FileManager.default.fileExists(atPath: log), "open kept the snapshot's log, as info said")
        let after = try logtool("verify", store)
        #expect(after.status == 0, "\(after.out)")
        #expect(after.out.contains("\(log): its header is damaged"))
        #expect(!(try logtool("info", store).out.contains("removes \(log)")))
    }

    @Test func aFIFONamedLikeALogFailsVerifyAndInfoWithoutHanging() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try stores.healthy()
        let fifo = "\(store)/log-0000000000000009.log"
        #expect(mkfifo(fifo, 0o600) == 0)
        for command in ["verify", "info", "dump"] {
            let result = try logtool([command, store], timeout: .seconds(20))
            #expect(result.status == 1, "\(command): \(result.out)\(result.err)")
            #expect((result.out + result.err).contains("is not a regular file"), "\(command): \(result.out)\(result.err)")
        }
    }

    /// verify judges the lock and the markers as open does: a FIFO at the
    /// lock or a link to nothing at the identity marker fails an open, so
    /// they are problems; a FIFO at a log the snapshot covers is not, since
    /// open never reads that log and removes it.
    @Test func verifyFindsWhatWouldFailAnOpenAndOnlyThat() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let plain = try stores.healthy("plain")
        try FileManager.default.removeItem(atPath: "\(plain)/LOCK")
        #expect(mkfifo("\(plain)/LOCK", 0o600) == 0)
        let locked = try logtool(["verify", plain], timeout: .seconds(20))
        #expect(locked.status == 1)
        #expect(locked.out.contains("\(plain)/LOCK: an open would fail"), "\(locked.out)")

        let dangling = try stores.healthy("dangling")
        try FileManager.default.removeItem(atPath: "\(dangling)/LENSDB")
        try FileManager.default.createSymbolicLink(atPath: "\(dangling)/LENSDB", withDestinationPath: "/nonexistent/lensdb")
        let linked = try logtool(["verify", dangling], timeout: .seconds(20))
        #expect(linked.status == 1)
        #expect(linked.out.contains("\(dangling)/LENSDB: a link to nothing"), "\(linked.out)")

        let compacted = try stores.healthy("compacted", compacted: true)
        let obsolete = StoreDirectory(path: compacted, fileSystem: POSIXFileSystem()).logPath(generation: 1)
        try? FileManager.default.removeItem(atPath: obsolete)
        #expect(mkfifo(obsolete, 0o600) == 0)
        let verify = try logtool(["verify", compacted], timeout: .seconds(20))
        #expect(verify.status == 0, "\(verify.out)")
        let store = try Store(at: compacted)
        store.close()
        #expect(!FileManager.default.fileExists(atPath: obsolete), "open removed it, as verify said")
    }

    @Test func aSecondHolderInTheSameProcessIsNamedAsThisProcess() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try stores.healthy()
        let open = try Store(at: store)
        defer { open.close() }
        let error = #expect(throws: InspectionError.self) { try StoreInspector(path: store).compact() }
        #expect(error.map { "\($0)" }?.contains("is open in this process: another Store of it holds the lock") == true)
    }
}
