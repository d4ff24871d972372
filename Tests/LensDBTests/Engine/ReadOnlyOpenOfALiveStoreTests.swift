import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LensTestSupport
import Testing
@testable import LensDB

/// A read-only open works while another store writes: over 1 MiB of log,
/// so the reader's window refills while the writer fills its preallocated
/// zeros with `.full` commits, each vouching for the one before.
@Suite struct ReadOnlyOpenOfALiveStoreTests {
    @Test func readOnlyOpensOfAStoreBeingWrittenFindNoDamage() throws {
        var options = StoreOptions()
        options.compactionLogRatio = nil
        try withTemporaryStore(options) { path, options in
            let writer = try Store(at: path, options: options)
            for index in 0..<12_000 {
                try writer.write(durability: .buffered) { tx in
                    tx.put(Array("value \(index) padding padding padding padding padding padding".utf8), for: Array("k\(index % 50)".utf8), in: "t")
                }
            }
            let stop = Locked(false)
            let committer = Thread {
                var index = 0
                while !stop.withLock({ $0 }) {
                    try? writer.write(durability: .full) { tx in tx.put(Array("live \(index)".utf8), for: Array("k\(index % 50)".utf8), in: "t") }
                    index += 1
                    // Paced: a committer as fast as it can go grows the log
                    // faster than a slow build (ThreadSanitizer) opens it,
                    // and each open then reads more than the one before.
                    usleep(300)
                }
            }
            committer.start()
            var readOnly = options
            readOnly.readOnly = true
            var failures: [String] = []
            for _ in 0..<25 {
                do {
                    let reader = try Store(at: path, options: readOnly)
                    if !reader.openStatistics.recovery.dropped.isEmpty { failures.append("dropped \(reader.openStatistics.recovery.dropped)") }
                    reader.close()
                } catch {
                    failures.append("\(error)")
                }
            }
            stop.withLock { $0 = true }
            while !committer.isFinished { usleep(1000) }
            writer.close()
            #expect(failures.isEmpty, "\(failures.count) of 25 read-only opens: \(failures.prefix(3))")
        }
    }
}
