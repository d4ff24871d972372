import LensTestSupport
import Testing
@testable import LensLog

/// What the log writer asks of the file system, by default and with the
/// barrier-only trade-off.
@Suite struct LogWriterSyncNeedTests {
    func options(barrierOnly: Bool) -> LogWriterOptions {
        var options = LogWriterOptions()
        options.appleBarrierOnly = barrierOnly
        options.backgroundSyncInterval = nil
        return options
    }

    @Test(arguments: [false, true])
    func fullAppendAsksForTheCommitNeedOncePerCommit(barrierOnly: Bool) throws {
        let fileSystem = try makeSimulatedStore()
        let writer = try LogWriter.create(
            fileSystem: fileSystem, path: "s/log", generation: 1, firstLSN: 1, options: options(barrierOnly: barrierOnly))
        defer { writer.close() }
        let durable = fileSystem.syncCount(.durable), ordered = fileSystem.syncCount(.ordered)
        for index in 0..<3 { try writer.append([UInt8(index)], durability: .full) }
        #expect(fileSystem.syncCount(.durable) - durable == (barrierOnly ? 0 : 3))
        #expect(fileSystem.syncCount(.ordered) - ordered == (barrierOnly ? 3 : 0))
    }

    @Test func barrierOnlyLeavesTheFirstSyncOfANewLogDurable() throws {
        let fileSystem = try makeSimulatedStore()
        let writer = try LogWriter.create(fileSystem: fileSystem, path: "s/log", generation: 1, firstLSN: 1, options: options(barrierOnly: true))
        writer.close()
        #expect(fileSystem.syncCount(.durable) == 1)
        #expect(fileSystem.syncCount(.ordered) == 0)
    }

    @Test func barrierOnlyLeavesATailWrittenAgainDurableBeforeItIsNamed() throws {
        let fileSystem = try makeSimulatedStore()
        let payloads: [(type: RecordType, payload: [UInt8])] = [(.transaction, [1]), (.transaction, [2])]
        let durableAtRename = Locked<Int?>(nil)
        fileSystem.observeCalls { operation, _ in
            if operation == .rename { durableAtRename.withLock { $0 = fileSystem.syncCount(.durable) } }
        }
        let writer = try LogWriter.createHolding(
            payloads, fileSystem: fileSystem, path: "s/log", generation: 2, firstLSN: 5, options: options(barrierOnly: true))
        writer.close()
        // Nothing else in createHolding asks for .durable: new files and directories ask for more metadata.
        #expect(durableAtRename.withLock { $0 } == 1)
    }
}
