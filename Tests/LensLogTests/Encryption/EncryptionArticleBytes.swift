@_spi(Testing) @testable import LensLog
import LensTestSupport

/// The worked examples of the "Encryption at rest" article, built the way
/// the writers build them, with the article's key (bytes 0x00…0x1f) and
/// nonce salt 0x0123456789abcdef: the only inputs a writer would draw at random.
enum EncryptionArticleBytes {
    static let salt: UInt64 = 0x0123_4567_89AB_CDEF

    /// A v4 log of generation 1 holding one record, LSN 1, payload "hello", synced LSN 0.
    static func log() -> [UInt8] {
        let key = TestKeys.first
        var bytes = LogFileHeader(generation: 1, firstLSN: 1, encryption: key.encryption).encoded()
        let (stored, flags) = RecordFrame.store(Array("hello".utf8), compress: true)
        RecordFrame.append(
            to: &bytes, stored: stored, type: .transaction, flags: flags, lsn: 1, syncedLSN: 0,
            seed: RecordFrame.seed(generation: 1),
            sealing: RecordFrame.Sealing(cipher: key, generation: 1, nonce: (salt, 0)))
        return bytes
    }

    /// A v4 snapshot of generation 2 through LSN 1: table 0 "t" holding "k" = "v", uncompressed.
    static func snapshot() throws -> [UInt8] {
        let fileSystem = SimulatedFileSystem()
        let writer = try SnapshotWriter(
            fileSystem: fileSystem, path: "/example.snap", generation: 2, lastLSN: 1, compression: false, cipher: TestKeys.first)
        writer.useNonces(NonceSequence(salt: salt))
        try writer.addTable(id: 0, name: "t")
        try writer.addEntry(table: 0, key: Array("k".utf8), value: Array("v".utf8))
        try writer.finish()
        return fileSystem.contents(of: "/example.snap") ?? []
    }

    /// Rows of 16 bytes as the article prints them: offset, then hex.
    static func hexRows(_ bytes: [UInt8]) -> String {
        stride(from: 0, to: bytes.count, by: 16).map { start in
            let row = bytes[start..<min(start + 16, bytes.count)]
            let offset = String(start, radix: 16)
            return String(repeating: "0", count: 4 - offset.count) + offset + "  "
                + row.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined(separator: " ")
        }.joined(separator: "\n")
    }
}
