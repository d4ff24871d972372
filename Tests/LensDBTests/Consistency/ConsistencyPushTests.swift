import LensDB
import Testing

/// Push and pull through the public API, on managers without a store.
@Suite struct ConsistencyPushTests {
    let alice = person(1, "Alice")
    let bob = person(2, "Bob")

    func sixPositions(_ p: Person, other: Person) -> SixPositions {
        SixPositions(property: p, optional: p, array: [other, p], grid: [[p], [other, p]], byRole: ["lead": p, "other": other],
                     order: Order(id: 7, buyer: p, note: "n"), title: "t")
    }

    @Test func aPushReplacesTheEntityInAllSixNestedPositions() {
        let manager = ConsistencyManager()
        let holder = Holder(sixPositions(alice, other: bob))
        manager.register(holder)
        var renamed = alice
        renamed.name = "Alicia"
        manager.push(renamed)
        #expect(holder.value.property == renamed, "property")
        #expect(holder.value.optional == renamed, "optional")
        #expect(holder.value.array == [bob, renamed], "array")
        #expect(holder.value.grid == [[renamed], [bob, renamed]], "array of arrays")
        #expect(holder.value.byRole == ["lead": renamed, "other": bob], "dictionary value")
        #expect(holder.value.order.buyer == renamed, "entity inside an entity")
        #expect(holder.value == sixPositions(renamed, other: bob), "nothing else changed")
    }

    @Test func pushingAnOrderUpdatesAHolderThatHoldsOnlyItsPerson() {
        let manager = ConsistencyManager()
        let personOnly = Holder([alice, bob])
        manager.register(personOnly)
        var moved = alice
        moved.city = "Lyon"
        manager.push(Order(id: 9, buyer: moved, note: "new"))
        #expect(personOnly.value == [moved, bob])
    }

    @Test func arraysKeepTheirLengthAndOrder() {
        let manager = ConsistencyManager()
        let people = (1...6).map { person($0, "P\($0)") }
        let holder = Holder(people + [people[2]])
        manager.register(holder)
        var changed = people[2]
        changed.name = "changed"
        manager.push(changed)
        var expected = people + [changed]
        expected[2] = changed
        #expect(holder.value.count == 7)
        #expect(holder.value == expected)
    }

    @Test func theLastOccurrenceInPreOrderWins() {
        let manager = ConsistencyManager()
        let holder = Holder(alice)
        manager.register(holder)
        var first = alice, last = alice
        first.name = "first"
        last.name = "last"
        // Pre-order: the order itself, its buyer (first), then the second push's buyer (last).
        manager.push(Order(id: 1, buyer: first, note: ""), Order(id: 2, buyer: last, note: ""))
        #expect(holder.value.name == "last")
        // Within one entity too: the pushed Order replaces a held Order whole,
        // and its nested copy is the winning one.
        let orders = Holder([Order(id: 1, buyer: alice, note: "")])
        manager.register(orders)
        var newest = alice
        newest.name = "newest"
        manager.push([Order(id: 1, buyer: first, note: "x") as any Entity, newest])
        #expect(orders.value == [Order(id: 1, buyer: newest, note: "x")])
    }

    @Test func anOlderVersionDoesNotOverwriteANewerOne() {
        let manager = ConsistencyManager()
        let holder = Holder([alice])
        manager.register(holder)
        var v5 = alice, v3 = alice, unversioned = alice, v6 = alice
        v5.name = "v5"
        v3.name = "v3"
        unversioned.name = "from the network"
        v6.name = "v6"
        manager.push(v5, version: 5)
        manager.push(v3, version: 3)
        #expect(holder.value == [v5], "an older version is ignored")
        manager.push(v5, version: 5)
        manager.push(unversioned)
        #expect(holder.value == [unversioned], "an unversioned push counts as the newest")
        manager.push(v5, version: 5)
        #expect(holder.value == [unversioned], "and is not overwritten by the version it replaced")
        manager.push(v6, version: 6)
        #expect(holder.value == [v6], "a newer version replaces it")
        #expect(manager.pull([alice]) == [v6])
    }

    @Test func pullRefreshesAStaleCopyFromPushesAndFromAFollowedTable() throws {
        let manager = ConsistencyManager()
        var newAlice = alice
        newAlice.name = "new"
        manager.push(newAlice)
        let stale = sixPositions(alice, other: bob)
        #expect(manager.pull(stale) == sixPositions(newAlice, other: bob))
        #expect(manager.pull(Tag(id: "t", label: "l")) == Tag(id: "t", label: "l"), "a value with nothing known is returned as is")

        let store = try tableStore()
        let people = try store.table(Person.self, named: "people")
        var stored = alice
        stored.name = "stored"
        try people.put([stored, bob])
        store.consistency.follow(people)
        #expect(store.consistency.pull([alice, bob]) == [stored, bob], "the followed table's current version")
        #expect(store.consistency === store.consistency, "one manager per store")
    }

    @Test func aPushSkipsHoldersWhoseTypeCannotContainThePushedTypeWithoutReadingThem() {
        let manager = ConsistencyManager()
        let tags = Holder([Tag(id: "a", label: "A")])
        let people = Holder([bob])
        manager.register(tags)
        manager.register(people)
        let (tagReads, peopleReads) = (tags.reads, people.reads)
        manager.push(alice)
        #expect(tags.reads == tagReads, "a holder of tags is never read for a person")
        #expect(people.reads == peopleReads + 1, "a holder of people is read, and left as it was")
        #expect(people.value == [bob])
    }

    struct Screen: Codable, Sendable, Equatable {
        var selected: Person?
        var orders: [Order]
        var grid: [[Person]]
    }

    @Test func aHolderRegisteredEmptyLearnsItsTypesFromTheStaticTypesOfItsFields() {
        let manager = ConsistencyManager()
        let holder = Holder(Screen(selected: nil, orders: [], grid: []))
        manager.register(holder)
        holder.value = Screen(selected: alice, orders: [Order(id: 1, buyer: bob, note: "")], grid: [[bob]])
        var renamed = alice
        renamed.name = "renamed"
        manager.push(renamed)
        #expect(holder.value.selected == renamed, "a nil Person? said the type can hold a Person")
        var newBob = bob
        newBob.name = "newBob"
        manager.push(Order(id: 1, buyer: newBob, note: "changed"))
        #expect(holder.value == Screen(selected: renamed, orders: [Order(id: 1, buyer: newBob, note: "changed")], grid: [[newBob]]),
                "an empty [Order] said it can hold an Order")
        // A type that names orders only through empty containers.
        let byDay = Holder([String: [Order]]())
        manager.register(byDay)
        byDay.value = ["monday": [Order(id: 2, buyer: bob, note: "")]]
        manager.push(Order(id: 2, buyer: bob, note: "paid"))
        #expect(byDay.value["monday"]?.first?.note == "paid", "an empty [String: [Order]] said it can hold an Order")
    }

    struct Keyed: Codable, Sendable, Equatable {
        var byID: [Int64: Person]
        var byTag: [Tag: Int]?
        var tagged: [String: [Tag]]
    }

    @Test func dictionariesWithIntegerAndEntityKeysAreRebuiltToo() {
        let manager = ConsistencyManager()
        let tag = Tag(id: "t", label: "old")
        let holder = Holder(Keyed(byID: [1: alice, 2: bob], byTag: [tag: 3], tagged: ["x": [tag, tag]]))
        manager.register(holder)
        var renamed = alice
        renamed.name = "renamed"
        let relabelled = Tag(id: "t", label: "new")
        manager.push([renamed as any Entity, relabelled])
        #expect(holder.value == Keyed(byID: [1: renamed, 2: bob], byTag: [relabelled: 3], tagged: ["x": [relabelled, relabelled]]))
    }
}
