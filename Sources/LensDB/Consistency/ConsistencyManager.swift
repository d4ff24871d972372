/// Keeps the entities a program holds current: registered holders (view
/// models, caches) get every nested copy of an entity replaced when a newer
/// version is pushed, by the program or by the store's own commits.
///
/// ```swift
/// store.consistency.register(screen)              // held weakly
/// store.consistency.follow(people)                // every commit to people is pushed
/// store.consistency.push(personFromNetwork)       // or push by hand
/// let fresh = store.consistency.pull(staleCopy)   // the newest version of every entity in it
/// ```
///
/// An entity is found wherever a holder's `Codable` value keeps it — a
/// property, an optional, an array, an array of arrays, a dictionary value,
/// another entity — through the value's own `Codable` conformance: no
/// per-type code. Entities are matched by type and ``Entity`` `id`.
///
/// Each store has one manager, ``Store/consistency``; ``init()`` makes one
/// without a store.
///
/// Thread-safety: every method may be called from any thread (the
/// registry is behind a lock, and runs under ThreadSanitizer in CI).
/// Holders are updated where they live: see ``push(_:version:)-(Entity...,_)``.
///
/// Memory: the manager keeps the newest version pushed of each entity
/// (one per identity, shared with the copies that hold it) to order pushes
/// and to answer ``pull(_:)``; and one entry per registered holder, pruned
/// once the holder is released.
public final class ConsistencyManager: Sendable {
    /// What the manager knows of one entity.
    struct Known: Sendable {
        /// The newest version pushed, if one was.
        var entity: (any Entity)?
        /// The highest version pushed with one (a store LSN), if any was.
        var version: UInt64?
        /// Removed by a commit of a table followed with ``FollowOptions/dropRemoved``.
        var removed = false

        /// What a merge does with this entity's copies.
        var substitution: Substitution? {
            if removed { return .drop }
            return entity.map(Substitution.replace)
        }
    }

    /// The holders whose values are of one type, with the entity types that
    /// type has been seen to contain.
    struct Group: Sendable {
        var holders: [Int: any HolderRegistration] = [:]
        var entityTypes: Set<ObjectIdentifier> = []
    }

    struct State: Sendable {
        var groups: [ObjectIdentifier: Group] = [:]
        /// Which group and slot each registered object is in.
        var registered: [ObjectIdentifier: (group: ObjectIdentifier, slot: Int)] = [:]
        var known: [EntityKey: Known] = [:]
        var followed: [ObjectIdentifier: FollowedTable] = [:]
        /// Merges enqueued on actors and not yet run (``waitForUpdates()``).
        var pending: [Int: Task<Void, Never>] = [:]
        var finishedEarly: Set<Int> = []
        var nextID = 0
        var registrationsSinceSweep = 0
    }

    let state = Locked(State())

    /// A manager with no holders, following no table.
    public init() {}

    /// How many registered holders the program still holds. Prunes the
    /// released ones. O(number of registrations).
    public var holderCount: Int {
        state.withLock { state in
            Self.sweep(&state)
            return state.registered.count
        }
    }

    /// Waits until every merge enqueued on an actor (for
    /// ``MainActorConsistentHolder`` and ``ActorConsistentHolder``) before
    /// the call has run. Nonisolated holders need no waiting: they are
    /// updated before ``push(_:version:)-(Entity...,_)`` returns.
    public func waitForUpdates() async {
        let tasks = state.withLock { Array($0.pending.values) }
        for task in tasks { await task.value }
    }

    /// Runs `merge` in a task of its own, tracked for ``waitForUpdates()``.
    func enqueue(_ merge: @escaping @Sendable () async -> Void) {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        let task = Task { [weak self] in
            await merge()
            self?.state.withLock { state in
                if state.pending.removeValue(forKey: id) == nil { state.finishedEarly.insert(id) }
            }
        }
        state.withLock { state in
            if state.finishedEarly.remove(id) == nil { state.pending[id] = task }
        }
    }
}
