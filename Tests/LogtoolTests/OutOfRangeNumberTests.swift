import Foundation
import LensDB
import LensLog
import LensTestSupport
import Testing

/// Numbers a file can hold with every checksum valid that no LensDB writes:
/// LSNs and generations at the end of their range, and a count larger than
/// its record could hold. Each is damage with a typed error, or proves
/// nothing; none stops the process. Opens go through
/// `Store`, and the `logtool` commands through ``StoreInspector``, as
/// programs and the tool call them.
@Suite struct OutOfRangeNumberTests {
    let fileSystem = SimulatedFileSystem()
    let path = "/numbers.lensdb"
    var directory: StoreDirectory { StoreDirectory(path: path, fileSystem: fileSystem) }
    var inspector: StoreInspector { StoreInspector(path: path, fileSystem: fileSystem) }

    func openStore(_ configure: (inout StoreOptions) -> Void = { _ in }) throws -> Store {
        var options = StoreOptions()
        options.fileSystem = fileSystem
        configure(&options)
        return try Store(at: path, options: options)
    }

    /// LSNs 1 to 3, one key of table "a" each; compacted into a snapshot when asked.
    func threeCommits(compacted: Bool = false) throws {
        let store = try openStore()
        for key: UInt8 in 1...3 { try store.write { $0.put([key], for: [key], in: "a") } }
        if compacted { try store.compact() }
        store.close()
    }

    /// What following from LSN 1 through `until` hands on.
    func followed(until: UInt64) throws -> [UInt64] {
        var looks = 0
        var shown: [UInt64] = []
        try inspector.follow(from: 1, until: until, interval: .milliseconds(1), shouldStop: {
            looks += 1
            return looks > 3
        }) { shown.append($0.lsn) }
        return shown
    }

    /// `bytes` with its header's first LSN set to `lsn` and the header checksum made to fit.
    static func withFirstLSN(_ lsn: UInt64, _ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        overwrite(at: 24, with: littleEndian(lsn), in: &bytes)
        overwrite(at: 32, with: littleEndian(CRC32C.checksum(Array(bytes[0..<32]))), in: &bytes)
        return bytes
    }

    static func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian, Array.init)
    }

    @Test func aSnapshotClaimingTheLSNAfterTheLastIsDamaged() throws {
        try threeCommits(compacted: true)
        let snapshot = try #require(try directory.list().snapshots.last)
        // Valid checksums, header and whole file: only the LSN is impossible.
        let writer = try SnapshotWriter(fileSystem: fileSystem, path: snapshot.path, generation: snapshot.generation, lastLSN: .max)
        _ = try writer.finish()
        let damage = SnapshotError.lastLSNOutOfRange(file: snapshot.path, lastLSN: .max)
        #expect(damage.description.contains("past the last LSN a record can carry"))

        // logtool verify reports it; repair, which salvages the newest
        // snapshot whose header verifies when none is usable, finds none;
        // follow stops with a typed error.
        #expect(try inspector.verify().problems.contains { $0.description.hasSuffix(damage.description) })
        #expect(throws: InspectionError.nothingToSalvage(path: path, snapshots: [damage.description])) {
            try inspector.repair(to: "/repaired.lensdb")
        }
        #expect(throws: RecoveryError.self) { try followed(until: 3) }
        #expect(throws: RecoveryError.self) { try openStore { $0.recovery = .salvage; $0.readOnly = true } }

        // The logs before the snapshot are gone: no usable state, and the error says why.
        let error = #expect(throws: RecoveryError.self) { try openStore() }
        guard case .noUsableSnapshot(_, let damaged)? = error else {
            Issue.record("expected noUsableSnapshot, got \(String(describing: error))")
            return
        }
        #expect(damaged.map(\.problem) == [damage.description])
    }

    @Test func aCleanCloseClaimingTheLSNAfterTheLastProvesNothing() throws {
        #expect(CleanClose(decoding: CleanClose(lastLSN: .max).encoded()).lastLSN == nil)
        #expect(CleanClose(decoding: CleanClose(lastLSN: LogFormat.maxLSN).encoded()).lastLSN == LogFormat.maxLSN)

        try threeCommits()
        fileSystem.setContents(CleanClose(lastLSN: .max).encoded(), of: directory.closedMarkerPath)
        // A close that proves nothing past the log: the records read are the state, with either policy.
        _ = try inspector.info()
        #expect(try inspector.verify().problems.isEmpty)
        let salvaged = try openStore { $0.recovery = .salvage; $0.readOnly = true }
        #expect(salvaged.current.count(in: "a") == 3)
        salvaged.close()
        let store = try openStore()
        #expect(store.current.count(in: "a") == 3)
        store.close()
    }

    @Test func aLogHeaderStartingAtLSNZeroIsDamaged() throws {
        let header = LogFileHeader(generation: 2, firstLSN: 0).encoded()
        #expect(throws: LogError.firstLSNOutOfRange(file: "l", firstLSN: 0)) {
            try header.withUnsafeBytes { try LogFileHeader(decoding: $0, file: "l") }
        }

        try threeCommits()
        // A later log whose header verifies and starts at LSN 0: no record follows it.
        let next = try directory.list().newestGeneration + 1
        fileSystem.setContents(LogFileHeader(generation: next, firstLSN: 0).encoded(), of: directory.logPath(generation: next))
        #expect(try followed(until: 3) == [1, 2, 3])
        let store = try openStore { $0.readOnly = true }
        #expect(store.current.count(in: "a") == 3)
        store.close()
    }

    @Test func aRecordClaimingTheLSNAfterTheLastIsDamage() throws {
        try threeCommits()
        // A later log starting at the LSN after the last, holding one record
        // with that LSN: header and record checksums valid.
        let next = try directory.list().newestGeneration + 1
        let scratch = "/scratch.log"
        let writer = try LogWriter.create(fileSystem: fileSystem, path: scratch, generation: next, firstLSN: 4)
        try writer.append([1, 2, 3], durability: .full)
        writer.close()
        var bytes = Self.withFirstLSN(.max, try #require(fileSystem.contents(of: scratch)))
        let frame = LogFormat.fileHeaderSize
        overwrite(at: frame + 8, with: Self.littleEndian(UInt64.max), in: &bytes)
        rechecksumLogRecord(at: frame, in: &bytes, generation: next)
        fileSystem.setContents(bytes, of: directory.logPath(generation: next))
        try fileSystem.removeFile(at: scratch)

        // The record is a torn tail (no record could follow it to prove it),
        // and the log, which continues nothing, holds only that.
        let log = directory.logPath(generation: next)
        #expect(try followed(until: 3) == [1, 2, 3])
        let notes = try inspector.verify().notes
        #expect(notes.contains { $0.hasPrefix(log) && $0.contains("at offset \(frame) (lsnOutOfSequence)") })
        let store = try openStore { $0.readOnly = true }
        #expect(store.current.count(in: "a") == 3)
        store.close()
    }

    @Test func aStoreOutOfLSNsRefusesAWriteAndGoesOn() throws {
        // A store whose snapshot holds everything through the last LSN a record can carry.
        try fileSystem.createDirectory(at: path, permissions: nil)
        try directory.writeIdentity()
        let snapshot = try SnapshotWriter(fileSystem: fileSystem, path: directory.snapshotPath(generation: 1), generation: 1, lastLSN: LogFormat.maxLSN)
        _ = try snapshot.finish()
        try LogWriter.create(fileSystem: fileSystem, path: directory.logPath(generation: 1), generation: 1, firstLSN: .max).close()

        let store = try openStore()
        let files = try fileSystem.listDirectory(path).sorted()
        #expect(throws: LogError.lsnsExhausted(file: directory.logPath(generation: 2))) {
            try store.write { $0.put([1], for: [1], in: "a") }
        }
        #expect(try fileSystem.listDirectory(path).sorted() == files, "no log was started for it")
        // Nothing was written, and the store is not failed: reads go on, and the next write gets the same answer.
        #expect(store.current.count(in: "a") == 0)
        #expect(throws: LogError.lsnsExhausted(file: directory.logPath(generation: 2))) {
            try store.write { $0.put([2], for: [2], in: "a") }
        }
        store.close()
        let reopened = try openStore()
        #expect(reopened.current.count(in: "a") == 0)
        reopened.close()
    }

    @Test func aStoreAtTheLastGenerationIsRefusedBeforeAnythingChanges() throws {
        try threeCommits()
        let log = try #require(try directory.list().logs.last)
        // One generation before the last: a writable open starts the last
        // one, and a compaction or key change would need the one after it.
        try fileSystem.rename(log.path, to: directory.logPath(generation: .max - 1))
        let store = try openStore()
        try store.write { $0.put([4], for: [4], in: "a") }
        #expect(throws: StoreError.generationsExhausted(path: path)) { try store.compact() }
        #expect(throws: StoreError.generationsExhausted(path: path)) { try store.changeEncryptionKey(to: TestKeys.first) }
        try store.write { $0.put([5], for: [5], in: "a") }
        store.close()
        #expect(try directory.list().logs.map(\.generation) == [.max - 1, .max])

        // Now the files reach the last generation: a writable open is refused
        // and leaves every file as it was; a read-only open reads it all.
        let before = try fileSystem.listDirectory(path).sorted()
        #expect(throws: StoreError.generationsExhausted(path: path)) { try openStore() }
        #expect(try fileSystem.listDirectory(path).sorted() == before)
        let reader = try openStore { $0.readOnly = true }
        #expect(reader.current.count(in: "a") == 5)
        reader.close()
    }

    /// The advice the refusal gives works: `logtool repair --in-place`
    /// writes the store anew from generation 1, and it opens for writing.
    @Test func aStoreAtTheLastGenerationIsWrittenAnewByRepair() throws {
        let temporary = try TemporaryDirectory("generations")
        defer { temporary.remove() }
        let store = "\(temporary.path)/last.lensdb"
        let opened = try Store(at: store)
        for key: UInt8 in 1...3 { try opened.write { $0.put([key], for: [key], in: "a") } }
        opened.close()
        let directory = StoreDirectory(path: store, fileSystem: POSIXFileSystem())
        let log = try #require(try directory.list().logs.last)
        try POSIXFileSystem().rename(log.path, to: directory.logPath(generation: .max))
        let refusal = StoreError.generationsExhausted(path: store)
        #expect(throws: refusal) { try Store(at: store) }
        #expect(refusal.description.contains("`logtool repair \(store) --in-place`"))

        let repair = try logtool("repair", store, "--in-place")
        #expect(repair.status == 0, "\(repair.err)")
        let repaired = try Store(at: store)
        defer { repaired.close() }
        #expect(repaired.current.count(in: "a") == 3)
        try repaired.write { $0.put([4], for: [4], in: "a") }
        #expect(try directory.list().newestGeneration < 3)
    }

    /// A record whose operation count claims nearly as many operations as
    /// its 64 MiB payload has bytes (zeros, about 260 KB stored):
    /// decoding reserves room for a bounded number ahead, finds no valid
    /// operation, and `logtool dump` reports the record, in a process whose
    /// address space cannot hold the gigabytes the count would ask for.
    #if os(Linux)
    @Test func aRecordClaimingMillionsOfOperationsReservesRoomForFew() throws {
        let temporary = try TemporaryDirectory("counts")
        defer { temporary.remove() }
        let store = "\(temporary.path)/counts.lensdb"
        let opened = try Store(at: store)
        try opened.write { $0.put([1], for: [1], in: "a") }
        opened.close()
        let directory = StoreDirectory(path: store, fileSystem: POSIXFileSystem())
        let next = try directory.list().newestGeneration + 1
        var payload = [UInt8](repeating: 0, count: LogFormat.maxPayloadSize)
        let count = UInt64(payload.count - 4)
        for index in 0..<4 { payload[index] = UInt8(truncatingIfNeeded: count >> (7 * UInt64(index))) | (index < 3 ? 0x80 : 0) }
        let log = try LogWriter.create(fileSystem: POSIXFileSystem(), path: directory.logPath(generation: next), generation: next, firstLSN: 2)
        try log.append(payload, durability: .full)
        log.close()

        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        // 3 GiB of address space: the dump itself needs a few hundred MiB.
        shell.arguments = ["-c", "ulimit -v 3145728 && exec \"$0\" dump \"$1\" --from 2", logtoolBinary.path, store]
        let output = Pipe()
        shell.standardOutput = output
        shell.standardError = output
        try shell.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        shell.waitUntilExit()
        #expect(shell.terminationReason == .exit, "\(text)")
        #expect(text.contains("the record verifies but is not a valid transaction"), "\(text)")
    }
    #endif
}
