/// One committed transaction: its LSN, the versions before and after it, and
/// its operations. What live queries, change feeds, lens notifications and
/// the consistency manager are fed with.
public struct CommittedTransaction: Sendable {
    /// The transaction's LSN: its version's.
    public let lsn: UInt64
    /// The version it was applied to.
    public let before: StoreState
    /// The version it made.
    public let after: StoreState
    /// What it did, in order (values as committed).
    public let operations: [Operation]

    /// The tables it changed.
    public var tables: Set<String> {
        Set(operations.compactMap {
            switch $0 {
            case let .put(table, _, _), let .remove(table, _), let .declareTable(table, _): table
            default: nil
            }
        })
    }

    /// The root documents it changed.
    public var roots: Set<String> {
        Set(operations.compactMap {
            switch $0 {
            case let .setRoot(name, _), let .removeRoot(name), let .declareRoot(name, _), let .patchRoot(name, _, _): name
            default: nil
            }
        })
    }
}

/// Hands each commit, once published, to the store's observers: in commit
/// order, each exactly once, never before readers can see its version.
///
/// Commits are queued while the writers' lock is held (so in LSN order) and
/// only when someone observes, so a store nobody observes pays one load per
/// commit. Delivery runs on the thread of the commit that published the
/// version, under one lock, so observers see commits in order; an observer
/// must return quickly (hand the event to a stream or a queue).
final class CommitFeed: Sendable {
    struct State: Sendable {
        var pending: [CommittedTransaction] = []
        /// Each observer, with the LSN it starts after.
        var observers: [Int: (after: UInt64, observe: @Sendable (CommittedTransaction) -> Void)] = [:]
        var nextID = 0
    }

    private let state = Locked(State())
    /// Serializes deliveries; holds the LSN delivered last. (Not a
    /// `Locked<Void>`: ThreadSanitizer reports the accesses of a zero-sized
    /// value at the lock object's own address as a race.)
    private let delivery = Locked<UInt64>(0)
    /// Whether anyone observes: read on every commit, so kept apart; set
    /// under `state`'s lock, so that it always says what `observers` holds.
    private let observed = Locked(false)

    var isObserved: Bool { observed.withLock { $0 } }

    /// How many observers there are: for tests.
    var observerCount: Int { state.withLock { $0.observers.count } }

    /// Adds an observer; call with the writers' lock held, so that no commit
    /// is staged meanwhile and the observer sees every commit after `state`.
    func add(after lsn: UInt64, _ observer: @escaping @Sendable (CommittedTransaction) -> Void) -> Int {
        state.withLock { state in
            defer { state.nextID += 1 }
            // Commits queued for observers since removed, and published
            // since, are nobody's; those others observe are still theirs
            // (published, perhaps not delivered yet), and skipped for this one.
            if state.observers.isEmpty { state.pending.removeAll { $0.lsn <= lsn } }
            state.observers[state.nextID] = (lsn, observer)
            observed.withLock { $0 = true }
            return state.nextID
        }
    }

    func remove(_ id: Int) {
        state.withLock { state in
            state.observers[id] = nil
            if state.observers.isEmpty { observed.withLock { $0 = false } }
        }
    }

    /// Queues a commit staged under the writers' lock.
    func stage(_ transaction: CommittedTransaction) {
        state.withLock { $0.pending.append(transaction) }
    }

    /// Delivers every queued commit up to the newest published one
    /// (`published()`, asked again after each batch), in order.
    ///
    /// An observer that commits to the store (a consistent holder's setter)
    /// calls this again on its own thread: that call returns at once, and
    /// the delivery under way hands the commit on once the observer returns.
    func deliver(upTo published: () -> UInt64) {
        try? delivery.withLock(reentry: DeliveryUnderWay()) { (delivered: inout UInt64) throws(DeliveryUnderWay) in
            while true {
                let lsn = published()
                let (ready, observers) = state.withLock { state in
                    let count = state.pending.prefix { $0.lsn <= lsn }.count
                    defer { state.pending.removeFirst(count) }
                    return (Array(state.pending.prefix(count)), Array(state.observers.values))
                }
                guard !ready.isEmpty else { return }
                for transaction in ready {
                    for observer in observers where transaction.lsn > observer.after { observer.observe(transaction) }
                    delivered = transaction.lsn
                }
            }
        }
    }

    /// The delivery this thread is running will hand the commit on.
    private struct DeliveryUnderWay: Error {}
}

extension Store {
    /// Calls `observer` with every transaction committed after the version
    /// it returns, in commit order, once each is published. Returns that
    /// version (the one readers see now) and a token for
    /// ``removeCommitObserver(_:)``.
    ///
    /// From inside a write block of this store too: the observer then
    /// starts with that block's commit.
    func addCommitObserver(_ observer: @escaping @Sendable (CommittedTransaction) -> Void) -> (StoreState, Int) {
        writer.withLockOrHeld { side in addCommitObserver(holding: side, observer) }
    }

    /// ``addCommitObserver(_:)`` for a caller that holds the writers' side already.
    func addCommitObserver(holding side: WriterSide, _ observer: @escaping @Sendable (CommittedTransaction) -> Void) -> (StoreState, Int) {
        // A commit staged before anyone observed was not queued: wait
        // until it is published, so the observer starts after it. (A
        // failed store publishes nothing more, so nothing is missed.)
        try? waitForInFlightCommits(side)
        let version = current
        return (version, commitFeed.add(after: version.lsn, observer))
    }

    func removeCommitObserver(_ token: Int) {
        commitFeed.remove(token)
    }
}
