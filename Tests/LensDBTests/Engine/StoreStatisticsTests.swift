import LensTestSupport
import Testing
@testable import LensDB

/// `store.statistics` counts what happened since open, across log swaps.
@Suite struct StoreStatisticsTests {
    func simulated(_ durability: Durability = .full) -> StoreOptions {
        var options = StoreOptions(durability: durability)
        options.fileSystem = SimulatedFileSystem()
        options.log.backgroundSyncInterval = nil
        options.compactionLogRatio = nil
        return options
    }

    @Test func eachFullCommitCountsOneRecordAndOneSync() throws {
        let store = try Store(at: "/s.lensdb", options: simulated())
        #expect(store.statistics == StoreStatistics())
        for index in 0..<10 { try store.write { tx in tx.put(bytes("v\(index)"), for: bytes("k\(index)"), in: "t") } }
        try store.write { _ in }
        let statistics = store.statistics
        #expect(statistics.commits == 10, "the empty transaction is not a commit")
        #expect(statistics.recordsLogged == 10)
        #expect(statistics.syncs == 10)
        #expect(statistics.recordsPerSync == 1)
        #expect(statistics.bytesLogged > 10 * 20)
    }

    /// `durability: .none` is `Durability.none`, not "the store's default":
    /// a store whose default is `.full` does not sync such a commit.
    @Test func aWriteWithDurabilityNoneIsNotSynced() async throws {
        let store = try Store(at: "/s.lensdb", options: simulated(.full))
        try store.write(durability: .none) { tx in tx.put(bytes("v"), for: bytes("k"), in: "t") }
        _ = try await store.asyncWrite(durability: .none) { tx in tx.put(bytes("w"), for: bytes("k"), in: "t") }
        #expect(store.statistics.recordsLogged == 2)
        #expect(store.statistics.syncs == 0)
        try store.write { tx in tx.put(bytes("x"), for: bytes("k"), in: "t") }
        #expect(store.statistics.syncs == 1, "the store's default, .full, syncs")
    }

    @Test func bufferedCommitsShareTheFlushesSync() throws {
        let store = try Store(at: "/s.lensdb", options: simulated(.buffered))
        for index in 0..<10 { try store.write { tx in tx.put(bytes("v\(index)"), for: bytes("k\(index)"), in: "t") } }
        #expect(store.statistics.syncs == 0)
        try store.flush()
        #expect(store.statistics.syncs == 1)
        #expect(store.statistics.recordsPerSync == 10)
    }

    @Test func countersSurviveCompactionAndCountItsTimeAndStall() throws {
        let store = try Store(at: "/s.lensdb", options: simulated())
        for index in 0..<5 { try store.write { tx in tx.put(bytes("v\(index)"), for: bytes("k\(index)"), in: "t") } }
        let before = store.statistics
        try store.compact()
        for index in 0..<3 { try store.write { tx in tx.put(bytes("w\(index)"), for: bytes("k\(index)"), in: "t") } }
        try store.compact()
        let after = store.statistics
        #expect(after.commits == 8)
        #expect(after.recordsLogged == 8, "records of the swapped-out logs still count")
        #expect(after.bytesLogged > before.bytesLogged)
        #expect(after.compactions == 2)
        let last = try #require(after.lastCompaction)
        let stall = try #require(after.lastCompactionStall)
        #expect(stall <= last)
        #expect(after.compactionTime >= last)
        store.close()
        #expect(store.statistics.recordsLogged == 8, "closing keeps the counts")
    }

    @Test func recordsWrittenAgainByOpenAreNotCommits() throws {
        let options = simulated()
        let fileSystem = options.fileSystem as! SimulatedFileSystem
        let store = try Store(at: "/s.lensdb", options: options)
        for index in 0..<3 { try store.write { tx in tx.put(bytes("v\(index)"), for: bytes("k\(index)"), in: "t") } }
        fileSystem.crash(seed: 1, model: .keepAll)
        let reopened = try Store(at: "/s.lensdb", options: options)
        #expect(reopened.statistics == StoreStatistics(), "open wrote the tail again, but nothing was committed")
        try reopened.write { tx in tx.put(bytes("x"), for: bytes("x"), in: "t") }
        #expect(reopened.statistics.commits == 1)
        #expect(reopened.statistics.recordsLogged == 1)
        #expect(reopened.statistics.syncs == 1)
    }

    @Test func concurrentWritersAreEachCounted() throws {
        let store = try Store(at: "/s.lensdb", options: simulated())
        runConcurrently(threads: 4) { thread in
            for index in 0..<25 {
                // A failed write fails the counts below.
                try? store.write { tx in tx.put(bytes("v"), for: bytes("\(thread)-\(index)"), in: "t") }
            }
        }
        let statistics = store.statistics
        #expect(statistics.commits == 100)
        #expect(statistics.recordsLogged == 100)
        #expect(statistics.syncs >= 1 && statistics.syncs <= 100)
    }
}
