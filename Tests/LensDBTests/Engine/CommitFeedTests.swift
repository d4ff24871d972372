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

    /// A commit published but not yet delivered when an observer is added
    /// still reaches the observers that were there; the new one, which
    /// starts after it, does not get it.
    @Test func anObserverAddedBeforeAPublishedCommitIsDeliveredLeavesItToTheOthers() {
        let feed = CommitFeed()
        let (first, second) = (Locked<[UInt64]>([]), Locked<[UInt64]>([]))
        _ = feed.add(after: 0) { transaction in first.withLock { $0.append(transaction.lsn) } }
        feed.stage(CommittedTransaction(lsn: 1, before: StoreState(), after: StoreState(), operations: []))
        _ = feed.add(after: 1) { transaction in second.withLock { $0.append(transaction.lsn) } }
        feed.stage(CommittedTransaction(lsn: 2, before: StoreState(), after: StoreState(), operations: []))
        feed.deliver { 2 }
        #expect(first.withLock { $0 } == [1, 2])
        #expect(second.withLock { $0 } == [2])
    }

    /// While an observer is registered, the feed says someone observes,
    /// whatever other observers come and go meanwhile: a commit staged
    /// then is queued for it.
    @Test func theFeedIsObservedWhileAnyObserverIsRegistered() {
        let feed = CommitFeed()
        let unobserved = Locked(0)
        runConcurrently(threads: 3) { _ in
            for _ in 0..<200_000 {
                let id = feed.add(after: 0) { _ in }
                // Asked a few times: a remove racing with the add may clear
                // the flag a moment after it.
                for _ in 0..<8 where !feed.isObserved { unobserved.withLock { $0 += 1 } }
                feed.remove(id)
            }
        }
        #expect(unobserved.withLock { $0 } == 0)
        #expect(!feed.isObserved)
    }
}
