/// Tells each watched lens of a store when a commit changed its value.
///
/// One per store (a ``StoreAttachments`` attachment). It observes the
/// store's commit feed only while at least one lens is watched, so a store
/// nobody watches pays nothing for lenses. For each commit it reads which
/// members the operations changed (a whole root for a set or remove, the
/// member of a patch) and visits only the lenses filed on or under those
/// members in the root's ``LensTrie``; each compares its value in the new
/// version with the last it offered.
///
/// It runs on the thread of the commit that published the version, under
/// its lock, in commit order; a lens's evaluation reads memory and encodes
/// the lens's value, and never waits for its consumer.
final class LensNotifier: Sendable {
    private struct State {
        /// The newest version delivered (or the observer's starting version).
        var latest: StoreState?
        var tries: [String: LensTrie] = [:]
        var nextID = 0
        /// Lens evaluations so far: what tests count to see that a commit
        /// visits only the lenses on its path.
        var evaluations = 0
    }

    private let state = Locked(State())
    /// The commit observer's token while any lens is watched. Its lock
    /// serializes starting and stopping the observer; it is taken after
    /// the writers' lock (which starting needs, and which a watch started
    /// from inside a write block holds already), and delivery never takes it.
    private let observer = Locked<Int?>(nil)

    /// Files `watcher` for the lens `focus` of `store`, made from the
    /// version the notifier holds now, and starts observing commits if this
    /// is the first lens watched. Returns its identifier and the watcher.
    ///
    /// From inside a write block of `store` too.
    func watch<W: LensWatcher>(_ focus: some LensFocus, of store: Store, _ make: (StoreState) -> W) -> (Int, W) {
        while true {
            // Filed while the observer runs; `make` (which decodes the lens's
            // value) runs outside the writers' lock.
            let filed = observer.withLock { observer -> (Int, W)? in
                guard observer != nil else { return nil }
                return state.withLock { state in
                    let watcher = make(state.latest!)
                    let id = state.nextID
                    state.nextID += 1
                    state.tries[focus.rootName, default: LensTrie()].insert(watcher, id: id, at: focus.knownKeys().keys)
                    return (id, watcher)
                }
            }
            if let filed { return filed }
            // Started, unless another watch did meanwhile; an unwatch of the
            // last lens may stop it again before this one is filed: then again.
            store.writer.withLockOrHeld { side in
                observer.withLock { observer in
                    guard observer == nil else { return }
                    let (start, token) = store.addCommitObserver(holding: side) { [self] transaction in deliver(transaction) }
                    observer = token
                    state.withLock { state in
                        // A commit delivered meanwhile is newer than the start.
                        if (state.latest?.lsn ?? 0) < start.lsn || state.latest == nil { state.latest = start }
                    }
                }
            }
        }
    }

    /// Stops watching `id`; the last one stops the commit observer.
    func unwatch(_ id: Int, root: String, of store: Store) {
        observer.withLock { observer in
            let unwatched = state.withLock { state -> Bool in
                state.tries[root]?.remove(id)
                if state.tries[root]?.isEmpty == true { state.tries[root] = nil }
                guard state.tries.isEmpty else { return false }
                state.latest = nil
                return true
            }
            if unwatched, let token = observer {
                store.removeCommitObserver(token)
                observer = nil
            }
        }
    }

    /// How many lenses are watched, and how many evaluations commits have
    /// made so far: for tests.
    var counts: (watched: Int, evaluations: Int) {
        state.withLock { ($0.tries.values.reduce(0) { $0 + $1.count }, $0.evaluations) }
    }

    private func deliver(_ transaction: CommittedTransaction) {
        state.withLock { state in
            // A delivery that was under way when an earlier observer stopped.
            if let latest = state.latest, transaction.lsn <= latest.lsn { return }
            state.latest = transaction.after
            var evaluations = 0
            for (root, members) in Self.changedMembers(transaction) {
                state.tries[root]?.visit(members) { watcher in
                    evaluations += 1
                    watcher.evaluate(transaction.after)
                }
            }
            state.evaluations += evaluations
        }
    }

    /// The object keys of the members each root's operations changed; `[]`
    /// for a whole root.
    static func changedMembers(_ transaction: CommittedTransaction) -> [String: [[String]]] {
        var members: [String: [[String]]] = [:]
        for operation in transaction.operations {
            switch operation {
            case let .setRoot(name, _), let .removeRoot(name): members[name, default: []].append([])
            case let .patchRoot(name, keys, _): members[name, default: []].append(keys)
            case .put, .remove, .declareTable, .declareRoot: break
            }
        }
        return members
    }
}
