import LensDB
import LensTestSupport
import Testing

/// ``ConsistencyManager/follow(_:options:)``: holders fed by the store's commits.
@Suite struct ConsistencyFollowTests {
    @Test func followKeepsHoldersEqualToTheTableThroughRandomCommits() throws {
        var random = SeededGenerator.fromEnvironment("consistencyFollow")
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        let ids = Array(Int64(1)...20)
        try people.put(ids.map { Person.random($0, using: &random) })
        store.consistency.follow(people, options: .dropRemoved)
        let list = Holder(people.all())
        let single = ids.map { Holder(people[$0]) }
        let orders = Holder(ids.map { Order(id: $0, buyer: people[$0]!, note: "o\($0)") })
        store.consistency.register(list)
        store.consistency.register(orders)
        for holder in single { store.consistency.register(holder) }
        var alive = Set(ids)
        for step in 0..<300 {
            let roll = Int.random(in: 0..<10, using: &random)
            if roll == 0, alive.count > 5 {
                // Removed ids are never put again: a dropped copy does not come back.
                let id = alive.randomElement(using: &random)!
                alive.remove(id)
                try people.remove(id)
            } else {
                let count = Int.random(in: 1...4, using: &random)
                let changed = (0..<count).map { _ in Person.random(alive.randomElement(using: &random)!, using: &random) }
                try store.write { tx in try tx[people].put(changed) }
            }
            let expected = ids.compactMap { people[$0] }
            #expect(list.value == expected, "step \(step): the list equals the table")
            for (id, holder) in zip(ids, single) {
                #expect(holder.value == people[id], "step \(step): holder of \(id) equals people[\(id)]")
            }
            // A buyer is a non-optional position: a removed one keeps its copy.
            #expect(orders.value.filter { alive.contains($0.id) }.map(\.buyer) == expected, "step \(step): nested in another type")
            if list.value != expected { break }
        }
    }

    @Test func removalsLeaveHeldCopiesByDefaultAndDropRemovedDropsThem() throws {
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people")
        let (alice, bob) = (person(1, "Alice"), person(2, "Bob"))
        try people.put([alice, bob])
        let keeping = ConsistencyManager(), dropping = ConsistencyManager()
        keeping.follow(people)
        dropping.follow(people, options: .dropRemoved)
        let kept = Holder(SixPositions(property: alice, optional: alice, array: [bob, alice, bob], grid: [[alice, bob]],
                                       byRole: ["a": alice, "b": bob], order: Order(id: 1, buyer: alice, note: ""), title: ""))
        let dropped = Holder(kept.value)
        keeping.register(kept)
        dropping.register(dropped)
        let before = kept.value
        try people.remove(1)
        #expect(kept.value == before, "a removal leaves copies as they are")
        #expect(dropped.value.optional == nil, "optionals are set to nil")
        #expect(dropped.value.array == [bob, bob], "arrays lose it and keep the rest in order")
        #expect(dropped.value.grid == [[bob]])
        #expect(dropped.value.byRole == ["b": bob], "dictionaries lose it")
        #expect(dropped.value.property == alice && dropped.value.order.buyer == alice, "a non-optional position keeps its copy")
        #expect(dropping.pull([alice, bob]) == [bob], "pull drops it too")
        #expect(keeping.pull([alice, bob]) == [alice, bob])
    }

    @Test func aFollowContinuesAcrossAReopenWithoutTakingTheNewStoresCommitsForOlderOnes() throws {
        let fileSystem = SimulatedFileSystem()
        let manager = ConsistencyManager()
        var alice = person(1, "Alice")
        let holder = Holder([alice])
        manager.register(holder)
        do {
            let store = try tableStore(fileSystem)
            let people = try store.table(Person.self, named: "people")
            manager.follow(people)
            for round in 0..<5 {
                alice.age = round
                try people.put(alice)
            }
            #expect(holder.value == [alice])
            store.close()
        }
        let store = try tableStore(fileSystem)
        let people = try store.table(Person.self, named: "people")
        #expect(people[1] == alice, "the reopened store holds the last commit")
        manager.follow(people)
        alice.name = "after reopen"
        try people.put(alice)
        #expect(holder.value == [alice], "the reopened store's LSNs continue, so its commits are newer")
        #expect(manager.pull([person(1, "stale")]) == [alice], "pull reads the reopened table")
    }

    @Test func aCancelledFollowPushesNothingMore() throws {
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people")
        try people.put(person(1, "A"))
        let follow = store.consistency.follow(people)
        let holder = Holder(person(1, "A"))
        store.consistency.register(holder)
        try people.put(person(1, "B"))
        #expect(holder.value.name == "B")
        follow.cancel()
        follow.cancel()
        try people.put(person(1, "C"))
        #expect(holder.value.name == "B")
    }
}

/// A holder whose setter saves what it is given to another table of the
/// same store, as a cache of the last seen person would.
private final class SavingHolder: ConsistentHolder {
    private let storage: Locked<Person>
    let saved: Table<Person>

    init(_ person: Person, savingTo saved: Table<Person>) {
        storage = Locked(person)
        self.saved = saved
    }

    var consistentValue: Person {
        get { storage.withLock { $0 } }
        set {
            storage.withLock { $0 = newValue }
            try! saved.put(newValue)
        }
    }
}

@Suite struct ConsistencyWritingSetterTests {
    /// The setter commits from inside the delivery of the commit that
    /// changed it: that commit is delivered once the setter returns, in
    /// order, and every stream sees both.
    @Test func aHolderWhoseSetterWritesToTheStoreGetsItsCommitDeliveredAfterIt() async throws {
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people")
        let seen = try store.table(Person.self, named: "seen")
        try people.put(person(1, "A"))
        let manager = ConsistencyManager()
        manager.follow(people)
        let holder = SavingHolder(person(1, "A"), savingTo: seen)
        manager.register(holder)
        let changes = store.changes
        let before = store.current.lsn
        try people.put(person(1, "B"))
        #expect(holder.consistentValue.name == "B")
        #expect(seen[1]?.name == "B", "the setter's commit landed")
        try people.put(person(1, "C"))
        #expect(seen[1]?.name == "C")
        store.close()
        var lsns: [UInt64] = []
        for await change in changes { if case let .commit(commit) = change { lsns.append(commit.lsn) } }
        #expect(lsns == Array((before + 1)...(before + 4)), "each put, then its setter's commit, once each, in order")
    }
}
