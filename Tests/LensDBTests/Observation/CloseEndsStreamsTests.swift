import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// Closing a store finishes every stream of it, so that a `for await` over
/// one ends instead of waiting for commits that can no longer come.
@Suite struct CloseEndsStreamsTests {
    /// A `for await` over a sequence in a task of its own, counting what it
    /// yields and telling when the loop ended.
    final class Iteration: Sendable {
        let name: String
        let items = Locked(0)
        let ended = Locked(false)
        let task: Task<Void, Never>

        init<S: AsyncSequence & Sendable>(_ name: String, _ sequence: S) {
            self.name = name
            let items = items, ended = ended
            task = Task {
                do {
                    for try await _ in sequence { items.withLock { $0 += 1 } }
                } catch {}
                ended.withLock { $0 = true }
            }
        }

        var count: Int { items.withLock { $0 } }
        var hasEnded: Bool { ended.withLock { $0 } }

        /// Waits up to five seconds for `count` items.
        func wait(for count: Int) async {
            for _ in 0..<5000 where self.count < count { try? await Task.sleep(nanoseconds: 1_000_000) }
        }

        /// Waits up to five seconds for the loop to end; whether it did.
        func waitForEnd() async -> Bool {
            for _ in 0..<5000 where !hasEnded { try? await Task.sleep(nanoseconds: 1_000_000) }
            return hasEnded
        }

        deinit { task.cancel() }
    }

    /// The streams of one store, each with how many items it yields before
    /// any commit (a live query and a lens's values yield the current one).
    func streams(_ store: Store, _ people: Table<Person>, _ state: Lens<AppState>) -> [(Iteration, first: Int)] {
        [
            (Iteration("store changes", store.changes), 0),
            (Iteration("table changes", people.changes), 0),
            (Iteration("query values", people.query.filter(\.city == "Paris").values), 1),
            (Iteration("query count", people.query.countValues), 1),
            (Iteration("graph values", people.query.graphValues), 1),
            (Iteration("lens values", state.values), 1),
            (Iteration("lens changes", state.lens(\.theme).changes), 0),
        ]
    }

    @Test func closingTheStoreEndsEveryStreamOfIt() async throws {
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        var random = SeededGenerator(seed: 3)
        try people.put((1...20).map { Person.random($0, using: &random) })
        let state = try store.root(AppState.self, named: "app", default: AppState())
        let iterations = streams(store, people, state)
        for (iteration, first) in iterations { await iteration.wait(for: first) }
        // A commit each stream sees: they are live, not ended early.
        try store.write { tx in
            try tx[people].put(Person(id: 99, name: "Zoe", email: "z@example.com", city: "Paris", age: 30, score: 1, nickname: nil))
            try tx[state.lens(\.theme)].set("dark")
        }
        for (iteration, first) in iterations {
            await iteration.wait(for: first + 1)
            #expect(iteration.count == first + 1 && !iteration.hasEnded, "\(iteration.name): \(iteration.count) items")
        }
        store.close()
        for (iteration, _) in iterations {
            #expect(await iteration.waitForEnd(), "\(iteration.name) still waits after the close")
        }
    }

    /// A stream made on a closed store ends at once, after the current
    /// result where it yields one.
    @Test func aStreamOfAClosedStoreEndsAfterItsCurrentValue() async throws {
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        try people.put(Person(id: 1, name: "Ana", email: "a@example.com", city: "Paris", age: 30, score: 1, nickname: nil))
        let state = try store.root(AppState.self, named: "app", default: AppState())
        store.close()
        for (iteration, first) in streams(store, people, state) {
            #expect(await iteration.waitForEnd(), "\(iteration.name) waits on a closed store")
            #expect(iteration.count == first, "\(iteration.name): \(iteration.count) items")
        }
    }
}
