import LensTestSupport
import Testing
@testable import LensDB

/// What a store asks of the file system, counted by the simulated one.
@Suite struct StoreSyncNeedTests {
    func openStore(on fileSystem: SimulatedFileSystem, _ configure: (inout StoreOptions) -> Void = { _ in }) throws -> Store {
        var options = StoreOptions()
        options.fileSystem = fileSystem
        options.checksInvariants = true
        // No background syncs: every sync counted below is one a call asked for.
        options.log.backgroundSyncInterval = nil
        configure(&options)
        return try Store(at: "s/store", options: options)
    }

    func syncCounts(_ fileSystem: SimulatedFileSystem) -> [SyncNeed: Int] {
        Dictionary(uniqueKeysWithValues: SyncNeed.allCases.map { ($0, fileSystem.syncCount($0)) })
    }

    @Test func fullCommitAsksForADurableSyncBeforeItReturns() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try openStore(on: fileSystem)
        // The first write creates the log; its syncs are not the commit's own.
        try store.write { tx in tx.put(bytes("v"), for: bytes("first"), in: "t") }
        for index in 0..<3 {
            let before = syncCounts(fileSystem)
            try store.write(durability: .full) { tx in tx.put(bytes("v"), for: bytes("k\(index)"), in: "t") }
            let after = syncCounts(fileSystem)
            #expect(after[.durable]! >= before[.durable]! + 1, "commit \(index) returned without a durable sync")
            #expect(after[.ordered] == before[.ordered])
        }
        store.close()
    }

    @Test func bufferedCommitAsksForNoSync() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try openStore(on: fileSystem)
        try store.write { tx in tx.put(bytes("v"), for: bytes("first"), in: "t") }
        let before = syncCounts(fileSystem)
        try store.write(durability: .buffered) { tx in tx.put(bytes("v"), for: bytes("k"), in: "t") }
        #expect(syncCounts(fileSystem) == before)
        store.close()
    }

    @Test func noSyncOfAStoreAsksForLessThanDurable() throws {
        let fileSystem = SimulatedFileSystem()
        do {
            let store = try openStore(on: fileSystem)
            for index in 0..<20 {
                try store.write(durability: index % 2 == 0 ? .full : .buffered) { tx in
                    tx.put(bytes(String(repeating: "v", count: 200)), for: bytes("k\(index)"), in: "t")
                }
                if index % 7 == 6 { try store.compact() }
            }
            store.close()
        }
        _ = try openStore(on: fileSystem)
        let counts = syncCounts(fileSystem)
        #expect(counts[.ordered] == 0)
        #expect(counts[.durable]! > 0 && counts[.durableWithMetadata]! > 0)
        // Every sync was counted under some need.
        #expect(counts.values.reduce(0, +) == fileSystem.callCount(.sync) + fileSystem.callCount(.syncDirectory))
    }
}

/// The open's report of what durable syncs get where the store lives.
@Suite struct StoreDurableSyncReportTests {
    @Test func openReportsAFileSystemThatRefusesTheDurableCall() throws {
        let refusing = SyncSupport.fallingBack(refused: .fullFsync, using: .fsync)
        var options = StoreOptions()
        options.fileSystem = SimulatedFileSystem(durableSync: refusing)
        let store = try Store(at: "s/store", options: options)
        #expect(store.openStatistics.durableSync == refusing)
        #expect("\(refusing)".contains("fall back to fsync"))
    }

    @Test func openReportsThePlannedCallWhereTheFileSystemTakesIt() throws {
        try withTemporaryStore { path, options in
            let store = try Store(at: path, options: options)
            #expect(store.openStatistics.durableSync == .asPlanned(SyncPlatform.current.plan(for: .durable).call))
            store.close()
            var readOnly = options
            readOnly.readOnly = true
            #expect(try Store(at: path, options: readOnly).openStatistics.durableSync == nil, "a read-only open syncs nothing")
        }
    }
}

/// `LogWriterOptions.appleBarrierOnly` changes the syncs of commits and nothing else.
@Suite struct StoreBarrierOnlyTests {
    @Test func barrierOnlyOrdersCommitsAndKeepsSnapshotsDurable() throws {
        let fileSystem = SimulatedFileSystem()
        var options = StoreOptions()
        options.fileSystem = fileSystem
        options.log.backgroundSyncInterval = nil
        options.log.appleBarrierOnly = true
        let store = try Store(at: "s/store", options: options)
        try store.write { tx in tx.put(bytes("v"), for: bytes("first"), in: "t") }
        let durable = fileSystem.syncCount(.durable), ordered = fileSystem.syncCount(.ordered)
        try store.write(durability: .full) { tx in tx.put(bytes("v"), for: bytes("k"), in: "t") }
        #expect(fileSystem.syncCount(.ordered) == ordered + 1)
        #expect(fileSystem.syncCount(.durable) == durable)
        let snapshotSyncs = Locked(0)
        fileSystem.observeCalls { operation, path in
            if operation == .sync && path.hasSuffix(".snap.tmp") { snapshotSyncs.withLock { $0 += 1 } }
        }
        try store.compact()
        #expect(snapshotSyncs.withLock { $0 } == 1)
        #expect(fileSystem.syncCount(.durable) == durable + 1, "the snapshot's sync, and only it, asks for .durable")
        store.close()
    }
}
