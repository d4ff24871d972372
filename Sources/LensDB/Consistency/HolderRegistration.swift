/// One registered holder, held weakly, and how a merge reaches it.
protocol HolderRegistration: AnyObject, Sendable {
    /// Whether the program still holds the holder.
    var isAlive: Bool { get }
    /// Whether this registers `object`.
    func registers(_ object: AnyObject) -> Bool
    /// Merges the newest versions of `keys` into the holder's value: at
    /// once for a nonisolated holder, or enqueued on its actor.
    func deliver(_ keys: Set<EntityKey>, from manager: ConsistencyManager)
}

/// A ``ConsistentHolder``: merged on the pushing thread.
final class NonisolatedRegistration<H: ConsistentHolder>: HolderRegistration {
    weak let holder: H?
    /// Serializes merges into this holder, so that two pushes racing never
    /// write back a value read before the other's merge. Holds nothing
    /// (an `Int`, not `Void`: ThreadSanitizer misreads a zero-sized value).
    private let merging = Locked(0)

    init(_ holder: H) { self.holder = holder }

    var isAlive: Bool { holder != nil }
    func registers(_ object: AnyObject) -> Bool { holder === object }

    func deliver(_ keys: Set<EntityKey>, from manager: ConsistencyManager) {
        merging.withLock { _ in
            guard let holder else { return }
            if let merged = manager.merge(holder.consistentValue, keys) { holder.consistentValue = merged }
        }
    }
}

/// A ``MainActorConsistentHolder``: merged in a task on the main actor.
final class MainActorRegistration<H: MainActorConsistentHolder>: HolderRegistration {
    weak let holder: H?

    init(_ holder: H) { self.holder = holder }

    var isAlive: Bool { holder != nil }
    func registers(_ object: AnyObject) -> Bool { holder === object }

    func deliver(_ keys: Set<EntityKey>, from manager: ConsistencyManager) {
        manager.enqueue { @MainActor [weak holder] in
            // The whole read-merge-write runs in one turn of the main actor:
            // nothing else can change the value in between.
            guard let holder else { return }
            if let merged = manager.merge(holder.consistentValue, keys) { holder.consistentValue = merged }
        }
    }
}

/// An ``ActorConsistentHolder``: merged in a task on the actor.
final class ActorRegistration<H: ActorConsistentHolder>: HolderRegistration {
    weak let holder: H?

    init(_ holder: H) { self.holder = holder }

    var isAlive: Bool { holder != nil }
    func registers(_ object: AnyObject) -> Bool { holder === object }

    func deliver(_ keys: Set<EntityKey>, from manager: ConsistencyManager) {
        manager.enqueue { [weak holder] in
            await holder?.mergeConsistency(keys, from: manager)
        }
    }
}
