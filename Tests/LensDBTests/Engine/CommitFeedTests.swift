import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// The commit feed that live queries, lenses and consistency build on:
/// every commit after the observer's starting version, once, in order.
@Suite struct CommitFeedTests {
    @Test func concurrentCommitsReachAnObserverOnceEachInOrder() throws {
        let store = try tableStore()
        try store.write { tx in tx.put([0], for: [0], in: "t") }
        let seen = Locked<[UInt64]>([])
        let (start, token) = store.addCommitObserver { transaction in
            seen.withLock { $0.append(transaction.lsn) }
            #expect(transaction.after.lsn == transaction.lsn && transaction.before.lsn == transaction.lsn - 1)
            #expect(transaction.tables == ["t"])
        }
        runConcurrently(threads: 4) { thread in
            for index in 0..<50 {
                // Errors end the run; the count below shows it.
                try? store.write { tx in tx.put([UInt8(index)], for: [UInt8(thread), UInt8(index)], in: "t") }
            }
        }
        store.removeCommitObserver(token)
        try store.write { tx in tx.put([1], for: [9, 9], in: "t") }
        #expect(seen.withLock { $0 } == Array((start.lsn + 1)...(start.lsn + 200)))
    }
}
