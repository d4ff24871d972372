import Testing
@testable import LensLog

/// What the follower does when the chain does not simply grow: records
/// written again after a crash, a batch cut off, a log compacted away between
/// two polls, damage.
@Suite struct LogFollowerChainTests {
    /// Records 1–3 in log 1, all handed on (3 through the follower's own sync).
    func followedThroughThree(_ store: FollowedStore) throws -> LogFollower {
        let writer = try store.writer()
        defer { writer.close() }
        var follower = try store.follower()
        for payload in ["one", "two", "three"] { try writer.append(Array(payload.utf8), durability: .full) }
        #expect(try follower.poll().lsns == [1, 2])
        #expect(try follower.poll().lsns == [3])
        return follower
    }

    @Test func recordsWrittenAgainByTheNextOpenAreHandedOnOnce() throws {
        let store = try FollowedStore()
        var follower = try followedThroughThree(store)
        defer { follower.close() }
        // The writer crashed; its next open wrote the unproven record 3 again into log 2.
        var options = LogWriterOptions()
        options.backgroundSyncInterval = nil
        let again = try LogWriter.createHolding(
            [(.transaction, Array("three".utf8))], fileSystem: store.fileSystem, path: store.logPath(2),
            generation: 2, firstLSN: 3, options: options)
        defer { again.close() }
        try again.append(Array("four".utf8), durability: .full)
        #expect(try follower.poll().isEmpty, "3 is read again and skipped; 4 was in log 2 when it was opened, and nothing proves it yet")
        try again.append(Array("five".utf8), durability: .full)
        #expect(try follower.poll().lsns == [4, 5])
        try again.append(Array("six".utf8), durability: .buffered)
        #expect(try follower.poll().isEmpty)
        #expect(try follower.poll().lsns == [6])
    }

    @Test func aTransactionHandedOnThatTheStoreWroteDifferentlyIsDivergence() throws {
        let store = try FollowedStore()
        var follower = try followedThroughThree(store)
        defer { follower.close() }
        let other = try LogWriter.createHolding(
            [(.transaction, Array("not three".utf8))], fileSystem: store.fileSystem, path: store.logPath(2),
            generation: 2, firstLSN: 3)
        defer { other.close() }
        #expect(throws: FollowError.diverged(lsn: 3, file: store.logPath(2))) { try follower.poll() }
    }

    @Test func batchCutOffAfterAFailedSyncIsForgottenAndItsReplacementHandedOn() throws {
        let store = try FollowedStore()
        var log = LogBytes()
        log.append(Array("one".utf8))
        let header = Array(log.bytes)
        log.append(Array("lost".utf8))
        store.plant(log.bytes)
        var follower = try store.follower()
        defer { follower.close() }
        #expect(try follower.poll().lsns == [1], "record 2 proves record 1")
        store.plant(header)
        #expect(try follower.poll().isEmpty)
        var replaced = LogBytes()
        replaced.append(Array("one".utf8))
        replaced.append(Array("kept".utf8))
        store.plant(replaced.bytes)
        #expect(try follower.poll().isEmpty)
        let last = try follower.poll()
        #expect(last.lsns == [2])
        #expect(last.first?.record.payload == Array("kept".utf8), "the record now in the file, not the one cut off")
    }

    @Test func aRecordHandedOnThatIsCutOffIsDivergence() throws {
        let store = try FollowedStore()
        var follower = try followedThroughThree(store)
        defer { follower.close() }
        let bytes = try #require(store.fileSystem.contents(of: store.logPath(1)))
        var reader = try LogReader(bytes: bytes, path: store.logPath(1), policy: .strict)
        var offsets: [Int64] = []
        while let record = try reader.next() { offsets.append(record.offset) }
        store.plant(Array(bytes[..<Int(offsets[2])]))
        #expect(throws: FollowError.self) { try follower.poll() }
    }

    @Test func logDeletedBeforeTheFollowerSawItIsReportedNotSkipped() throws {
        let store = try FollowedStore()
        var follower = try followedThroughThree(store)
        defer { follower.close() }
        // Between two polls, log 2 is created, filled, and deleted by the compaction that swaps in log 3.
        let second = try store.writer(generation: 2, firstLSN: 4)
        try second.append(Array("four".utf8), durability: .full)
        let third = try store.writer(generation: 3, firstLSN: 5)
        defer { third.close() }
        second.close()
        try store.snapshot(generation: 3, lastLSN: 4)
        try store.fileSystem.removeFile(at: store.logPath(2))
        #expect(throws: FollowError.compactedAway(lsn: 4, snapshot: store.directory.snapshotPath(generation: 3), snapshotLSN: 4)) {
            try follower.poll()
        }
    }

    @Test func damageThatALaterRecordProvesDurableIsCorruptionOnTheSecondLook() throws {
        let store = try FollowedStore()
        var log = LogBytes()
        for payload in ["one", "two", "three"] { log.append(Array(payload.utf8)) }
        log.bytes[log.offsets[1] + LogFormat.frameHeaderSize] ^= 0x01
        store.plant(log.bytes)
        var follower = try store.follower()
        defer { follower.close() }
        #expect(try follower.poll().isEmpty, "one look could meet a write under way")
        let expected = FollowError.corruption(file: store.logPath(1), offset: Int64(log.offsets[1]), lsn: 2, reason: .checksumMismatch)
        #expect(throws: expected) { try follower.poll() }
    }

    @Test func tornTailThatNothingProvesIsWaitedOnNotReported() throws {
        let store = try FollowedStore()
        var log = LogBytes()
        for payload in ["one", "two", "three"] { log.append(Array(payload.utf8)) }
        log.bytes[log.offsets[2] + LogFormat.frameHeaderSize] ^= 0x01
        store.plant(log.bytes)
        var follower = try store.follower()
        defer { follower.close() }
        var handed: [UInt64] = []
        for _ in 0..<4 { handed += try follower.poll().lsns }
        #expect(handed == [1], "record 2 is not proven, record 3 torn: the writer's next open decides")
    }
}

/// A log a newer LensDB wrote is not one the follower waits on forever.
@Suite struct LogFollowerNewerLogTests {
    /// Log 2 as a newer LensDB writes it: a header of this version's
    /// layout naming `version` and `cipher`, its checksum made for them,
    /// then records this LensDB cannot read.
    func plantNewerLog(_ store: FollowedStore, version: UInt32, cipher: UInt8) {
        var bytes = LogFileHeader(generation: 2, firstLSN: 3, version: LogFormat.version).encoded()
        bytes.replaceSubrange(8..<12, with: withUnsafeBytes(of: version.littleEndian, Array.init))
        bytes[12] = cipher
        let length = bytes.count
        bytes.replaceSubrange((length - 4)..<length, with: withUnsafeBytes(of: CRC32C.checksum(Array(bytes[0..<(length - 4)])).littleEndian, Array.init))
        store.plant(bytes + [UInt8](repeating: 0x5a, count: 100), generation: 2)
    }

    /// A follower, then records 1 and 2 in log 1, durable, its writer closed.
    func followingTwoRecords(_ store: FollowedStore) throws -> LogFollower {
        let writer = try store.writer()
        defer { writer.close() }
        let follower = try store.follower()
        for payload in ["one", "two"] { try writer.append(Array(payload.utf8), durability: .full) }
        return follower
    }

    @Test(arguments: [(LogFormat.version + 1, 0), (LogFormat.version, 0xee)] as [(UInt32, UInt8)])
    func theChainGoingOnInANewerLogStopsTheFollowerOnceEveryRecordIsHandedOn(version: UInt32, cipher: UInt8) throws {
        let store = try FollowedStore()
        var follower = try followingTwoRecords(store)
        defer { follower.close() }
        // Before any poll: record 2 waits for the follower's own sync to
        // prove it, and is handed on before the follower stops.
        plantNewerLog(store, version: version, cipher: cipher)
        var handed: [UInt64] = []
        var stopped: (any Error)?
        for _ in 0..<4 where stopped == nil {
            do { handed += try follower.poll().lsns } catch { stopped = error }
        }
        #expect(handed == [1, 2])
        let newer: LogError = cipher == 0
            ? .unsupportedVersion(file: store.logPath(2), version: version)
            : .unsupportedCipher(file: store.logPath(2), cipher: cipher)
        #expect(stopped as? LogError == newer)
    }

    /// A log this LensDB is still creating, its header not written yet,
    /// is waited on, never taken for a newer one.
    @Test func aLogWithoutItsHeaderYetIsWaitedOn() throws {
        let store = try FollowedStore()
        var follower = try followingTwoRecords(store)
        defer { follower.close() }
        store.plant([UInt8](repeating: 0, count: 4096), generation: 2)
        var handed: [UInt64] = []
        for _ in 0..<4 { handed += try follower.poll().lsns }
        #expect(handed == [1, 2])
    }
}
