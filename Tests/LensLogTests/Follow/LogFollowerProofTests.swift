import Testing
@testable import LensLog

/// A record is handed on only once the store has proven it durable: what
/// each proof covers, and what it does not.
@Suite struct LogFollowerProofTests {
    @Test func unsyncedRecordWaitsOnePollThenTheFollowersOwnSyncMakesItDurable() throws {
        let store = try FollowedStore()
        let writer = try store.writer()
        var follower = try store.follower()
        defer { follower.close(); writer.close() }
        #expect(try follower.poll().isEmpty)
        try writer.append(Array("one".utf8), durability: .buffered)
        #expect(try follower.poll().isEmpty, "written but not synced: a power cut could still lose it")
        #expect(try store.durableRecords() == 0)
        let second = try follower.poll()
        #expect(second.lsns == [1])
        #expect(second.first?.record.payload == Array("one".utf8))
        #expect(try store.durableRecords() == 1, "handed on only after the follower's sync made it durable")
    }

    @Test func recordsALogHeldWhenOpenedAreProvenByALaterRecordNotByTheFollowersSync() throws {
        let store = try FollowedStore()
        let writer = try store.writer()
        try writer.append(Array("one".utf8), durability: .full)
        var follower = try store.follower()
        defer { follower.close(); writer.close() }
        #expect(try follower.poll().isEmpty)
        #expect(try follower.poll().isEmpty, "a sync through a descriptor opened after the write proves nothing about it")
        try writer.append(Array("two".utf8), durability: .full)
        // Record 2 says record 1 was synced; record 2 itself was written after
        // the follower opened the log, so the follower's sync proves it.
        #expect(try follower.poll().lsns == [1, 2])
    }

    @Test func halfWrittenRecordIsNotHandedOnUntilItIsWholeAndVerifies() throws {
        let store = try FollowedStore()
        var log = LogBytes()
        log.append(Array("one".utf8))
        log.append([UInt8](repeating: 7, count: 300), compress: false)
        store.plant(Array(log.bytes[..<(log.offsets[1] + 100)]))
        var follower = try store.follower()
        defer { follower.close() }
        for _ in 0..<3 { #expect(try follower.poll().isEmpty) }
        store.plant(log.bytes)
        // Record 2 proves record 1, which has waited long enough for the
        // follower to sync the log, and that sync proves record 2.
        let whole = try follower.poll()
        #expect(whole.lsns == [1, 2])
        #expect(whole.last?.record.payload == [UInt8](repeating: 7, count: 300))
    }

    @Test func cleanCloseMarkerProvesEveryRecordReadBeforeIt() throws {
        let store = try FollowedStore()
        var log = LogBytes()
        log.append(Array("one".utf8))
        log.append(Array("two".utf8))
        store.plant(log.bytes)
        var follower = try store.follower()
        defer { follower.close() }
        #expect(try follower.poll().lsns == [1])
        #expect(try follower.poll().isEmpty)
        store.fileSystem.setContents([], of: store.directory.closedMarkerPath)
        #expect(try follower.poll().lsns == [2])
    }

    @Test func snapshotProvesTheOldLogAndAHeldLogIsReadAfterCompactionDeletesIt() throws {
        let store = try FollowedStore()
        let old = try store.writer()
        var follower = try store.follower()
        defer { follower.close() }
        try old.append(Array("one".utf8), durability: .full)
        try old.append(Array("two".utf8), durability: .full)
        #expect(try follower.poll().lsns == [1])
        // A compaction, between two polls: new log, old log's last records, snapshot, old log deleted.
        let new = try store.writer(generation: 2, firstLSN: 5)
        defer { new.close() }
        try old.append(Array("three".utf8), durability: .full)
        try old.append(Array("four".utf8), durability: .full)
        old.close()
        try store.snapshot(generation: 2, lastLSN: 4)
        try store.fileSystem.removeFile(at: store.logPath(1))
        #expect(try follower.poll().lsns == [2, 3, 4], "read through the descriptor held since the listing; proven by the snapshot")
        try new.append(Array("five".utf8), durability: .full)
        _ = try follower.poll()
        let rest = try follower.poll()
        #expect(rest.lsns == [5])
        #expect(rest.first?.file == store.logPath(2))
    }
}
