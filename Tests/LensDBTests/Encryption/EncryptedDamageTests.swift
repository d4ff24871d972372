import LensTestSupport
import Testing
@testable import LensDB

/// Damage to an encrypted store is judged as in a plain one: the checksum
/// over the stored bytes finds it without the key, and the tag catches
/// what a checksum fixed after the damage would let through.
@Suite struct EncryptedDamageTests {
    let path = "/secret.lensdb"

    func options(_ fileSystem: SimulatedFileSystem, _ policy: RecoveryPolicy = .strict) -> StoreOptions {
        var options = StoreOptions(recovery: policy, encryptionKey: TestKeys.first)
        options.fileSystem = fileSystem
        options.compactionLogRatio = nil
        options.log.backgroundSyncInterval = nil
        return options
    }

    /// Eight commits, closed cleanly (the marker proves every record
    /// durable); returns the files, the log's path and the state.
    func closedStore() throws -> (files: [String: [UInt8]], log: String, state: [String: [[UInt8]: [UInt8]]]) {
        let fileSystem = SimulatedFileSystem()
        let store = try Store(at: path, options: options(fileSystem))
        for index in 0..<8 { try store.write { tx in tx.put(bytes("value \(index)"), for: bytes("k\(index)"), in: "t") } }
        store.close()
        let log = try StoreDirectory(path: path, fileSystem: fileSystem).list().logs.last!.path
        return (try fileSystem.snapshotOfFiles(in: path), log, try store.current.everything())
    }

    /// Every byte of the log flipped in turn: a strict open fails, and a
    /// salvage open keeps only values as they were committed.
    @Test func flipOfEveryByteOfAnEncryptedLogIsCaught() throws {
        let (files, log, state) = try closedStore()
        let size = files[log]!.count
        for index in 0..<size {
            var damaged = files
            flip(byteAt: index, in: &damaged[log]!)
            let fileSystem = SimulatedFileSystem.holding(damaged)
            #expect(throws: (any Error).self, "a flip at offset \(index) of \(size) went unnoticed") {
                try Store(at: path, options: options(fileSystem)).close()
            }
            guard let salvaged = try? Store(at: path, options: options(SimulatedFileSystem.holding(damaged), .salvage)) else { continue }
            defer { salvaged.close() }
            for (table, entries) in try salvaged.current.everything() {
                for (key, value) in entries {
                    #expect(state[table]?[key] == value, "a flip at offset \(index) changed \(table) \(key)")
                }
            }
        }
    }

    /// Damage whose checksum was recomputed (tampering, not rot) passes the
    /// checksum and fails the tag: followed by a proving record, strict
    /// open reports corruption, as for a payload that does not decompress.
    @Test func ciphertextChangedWithItsChecksumFixedIsCorruption() throws {
        let (files, log, _) = try closedStore()
        var reader = try LogReader(bytes: files[log]!, path: log, policy: .strict, cipher: TestKeys.first)
        var offsets: [Int64] = []
        while let record = try reader.next() { offsets.append(record.offset) }
        var damaged = files
        let target = Int(offsets[3])
        flip(byteAt: target + LogFormat.frameHeaderSize + EncryptionFormat.keyIDSize + EncryptionFormat.nonceSize, in: &damaged[log]!, mask: 1)
        rechecksumLogRecord(at: target, in: &damaged[log]!, generation: reader.header.generation)
        #expect(throws: LogError.corruption(file: log, offset: offsets[3], lsn: 4, reason: .authenticationFailed)) {
            try Store(at: path, options: options(SimulatedFileSystem.holding(damaged)))
        }
        let salvaged = try Store(at: path, options: options(SimulatedFileSystem.holding(damaged), .salvage))
        defer { salvaged.close() }
        #expect(salvaged.current.value(in: "t", key: bytes("k3")) == nil)
        #expect(salvaged.current.count(in: "t") == 7)
        #expect(salvaged.openStatistics.recovery.dropped.map(\.range.reason) == [.authenticationFailed])
    }

    /// Two records swapped with their LSNs and checksums rewritten: the
    /// associated data binds each to its LSN, so neither authenticates.
    @Test func recordsMovedToAnotherLSNDoNotAuthenticate() throws {
        let (files, log, _) = try closedStore()
        var reader = try LogReader(bytes: files[log]!, path: log, policy: .strict, cipher: TestKeys.first)
        var records: [LogRecord] = []
        while let record = try reader.next() { records.append(record) }
        var damaged = files
        let first = records[2], second = records[3]
        // Same sizes ("value 2" and "value 3"), so the frames trade places byte for byte.
        #expect(first.frameSize == second.frameSize)
        let a = Array(files[log]![Int(first.offset)..<(Int(first.offset) + first.frameSize)])
        let b = Array(files[log]![Int(second.offset)..<(Int(second.offset) + second.frameSize)])
        overwrite(at: Int(first.offset), with: b, in: &damaged[log]!)
        overwrite(at: Int(second.offset), with: a, in: &damaged[log]!)
        for (offset, lsn) in [(first.offset, UInt64(3)), (second.offset, 4)] {
            var lsnBytes: [UInt8] = []
            for shift in stride(from: 0, to: 64, by: 8) { lsnBytes.append(UInt8(truncatingIfNeeded: lsn >> UInt64(shift))) }
            overwrite(at: Int(offset) + 8, with: lsnBytes, in: &damaged[log]!)
            rechecksumLogRecord(at: Int(offset), in: &damaged[log]!, generation: reader.header.generation)
        }
        #expect(throws: LogError.corruption(file: log, offset: first.offset, lsn: 3, reason: .authenticationFailed)) {
            try Store(at: path, options: options(SimulatedFileSystem.holding(damaged)))
        }
    }

    /// A power cut that tears the last, unsynced record of an encrypted log
    /// leaves a torn tail, cut quietly, as in a plain log: judging it needs
    /// no key and no decryption.
    @Test func tornEncryptedTailIsCutQuietly() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try Store(at: path, options: options(fileSystem))
        for index in 0..<4 { try store.write(durability: .full) { tx in tx.put(bytes("value \(index)"), for: bytes("k\(index)"), in: "t") } }
        try store.write(durability: .buffered) { tx in tx.put(bytes("unsynced"), for: bytes("late"), in: "t") }
        let log = try StoreDirectory(path: path, fileSystem: fileSystem).list().logs.last!.path
        var reader = try LogReader(bytes: fileSystem.contents(of: log)!, path: log, policy: .strict, cipher: TestKeys.first)
        var last: LogRecord?
        while let record = try reader.next() { last = record }
        let tail = try #require(last)
        // The crash kept the last record's frame header and half of its envelope.
        fileSystem.powerCut(afterMutatingCalls: 0)
        fileSystem.crash(seed: 1, model: .keepAll)
        fileSystem.truncate(file: log, to: Int(tail.offset) + tail.frameSize / 2)
        let reopened = try Store(at: path, options: options(fileSystem))
        defer { reopened.close() }
        #expect(reopened.current.count(in: "t") == 4)
        #expect(reopened.openStatistics.recovery.tornTails.map(\.offset) == [tail.offset])
        #expect(reopened.openStatistics.recovery.tornTails.first?.reason == .truncatedPayload)
    }
}
