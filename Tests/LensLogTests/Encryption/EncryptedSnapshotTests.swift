@_spi(Testing) @testable import LensLog
import LensTestSupport
import Testing

/// Snapshot v4: chunks sealed in an envelope, bound to their snapshot,
/// their index and the final flag.
@Suite struct EncryptedSnapshotTests {
    /// A snapshot of three chunks or more (items past the target chunk size).
    func snapshot(cipher: (any PayloadCipher)? = TestKeys.first, entries: Int = 600) throws -> [UInt8] {
        let fileSystem = SimulatedFileSystem()
        let writer = try SnapshotWriter(fileSystem: fileSystem, path: "/s.snap", generation: 3, lastLSN: 40, cipher: cipher)
        try writer.addTable(id: 0, name: "t")
        for index in 0..<entries {
            let value = (0..<400).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
            try writer.addEntry(table: 0, key: Array("key \(index)".utf8), value: value)
        }
        try writer.finish()
        return fileSystem.contents(of: "/s.snap")!
    }

    /// Offsets and sizes of the chunks of an encrypted snapshot.
    func chunks(_ bytes: [UInt8]) -> [(offset: Int, size: Int)] {
        var offset = SnapshotFormat.encryptedHeaderSize, found: [(Int, Int)] = []
        while offset < bytes.count - SnapshotFormat.trailerSize {
            let size = SnapshotFormat.chunkHeaderSize + Int(bytes.littleEndian(at: offset, as: UInt32.self))
            found.append((offset, size))
            offset += size
        }
        return found
    }

    /// The trailer and whole-file checksum made to fit `bytes` (which end before the trailer).
    func withTrailer(_ body: [UInt8], chunks: UInt64, items: UInt64) -> [UInt8] {
        var bytes = body + SnapshotFormat.trailerMagic
        bytes.appendLittleEndian(chunks)
        bytes.appendLittleEndian(items)
        bytes.appendLittleEndian(CRC32C.checksum(bytes))
        return bytes
    }

    func items(_ bytes: [UInt8], cipher: (any PayloadCipher)? = TestKeys.first) throws -> Int {
        var count = 0
        try SnapshotFile(bytes: bytes, path: "/s.snap", cipher: cipher).forEachItem { _ in count += 1 }
        return count
    }

    @Test func encryptedSnapshotReadsBackEveryItem() throws {
        let bytes = try snapshot()
        #expect(chunks(bytes).count >= 3)
        #expect(try items(bytes) == 601)
    }

    /// A reading parses the chunks a wave at a time, on every core: each
    /// chunk opens with its own index, in every wave, not its place in the
    /// wave (which only a snapshot of one wave cannot tell apart).
    @Test func anEncryptedSnapshotOfSeveralWavesReadsBackInOrder() throws {
        let bytes = try snapshot(entries: 6_000)
        #expect(chunks(bytes).count > 2 * Parallel.threads * SnapshotFile.chunksPerThread)
        var keys: [String] = []
        try SnapshotFile(bytes: bytes, path: "/s.snap", cipher: TestKeys.first).forEachItem { item in
            if case let .entry(_, key, _) = item { keys.append(String(decoding: key, as: UTF8.self)) }
        }
        #expect(keys == (0..<6_000).map { "key \($0)" })
    }

    @Test func snapshotWithoutItsKeyThrowsEncryptionErrorBeforeReadingAChunk() throws {
        let bytes = try snapshot()
        let found = TestKeys.first.encryption
        #expect(throws: EncryptionError.keyRequired(file: "/s.snap", found: found)) { try items(bytes, cipher: nil) }
        #expect(throws: EncryptionError.wrongKey(file: "/s.snap", found: found.keyID, given: TestKeys.second.id)) {
            try items(bytes, cipher: TestKeys.second)
        }
        #expect(throws: EncryptionError.notEncrypted(file: "/s.snap", given: TestKeys.first.id)) {
            try items(try snapshot(cipher: nil), cipher: TestKeys.first)
        }
    }

    /// Cut after a chunk, trailer and checksum rewritten to fit: every
    /// checksum verifies, and the tag of the new last chunk, sealed as not
    /// final, says the snapshot was cut.
    @Test func snapshotCutAtAChunkBoundaryWithItsTrailerRewrittenFailsAuthentication() throws {
        let bytes = try snapshot()
        let parts = chunks(bytes)
        let cut = Array(bytes[..<(parts[parts.count - 1].offset)])
        let forged = withTrailer(cut, chunks: UInt64(parts.count - 1), items: 500)
        #expect(throws: SnapshotError.authenticationFailed(file: "/s.snap", offset: Int64(parts[parts.count - 2].offset))) {
            try items(forged)
        }
    }

    /// Two chunks swapped, every checksum still right: each is bound to its index.
    @Test func swappedChunksDoNotAuthenticate() throws {
        let bytes = try snapshot()
        let parts = chunks(bytes)
        let a = Array(bytes[parts[0].offset..<(parts[0].offset + parts[0].size)])
        let b = Array(bytes[parts[1].offset..<(parts[1].offset + parts[1].size)])
        var body = Array(bytes[..<parts[0].offset]) + b + a
        body += bytes[(parts[1].offset + parts[1].size)..<(bytes.count - SnapshotFormat.trailerSize)]
        let forged = withTrailer(body, chunks: UInt64(parts.count), items: 601)
        #expect(throws: SnapshotError.authenticationFailed(file: "/s.snap", offset: Int64(parts[0].offset))) { try items(forged) }
    }

    /// Salvage keeps every chunk that verifies and authenticates, at the
    /// index its nonce names, around one that was damaged.
    @Test func salvageKeepsTheChunksThatAuthenticate() throws {
        var bytes = try snapshot()
        let parts = chunks(bytes)
        flip(byteAt: parts[1].offset + parts[1].size / 2, in: &bytes)
        let salvaged = try SnapshotFile.salvage(bytes: bytes, path: "/s.snap", cipher: TestKeys.first)
        #expect(salvaged.droppedRanges.count == 1)
        #expect(salvaged.items.count > 300 && salvaged.items.count < 601)
        #expect(throws: EncryptionError.self) { try SnapshotFile.salvage(bytes: bytes, path: "/s.snap", cipher: TestKeys.second) }
    }

    /// A flipped bit in the cipher byte or key id is a bad header (the
    /// header checksum covers them), never a plain snapshot or another key.
    @Test func headerChecksumCoversCipherAndKeyID() throws {
        for offset in [12, 32, 39] {
            var bytes = try snapshot()
            flip(byteAt: offset, in: &bytes, mask: 1)
            #expect(throws: SnapshotError.badHeader(file: "/s.snap")) { try SnapshotFile(bytes: bytes, path: "/s.snap") }
        }
    }

    /// An empty encrypted snapshot still ends with a final chunk: its tag
    /// is what says nothing was cut.
    @Test func emptyEncryptedSnapshotHasOneFinalChunk() throws {
        let fileSystem = SimulatedFileSystem()
        let writer = try SnapshotWriter(fileSystem: fileSystem, path: "/e.snap", generation: 1, lastLSN: 0, cipher: TestKeys.first)
        try writer.finish()
        let snapshot = try SnapshotFile(bytes: fileSystem.contents(of: "/e.snap")!, path: "/e.snap", cipher: TestKeys.first)
        #expect(snapshot.chunkCount == 1)
        try snapshot.forEachItem { _ in Issue.record("an empty snapshot has no item") }
    }
}
