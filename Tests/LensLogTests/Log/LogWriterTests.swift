import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LensTestSupport
import Testing
@testable import LensLog

@Suite struct LogWriterTests {
    let fileSystem = POSIXFileSystem()

    func withLog(_ options: LogWriterOptions = LogWriterOptions(), _ body: (LogWriter, String) throws -> Void) throws {
        let directory = try TemporaryDirectory("log")
        defer { directory.remove() }
        let path = directory.path + "/log-0000000000000001.log"
        let writer = try LogWriter.create(fileSystem: fileSystem, path: path, generation: 1, firstLSN: 1, options: options)
        try body(writer, path)
    }

    func readBack(_ path: String) throws -> (records: [LogRecord], end: LogEnd?) {
        var reader = try LogReader(fileSystem: fileSystem, path: path, policy: .strict)
        var records: [LogRecord] = []
        while let record = try reader.next() { records.append(record) }
        return (records, reader.end)
    }

    @Test func appendedRecordsReadBackInOrder() throws {
        try withLog { writer, path in
            let payloads = (0..<50).map { Array("payload \($0) ".utf8) + [UInt8](repeating: UInt8($0), count: $0 * 10) }
            for (index, payload) in payloads.enumerated() {
                #expect(try writer.append(payload, durability: index % 2 == 0 ? .full : .buffered) == UInt64(index + 1))
            }
            try writer.flush()
            #expect(writer.durableLSN == 50)
            writer.close()
            let (records, end) = try readBack(path)
            #expect(records.map(\.payload) == payloads)
            guard case .clean? = end else { Issue.record("expected a clean end, got \(String(describing: end))"); return }
        }
    }

    /// A record prepared ahead is stored as the log stores its payload,
    /// whichever compression it was prepared for.
    @Test func aPreparedRecordIsStoredAsItsLogStoresPayloads() throws {
        let payload = Array(String(repeating: "a compressible payload ", count: 200).utf8)
        for compression in [true, false] {
            var options = LogWriterOptions()
            options.compression = compression
            try withLog(options) { writer, path in
                for prepared in [true, false] {
                    let record = PreparedRecord(payload, compress: prepared)
                    #expect(record.payload == payload)
                    let lsn = try writer.enqueue(record)
                    try writer.wait(for: lsn, durability: .full)
                }
                writer.close()
                let (records, _) = try readBack(path)
                #expect(records.map(\.payload) == [payload, payload])
                #expect(records.map(\.compressed) == [compression, compression], "log compressing: \(compression)")
            }
        }
    }

    @Test func eightThreadsEachCommitAcknowledgedOnceAndOnDiskInLSNOrder() throws {
        try withLog { writer, path in
            let acknowledged = Locked<[UInt64: [UInt8]]>([:])
            runConcurrently(threads: 8) { thread in
                for index in 0..<100 {
                    let payload = Array("thread \(thread) commit \(index)".utf8)
                    do {
                        let lsn = try writer.append(payload, durability: .full)
                        acknowledged.withLock { map in
                            #expect(map[lsn] == nil, "LSN \(lsn) acknowledged twice")
                            map[lsn] = payload
                        }
                    } catch {
                        Issue.record("commit failed: \(error)")
                    }
                }
            }
            let statistics = writer.statistics
            writer.close()
            let (records, _) = try readBack(path)
            let acknowledgedMap = acknowledged.withLock { $0 }
            #expect(records.count == 800)
            #expect(records.map(\.lsn) == Array(1...800))
            for record in records { #expect(acknowledgedMap[record.lsn] == record.payload) }
            // Group commit: fewer syncs than commits whenever threads overlapped.
            #expect(statistics.syncs <= statistics.records)
            print("8 threads: \(statistics.records) records in \(statistics.batches) batches, \(statistics.syncs) syncs")
        }
    }

    @Test func flushIsABarrierForBufferedCommits() throws {
        var options = LogWriterOptions()
        options.backgroundSyncInterval = nil
        try withLog(options) { writer, _ in
            for index in 0..<10 { try writer.append([UInt8(index)], durability: .buffered) }
            #expect(writer.writtenLSN == 10)
            #expect(writer.durableLSN < 10)
            try writer.flush()
            #expect(writer.durableLSN == 10)
        }
    }

    @Test func backgroundIntervalSyncsBufferedCommits() throws {
        var options = LogWriterOptions()
        options.backgroundSyncInterval = .milliseconds(5)
        try withLog(options) { writer, _ in
            try writer.append([1], durability: .buffered)
            for _ in 0..<400 where writer.durableLSN < 1 { usleepMilliseconds(5) }
            #expect(writer.durableLSN == 1)
        }
    }

    @Test func oversizedRecordIsRefusedAndChangesNothing() throws {
        try withLog { writer, _ in
            #expect(throws: LogError.recordTooLarge(size: LogFormat.maxPayloadSize + 1)) {
                try writer.append([UInt8](repeating: 0, count: LogFormat.maxPayloadSize + 1), durability: .full)
            }
            let lsn = try writer.append([1], durability: .full)
            #expect(lsn == 1)
        }
    }

    @Test func preallocatedFileEndsCleanlyAtItsZeroTail() throws {
        var options = LogWriterOptions()
        options.preallocationChunk = 1 << 16
        try withLog(options) { writer, path in
            for index in 0..<100 { try writer.append([UInt8](repeating: UInt8(index), count: 1000), durability: .full) }
            let end = writer.endOffset
            let size = try fileSystem.openFile(at: path, mode: .readOnly).size()
            #expect(size > end, "the file is preallocated beyond its records")
            let (records, readEnd) = try readBack(path)
            #expect(records.count == 100)
            #expect(readEnd == .clean(offset: end))
            writer.close()
            #expect(try fileSystem.openFile(at: path, mode: .readOnly).size() == end, "close gives the zeros back")
        }
    }
}

func usleepMilliseconds(_ milliseconds: Int) {
    var time = timespec(tv_sec: 0, tv_nsec: milliseconds * 1_000_000)
    nanosleep(&time, nil)
}
