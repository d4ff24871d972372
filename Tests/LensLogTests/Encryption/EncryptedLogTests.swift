@_spi(Testing) @testable import LensLog
import LensTestSupport
import Testing

/// Log v4 at the reader: the key is checked against the header first, and
/// torn-tail vs corruption judgement needs no key.
@Suite struct EncryptedLogTests {
    /// A v4 log of `count` records, each synced before the next (every
    /// record proves the one before).
    func log(_ count: Int, generation: UInt64 = 5, cipher: any PayloadCipher = TestKeys.first) -> [UInt8] {
        var bytes = LogFileHeader(generation: generation, firstLSN: 1, encryption: cipher.encryption).encoded()
        var nonces = NonceSequence()
        for lsn in 1...UInt64(count) {
            let (stored, flags) = RecordFrame.store(Array("record \(lsn)".utf8), compress: true)
            RecordFrame.append(
                to: &bytes, stored: stored, type: .transaction, flags: flags, lsn: lsn, syncedLSN: lsn - 1,
                seed: RecordFrame.seed(generation: generation),
                sealing: RecordFrame.Sealing(cipher: cipher, generation: generation, nonce: nonces.next()))
        }
        return bytes
    }

    @Test func readerChecksTheKeyAgainstTheHeaderFirst() throws {
        let bytes = log(3)
        #expect(throws: LogError.encryption(.keyRequired(file: "l", found: TestKeys.first.encryption))) {
            try LogReader(bytes: bytes, path: "l", policy: .strict)
        }
        #expect(throws: LogError.encryption(.wrongKey(file: "l", found: TestKeys.first.id, given: TestKeys.second.id))) {
            try LogReader(bytes: bytes, path: "l", policy: .strict, cipher: TestKeys.second)
        }
        var plain = LogBytes()
        plain.append(Array("x".utf8))
        #expect(throws: LogError.encryption(.notEncrypted(file: "l", given: TestKeys.first.id))) {
            try LogReader(bytes: plain.bytes, path: "l", policy: .strict, cipher: TestKeys.first)
        }
    }

    /// Every cut of the log: the records before the cut and a torn tail
    /// (or a clean end at a record boundary), exactly as in a plain log.
    @Test func everyCutOfAnEncryptedLogIsATornTailOrACleanEnd() throws {
        let bytes = log(4)
        var ends: [Int] = []
        var reader = try LogReader(bytes: bytes, path: "l", policy: .strict, cipher: TestKeys.first)
        while let record = try reader.next() { ends.append(Int(record.offset) + record.frameSize) }
        for cut in LogFormat.encryptedFileHeaderSize..<bytes.count {
            var cutReader = try LogReader(bytes: Array(bytes[..<cut]), path: "l", policy: .strict, cipher: TestKeys.first)
            var read = 0
            while try cutReader.next() != nil { read += 1 }
            #expect(read == ends.filter { $0 <= cut }.count, "cut at \(cut)")
            if ends.contains(cut) || cut == LogFormat.encryptedFileHeaderSize {
                #expect(cutReader.end == .clean(offset: Int64(cut)))
            } else {
                guard case .tornTail? = cutReader.end else { Issue.record("cut at \(cut): \(String(describing: cutReader.end))"); continue }
            }
        }
    }

    /// A plain record planted in an encrypted log verifies its checksum
    /// but is refused: nothing unauthenticated is read from an encrypted log.
    @Test func plainRecordInAnEncryptedLogIsRefused() throws {
        var bytes = log(2)
        RecordFrame.append(
            to: &bytes, stored: Array("forged".utf8), type: .transaction, flags: [], lsn: 3, syncedLSN: 2,
            seed: RecordFrame.seed(generation: 5))
        let (records, end, _, _) = readAllSealed(bytes)
        #expect(records.count == 2)
        #expect(end == .tornTail(offset: Int64(bytes.count - LogFormat.frameHeaderSize - 6), bytesDropped: Int64(LogFormat.frameHeaderSize + 6), reason: .authenticationFailed))
    }

    /// Nonces: a writer's salt is its own, so two writers of the same LSNs
    /// under one key (an open writing a tail again after a crash) never
    /// share a nonce.
    @Test func twoWritersOfTheSameLSNsNeverShareANonce() throws {
        let first = log(50), second = log(50)
        #expect(Set(nonces(first)).isDisjoint(with: nonces(second)))
        #expect(Set(nonces(first)).count == 50)
    }

    func nonces(_ bytes: [UInt8]) -> [[UInt8]] {
        var reader = try! LogReader(bytes: bytes, path: "l", policy: .strict, cipher: TestKeys.first)
        var found: [[UInt8]] = []
        while let record = try! reader.next() {
            let start = Int(record.offset) + LogFormat.frameHeaderSize + EncryptionFormat.keyIDSize
            found.append(Array(bytes[start..<(start + EncryptionFormat.nonceSize)]))
        }
        return found
    }

    func readAllSealed(_ bytes: [UInt8]) -> (records: [LogRecord], end: LogEnd?, dropped: [DroppedRange], error: LogError?) {
        var records: [LogRecord] = []
        do {
            var reader = try LogReader(bytes: bytes, path: "l", policy: .strict, cipher: TestKeys.first)
            while let record = try reader.next() { records.append(record) }
            return (records, reader.end, reader.dropped, nil)
        } catch {
            return (records, nil, [], error)
        }
    }
}
