import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LensTestSupport
import Testing
@testable import LensDB

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A store in a fresh temporary directory, with invariant checks on.
func withTemporaryStore(
    _ options: StoreOptions = StoreOptions(), _ body: (String, StoreOptions) throws -> Void
) throws {
    let directory = try TemporaryDirectory("store")
    defer { directory.remove() }
    var options = options
    options.checksInvariants = true
    try body(directory.path + "/state.lensdb", options)
}

@Suite struct StoreTests {
    @Test func committedWritesSurviveReopen() throws {
        try withTemporaryStore { path, options in
            do {
                let store = try Store(at: path, options: options)
                try store.write { tx in
                    tx.put(bytes("Alice"), for: bytes("1"), in: "people")
                    tx.put(bytes("Bob"), for: bytes("2"), in: "people")
                    tx.setRoot(bytes("{}"), named: "settings")
                }
                try store.write { tx in tx.remove(bytes("2"), from: "people") }
                store.close()
            }
            let reopened = try Store(at: path, options: options)
            let state = reopened.current
            #expect(try state.value(in: "people", key: bytes("1"))?.bytes() == bytes("Alice"))
            #expect(state.value(in: "people", key: bytes("2")) == nil)
            #expect(try state.root(named: "settings")?.bytes() == bytes("{}"))
            #expect(state.lsn == 2)
            #expect(reopened.openStatistics.recovery.recordsReplayed == 2)
            #expect(reopened.openStatistics.recovery.tornTails.isEmpty, "a clean close leaves no torn tail")
        }
    }

    @Test func throwingWriteBlockChangesNothing() throws {
        struct Refused: Error {}
        try withTemporaryStore { path, options in
            let store = try Store(at: path, options: options)
            try store.write { tx in tx.put(bytes("kept"), for: bytes("k"), in: "t") }
            #expect(throws: Refused.self) {
                try store.write { tx in
                    tx.put(bytes("lost"), for: bytes("k"), in: "t")
                    tx.put(bytes("lost"), for: bytes("j"), in: "t")
                    throw Refused()
                }
            }
            #expect(try store.current.value(in: "t", key: bytes("k"))?.bytes() == bytes("kept"))
            #expect(store.current.count(in: "t") == 1)
            store.close()
            let reopened = try Store(at: path, options: options)
            #expect(reopened.current.count(in: "t") == 1)
            #expect(reopened.current.lsn == 1)
        }
    }

    @Test func readerKeepsItsVersionWhileWritersCommit() throws {
        try withTemporaryStore { path, options in
            let store = try Store(at: path, options: options)
            try store.write { tx in tx.put(bytes("1"), for: bytes("k"), in: "t") }
            let held = store.current
            try store.write { tx in tx.put(bytes("2"), for: bytes("k"), in: "t") }
            #expect(try held.value(in: "t", key: bytes("k"))?.bytes() == bytes("1"))
            #expect(try store.current.value(in: "t", key: bytes("k"))?.bytes() == bytes("2"))
        }
    }

    @Test func secondOpenOfALockedStoreThrowsLocked() throws {
        try withTemporaryStore { path, options in
            let store = try Store(at: path, options: options)
            #expect(throws: StoreError.self) { try Store(at: path, options: options) }
            do {
                _ = try Store(at: path, options: options)
            } catch let StoreError.locked(lockedPath, holder) {
                #expect(lockedPath == path)
                #expect(holder == getpid())
            }
            store.close()
            _ = try Store(at: path, options: options)
        }
    }

    @Test func compactionKeepsStateAndRemovesOldFiles() throws {
        try withTemporaryStore { path, options in
            let store = try Store(at: path, options: options)
            for index in 0..<100 {
                try store.write { tx in tx.put(bytes("value \(index)"), for: bytes("\(index % 30)"), in: "t") }
            }
            try store.compact()
            try store.write { tx in tx.put(bytes("after"), for: bytes("x"), in: "t") }
            let before = store.current
            store.close()
            let listing = try StoreDirectory(path: path, fileSystem: POSIXFileSystem()).list()
            #expect(listing.snapshots.count == 1)
            #expect(listing.logs.count == 1)
            let reopened = try Store(at: path, options: options)
            #expect(reopened.openStatistics.recovery.snapshot != nil)
            #expect(reopened.openStatistics.recovery.recordsReplayed == 1)
            try expectSameState(reopened.current, before)
        }
    }

    /// A close whose final flush failed must not call the end clean, and
    /// neither may a second close (the one `deinit` makes): the next open
    /// must log the unsynced tail again.
    @Test func secondCloseAfterAFailedFlushLeavesNoCleanMarker() throws {
        let fileSystem = SimulatedFileSystem()
        var options = StoreOptions(durability: .buffered)
        options.fileSystem = fileSystem
        options.log.backgroundSyncInterval = nil
        let store = try Store(at: "/s.lensdb", options: options)
        try store.write { tx in tx.put(bytes("v"), for: bytes("k"), in: "t") }
        fileSystem.injectFault(Fault(.failedSync, operations: [.sync]))
        store.close()
        store.close()
        #expect(!fileSystem.fileExists(at: "/s.lensdb/\(StoreDirectory.closedMarkerName)"))
    }

    /// `mkdir -p` makes several directory entries; each is durable only once
    /// its own parent is synced, so a power cut must not take away an
    /// ancestor the open created, and the acknowledged commit with it.
    @Test func storeCreatedUnderMissingAncestorsSurvivesAPowerCut() throws {
        let fileSystem = SimulatedFileSystem()
        var options = StoreOptions()
        options.fileSystem = fileSystem
        let store = try Store(at: "/apps/example/data/s.lensdb", options: options)
        try store.write { tx in tx.put(bytes("v"), for: bytes("k"), in: "t") }
        fileSystem.crash(seed: 1, model: .dropAll)
        let reopened = try Store(at: "/apps/example/data/s.lensdb", options: options)
        #expect(try reopened.current.value(in: "t", key: bytes("k"))?.bytes() == bytes("v"))
    }

    @Test func readOnlyOpenChangesNoFileAndRefusesWrites() throws {
        try withTemporaryStore { path, options in
            let store = try Store(at: path, options: options)
            try store.write { tx in tx.put(bytes("v"), for: bytes("k"), in: "t") }
            var readOnly = options
            readOnly.readOnly = true
            let reader = try Store(at: path, options: readOnly)
            #expect(reader.current.count(in: "t") == 1)
            #expect(throws: StoreError.readOnly(path: path)) { try reader.write { tx in tx.put(bytes("x"), for: bytes("y"), in: "t") } }
            try store.write { tx in tx.put(bytes("w"), for: bytes("k2"), in: "t") }
        }
    }

    @Test func inMemoryStoreHasTheSameApi() throws {
        let store = Store.inMemory()
        try store.write { tx in tx.put(bytes("v"), for: bytes("k"), in: "t") }
        #expect(try store.current.value(in: "t", key: bytes("k"))?.bytes() == bytes("v"))
        try store.checkInvariants()
    }

    @Test func eightWritersAndACompactionLoopLoseNoCommitAndKeepInvariants() throws {
        var options = StoreOptions()
        options.compactionLogRatio = 0.5
        options.compactionMinimumLogBytes = 2048
        options.log.preallocationChunk = 4096
        try withTemporaryStore(options) { path, options in
            let store = try Store(at: path, options: options)
            let stop = Locked(false)
            let problems = Locked<[String]>([])
            let compactor = Thread {
                while !stop.withLock({ $0 }) {
                    do { try store.compact() } catch { problems.withLock { $0.append("compact: \(error)") } }
                    do { try store.checkInvariants() } catch { problems.withLock { $0.append("invariants: \(error)") } }
                }
            }
            compactor.start()
            runConcurrently(threads: 8) { thread in
                for index in 0..<60 {
                    do {
                        try store.write(durability: index % 3 == 0 ? .buffered : .full) { tx in
                            tx.put(bytes("\(thread)-\(index)"), for: bytes("\(thread)-\(index)"), in: "t")
                            let count = tx.state.value(in: "counter", key: [0]).flatMap { try? $0.bytes() }
                                .flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
                            tx.put(bytes("\(count + 1)"), for: [0], in: "counter")
                        }
                    } catch {
                        problems.withLock { $0.append("write: \(error)") }
                    }
                }
            }
            stop.withLock { $0 = true }
            while !compactor.isFinished { usleep(1000) }
            #expect(problems.withLock { $0 }.isEmpty, "\(problems.withLock { $0.prefix(3) })")
            #expect(try store.current.value(in: "counter", key: [0])?.bytes() == bytes("480"))
            store.close()
            let reopened = try Store(at: path, options: options)
            #expect(reopened.current.count(in: "t") == 480)
            #expect(try reopened.current.value(in: "counter", key: [0])?.bytes() == bytes("480"))
        }
    }
}

/// Equal tables and roots, compared by bytes.
func expectSameState(_ a: StoreState, _ b: StoreState, sourceLocation: SourceLocation = #_sourceLocation) throws {
    #expect(a.lsn == b.lsn, sourceLocation: sourceLocation)
    #expect(a.tableNames == b.tableNames, sourceLocation: sourceLocation)
    for name in a.tableNames {
        let left = a.entries(in: name), right = b.entries(in: name)
        #expect(left.count == right.count, sourceLocation: sourceLocation)
        for (key, value) in left {
            #expect(try value.bytes() == right[key]?.bytes(), sourceLocation: sourceLocation)
        }
    }
    #expect(a.rootNames == b.rootNames, sourceLocation: sourceLocation)
    for name in a.rootNames {
        #expect(try a.root(named: name)?.bytes() == b.root(named: name)?.bytes(), sourceLocation: sourceLocation)
    }
}
