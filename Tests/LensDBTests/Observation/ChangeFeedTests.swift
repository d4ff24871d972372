import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// `table.changes`: one element per commit that touched the table, no gaps
/// and no duplicates while the consumer keeps up, and word of a gap instead
/// of unbounded memory when it does not.
@Suite struct ChangeFeedTests {
    func person(_ id: Int64, _ city: String) -> Person {
        Person(id: id, name: "P\(id)", email: "p\(id)@example.com", city: city, age: 30, score: 1)
    }

    @Test func eachCommitArrivesOnceWithItsInsertsUpdatesAndRemoves() async throws {
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        try people.put(person(1, "Paris"))
        var changes = people.changes.makeAsyncIterator()
        try people.put([person(2, "Lyon"), person(1, "Nice")])
        try store.write { tx in tx.put([1], for: [1], in: "other") }
        try store.write { tx in
            try tx[people].remove(2)
            try tx[people].put(person(3, "Brest"))
        }
        guard case let .commit(first)? = await changes.next(), case let .commit(second)? = await changes.next() else {
            Issue.record("expected two commits")
            return
        }
        #expect(first.inserted.map(\.id) == [2] && first.updated.map { [$0.old.city, $0.new.city] } == [["Paris", "Nice"]])
        #expect(second.removed.map(\.id) == [2] && second.inserted.map(\.id) == [3])
        #expect(second.lsn == first.lsn + 2, "the commit to another table is not in this feed")
    }

    @Test func aConsumerThatFallsBehindGetsResyncNeededAndThenLaterCommits() async throws {
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        var changes = people.changes(bound: 3).makeAsyncIterator()
        for id in Int64(1)...10 { try people.put(person(id, "Paris")) }
        var lsns: [UInt64] = []
        for _ in 0..<3 {
            if case let .commit(commit)? = await changes.next() { lsns.append(commit.lsn) }
        }
        #expect(lsns.count == 3, "the bound's worth of commits")
        try people.put(person(11, "Lyon"))
        guard case let .resyncNeeded(lastDelivered)? = await changes.next() else {
            Issue.record("expected word of the gap")
            return
        }
        #expect(lastDelivered == lsns.last)
        guard case let .commit(next)? = await changes.next() else { Issue.record("expected a commit"); return }
        #expect(next.inserted.map(\.id) == [11])
    }

    @Test func concurrentWritersNeverSkipOrRepeatACommit() async throws {
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        let stream = people.changes
        let start = store.current.lsn
        runConcurrently(threads: 4) { thread in
            for index in 0..<50 {
                // A failed put shows as a missing LSN below.
                try? people.put(Person(id: Int64(thread * 100 + index), name: "x", email: "t\(thread)-\(index)@e", city: "C", age: 1, score: 1))
            }
        }
        var lsns: [UInt64] = []
        for await change in stream {
            if case let .commit(commit) = change { lsns.append(commit.lsn) }
            if lsns.count == 200 { break }
        }
        #expect(lsns == Array((start + 1)...(start + 200)))
    }

    @Test func theStoreFeedShowsEveryTableAndRootAsDocuments() async throws {
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        var changes = store.changes.makeAsyncIterator()
        try store.write { tx in
            try tx[people].put(person(7, "Paris"))
            tx.put([0xFF], for: [1], in: "raw")
            tx.setRoot(.encoded(try ValueEncoder().encode(["theme": "dark"])), named: "settings", encoding: .valueFormat)
        }
        try people.remove(7)
        guard case let .commit(first)? = await changes.next(), case let .commit(second)? = await changes.next() else {
            Issue.record("expected two commits")
            return
        }
        #expect(first.changes.count == 3)
        #expect(first.changes[0].table == "people" && first.changes[0].key == 7 && first.changes[0].old == nil)
        #expect(first.changes[0].new?["city"] == "Paris")
        #expect(first.changes[1].key == .bytes([1]) && first.changes[1].new == .bytes([0xFF]))
        #expect(first.changes[2].root == "settings" && first.changes[2].new?["theme"] == "dark")
        #expect(second.changes.count == 1 && second.changes[0].new == nil && second.changes[0].old?["id"] == 7)
    }
}
