import LensDB
import LensLog
import LensTestSupport
import Testing

/// ``StoreInspector/follow(from:until:table:interval:shouldStop:_:)`` called
/// as a library, with the writer in the same thread on the simulated file
/// system, so that what happens between two looks is decided by the test.
@Suite struct StoreInspectorFollowTests {
    let fileSystem = SimulatedFileSystem()
    let path = "/follow.lensdb"

    func openStore() throws -> Store {
        var options = StoreOptions()
        options.fileSystem = fileSystem
        return try Store(at: path, options: options)
    }

    func put(_ store: Store, _ table: String, _ key: UInt8) throws {
        try store.write { tx in tx.put([key], for: [key], in: table) }
    }

    @Test func withoutFromFollowingStartsAfterWhatTheStoreHeldAndStopsAtUntil() throws {
        let store = try openStore()
        defer { store.close() }
        for key in 1...3 { try put(store, "a", UInt8(key)) }
        var looks = 0
        var shown: [UInt64] = []
        try StoreInspector(path: path, fileSystem: fileSystem).follow(until: 6, interval: .milliseconds(1), shouldStop: {
            looks += 1
            // Between the first look and the second: three more commits.
            if looks == 1 { for key in 4...6 { try! put(store, "a", UInt8(key)) } }
            return looks > 50
        }) { shown.append($0.lsn) }
        #expect(shown == [4, 5, 6])
    }

    @Test func tableOptionShowsOnlyThatTablesTransactionsAndOperations() throws {
        let store = try openStore()
        defer { store.close() }
        try put(store, "a", 1)
        var looks = 0
        var shown: [DumpedTransaction] = []
        try StoreInspector(path: path, fileSystem: fileSystem).follow(from: 2, until: 4, table: "b", interval: .milliseconds(1), shouldStop: {
            looks += 1
            if looks == 1 {
                try! put(store, "a", 2)
                try! store.write { tx in
                    tx.put([3], for: [3], in: "a")
                    tx.put([3], for: [3], in: "b")
                }
                try! put(store, "b", 4)
            }
            return looks > 50
        }) { shown.append($0) }
        #expect(shown.map(\.lsn) == [3, 4])
        #expect(shown.allSatisfy { $0.operations.allSatisfy { $0.table == "b" } })
    }

    @Test func shouldStopEndsFollowingWithoutAnError() throws {
        let store = try openStore()
        defer { store.close() }
        try put(store, "a", 1)
        var looks = 0
        try StoreInspector(path: path, fileSystem: fileSystem).follow(interval: .milliseconds(1), shouldStop: {
            looks += 1
            return looks >= 3
        }) { _ in Issue.record("nothing was committed after following started") }
        #expect(looks >= 3)
    }
}
