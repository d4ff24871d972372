import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// The stores in `Tests/Fixtures` (see its README): each must open `.strict`
/// the same way every time, whether the store in between closed cleanly, lost
/// its process, or lost power.
@Suite struct CrashFixtureTests {
    static let tornBatch = "torn-batch-after-log-swap"
    static let newLogs = ["new-log-header-lost", "new-log-first-record-lost"]

    @Test(arguments: [true, false])
    func tornBatchAfterLogSwapOpensStrictThreeTimesWithEveryDurableLSN(closingCleanly: Bool) throws {
        let temporary = try TemporaryDirectory("fixture")
        defer { temporary.remove() }
        var path = try Fixtures.copy(Self.tornBatch, into: temporary)
        var first: [String: [[UInt8]: [UInt8]]]?
        for open in 1...3 {
            let store = try Store(at: path, options: StoreOptions(recovery: .strict))
            #expect(store.current.lsn >= 33, "open \(open) lost the acknowledged LSN 33")
            let state = try store.current.everything()
            if let first { #expect(state == first, "open \(open) differs from the first") } else { first = state }
            if closingCleanly {
                store.close()
            } else {
                // The files as a killed process leaves them: copied while the store is open.
                let copy = "\(temporary.path)/after-open-\(open).lensdb"
                try FileManager.default.copyItem(atPath: path, toPath: copy)
                try? FileManager.default.removeItem(atPath: "\(copy)/LOCK")
                store.close()
                path = copy
            }
        }
    }

    /// The same store under power cuts: after each open the power goes before
    /// the store closes, and unsynced data meets each crash model.
    @Test(arguments: [CrashModel.keepAll, .dropAll, .tearAll, .default])
    func tornBatchAfterLogSwapSurvivesPowerCutsBetweenOpens(model: CrashModel) throws {
        let fileSystem = SimulatedFileSystem()
        try Fixtures.plant(Self.tornBatch, at: "/s.lensdb", on: fileSystem)
        var first: [String: [[UInt8]: [UInt8]]]?
        for open in 1...3 {
            var options = StoreOptions(recovery: .strict)
            options.fileSystem = fileSystem
            options.checksInvariants = true
            let store = try Store(at: "/s.lensdb", options: options)
            #expect(store.current.lsn >= 33)
            let state = try store.current.everything()
            if let first { #expect(state == first, "open \(open) differs from the first") } else { first = state }
            fileSystem.powerCut(afterMutatingCalls: 0)
            store.close()
            fileSystem.crash(seed: UInt64(open), model: model)
        }
    }

    @Test(arguments: newLogs)
    func newLogCutByAPowerCutOpensAtLSN3AndKeepsWorking(fixture: String) throws {
        let temporary = try TemporaryDirectory("fixture")
        defer { temporary.remove() }
        let path = try Fixtures.copy(fixture, into: temporary)
        for _ in 1...2 {
            let store = try Store(at: path, options: StoreOptions(recovery: .strict))
            #expect(store.current.lsn == 3)
            #expect(store.current.entries(in: "alpha").keys.sorted { $0.lexicographicallyPrecedes($1) } == [[1], [2], [3]])
            store.close()
        }
        let store = try Store(at: path, options: StoreOptions(recovery: .strict))
        try store.write { tx in tx.put([9], for: [4], in: "alpha") }
        store.close()
        for _ in 1...2 {
            let reopened = try Store(at: path, options: StoreOptions(recovery: .strict))
            #expect(reopened.current.lsn == 4)
            #expect(try reopened.current.value(in: "alpha", key: [4])?.bytes() == [9])
            #expect(reopened.current.count(in: "alpha") == 4)
            reopened.close()
        }
    }
}
