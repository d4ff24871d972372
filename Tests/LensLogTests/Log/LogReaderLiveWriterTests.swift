import Foundation
import LensTestSupport
import Testing
@_spi(Testing) @testable import LensLog

/// A log that a live writer fills in its preallocated zeros while it is
/// read: the first `switchAfter` reads see `before`, later ones `after`.
/// Both have one size, as writes into preallocated zeros change no size.
///
/// `@unchecked Sendable`: the read counter is behind a `Locked`, and the
/// rest is immutable.
final class FilledWhileReadFile: StoredFile, @unchecked Sendable {
    let path: String
    let before: [UInt8]
    let after: [UInt8]
    let switchAfter: Int
    private let reads = Locked(0)

    init(path: String, before: [UInt8], after: [UInt8], switchAfter: Int) {
        precondition(before.count == after.count)
        self.path = path
        self.before = before
        self.after = after
        self.switchAfter = switchAfter
    }

    func read(at offset: Int64, count: Int) throws -> [UInt8] {
        let bytes = reads.withLock { reads in
            defer { reads += 1 }
            return reads < switchAfter ? before : after
        }
        let start = min(Int(offset), bytes.count)
        return Array(bytes[start..<min(bytes.count, start + count)])
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws { throw StorageError(.ioError, .write, path: path) }
    func size() throws -> Int64 { Int64(before.count) }
    func sync(_ need: SyncNeed) throws {}
    func startWriteback(at offset: Int64, length: Int64) throws {}
    func truncate(to length: Int64) throws { throw StorageError(.ioError, .truncate, path: path) }
    func preallocate(at offset: Int64, length: Int64) throws { throw StorageError(.ioError, .preallocate, path: path) }
    func close() {}
}

@Suite struct LogReaderLiveWriterTests {
    /// 600 records (each vouching for the one before, as `.full` commits do)
    /// at the start of a 2 MiB preallocated log; the writer commits two more
    /// after the reader's first window was read. A whole read at either
    /// moment sees 600 or 602 records and a clean end; so must the windowed
    /// reader, never damage that the writer's newer record vouches for.
    @Test func recordsWrittenIntoPreallocatedZerosWhileReadingAreNotDamage() throws {
        var log = LogBytes(generation: 1, firstLSN: 1)
        for lsn in 1...600 { log.append(Array("record \(lsn) ".utf8) + [UInt8](repeating: UInt8(lsn % 251), count: 90), compress: false) }
        let size = 2 << 20
        let before = log.bytes + [UInt8](repeating: 0, count: size - log.bytes.count)
        log.append(Array("record 601".utf8), compress: false)
        log.append(Array("record 602".utf8), compress: false)
        let after = log.bytes + [UInt8](repeating: 0, count: size - log.bytes.count)

        for policy in [RecoveryPolicy.strict, .salvage] {
            let file = FilledWhileReadFile(path: "/live.log", before: before, after: after, switchAfter: 1)
            var reader = try LogReader(file: file, path: "/live.log", policy: policy)
            var lsns: [UInt64] = []
            var failure: LogError?
            do {
                while let record = try reader.next() { lsns.append(record.lsn) }
            } catch {
                failure = error
            }
            let summary = "\(policy): \(lsns.count) records, end \(String(describing: reader.end)), dropped \(reader.dropped), error \(String(describing: failure))"
            #expect(failure == nil, "\(summary)")
            #expect(reader.dropped.isEmpty, "\(summary)")
            #expect(lsns == Array(1...600) || lsns == Array(1...602), "\(summary)")
        }
    }

    /// The same damage on a file that does not change is still judged: a
    /// lost record that a later one vouches for is corruption.
    @Test func damageThatStaysAfterTheSecondReadIsStillCorruption() throws {
        var log = LogBytes(generation: 1, firstLSN: 1)
        for lsn in 1...600 { log.append(Array("record \(lsn) ".utf8) + [UInt8](repeating: UInt8(lsn % 251), count: 90), compress: false) }
        var bytes = log.bytes + [UInt8](repeating: 0, count: (2 << 20) - log.bytes.count)
        let lost = log.offsets[300]
        bytes.replaceSubrange(lost..<(lost + 8), with: repeatElement(0, count: 8))
        let file = FilledWhileReadFile(path: "/damaged.log", before: bytes, after: bytes, switchAfter: 0)
        var reader = try LogReader(file: file, path: "/damaged.log", policy: .strict)
        #expect(throws: LogError.self) { while try reader.next() != nil {} }
    }

    /// A hostile frame with the LSN past ``LogFormat/maxLSN``, where the
    /// header says the log starts, is not a record (nor an arithmetic
    /// overflow): no record could follow it, so the log ends there, torn.
    @Test func aRecordWithTheLSNPastTheLastEndsTheLogTorn() throws {
        var bytes = LogFileHeader(generation: 1, firstLSN: .max).encoded()
        RecordFrame.append(to: &bytes, stored: [1, 2, 3], type: .transaction, flags: [], lsn: .max, syncedLSN: 0,
                           seed: RecordFrame.seed(generation: 1))
        let frameSize = Int64(bytes.count - LogFormat.fileHeaderSize)
        for policy in [RecoveryPolicy.strict, .salvage] {
            var reader = try LogReader(bytes: bytes, path: "/hostile.log", policy: policy)
            #expect(try reader.next() == nil)
            #expect(reader.end == .tornTail(offset: Int64(LogFormat.fileHeaderSize), bytesDropped: frameSize, reason: .lsnOutOfSequence))
            #expect(reader.nextLSN == .max)
        }
    }
}
