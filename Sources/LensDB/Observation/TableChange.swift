/// What one commit did to one typed table: the entities it inserted, the
/// ones it changed (with their versions before and after) and the ones it
/// removed.
public struct TableCommit<T: Entity>: Sendable {
    /// The commit's LSN.
    public let lsn: UInt64
    public let inserted: [T]
    public let updated: [(old: T, new: T)]
    public let removed: [T]
}

/// One element of ``Table/changes``: a commit, or word that the consumer
/// fell too far behind and missed commits.
public enum TableChange<T: Entity>: Sendable {
    /// A commit that touched the table.
    case commit(TableCommit<T>)
    /// The consumer fell more than the feed's bound behind; the commits
    /// after `lastDelivered` up to some later one were not kept. Read the
    /// table again (its current version has them all); later commits follow.
    case resyncNeeded(lastDelivered: UInt64)
}

/// The rows one commit changed in one table, as the engine sees them:
/// identifier, row before (nil: inserted) and after (nil: removed).
struct RowChange: Sendable {
    let id: IndexValue
    let old: RowObject?
    let new: RowObject?
}

extension CommittedTransaction {
    /// The rows this commit changed in `table`, each once, in the order the
    /// transaction first touched them; nil when it did not touch the table
    /// or the table is not open with its type.
    func rowChanges(in table: String) -> [RowChange]? {
        guard let after = after.typed[table] else { return nil }
        let before = before.typed[table]
        var seen = Set<IndexValue>()
        var changes: [RowChange] = []
        for operation in operations {
            let key: [UInt8]
            switch operation {
            case let .put(name, bytes, _) where name == table: key = bytes
            case let .remove(name, bytes) where name == table: key = bytes
            default: continue
            }
            guard let id = after.schema.identifier(fromKeyBytes: key), seen.insert(id).inserted else { continue }
            let old = before?.row(id), new = after.row(id)
            if old == nil && new == nil { continue }
            changes.append(RowChange(id: id, old: old, new: new))
        }
        return changes
    }
}

extension TableCommit {
    init(lsn: UInt64, _ changes: [RowChange]) {
        var inserted: [T] = [], updated: [(old: T, new: T)] = [], removed: [T] = []
        for change in changes {
            switch (change.old, change.new) {
            case let (nil, new?): inserted.append(Table<T>.entity(new))
            case let (old?, new?): updated.append((Table<T>.entity(old), Table<T>.entity(new)))
            case let (old?, nil): removed.append(Table<T>.entity(old))
            case (nil, nil): break
            }
        }
        self.init(lsn: lsn, inserted: inserted, updated: updated, removed: removed)
    }
}

extension Table {
    /// Every commit that touches this table, from the one after the
    /// version current when iteration starts: one element per commit, in
    /// commit order, no gaps and no duplicates while the consumer keeps up.
    ///
    /// A consumer that falls more than `bound` commits behind gets
    /// ``TableChange/resyncNeeded(lastDelivered:)`` in place of the commits
    /// it missed, instead of the feed holding them in memory; later commits
    /// follow. Ending or cancelling the iteration stops the feed; closing
    /// the store finishes it.
    ///
    /// Thread-safety: iterate from any task. Elements are produced on the
    /// committing thread, after the commit is visible to readers.
    public func changes(bound: Int = 1024) -> AsyncStream<TableChange<T>> {
        let name = self.name
        return store.commitStream(bound: bound, resync: TableChange.resyncNeeded) { transaction in
            guard let changes = transaction.rowChanges(in: name), !changes.isEmpty else { return nil }
            return .commit(TableCommit(lsn: transaction.lsn, changes))
        }
    }

    /// ``changes(bound:)`` with the default bound of 1024 commits.
    public var changes: AsyncStream<TableChange<T>> { changes() }
}

extension Store {
    /// A stream of one element per commit `element` makes one for (nil:
    /// none), from the one after the current version, in commit order.
    /// Holds at most `bound` elements for a slow consumer; past that, it
    /// drops commits and, as soon as there is room, yields `resync` with the
    /// LSN of the last commit delivered, then goes on.
    func commitStream<Element: Sendable>(
        bound: Int, resync: @escaping @Sendable (UInt64) -> Element,
        _ element: @escaping @Sendable (CommittedTransaction) -> Element?
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .bufferingOldest(max(bound, 1)))
        let behind = Locked<(missed: Bool, lastDelivered: UInt64)>((false, 0))
        let (start, token) = addCommitObserver { transaction in
            guard let next = element(transaction) else { return }
            behind.withLock { state in
                if state.missed {
                    // Word of the gap goes first, as soon as there is room.
                    guard case .enqueued = continuation.yield(resync(state.lastDelivered)) else { return }
                    state.missed = false
                }
                if case .dropped = continuation.yield(next) { state.missed = true } else { state.lastDelivered = transaction.lsn }
            }
        }
        behind.withLock { $0.lastDelivered = start.lsn }
        finishOnClose(continuation) { [weak self] in self?.removeCommitObserver(token) }
        return stream
    }
}
