/// An object a program keeps entities in (a view model, a cache) that a
/// ``ConsistencyManager`` keeps current: every entity nested anywhere in
/// ``consistentValue`` is replaced when a newer version of it is pushed.
///
/// The holder is not isolated to an actor, so the manager reads and writes
/// ``consistentValue`` on the thread that pushes (for ``ConsistencyManager/follow(_:options:)``,
/// the committing thread). Being `Sendable`, the class must make that safe
/// itself: keep the value behind a lock, or isolate the holder to the main
/// actor with ``MainActorConsistentHolder`` or to an actor of its own with
/// ``ActorConsistentHolder``.
///
/// ```swift
/// final class PersonCache: ConsistentHolder {
///     private let storage = Mutex<[Person]>([])
///     var consistentValue: [Person] {
///         get { storage.withLock { $0 } }
///         set { storage.withLock { $0 = newValue } }
///     }
/// }
/// ```
///
/// The setter must not call back into the manager that updates it: the
/// manager holds the holder's merge lock while it reads, rebuilds and writes
/// the value, so that two pushes never lose each other's changes.
public protocol ConsistentHolder: AnyObject, Sendable {
    /// What the holder holds: any `Codable` value; entities anywhere in it
    /// are found through its encoding.
    associatedtype Value: Codable & Sendable
    /// The held value; the manager reads it, and sets it only when a merge changed something.
    var consistentValue: Value { get set }
}

/// A ``ConsistentHolder`` isolated to the main actor (a view model): the
/// manager reads and writes ``consistentValue`` on the main actor.
///
/// ```swift
/// @MainActor final class PersonScreen: MainActorConsistentHolder {
///     var consistentValue: Person
///     init(_ person: Person) { consistentValue = person }
/// }
/// ```
///
/// A push enqueues the merge on the main actor and returns without waiting
/// for it; ``ConsistencyManager/waitForUpdates()`` waits. The merge applies
/// the newest version known when it runs, so merges that run out of order
/// still leave the newest version in place.
@MainActor
public protocol MainActorConsistentHolder: AnyObject, Sendable {
    /// What the holder holds (see ``ConsistentHolder/Value``).
    associatedtype Value: Codable & Sendable
    /// The held value, read and set on the main actor.
    var consistentValue: Value { get set }
}

/// A ``ConsistentHolder`` that is an actor: the manager reads and writes
/// ``consistentValue`` on the actor, as ``MainActorConsistentHolder`` does
/// on the main actor.
public protocol ActorConsistentHolder: Actor {
    /// What the holder holds (see ``ConsistentHolder/Value``).
    associatedtype Value: Codable & Sendable
    /// The held value, read and set on the actor.
    var consistentValue: Value { get set }
}

extension ActorConsistentHolder {
    /// Merges the newest versions of `keys` into the value, on the actor.
    func mergeConsistency(_ keys: Set<EntityKey>, from manager: ConsistencyManager) {
        if let merged = manager.merge(consistentValue, keys) { consistentValue = merged }
    }
}
