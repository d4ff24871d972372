import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// Live queries through the public API. A commit's emission is made before
/// the commit's `write` returns, so each test can commit, then read what
/// the observer got.
@Suite struct LiveQueryTests {
    func person(_ id: Int64, city: String, age: Int = 30, score: Double = 1) -> Person {
        Person(id: id, name: "P\(id)", email: "p\(id)@example.com", city: city, age: age, score: score)
    }

    @Test func aFilteredObserverDropsAnEntityWhenItsFieldChangesAndPicksItUpAgain() async throws {
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        try people.put([person(1, city: "Paris"), person(2, city: "Paris"), person(3, city: "Lyon")])
        var results = people.query.filter(\.city == "Paris").values.makeAsyncIterator()
        #expect(await results.next()?.map(\.id) == [1, 2], "the current result first")
        try people.put(person(2, city: "Lyon"))
        #expect(await results.next()?.map(\.id) == [1])
        try people.put(person(2, city: "Paris"))
        #expect(await results.next()?.map(\.id) == [1, 2])
    }

    @Test func removesAndPutsReSortByTheObserversOwnOrderAndEqualResultsEmitNothing() async throws {
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        try people.put([person(1, city: "Nice", score: 5), person(2, city: "Nice", score: 9)])
        var results = people.query.sorted(by: \.score, .descending).values.makeAsyncIterator()
        #expect(await results.next()?.map(\.id) == [2, 1])
        try people.put(person(1, city: "Nice", score: 10))
        #expect(await results.next()?.map(\.id) == [1, 2], "re-sorted")
        try people.put(person(1, city: "Nice", score: 10))  // equal: no commit at all
        try store.write { tx in tx.put([1], for: [1], in: "elsewhere") }  // another table: nothing
        try people.remove(2)
        #expect(await results.next()?.map(\.id) == [1], "the next emission is the removal")
    }

    @Test func aLateSubscriberGetsTheCurrentResultFirstAndCountsFirstsAndGroupsAreLive() async throws {
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        try people.put([person(1, city: "Nice"), person(2, city: "Lyon")])
        try people.put(person(3, city: "Nice"))
        var late = people.query.filter(\.city == "Nice").values.makeAsyncIterator()
        #expect(await late.next()?.map(\.id) == [1, 3])
        var counts = people.query.filter(\.city == "Nice").countValues.makeAsyncIterator()
        var firsts = people.query.sorted(by: \.age).firstValues.makeAsyncIterator()
        var groups = people.query.groupedValues(by: \.city).makeAsyncIterator()
        #expect(await counts.next() == 2)
        #expect(await firsts.next()??.id == 1)
        #expect(await groups.next()?.map(\.key) == ["Nice", "Lyon"])
        try people.put(person(4, city: "Nice", age: 5))
        #expect(await counts.next() == 3)
        #expect(await firsts.next()??.id == 4)
        #expect(await groups.next()?.map { $0.entities.count } == [3, 1])
    }

    @Test func sequentialCommitsArriveInCommitOrderEndingWithTheFinalState() async throws {
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        try people.put(person(1, city: "Paris", age: 0))
        let stream = people.query.values
        let writer = Task.detached {
            for age in 1...400 { try people.put(person(1, city: "Paris", age: age)) }
        }
        var seen: [Int] = []
        for await result in stream {
            seen.append(result[0].age)
            if result[0].age == 400 { break }
        }
        try await writer.value
        #expect(seen.last == 400)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 }, "in commit order, never older")
    }

    @Test func aPagedObserverStaysEqualToAllThroughRandomChanges() async throws {
        var random = SeededGenerator.fromEnvironment("pagedObserver")
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        try people.put((1...60).map { Person.random($0, using: &random) })
        let query = people.query.filter(\.age > 20).sorted(by: \.score).offset(10).limit(10)
        var results = query.values.makeAsyncIterator()
        var latest = await results.next()
        for _ in 0..<150 {
            let id = Int64.random(in: 1...120, using: &random)
            if Bool.random(using: &random) { try people.remove(id) } else { try people.put(Person.random(id, using: &random)) }
            let expected = try query.all()
            // A result the consumer has not taken yet may be one commit old
            // (a re-put of an entity in the page changes its LSN, not its id or
            // score): the newest arrives after it, never older than it.
            var taken = 0
            while latest?.map(\.id) != expected.map(\.id) || latest?.map(\.score) != expected.map(\.score), taken < 3 {
                latest = await results.next()
                taken += 1
            }
            #expect(latest?.map(\.id) == expected.map(\.id))
        }
    }

    @Test func endingTheIterationReleasesTheObserver() async throws {
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        try people.put(person(1, city: "Paris"))
        let registry = store.liveRegistry(for: "people", Person.self)
        do {
            var results = people.query.values.makeAsyncIterator()
            _ = await results.next()
            #expect(registry.count == 1)
        }
        let task = Task {
            for await _ in people.query.filter(\.city == "Lyon").values {}
        }
        try await Task.sleep(for: .milliseconds(20))
        task.cancel()
        _ = await task.value
        for _ in 0..<100 where registry.count > 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(registry.count == 0, "no observer left once every consumer ended")
        #expect(!store.commitFeed.isObserved, "and the store's commit feed has no observer")
    }

    /// Live queries of a table started at once, on several threads, share
    /// one commit observer, and release it when they all end.
    @Test func liveQueriesStartedAtOnceShareOneCommitObserver() async throws {
        for _ in 0..<20 {
            let store = try tableStore()
            let people = try store.table(Person.self, named: "people", indexes: personIndexes)
            let registry = store.liveRegistry(for: "people", Person.self)
            let (ready, streams) = (Locked(0), Locked<[AsyncStream<[Person]>]>([]))
            runConcurrently(threads: 4) { _ in
                ready.withLock { $0 += 1 }
                while ready.withLock({ $0 }) < 4 {}
                let stream = people.query.values
                streams.withLock { $0.append(stream) }
            }
            #expect(store.commitFeed.observerCount == 1)
            streams.withLock { $0 = [] }
            for _ in 0..<100 where registry.count > 0 { try await Task.sleep(for: .milliseconds(5)) }
            #expect(registry.count == 0)
            #expect(store.commitFeed.observerCount == 0)
        }
    }
}
