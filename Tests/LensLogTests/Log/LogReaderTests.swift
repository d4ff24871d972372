import LensTestSupport
import Testing
@testable import LensLog

@Suite struct LogReaderTests {
    @Test func randomRecordsRoundTripCompressedOrNot() {
        var random = SeededGenerator.fromEnvironment("randomRecordsRoundTrip")
        var log = LogBytes(generation: 3, firstLSN: 1)
        var payloads: [[UInt8]] = []
        for index in 0..<200 {
            let size = [0, 1, 63, 64, 1000, 70_000][(index / 6) % 6] + Int.random(in: 0..<50, using: &random)
            let payload = index % 3 == 0
                ? [UInt8](repeating: UInt8(index & 0xFF), count: size)
                : random.bytes(size)
            payloads.append(payload)
            log.append(payload, compress: index % 2 == 0)
        }
        let result = readAll(log.bytes)
        #expect(result.error == nil)
        #expect(result.records.map(\.payload) == payloads)
        #expect(result.records.map(\.lsn) == Array(1...200))
        #expect(result.records.contains { $0.compressed })
        #expect(result.end == .clean(offset: Int64(log.bytes.count)))
    }

    @Test func logEndingExactlyAfterItsLastRecordIsACleanEnd() {
        let (log, _) = LogBytes.golden()
        #expect(readAll(log.bytes).end == .clean(offset: Int64(log.bytes.count)))
        var empty = LogBytes()
        #expect(readAll(empty.bytes).end == .clean(offset: Int64(LogFormat.fileHeaderSize)))
        empty.append([])
        #expect(readAll(empty.bytes).end == .clean(offset: Int64(empty.bytes.count)))
    }

    @Test func zeroFilledTailIsACleanEnd() {
        var (log, payloads) = LogBytes.golden()
        let end = log.bytes.count
        log.bytes += [UInt8](repeating: 0, count: 4096)
        let result = readAll(log.bytes)
        #expect(result.records.map(\.payload) == payloads)
        #expect(result.end == .clean(offset: Int64(end)))
    }

    @Test func logCutAtEveryByteReadsEveryWholeRecordAndReportsTheCutOneAsTorn() {
        let (log, payloads) = LogBytes.golden()
        let boundaries = log.offsets + [log.bytes.count]
        for cut in LogFormat.fileHeaderSize...log.bytes.count {
            let result = readAll(Array(log.bytes[..<cut]))
            let whole = boundaries.lastIndex { $0 <= cut }!
            #expect(result.error == nil, "cut at \(cut)")
            #expect(result.records.map(\.payload) == Array(payloads[..<whole]), "cut at \(cut)")
            if boundaries.contains(cut) {
                #expect(result.end == .clean(offset: Int64(cut)), "cut at \(cut)")
            } else if log.bytes[boundaries[whole]..<cut].allSatisfy({ $0 == 0 }) {
                // Only zero bytes of the cut record remain: that is zero fill.
                #expect(result.end == .clean(offset: Int64(boundaries[whole])), "cut at \(cut)")
            } else {
                let start = boundaries[whole]
                // Dropped bytes are counted up to the last non-zero one: zero fill is not data.
                let lastNonZero = log.bytes[..<cut].lastIndex { $0 != 0 }!
                #expect(result.end == .tornTail(
                    offset: Int64(start), bytesDropped: Int64(lastNonZero + 1 - start),
                    reason: cut - start < LogFormat.frameHeaderSize ? .truncatedFrameHeader : .truncatedPayload),
                    "cut at \(cut)")
            }
        }
    }

    @Test func headerCutShortIsATruncatedHeader() {
        let (log, _) = LogBytes.golden()
        for cut in 0..<LogFormat.fileHeaderSize {
            #expect(readAll(Array(log.bytes[..<cut])).error == .truncatedHeader(file: "test.log", size: Int64(cut)))
        }
    }

    @Test func everyByteFlippedIsNeverAWrongRecord() {
        let (log, payloads) = LogBytes.golden()
        var corruptions = 0, torn = 0
        for index in log.bytes.indices {
            for mask: UInt8 in [0x01, 0x80, 0xFF, 0x5A] {
                var damaged = log.bytes
                damaged[index] ^= mask
                let result = readAll(damaged)
                // Whatever comes back is an exact prefix of what was written.
                #expect(result.records.map(\.payload) == Array(payloads.prefix(result.records.count)), "flip \(index)")
                if index < LogFormat.fileHeaderSize {
                    #expect(result.error != nil, "header flip \(index) must fail")
                    continue
                }
                let damagedRecord = log.offsets.lastIndex { $0 <= index }!
                #expect(result.records.count == damagedRecord, "flip \(index)")
                switch (result.error, result.end) {
                case (.corruption(_, let offset, let lsn, _)?, nil):
                    corruptions += 1
                    #expect(offset == Int64(log.offsets[damagedRecord]))
                    #expect(lsn == 100 + UInt64(damagedRecord))
                case (nil, .tornTail?):
                    torn += 1
                    // Only the last record has no later record to prove it durable.
                    #expect(damagedRecord == payloads.count - 1, "flip \(index) in a synced record read as torn")
                default:
                    Issue.record("flip \(index): unexpected \(String(describing: result.error)) \(String(describing: result.end))")
                }
            }
        }
        #expect(corruptions > 0 && torn > 0)
    }

    @Test func salvageSkipsDamageAndReportsTheLostLSNs() {
        let (log, payloads) = LogBytes.golden()
        var damaged = log.bytes
        damaged[log.offsets[2] + LogFormat.frameHeaderSize + 3] ^= 0xFF
        let result = readAll(damaged, policy: .salvage)
        #expect(result.error == nil)
        #expect(result.records.map(\.payload) == Array(payloads[0..<2] + payloads[3...]))
        #expect(result.dropped == [DroppedRange(
            offset: Int64(log.offsets[2]), length: Int64(log.offsets[3] - log.offsets[2]),
            lostLSNs: 102..<103, reason: .checksumMismatch)])
        #expect(result.end == .clean(offset: Int64(damaged.count)))
    }

    @Test func unsyncedBatchTornInTheMiddleIsATornTailNotCorruption() {
        // Records 3–5 went out in one unsynced write; a power cut kept the
        // sectors holding 5 but not those holding 3.
        var log = LogBytes(generation: 1, firstLSN: 1)
        for lsn: UInt64 in 1...5 { log.append(Array("record \(lsn)".utf8), syncedLSN: lsn <= 3 ? lsn - 1 : 2) }
        var damaged = log.bytes
        for index in log.offsets[2]..<log.offsets[3] { damaged[index] = 0 }
        let result = readAll(damaged)
        #expect(result.error == nil)
        #expect(result.records.map(\.lsn) == [1, 2])
        if case .tornTail(let offset, _, .zeroedRegion)? = result.end {
            #expect(offset == Int64(log.offsets[2]))
        } else {
            Issue.record("expected a torn tail, got \(String(describing: result.end))")
        }
    }

    @Test func recordOfAnotherGenerationNeverValidates() {
        var old = LogBytes(generation: 1, firstLSN: 1)
        old.append(Array("stale".utf8))
        var bytes = LogFileHeader(generation: 2, firstLSN: 1).encoded()
        bytes += old.bytes[LogFormat.fileHeaderSize...]
        let result = readAll(bytes)
        #expect(result.records.isEmpty)
        #expect(result.end.map(isTornWithZeros) == true)
    }

    @Test func lsnGapFollowedBySyncedRecordsIsCorruption() {
        var log = LogBytes()
        log.append([1])
        log.append([2], syncedLSN: 2, lsn: 3)
        #expect(readAll(log.bytes).error == .corruption(file: "test.log", offset: Int64(log.offsets[1]), lsn: 2, reason: .lsnOutOfSequence))
    }

    @Test func headerIsValidatedMagicThenVersionThenChecksum() {
        let header = LogFileHeader(generation: 1, firstLSN: 1).encoded()
        var badMagic = header; badMagic[0] = 0x58; badMagic[8] = 9
        #expect(readAll(badMagic).error == .badMagic(file: "test.log"))
        var newer = header; newer[8] = UInt8(LogFormat.version + 1); newer[33] ^= 1
        #expect(readAll(newer).error == .unsupportedVersion(file: "test.log", version: LogFormat.version + 1))
        var badSum = header; badSum[20] ^= 1
        #expect(readAll(badSum).error == .badHeader(file: "test.log"))
        #expect(readAll(Array("not a log at all, just some text".utf8)).error == .badMagic(file: "test.log"))
    }

    @Test func absurdLengthIsRejectedBeforeAllocating() {
        var log = LogBytes()
        log.append([1, 2, 3])
        var damaged = log.bytes
        for index in 0..<4 { damaged[log.offsets[0] + index] = 0xFF }
        let result = readAll(damaged)
        #expect(result.records.isEmpty)
        #expect(result.end == .tornTail(offset: Int64(log.offsets[0]), bytesDropped: Int64(damaged.count - log.offsets[0]), reason: .lengthTooLarge))
    }

    @Test func recordOfANewerTypeIsUnsupported() {
        var log = LogBytes()
        log.append([1])
        let offset = log.offsets[0]
        log.bytes[offset + 4] = 9
        let seed = RecordFrame.seed(generation: 1)
        let crc = log.bytes.withUnsafeBytes { raw in
            CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[(offset + 28)...]),
                            continuing: CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + 24)]), continuing: seed))
        }
        for (index, byte) in withUnsafeBytes(of: crc.littleEndian, Array.init).enumerated() { log.bytes[offset + 24 + index] = byte }
        #expect(readAll(log.bytes).error == .unsupportedRecord(file: "test.log", offset: Int64(offset), lsn: 1, reason: .unknownRecordType(9)))
    }
}

private func isTornWithZeros(_ end: LogEnd) -> Bool {
    if case .tornTail = end { return true }
    return false
}

@Suite struct LogFormatArticleTests {
    /// The worked example in LogFormat.md, byte for byte.
    @Test func articleExampleBytesAreWhatTheWriterFrames() {
        var log = LogBytes(generation: 1, firstLSN: 1)
        log.append(Array("hello".utf8), compress: true, syncedLSN: 0)
        let expected: [UInt8] = [
            0x4C, 0x45, 0x4E, 0x53, 0x4C, 0x4F, 0x47, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x26, 0x63, 0x0E, 0x03, 0x05, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x22, 0x92, 0xB7, 0x45,
            0x68, 0x65, 0x6C, 0x6C, 0x6F,
        ]
        #expect(log.bytes == expected)
    }
}
