/// How ``ConsistencyManager/follow(_:options:)`` treats a followed table's commits.
public struct FollowOptions: OptionSet, Sendable {
    /// The options as bits.
    public let rawValue: Int
    /// The options whose bits are `rawValue`.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// A removed entity leaves holders too: its copies are removed from
    /// arrays and dictionaries, and optionals holding it are set to nil. A
    /// copy in a non-optional position stays as it was. Without this
    /// option, removals leave held copies as they are: a screen showing an
    /// entity that was just deleted keeps showing it until it lets it go,
    /// which is what most screens want while they navigate away.
    public static let dropRemoved = FollowOptions(rawValue: 1)
}

/// A table a manager follows, for ``ConsistencyManager/pull(_:)``: how to
/// read an entity's current version from it. Holds the store weakly: the
/// store owns its manager, never the other way round.
struct FollowedTable: Sendable {
    enum Lookup {
        case found(any Entity, lsn: UInt64)
        case absent
        /// The store is gone.
        case unavailable
    }

    let id: Int
    let dropsRemoved: Bool
    let current: @Sendable (any Hashable & Sendable) -> Lookup

    init<T: Entity>(id: Int, table: Table<T>, dropsRemoved: Bool) {
        self.id = id
        self.dropsRemoved = dropsRemoved
        let name = table.name
        current = { [weak store = table.store] id in
            guard let store else { return .unavailable }
            guard let id = id as? T.ID, let key = try? identifierValue(id),
                  let storage = store.current.typed[name], storage.schema.entityType == ObjectIdentifier(T.self)
            else { return .absent }
            guard let row = storage.row(key) else { return .absent }
            return .found(Table<T>.entity(row), lsn: row.lsn)
        }
    }
}

/// A ``ConsistencyManager/follow(_:options:)`` in effect. Discarding it
/// does not stop the follow, which lasts as long as the store, or until
/// ``cancel()``.
public final class ConsistencyFollow: Sendable {
    private weak let manager: ConsistencyManager?
    private weak let store: Store?
    private let token: Int
    private let type: ObjectIdentifier
    private let id: Int

    init(manager: ConsistencyManager, store: Store, token: Int, type: ObjectIdentifier, id: Int) {
        self.manager = manager
        self.store = store
        self.token = token
        self.type = type
        self.id = id
    }

    /// Stops pushing the table's commits; a commit being pushed when it is
    /// called may still reach holders. Safe to call more than once, from any thread.
    public func cancel() {
        store?.removeCommitObserver(token)
        manager?.state.withLock { state in
            if state.followed[type]?.id == id { state.followed[type] = nil }
        }
    }
}

extension ConsistencyManager {
    /// Pushes every commit to `table` to the holders, from the one after
    /// the version current now, in commit (LSN) order: each inserted or
    /// changed entity is pushed with its commit's LSN as its version, so a
    /// push of an older version never overwrites one from the store.
    ///
    /// Removals leave held copies as they are, unless `options` has
    /// ``FollowOptions/dropRemoved``. Entities nested in the table's
    /// entities are pushed too, except those of types whose own table is
    /// followed (that table's commits are their authority).
    ///
    /// Holders already registered keep what they hold until a commit
    /// changes it; ``pull(_:)`` refreshes a value at once, and reads the
    /// followed table's current version. One table per entity type: following
    /// a second table of the same type makes it the one ``pull(_:)`` reads.
    ///
    /// Nonisolated holders are updated on the committing thread, before
    /// the write that committed returns (as live queries are); holders on
    /// an actor get the merge enqueued. A setter may write to the store: its
    /// commit is delivered once the setter returns, after the one that set
    /// it (so a setter that commits on every change never stops).
    ///
    /// From inside a write block of the store too: the follow then starts
    /// with that block's commit.
    /// - Returns: the follow, to ``ConsistencyFollow/cancel()`` it.
    @discardableResult
    public func follow<T: Entity>(_ table: Table<T>, options: FollowOptions = []) -> ConsistencyFollow {
        let name = table.name, dropsRemoved = options.contains(.dropRemoved)
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        let followed = FollowedTable(id: id, table: table, dropsRemoved: dropsRemoved)
        // Registered before the observer, so nested copies of this type in
        // the first commits are already skipped.
        state.withLock { $0.followed[ObjectIdentifier(T.self)] = followed }
        let (_, token) = table.store.addCommitObserver { [weak self] transaction in
            guard let self, let changes = transaction.rowChanges(in: name), !changes.isEmpty else { return }
            self.committed(changes, T.self, lsn: transaction.lsn, dropsRemoved: dropsRemoved)
        }
        return ConsistencyFollow(manager: self, store: table.store, token: token, type: ObjectIdentifier(T.self), id: id)
    }

    /// Pushes one commit's changes to a followed table.
    private func committed<T: Entity>(_ changes: [RowChange], _ type: T.Type, lsn: UInt64, dropsRemoved: Bool) {
        var changed: [any Entity] = [], removed: [EntityKey] = []
        for change in changes {
            if let row = change.new {
                changed.append(Table<T>.entity(row))
            } else if let row = change.old {
                removed.append(EntityKey(Table<T>.entity(row)))
            }
        }
        publish(flatten(changed, skippingNestedFollowed: true), removed: removed, version: lsn, dropsRemoved: dropsRemoved)
    }
}

extension Store {
    /// The store's ``ConsistencyManager``: made on first use, one per store,
    /// released with it. Same as any manager, plus ``ConsistencyManager/follow(_:options:)``
    /// of this store's tables.
    ///
    /// ```swift
    /// store.consistency.register(viewModel)
    /// store.consistency.follow(people)
    /// ```
    public var consistency: ConsistencyManager {
        attachments.attachment { ConsistencyManager() }
    }
}
