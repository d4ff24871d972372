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

    /// A live query's results are computed on a queue of their own: the
    /// result of a commit made just before the close comes before the end,
    /// not after it, where it would be dropped. Without invariant checks,
    /// so the close follows the commit at once; a large table, so its
    /// result takes a while.
    @Test func aLiveQueryEndsOnTheResultOfTheLastCommit() async throws {
        let store = try tableStore(checkingInvariants: false)
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        try people.put((1...20_000).map { Person(id: $0, name: "P", email: "p\($0)@x", city: "Lyon", age: 30, score: 1, nickname: nil) })
        var results = people.query.values.makeAsyncIterator()
        #expect(await results.next()?.first?.city == "Lyon")
        try people.put(Person(id: 1, name: "P", email: "p1@x", city: "Paris", age: 30, score: 1, nickname: nil))
        store.close()
        var last: [Person] = []
        while let result = await results.next() { last = result }
        #expect(last.first?.city == "Paris", "the stream ended before the last commit's result")
    }

    /// A lens's value changed by the last commit, not yet taken when the
    /// store closes, comes before the end.
    @Test func aLensEndsOnTheValueOfTheLastCommit() async throws {
        let store = try tableStore(checkingInvariants: false)
        let theme = try store.root(AppState.self, named: "app", default: AppState()).lens(\.theme)
        var values = theme.values.makeAsyncIterator()
        var changes = theme.changes.makeAsyncIterator()
        #expect(await values.next() == "light")
        try theme.set("dark")
        store.close()
        var last: String?
        while let value = await values.next() { last = value }
        #expect(last == "dark", "the lens's values ended before the last commit's value")
        var lastChange: (old: String, new: String)?
        while let change = await changes.next() { lastChange = change }
        #expect(lastChange?.old == "light" && lastChange?.new == "dark", "the lens's changes ended before the last commit's change")
    }

    /// A commit acknowledged while the close runs publishes after its log
    /// wait, outside the writers' lock: the close hands it to the feeds
    /// before ending them, so a change feed has no gap.
    @Test func aCommitAcknowledgedWhileTheStoreClosesIsInTheFeed() async throws {
        var lost: [Int] = []
        for round in 0..<150 {
            let store = try tableStore(checkingInvariants: false)
            let people = try store.table(Person.self, named: "people", indexes: personIndexes)
            var feed = people.changes.makeAsyncIterator()
            let acknowledged = Locked(false), group = DispatchGroup()
            group.enter()
            Thread {
                let person = Person(id: Int64(round), name: "P", email: "e", city: "Paris", age: 1, score: 1, nickname: nil)
                if (try? people.put(person)) != nil { acknowledged.withLock { $0 = true } }
                group.leave()
            }.start()
            group.enter()
            Thread {
                usleep(UInt32(round % 5) * 20)
                store.close()
                group.leave()
            }.start()
            group.wait()
            var commits = 0
            while let change = await feed.next() { if case .commit = change { commits += 1 } }
            if acknowledged.withLock({ $0 }) && commits == 0 { lost.append(round) }
        }
        #expect(lost.isEmpty, "acknowledged commits missing from the feed in rounds \(lost)")
    }

    /// Two calls race to close: the second returns only once the first has
    /// ended the streams, as the first does.
    @Test func aSecondCloseReturnsOnlyOnceTheStreamsHaveEnded() throws {
        var early = 0
        for _ in 0..<8 {
            let store = try tableStore(checkingInvariants: false)
            let people = try store.table(Person.self, named: "people", indexes: personIndexes)
            let streams = (0..<2000).map { _ in people.changes }
            // Registered last, so it runs last.
            let ended = Locked(false)
            _ = store.onClose { ended.withLock { $0 = true } }
            let returnedEarly = Locked(0), group = DispatchGroup()
            for _ in 0..<2 {
                group.enter()
                Thread {
                    store.close()
                    if !ended.withLock({ $0 }) { returnedEarly.withLock { $0 += 1 } }
                    group.leave()
                }.start()
            }
            group.wait()
            withExtendedLifetime(streams) {}
            early += returnedEarly.withLock { $0 }
        }
        #expect(early == 0, "\(early) close calls returned before the streams ended")
    }
}
