/// What a live query compares to decide whether a result changed: each
/// result entity's identifier and the LSN of the commit that last changed
/// it, so entities need not be `Equatable`.
struct ResultSignature: Equatable, Sendable {
    var ids: [IndexValue] = []
    var lsns: [UInt64] = []

    init(_ candidates: [Candidate]) {
        ids = candidates.map(\.id)
        lsns = candidates.map(\.row.lsn)
    }

    init(count: Int) { lsns = [UInt64(count)] }
}

extension Query {
    /// The query's results now, then again after each commit that changes
    /// them: filter, order, offset, limit and `after` are applied anew on
    /// every committed version, so a page always equals what ``all()``
    /// returns on that version.
    ///
    /// - A commit that leaves the result the same (same entities, none
    ///   changed) emits nothing; results compare by identifier and the LSN
    ///   of each entity's last change.
    /// - A slow consumer gets the latest result, never a backlog, and never
    ///   one older than a result it has seen.
    /// - Ending or cancelling the iteration releases the observer.
    /// - Closing the store finishes the stream; one made on a closed store
    ///   yields the current result, then finishes.
    ///
    /// Thread-safety: iterate from any task. Results are computed on a
    /// serial queue of the table's (never on the committing thread, which
    /// returns without waiting for them), after the commit is visible, and
    /// only for commits
    /// that change an entity the filter holds for, before or after.
    /// With relationships (`including(_:from:_:)`),
    /// a change to an entity they reach emits too.
    public var values: AsyncStream<[T]> {
        guard inclusions.steps.isEmpty else {
            return observe(relatedTables: relatedTables) { query in
                let (graph, _, builder) = try query.buildGraph()
                return (graph.roots, ResultSignature(graph: builder.rows, roots: graph.roots.count, missing: graph.missing.count))
            }
        }
        return observe { query in
            let candidates = try query.execution().runCandidates()
            return (Self.entities(of: candidates), ResultSignature(candidates))
        }
    }

    /// ``count()``, live: see ``values``.
    public var countValues: AsyncStream<Int> {
        observe { query in
            let count = try query.count()
            return (count, ResultSignature(count: count))
        }
    }

    /// ``first()``, live: see ``values``.
    public var firstValues: AsyncStream<T?> {
        observe { query in
            let candidates = try query.limit(min(query.limitCount ?? 1, 1)).execution().runCandidates()
            return (candidates.first.map { Table<T>.entity($0.row) }, ResultSignature(candidates))
        }
    }

    /// ``grouped(by:)``, live: see ``values``.
    public func groupedValues<V: Hashable & Sendable>(by field: KeyPath<T, V> & Sendable) -> AsyncStream<[(key: V, entities: [T])]> {
        observe { query in
            let candidates = try query.execution().runCandidates()
            return (try query.grouped(Self.entities(of: candidates), by: field), ResultSignature(candidates))
        }
    }

    /// Runs `compute` on the current version, then on each committed version
    /// a change could affect, emitting its result when its signature changes.
    func observe<R: Sendable>(
        relatedTables: Set<String> = [], _ compute: @escaping @Sendable (Query<T>) throws -> (R, ResultSignature)
    ) -> AsyncStream<R> {
        let (stream, continuation) = AsyncStream<R>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let base = self
        let last = Locked<(lsn: UInt64, signature: ResultSignature?)>((0, nil))
        let emit: @Sendable (StoreState) -> Void = { version in
            var query = base
            query.source = .state(version)
            // A query that fails now (a negative limit) fails on every version: nothing to show.
            guard let (result, signature) = try? compute(query) else { return }
            last.withLock { last in
                guard last.signature == nil || version.lsn > last.lsn else { return }
                defer { last = (version.lsn, signature) }
                if last.signature != signature { continuation.yield(result) }
            }
        }
        let registry = table.store.liveRegistry(for: table.name, T.self)
        let (start, id) = registry.add(self, relatedTables: relatedTables) { transaction in emit(transaction.after) }
        emit(start)
        // After the current result, so a stream made on a closed store
        // yields it, then ends; through the registry's queue, so the
        // results of the commits the close delivered come first.
        table.store.finishOnClose(continuation, through: registry.afterPendingResults) { registry.remove(id) }
        return stream
    }
}
