import LensTestSupport
import Testing
@testable import LensLog

@Suite struct SnapshotTests {
    let fileSystem = POSIXFileSystem()

    /// Writes a snapshot with `build` and returns its bytes.
    func snapshotBytes(generation: UInt64 = 2, lastLSN: UInt64 = 5, compression: Bool = true,
                       _ build: (SnapshotWriter) throws -> Void) throws -> [UInt8] {
        let directory = try TemporaryDirectory("snapshot")
        defer { directory.remove() }
        let path = directory.path + "/snapshot.tmp"
        let writer = try SnapshotWriter(fileSystem: fileSystem, path: path, generation: generation, lastLSN: lastLSN, compression: compression)
        try build(writer)
        try writer.finish()
        return try fileSystem.openFile(at: path, mode: .readOnly).readAll()
    }

    /// The items, read whole; and read with entries in place, which must
    /// give the same.
    func items(_ bytes: [UInt8]) throws -> [SnapshotItem] {
        var items: [SnapshotItem] = []
        try SnapshotFile(bytes: bytes, path: "s").forEachItem { items.append($0) }
        #expect(try Self.itemsInPlace(SnapshotFile(bytes: bytes, path: "s")) == items)
        return items
    }

    /// The items as ``SnapshotFile/forEachItem(entriesInPlace:_:)`` gives
    /// them, each entry copied out of its chunk; until `body` or the file
    /// throws, into `read`. Checks that entries of one chunk share its
    /// bytes, and that the chunks' numbers never go back.
    static func itemsInPlace(_ file: SnapshotFile, into read: inout [SnapshotItem]) throws {
        var lastChunk: (index: UInt64, bytes: [UInt8])?
        try file.forEachItem(entriesInPlace: { entry in
            if let last = lastChunk {
                #expect(last.index <= entry.chunkIndex)
                if last.index == entry.chunkIndex {
                    #expect(last.bytes.withUnsafeBytes { $0.baseAddress } == entry.chunk.withUnsafeBytes { $0.baseAddress }, "a chunk's entries share its bytes")
                }
            }
            lastChunk = (entry.chunkIndex, entry.chunk)
            read.append(.entry(table: entry.table, key: Array(entry.chunk[entry.key]), value: Array(entry.chunk[entry.value])))
        }, { read.append($0) })
    }

    static func itemsInPlace(_ file: SnapshotFile) throws -> [SnapshotItem] {
        var read: [SnapshotItem] = []
        try itemsInPlace(file, into: &read)
        return read
    }

    /// The worked example of SnapshotFormat.md, byte for byte.
    @Test func articleExampleBytesAreWhatTheWriterWrites() throws {
        let bytes = try snapshotBytes { writer in
            try writer.addTable(id: 0, name: "t")
            try writer.addTableEncoding(table: 0, key: 1, value: 1)
            try writer.addEntry(table: 0, key: Array("k".utf8), value: Array("v".utf8))
            try writer.addIndexOrder(table: 0, index: "i", positions: [0])
        }
        #expect(bytes == [
            0x4C, 0x45, 0x4E, 0x53, 0x53, 0x4E, 0x41, 0x50, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0xF3, 0xA3, 0x8D, 0xA1, 0x15, 0x00, 0x00, 0x00, 0x15, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0xF1, 0x07, 0x5A, 0x6C, 0x01, 0x00, 0x01, 0x74, 0x04, 0x00, 0x01, 0x01, 0x02, 0x00, 0x01, 0x6B,
            0x01, 0x76, 0x06, 0x00, 0x01, 0x69, 0x00, 0x01, 0x00, 0x53, 0x4E, 0x41, 0x50, 0x45, 0x4E, 0x44,
            0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x23, 0x22, 0x2E, 0x63,
        ])
    }

    /// A snapshot goes to the disk in pieces while it is written, so its
    /// last sync is small; the pieces change nothing about what it holds, and
    /// the file keeps its temporary name until the caller renames it.
    @Test func largeSnapshotIsSyncedInPiecesAndReadsBackWhole() throws {
        let fileSystem = try makeSimulatedStore()
        let writer = try SnapshotWriter(fileSystem: fileSystem, path: "s/snap.tmp", generation: 2, lastLSN: 9, compression: false)
        var random = SeededGenerator.fromEnvironment("snapshotPieces")
        var expected: [SnapshotItem] = [.table(id: 0, name: "t")]
        try writer.addTable(id: 0, name: "t")
        let syncsBefore = fileSystem.syncCount(.durable)
        for index in 0..<3000 {
            let value = random.bytes(1000)
            expected.append(.entry(table: 0, key: Array("\(index)".utf8), value: value))
            try writer.addEntry(table: 0, key: Array("\(index)".utf8), value: value)
        }
        let piecesSynced = fileSystem.syncCount(.durable) - syncsBefore
        #expect(piecesSynced >= 2, "3 MB of entries is synced in 1 MiB pieces before finish")
        #expect(fileSystem.callCount(.writeback) >= 4)
        try writer.finish()
        #expect(try items(fileSystem.contents(of: "s/snap.tmp") ?? []) == expected)
    }

    @Test func manyItemsRoundTripAcrossCompressedChunks() throws {
        var random = SeededGenerator.fromEnvironment("snapshotRoundTrip")
        var expected: [SnapshotItem] = [.table(id: 0, name: "people"), .tableEncoding(table: 0, key: 3, value: 2),
                                        .table(id: 1, name: "orders")]
        for index in 0..<5000 {
            let value = index % 2 == 0 ? Array("person \(index) lives in Paris".utf8) : random.bytes(Int.random(in: 0..<300, using: &random))
            expected.append(.entry(table: UInt64(index % 2), key: Array("\(index)".utf8), value: value))
        }
        expected.append(.indexOrder(table: 0, index: "city", start: 0, positions: (0..<2500).map { UInt32($0 * 7 % 2500) }))
        expected.append(.rootEncoding(name: "settings", value: 1))
        expected.append(.root(name: "settings", value: Array("{\"theme\":\"dark\"}".utf8)))
        let bytes = try snapshotBytes { writer in
            for item in expected {
                switch item {
                case let .table(id, name): try writer.addTable(id: id, name: name)
                case let .entry(table, key, value): try writer.addEntry(table: table, key: key, value: value)
                case let .root(name, value): try writer.addRoot(name: name, value: value)
                case let .tableEncoding(table, key, value): try writer.addTableEncoding(table: table, key: key, value: value)
                case let .rootEncoding(name, value): try writer.addRootEncoding(name: name, value: value)
                case let .indexOrder(table, index, _, positions): try writer.addIndexOrder(table: table, index: index, positions: positions)
                }
            }
        }
        let file = try SnapshotFile(bytes: bytes, path: "s")
        #expect(file.chunkCount > 1)
        #expect(file.lastLSN == 5 && file.generation == 2)
        #expect(try items(bytes) == expected)
    }

    /// Chunks are read a wave at a time on every core; the items still come
    /// in order across the waves, and a malformed chunk, or a throw from the
    /// body, stops the reading where reading in order would.
    @Test func chunksReadSideBySideGiveTheirItemsAndTheirFailuresInOrder() throws {
        let entries = (0..<12_000).map { index in
            SnapshotItem.entry(table: 0, key: Array("\(index)".utf8), value: [UInt8](repeating: UInt8(index % 251), count: 200))
        }
        let bytes = try snapshotBytes(compression: false) { writer in
            try writer.addTable(id: 0, name: "t")
            for case let .entry(table, key, value) in entries { try writer.addEntry(table: table, key: key, value: value) }
        }
        let wave = Parallel.threads * SnapshotFile.chunksPerThread
        let file = try SnapshotFile(bytes: bytes, path: "s")
        #expect(file.chunkCount > 16 && (Parallel.threads > 2 || file.chunkCount > 2 * UInt64(wave)), "\(file.chunkCount) chunks")
        #expect(try items(bytes) == [.table(id: 0, name: "t")] + entries)

        // Chunk 20's fourth item made malformed, its checksums made good again.
        var starts: [Int] = [], offset = SnapshotFormat.headerSize, itemsBefore = 0
        while starts.count <= 20 {
            starts.append(offset)
            let stored = Int(bytes.littleEndian(at: offset, as: UInt32.self))
            var cursor = ByteCursor(Array(bytes[(offset + SnapshotFormat.chunkHeaderSize)..<(offset + SnapshotFormat.chunkHeaderSize + stored)]))
            var read = 0
            while read < (starts.count <= 20 ? Int.max : 3), !cursor.isAtEnd, SnapshotFile.item(&cursor, version: file.version) != nil {
                read += 1
            }
            itemsBefore += read
            if starts.count == 21 { offset += SnapshotFormat.chunkHeaderSize + cursor.offset } else { offset += SnapshotFormat.chunkHeaderSize + stored }
        }
        var damaged = bytes
        let chunk = starts[20], stored = Int(bytes.littleEndian(at: chunk, as: UInt32.self))
        damaged[offset] = 0xEE
        func storeLittleEndian(_ value: UInt32, at offset: Int) {
            for index in 0..<4 { damaged[offset + index] = UInt8(truncatingIfNeeded: value >> UInt32(8 * index)) }
        }
        let start = chunk + SnapshotFormat.chunkHeaderSize
        storeLittleEndian(CRC32C.checksum(Array(damaged[start..<(start + stored)]), continuing: CRC32C.checksum(Array(damaged[chunk..<(chunk + 12)]))), at: chunk + 12)
        storeLittleEndian(CRC32C.checksum(Array(damaged[..<(damaged.count - 4)])), at: damaged.count - 4)
        var read: [SnapshotItem] = []
        #expect(throws: SnapshotError.badChunk(file: "s", offset: Int64(chunk))) {
            try SnapshotFile(bytes: damaged, path: "s").forEachItem { read.append($0) }
        }
        #expect(read.count == itemsBefore && read == Array(([.table(id: 0, name: "t")] + entries).prefix(itemsBefore)))
        // In place, the same items, then the same throw.
        var readInPlace: [SnapshotItem] = []
        #expect(throws: SnapshotError.badChunk(file: "s", offset: Int64(chunk))) {
            try Self.itemsInPlace(SnapshotFile(bytes: damaged, path: "s"), into: &readInPlace)
        }
        #expect(readInPlace == read)

        // A throw from the body ends the reading at once.
        struct Enough: Error {}
        var calls = 0
        #expect(throws: Enough.self) {
            try file.forEachItem { _ in
                calls += 1
                if calls == 5_000 { throw Enough() }
            }
        }
        #expect(calls == 5_000)
    }

    /// An entry whose value's length runs past its chunk is a malformed
    /// chunk, read whole or in place: the same items before it, then the
    /// same error, never a read past the chunk.
    @Test func anEntryLongerThanItsChunkIsMalformedEitherWay() throws {
        var bytes = try snapshotBytes(compression: false) { writer in
            try writer.addTable(id: 0, name: "t")
            try writer.addEntry(table: 0, key: [1], value: [10, 11])
            try writer.addEntry(table: 0, key: [2], value: [20])
        }
        let chunk = SnapshotFormat.headerSize, items = chunk + SnapshotFormat.chunkHeaderSize
        // The first entry's value length: after the table (kind, id, name's
        // length, name) and the entry's kind, table, key length and key.
        #expect(bytes[items + 4 + 4] == 2)
        bytes[items + 4 + 4] = 100
        func storeLittleEndian(_ value: UInt32, at offset: Int) {
            for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> UInt32(8 * index)) }
        }
        let stored = Int(bytes.littleEndian(at: chunk, as: UInt32.self))
        storeLittleEndian(CRC32C.checksum(Array(bytes[items..<(items + stored)]), continuing: CRC32C.checksum(Array(bytes[chunk..<(chunk + 12)]))), at: chunk + 12)
        storeLittleEndian(CRC32C.checksum(Array(bytes[..<(bytes.count - 4)])), at: bytes.count - 4)
        var whole: [SnapshotItem] = [], inPlace: [SnapshotItem] = []
        #expect(throws: SnapshotError.badChunk(file: "s", offset: Int64(chunk))) {
            try SnapshotFile(bytes: bytes, path: "s").forEachItem { whole.append($0) }
        }
        #expect(throws: SnapshotError.badChunk(file: "s", offset: Int64(chunk))) {
            try Self.itemsInPlace(SnapshotFile(bytes: bytes, path: "s"), into: &inPlace)
        }
        #expect(whole == [.table(id: 0, name: "t")] && inPlace == whole)
    }

    /// A wave takes chunks up to a number of bytes expanded, so that a
    /// snapshot of large items (a chunk holds a whole item) is not
    /// expanded many chunks at once; the first chunk goes however large.
    @Test func aWaveOfLargeChunksStaysWithinItsBytes() throws {
        let large = [UInt8](repeating: 7, count: 300_000)
        let bytes = try snapshotBytes { writer in
            try writer.addTable(id: 0, name: "t")
            for index in 0..<10 { try writer.addEntry(table: 0, key: [UInt8(index)], value: large) }
        }
        let file = try SnapshotFile(bytes: bytes, path: "s")
        let end = bytes.count - SnapshotFormat.trailerSize
        #expect(file.chunkCount >= 10)
        #expect(file.chunkStarts(from: SnapshotFormat.headerSize, end: end, count: 16, bytes: 1 << 20).count == 3)
        #expect(file.chunkStarts(from: SnapshotFormat.headerSize, end: end, count: 16, bytes: 1_000).count == 1)
        #expect(file.chunkStarts(from: SnapshotFormat.headerSize, end: end, count: 2, bytes: 1 << 30).count == 2)
        #expect(try items(bytes).count == 11)
    }

    @Test func aLongIndexOrderIsSplitIntoItemsThatContinueOneAnother() throws {
        let order = (0..<40_000).map { UInt32(($0 * 7919) % 40_000) }
        let bytes = try snapshotBytes { writer in
            try writer.addTable(id: 3, name: "t")
            try writer.addIndexOrder(table: 3, index: "a+b", positions: order)
        }
        let pieces = try items(bytes).compactMap { item -> (UInt64, [UInt32])? in
            guard case let .indexOrder(3, "a+b", start, positions) = item else { return nil }
            return (start, positions)
        }
        #expect(pieces.map(\.0) == [0, 16384, 32768])
        #expect(pieces.allSatisfy { $0.1.count <= SnapshotFormat.maxIndexOrderPositions })
        #expect(pieces.flatMap(\.1) == order)
        #expect(try SnapshotFile(bytes: bytes, path: "s").version == 3)
    }

    @Test func everyTruncationIsATypedErrorNeverACrash() throws {
        let bytes = try snapshotBytes { writer in
            try writer.addTable(id: 0, name: "t")
            for index in 0..<20 { try writer.addEntry(table: 0, key: [UInt8(index)], value: Array(repeating: 7, count: 40)) }
        }
        for cut in 0..<bytes.count {
            #expect(throws: SnapshotError.self, "cut at \(cut)") { try items(Array(bytes[..<cut])) }
        }
    }

    @Test func everyByteFlippedIsRejected() throws {
        let bytes = try snapshotBytes { writer in
            try writer.addTable(id: 0, name: "t")
            try writer.addEntry(table: 0, key: [1], value: Array("value".utf8))
            try writer.addRoot(name: "r", value: [1, 2, 3])
        }
        for index in bytes.indices {
            var damaged = bytes
            damaged[index] ^= 0x10
            #expect(throws: SnapshotError.self, "flip at \(index)") { try items(damaged) }
        }
    }

    @Test func headerIsValidatedMagicThenVersionThenChecksum() throws {
        let bytes = try snapshotBytes { try $0.addRoot(name: "r", value: [1]) }
        var newer = bytes; newer[8] = 9; newer[20] ^= 1
        #expect(throws: SnapshotError.unsupportedVersion(file: "s", version: 9)) { try SnapshotFile(bytes: newer, path: "s") }
        var badHeader = bytes; badHeader[20] ^= 1
        #expect(throws: SnapshotError.badHeader(file: "s")) { try SnapshotFile(bytes: badHeader, path: "s") }
        #expect(throws: SnapshotError.badMagic(file: "s")) { try SnapshotFile(bytes: Array("garbage, not a snapshot at all, no".utf8), path: "s") }
    }

    @Test func salvageKeepsEveryChunkThatVerifiesAroundADamagedOne() throws {
        let bytes = try snapshotBytes(compression: false) { writer in
            try writer.addTable(id: 0, name: "t")
            for index in 0..<3000 { try writer.addEntry(table: 0, key: Array("\(index)".utf8), value: [UInt8](repeating: UInt8(index % 251), count: 60)) }
        }
        let file = try SnapshotFile(bytes: bytes, path: "s")
        #expect(file.chunkCount >= 3)
        var damaged = bytes
        damaged[SnapshotFormat.headerSize + SnapshotFormat.targetChunkSize + 500] ^= 0xFF
        #expect(throws: SnapshotError.self) { try SnapshotFile(bytes: damaged, path: "s") }
        let salvaged = try SnapshotFile.salvage(bytes: damaged, path: "s")
        let entries = salvaged.items.filter { if case .entry = $0 { true } else { false } }
        #expect(entries.count > 1000 && entries.count < 3000, "\(entries.count) of 3000 entries kept")
        #expect(salvaged.droppedRanges.count == 1)
        #expect(salvaged.lastLSN == 5)
        let truncated = try SnapshotFile.salvage(bytes: Array(bytes[..<(bytes.count - 100)]), path: "s")
        #expect(truncated.items.count > 1000, "complete chunks of a snapshot cut short are kept")
        #expect(throws: SnapshotError.self) { try SnapshotFile.salvage(bytes: Array(bytes[..<20]), path: "s") }
    }
}
