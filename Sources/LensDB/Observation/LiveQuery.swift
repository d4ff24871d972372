import Observation

/// The latest result of a query, as an `@Observable` object: for views that
/// bind to it (SwiftUI and the like).
///
/// ```swift
/// @MainActor final class PeopleScreen {
///     let parisians = LiveQuery(people.query.filter(\.city == "Paris").sorted(by: \.name))
/// }
/// ```
///
/// ``results`` is set on the actor the `LiveQuery` was created on (the main
/// actor above), each time the query's result changes (see
/// ``Query/values``). Until the first result arrives it is empty. The
/// observation ends when the `LiveQuery` is released.
@Observable
public final class LiveQuery<T: Entity> {
    /// The query's latest result.
    public private(set) var results: [T] = []
    @ObservationIgnored private var task: Task<Void, Never>?

    /// Starts observing `query`; results arrive on `isolation`, the caller's actor.
    public init(_ query: Query<T>, isolation: isolated (any Actor)? = #isolation) {
        let values = query.values
        task = Task { [weak self] in
            _ = isolation
            for await results in values {
                guard let self else { return }
                self.results = results
            }
        }
    }

    deinit { task?.cancel() }
}
