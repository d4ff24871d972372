/// What ``Table/merge(_:matching:strategy:)`` does with local entities the
/// remote result lacks.
public enum MergeStrategy: Sendable, Equatable {
    /// Keeps them: the remote result added and changed entities only.
    case retainExtraLocalData
    /// Removes those that match the query: the remote result is the whole
    /// truth for what the query selects.
    case discardExtraLocalData
}

extension Table {
    /// Merges what a server returned for `query` into the table, in one
    /// transaction: every remote entity is put (an unchanged one writes
    /// nothing), and with ``MergeStrategy/discardExtraLocalData`` every local
    /// entity that matches `query` and is not in `remote` is removed. The
    /// query is evaluated on the transaction's version; its paging is ignored
    /// (the remote result is the whole answer). Observers see one commit, or
    /// none when nothing changed.
    ///
    /// - Returns: how many entities were put and removed (unchanged ones not counted).
    /// - Throws: the errors of ``TableTransaction/put(_:)-(T)`` and
    ///   ``Store/write(durability:_:)``; on a throw nothing changed.
    @discardableResult
    public func merge(_ remote: some Sequence<T>, matching query: Query<T>, strategy: MergeStrategy) throws -> (put: Int, removed: Int) {
        try store.write { tx -> (Int, Int) in
            var view = tx[self]
            var remoteIDs = Set<T.ID>()
            var put = 0
            for entity in remote {
                remoteIDs.insert(entity.id)
                let operations = view.transaction.operationCount
                try view.put(entity)
                if view.transaction.operationCount > operations { put += 1 }
            }
            var removed = 0
            if strategy == .discardExtraLocalData {
                var local = query
                local.source = .state(view.transaction.state)
                local.offsetCount = 0
                local.limitCount = nil
                local.afterEntity = nil
                for entity in try local.all() where !remoteIDs.contains(entity.id) {
                    try view.remove(entity.id)
                    removed += 1
                }
            }
            tx = view.transaction
            return (put, removed)
        }
    }
}
