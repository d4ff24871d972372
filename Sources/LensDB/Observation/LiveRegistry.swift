import Dispatch

/// The live queries of one table in one store, behind one commit observer.
///
/// A commit wakes only the live queries it can affect: those whose filter
/// holds for a changed entity before or after the change. To find them
/// without visiting the rest, each query with an equality condition
/// (`\.city == "Paris"`) is filed under that field's value, and a commit
/// looks up the values its changed entities had and have; queries without
/// one are checked one by one.
///
/// The queries a commit wakes are computed on the registry's own serial
/// queue, not on the committing thread: a durable writer goes on to its
/// next commit (and its sync) while the results are worked out. An observer
/// woken again before its turn comes is computed once, on the newest
/// version (the conflation `values` promises).
final class LiveRegistry<T: Entity>: Sendable {
    struct Observer: Sendable {
        let filter: (@Sendable (RowObject) -> Bool)?
        let fieldValue: (@Sendable (RowObject) -> IndexValue)?
        let value: IndexValue?
        /// Other tables whose changes wake it (the targets of `including`).
        let relatedTables: Set<String>
        let notify: @Sendable (CommittedTransaction) -> Void
    }

    struct State: Sendable {
        var observers: [Int: Observer] = [:]
        /// Observers filed by an equality condition: field, then value.
        var filed: [FieldKey: [IndexValue: Set<Int>]] = [:]
        var fieldValues: [FieldKey: @Sendable (RowObject) -> IndexValue] = [:]
        var unfiled: Set<Int> = []
        /// Observers that also watch other tables.
        var watchingOthers: Set<Int> = []
        var nextID = 0
        /// Woken observers waiting for the queue, with the newest commit
        /// each must show.
        var due: [Int: CommittedTransaction] = [:]
        /// Whether a drain of `due` is scheduled or running.
        var draining = false
    }

    let table: String
    let store: Store
    private let state = Locked(State())
    /// The commit observer's token while the registry has observers. Its
    /// lock serializes starting and stopping that observer; it is taken
    /// after the writers' lock (which starting needs, and which a live
    /// query made inside a write block holds already), and never while
    /// `state`'s is held, which delivery takes.
    private let feed = Locked<Int?>(nil)
    private let queue: DispatchQueue

    init(table: String, store: Store) {
        self.table = table
        self.store = store
        queue = DispatchQueue(label: "LensDB.live-queries.\(table)")
    }

    /// Adds an observer of `query`; returns the version it starts after and its id.
    func add(_ query: Query<T>, relatedTables: Set<String>, notify: @escaping @Sendable (CommittedTransaction) -> Void) -> (StoreState, Int) {
        let filing = query.filter.flatMap { Self.filing($0.node) }
        let observer = Observer(filter: query.filter?.node.compiledForRows(), fieldValue: filing?.fieldValue, value: filing?.value,
                                relatedTables: relatedTables, notify: notify)
        let id = state.withLock { state -> Int in
            defer { state.nextID += 1 }
            state.observers[state.nextID] = observer
            if let filing {
                let field = FieldKey(filing.path)
                state.filed[field, default: [:]][filing.value, default: []].insert(state.nextID)
                state.fieldValues[field] = filing.fieldValue
            } else {
                state.unfiled.insert(state.nextID)
            }
            if !relatedTables.isEmpty { state.watchingOthers.insert(state.nextID) }
            return state.nextID
        }
        startFeed()
        return (store.current, id)
    }

    /// Starts the commit observer unless it runs. Called after an observer
    /// was added: a `remove` racing with it then finds that observer and
    /// leaves the feed running.
    private func startFeed() {
        if feed.withLock({ $0 != nil }) { return }
        store.writer.withLockOrHeld { side in
            feed.withLock { token in
                guard token == nil, !state.withLock({ $0.observers.isEmpty }) else { return }
                token = store.addCommitObserver(holding: side) { [weak self] transaction in self?.committed(transaction) }.1
            }
        }
    }

    func remove(_ id: Int) {
        let emptied = state.withLock { state -> Bool in
            guard state.observers.removeValue(forKey: id) != nil else { return false }
            state.unfiled.remove(id)
            state.watchingOthers.remove(id)
            for (path, byValue) in state.filed {
                for (value, ids) in byValue where ids.contains(id) {
                    state.filed[path]![value]!.remove(id)
                    if state.filed[path]![value]!.isEmpty { state.filed[path]![value] = nil }
                }
            }
            return state.observers.isEmpty
        }
        guard emptied else { return }
        feed.withLock { token in
            // An observer added since keeps the feed.
            guard let running = token, state.withLock({ $0.observers.isEmpty }) else { return }
            store.removeCommitObserver(running)
            token = nil
        }
    }

    var count: Int { state.withLock { $0.observers.count } }

    /// Runs `body` on the registry's queue, after the results of every
    /// commit delivered so far.
    func afterPendingResults(_ body: @escaping @Sendable () -> Void) {
        queue.async(execute: body)
    }

    /// The first equality condition of a filter's top-level conjunction.
    private static func filing(_ node: FilterNode) -> (path: AnyKeyPath, value: IndexValue, fieldValue: @Sendable (RowObject) -> IndexValue)? {
        for conjunct in node.conjuncts {
            if case let .comparison(comparison) = conjunct, let value = comparison.value, let fieldValue = comparison.fieldValue {
                return (comparison.keyPath, value, fieldValue)
            }
        }
        return nil
    }

    /// Wakes the observers `transaction` can affect.
    private func committed(_ transaction: CommittedTransaction) {
        let changes = transaction.rowChanges(in: table) ?? []
        let touched = transaction.tables
        let schedule = state.withLock { state -> Bool in
            var ids = Set<Int>()
            if !changes.isEmpty {
                ids = state.unfiled
                for (path, byValue) in state.filed {
                    let fieldValue = state.fieldValues[path]!
                    for change in changes {
                        for row in [change.old, change.new].compactMap({ $0 }) {
                            if let filed = byValue[fieldValue(row)] { ids.formUnion(filed) }
                        }
                    }
                }
            }
            var woken = ids.filter { id in
                guard let observer = state.observers[id] else { return false }
                guard let filter = observer.filter else { return true }
                return changes.contains { change in
                    change.old.map(filter) == true || change.new.map(filter) == true
                }
            }
            // Queries that include other tables wake when those change.
            for id in state.watchingOthers where !ids.contains(id) {
                if let observer = state.observers[id], !observer.relatedTables.isDisjoint(with: touched) { woken.insert(id) }
            }
            guard !woken.isEmpty else { return false }
            for id in woken { state.due[id] = transaction }
            defer { state.draining = true }
            return !state.draining
        }
        if schedule { queue.async { self.drain() } }
    }

    /// Computes the due observers until none is left; commits that wake
    /// more meanwhile are served by the same drain.
    private func drain() {
        while true {
            let batch = state.withLock { state -> [(Observer, CommittedTransaction)]? in
                guard !state.due.isEmpty else {
                    state.draining = false
                    return nil
                }
                defer { state.due = [:] }
                // An observer removed meanwhile is not computed.
                return state.due.compactMap { id, transaction in state.observers[id].map { ($0, transaction) } }
            }
            guard let batch else { return }
            for (observer, transaction) in batch { observer.notify(transaction) }
        }
    }
}

/// A key path as a dictionary key.
///
/// `@unchecked Sendable`: a key path is an immutable object, and the ones
/// here come from filters, whose key paths are `Sendable`; only its
/// identity and `==` are used.
struct FieldKey: Hashable, @unchecked Sendable {
    let path: AnyKeyPath
    init(_ path: AnyKeyPath) { self.path = path }
}

extension Store {
    /// The live-query registry of `table` for entities of type `T`.
    func liveRegistry<T: Entity>(for table: String, _ type: T.Type) -> LiveRegistry<T> {
        liveRegistries.withLock { registries in
            if let registry = registries[table] as? LiveRegistry<T> { return registry }
            let registry = LiveRegistry<T>(table: table, store: self)
            registries[table] = registry
            return registry
        }
    }
}
