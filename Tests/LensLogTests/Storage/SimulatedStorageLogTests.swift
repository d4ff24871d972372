import LensTestSupport
import Testing
@testable import LensLog

/// The log layer on the simulated file system: what the crash fuzzer builds on.
@Suite struct SimulatedStorageLogTests {
    @Test func fullyDurableRecordsSurviveCrashThatDropsEverythingUnsynced() throws {
        let fileSystem = try makeSimulatedStore()
        let path = "s/log-0000000000000001.log"
        let writer = try LogWriter.create(fileSystem: fileSystem, path: path, generation: 1, firstLSN: 1, options: LogWriterOptions())
        let payloads = (0..<20).map { [UInt8](repeating: UInt8($0), count: 100 + $0) }
        for payload in payloads { _ = try writer.append(payload, durability: .full) }
        fileSystem.crash(seed: 1, model: .dropAll)
        var reader = try LogReader(fileSystem: fileSystem, path: path, policy: .strict)
        var records: [[UInt8]] = []
        while let record = try reader.next() { records.append(record.payload) }
        #expect(records == payloads)
    }
}

extension SimulatedStorageLogTests {
    @Test func crashWithUnsyncedTailKeepsEverySyncedRecord() throws {
        for seed in UInt64(0)..<25 {
            let fileSystem = try makeSimulatedStore()
            let path = "s/log-0000000000000001.log"
            let writer = try LogWriter.create(fileSystem: fileSystem, path: path, generation: 1, firstLSN: 1, options: LogWriterOptions())
            let payloads = (0..<30).map { [UInt8](repeating: UInt8($0), count: 300 + $0 * 40) }
            for (index, payload) in payloads.enumerated() {
                _ = try writer.append(payload, durability: index < 10 ? .full : .none)
            }
            fileSystem.crash(seed: seed)
            var reader = try LogReader(fileSystem: fileSystem, path: path, policy: .strict)
            var records: [[UInt8]] = []
            while let record = try reader.next() { records.append(record.payload) }
            #expect(records.count >= 10 && records == Array(payloads.prefix(records.count)), "seed \(seed)")
        }
    }
}
