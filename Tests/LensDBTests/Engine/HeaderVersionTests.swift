import Foundation
import LensLog
import LensTestSupport
import Testing
@testable import LensDB

/// A header's version field is what tells a newer LensDB's file from
/// damage. A field that damage changed reads as a bad header, which repair
/// reads past; a newer LensDB's file stops every open, `.salvage` and
/// repair included, and nothing is set aside, read past or removed for it.
@Suite struct HeaderVersionTests {
    /// A store of ten entries in one log; `compacted`, they are in a
    /// snapshot and an eleventh is in the log after it.
    func store(in temporary: TemporaryDirectory, compacted: Bool) throws -> String {
        let path = temporary.path + "/app.lensdb"
        var options = StoreOptions()
        options.compactionLogRatio = nil
        let store = try Store(at: path, options: options)
        for index in 0..<10 { try store.write { tx in tx.put(Array("value \(index)".utf8), for: Array("\(index)".utf8), in: "t") } }
        if compacted {
            try store.compact()
            try store.write { tx in tx.put(Array("after".utf8), for: Array("after".utf8), in: "t") }
        }
        store.close()
        return path
    }

    func files(of store: String) throws -> StoreDirectory.Listing {
        try StoreDirectory(path: store, fileSystem: POSIXFileSystem()).list()
    }

    /// Every file of the store, by name, with its bytes.
    func contents(of store: String) throws -> [String: Data] {
        var contents: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: store) {
            contents[name] = try Data(contentsOf: URL(fileURLWithPath: "\(store)/\(name)"))
        }
        return contents
    }

    /// Writes `version` into the header of `file`; with `checksum`, as a
    /// writer would, the header's checksum made again for it (the header
    /// keeps its length).
    func setVersion(_ version: UInt32, of file: String, checksum: Bool) throws {
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        let length = bytes[8] >= 4 ? 44 : 36
        bytes.replaceSubrange(8..<12, with: withUnsafeBytes(of: version.littleEndian, Array.init))
        if checksum {
            bytes.replaceSubrange((length - 4)..<length, with: withUnsafeBytes(of: CRC32C.checksum(Array(bytes[0..<(length - 4)])).littleEndian, Array.init))
        }
        try Data(bytes).write(to: URL(fileURLWithPath: file))
    }

    /// Flips each of `bits`, counted from the version field's first.
    func flip(bits: [Int], ofVersionIn file: String) throws {
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        for bit in bits { bytes[8 + bit / 8] ^= 1 << (bit % 8) }
        try Data(bytes).write(to: URL(fileURLWithPath: file))
    }

    /// A version field with one bit flipped (3 becomes 7, 0x4003, 0x80000003),
    /// and one whose damage runs on into the reserved field after it.
    /// Repairs the store at `path` beside it and checks that the repaired
    /// store holds all `count` entries, entries 0 and 9 as written.
    func expectRepairKeepsEveryEntry(of path: String, in temporary: TemporaryDirectory, count: Int) throws {
        let output = temporary.path + "/repaired.lensdb"
        let report = try StoreInspector(path: path).repair(to: output)
        #expect(report.lost.isEmpty)
        let repaired = try Store(at: output)
        defer { repaired.close() }
        #expect(repaired.current.count(in: "t") == count)
        #expect(try repaired.current.value(in: "t", key: Array("0".utf8))?.bytes() == Array("value 0".utf8))
        #expect(try repaired.current.value(in: "t", key: Array("9".utf8))?.bytes() == Array("value 9".utf8))
    }

    @Test(arguments: [[2], [14], [31], [31, 32]])
    func aLogWhoseVersionFieldIsDamagedIsABadHeaderThatRepairReadsPast(bits: [Int]) throws {
        let temporary = try TemporaryDirectory("version")
        defer { temporary.remove() }
        let path = try store(in: temporary, compacted: false)
        let log = try #require(files(of: path).logs.last).path
        try flip(bits: bits, ofVersionIn: log)
        let damaged = try contents(of: path)

        let error = #expect(throws: LogError.badHeader(file: log)) { try Store(at: path) }
        #expect(error.map { "\($0)" }?.contains("logtool repair") == true, "\(String(describing: error))")
        #expect(try contents(of: path) == damaged, "a failed open changes no file")

        try expectRepairKeepsEveryEntry(of: path, in: temporary, count: 10)
    }

    @Test(arguments: [1, 6, 30])
    func aSnapshotWhoseVersionFieldIsDamagedIsRepairedWhole(bit: Int) throws {
        let temporary = try TemporaryDirectory("version")
        defer { temporary.remove() }
        let path = try store(in: temporary, compacted: true)
        let snapshot = try #require(files(of: path).snapshots.last).path
        try flip(bits: [bit], ofVersionIn: snapshot)

        let error = #expect(throws: RecoveryError.self) { try Store(at: path) }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("\(snapshot): the snapshot header fails its checksum"), "\(text)")
        #expect(!text.contains("newer"), "\(text)")
        #expect(text.contains("logtool repair"), "\(text)")

        // Its version put back, the header verifies: every chunk is read.
        try expectRepairKeepsEveryEntry(of: path, in: temporary, count: 11)
    }

    @Test func aNewerLogStopsEveryOpenAndRepairAndStaysAsItIs() throws {
        let temporary = try TemporaryDirectory("version")
        defer { temporary.remove() }
        let path = try store(in: temporary, compacted: false)
        let log = try #require(files(of: path).logs.last).path
        try setVersion(LogFormat.version + 5, of: log, checksum: true)
        let newer = LogError.unsupportedVersion(file: log, version: LogFormat.version + 5)
        let before = try contents(of: path)

        // Its records happen to read as this version's: `.salvage` must
        // still not take them as they read here.
        #expect(throws: newer) { try Store(at: path) }
        #expect(throws: newer) { try Store(at: path, options: StoreOptions(recovery: .salvage)) }
        #expect(throws: newer) { try StoreInspector(path: path).repair(to: temporary.path + "/repaired.lensdb") }
        #expect(try contents(of: path) == before)

        // Left by a newer LensDB that stopped without closing, its records
        // unreadable here: not a log cut while new, which an open removes.
        try FileManager.default.removeItem(atPath: path + "/CLOSED")
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: log)))
        for offset in 40..<bytes.count { bytes[offset] ^= 0x5a }
        try Data(bytes).write(to: URL(fileURLWithPath: log))
        let unreadable = try contents(of: path)
        #expect(throws: newer) { try Store(at: path) }
        #expect(throws: newer) { try Store(at: path, options: StoreOptions(recovery: .salvage)) }
        #expect(try contents(of: path) == unreadable)
    }

    @Test func aNewerSnapshotIsNeverSetAsideForTheLogs() throws {
        let temporary = try TemporaryDirectory("version")
        defer { temporary.remove() }
        // The first log kept, so the logs alone reach back to LSN 1.
        let path = temporary.path + "/app.lensdb"
        var options = StoreOptions()
        options.compactionLogRatio = nil
        let store = try Store(at: path, options: options)
        for index in 0..<10 { try store.write { tx in tx.put(Array("\(index)".utf8), for: Array("\(index)".utf8), in: "t") } }
        let first = try #require(files(of: path).logs.first).path
        let firstBytes = try Data(contentsOf: URL(fileURLWithPath: first))
        try store.compact()
        store.close()
        try firstBytes.write(to: URL(fileURLWithPath: first))
        let snapshot = try #require(files(of: path).snapshots.last).path
        try setVersion(SnapshotFormat.version + 5, of: snapshot, checksum: true)
        let before = try contents(of: path)

        let newer = SnapshotError.unsupportedVersion(file: snapshot, version: SnapshotFormat.version + 5)
        #expect(throws: newer) { try Store(at: path) }
        #expect(throws: newer) { try Store(at: path, options: StoreOptions(recovery: .salvage)) }
        #expect(throws: newer) { try StoreInspector(path: path).repair(to: temporary.path + "/repaired.lensdb") }
        #expect(try contents(of: path) == before)
    }

    /// A newer LensDB's compaction cut short before its log was made: its
    /// snapshot is not in effect, and the store opens from the one before,
    /// leaving it where it is.
    @Test func aNewerSnapshotWithoutItsLogIsPassedOver() throws {
        let temporary = try TemporaryDirectory("version")
        defer { temporary.remove() }
        let path = try store(in: temporary, compacted: true)
        let snapshot = try #require(files(of: path).snapshots.last)
        let newerPath = StoreDirectory(path: path, fileSystem: POSIXFileSystem()).snapshotPath(generation: snapshot.generation + 1)
        try FileManager.default.copyItem(atPath: snapshot.path, toPath: newerPath)
        try setVersion(SnapshotFormat.version + 5, of: newerPath, checksum: true)
        let newerBytes = try Data(contentsOf: URL(fileURLWithPath: newerPath))

        let store = try Store(at: path)
        #expect(store.current.count(in: "t") == 11)
        #expect(store.openStatistics.recovery.damagedSnapshots.map(\.path) == [newerPath])
        #expect(store.openStatistics.recovery.damagedSnapshots.first?.movedTo == nil)
        store.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: newerPath)) == newerBytes)
    }
}
