import Foundation
import LensLog
import LensTestSupport
import Testing
@testable import LensDB

/// Snapshots store each index's order, and an open builds the index in it
/// instead of sorting, only when it is still the index's order.
@Suite struct IndexOrderTests {
    /// People with every index's keys repeated: ties are ordered by identifier.
    static func people(_ count: Int, seed: UInt64) -> [Person] {
        print("IndexOrderTests seed \(seed)")
        var random = SeededGenerator(seed: seed)
        return (1...count).map { Person.random(Int64($0) * 3, using: &random) }.shuffled(using: &random)
    }

    /// Puts `all` into the people table of a store on `fileSystem`, with
    /// every index, then compacts (so that the snapshot holds the orders)
    /// unless told not to, and closes it.
    static func storePeople(_ all: [Person], on fileSystem: SimulatedFileSystem, compacting: Bool = true) throws {
        let store = try tableStore(fileSystem)
        defer { store.close() }
        try store.table(Person.self, named: "people", indexes: personIndexes).put(all)
        if compacting { try store.compact() }
    }

    /// What the queries the planner serves from each index answer.
    static func answers(_ people: Table<Person>) throws -> [[Int64]] {
        [
            try people.query.filter(\.city == "Lyon").all().map(\.id),
            try people.query.filter(\.age >= 30 && \.age < 40).sorted(by: \.score, .descending).all().map(\.id),
            try people.query.filter(\.city == "Nice" && \.age > 50).all().map(\.id),
            try people.query.filter(\.city == "Paris").sorted(by: \.score).limit(7).all().map(\.id),
            try people.query.sorted(by: \.nickname).all().map(\.id),
            try people.query.sorted(by: \.email, .descending).limit(5).all().map(\.id),
        ]
    }

    /// The same answers, from every person filtered and sorted here.
    static func expected(_ all: [Person]) -> [[Int64]] {
        let byID = all.sorted { $0.id < $1.id }
        func sorted<V: Comparable>(_ people: [Person], _ key: (Person) -> V, descending: Bool = false) -> [Person] {
            people.enumerated().sorted { a, b in
                let (x, y) = (key(a.element), key(b.element))
                if x != y { return descending ? x > y : x < y }
                return a.offset < b.offset
            }.map(\.element)
        }
        return [
            byID.filter { $0.city == "Lyon" }.map(\.id),
            sorted(byID.filter { $0.age >= 30 && $0.age < 40 }, \.score, descending: true).map(\.id),
            byID.filter { $0.city == "Nice" && $0.age > 50 }.map(\.id),
            Array(sorted(byID.filter { $0.city == "Paris" }, \.score).prefix(7)).map(\.id),
            sorted(byID, { $0.nickname ?? "" }).map(\.id),
            Array(sorted(byID, \.email, descending: true).prefix(5)).map(\.id),
        ]
    }

    @Test func anOpenAfterACompactionBuildsEveryIndexInTheStoredOrder() throws {
        let fileSystem = SimulatedFileSystem()
        let all = Self.people(400, seed: 7)
        do {
            let store = try tableStore(fileSystem)
            let people = try store.table(Person.self, named: "people", indexes: personIndexes)
            try people.put(all)
            #expect(store.statistics.tables.first?.indexesInStoredOrder == 0, "built from puts")
            try store.compact()
            store.close()
        }
        for round in 0..<2 {
            let store = try tableStore(fileSystem)
            let people = try store.table(Person.self, named: "people", indexes: personIndexes)
            let statistics = try #require(store.statistics.tables.first)
            #expect(statistics.indexes == personIndexes.count)
            #expect(statistics.indexesInStoredOrder == personIndexes.count, "round \(round): no index was sorted")
            #expect(try Self.answers(people) == Self.expected(all), "round \(round)")
            // A compaction of a table opened with its type stores the orders again.
            try store.compact()
            store.close()
        }
    }

    /// An index added in code is sorted by the first open that declares
    /// it, which has a compaction store its order; later opens build it
    /// from that order, and compact nothing.
    @Test func anIndexAddedInCodeIsSortedOnceThenStoredByABackgroundCompaction() throws {
        let fileSystem = SimulatedFileSystem()
        let all = Self.people(Store.indexOrdersStoredFrom, seed: 9)
        var options = StoreOptions()
        options.fileSystem = fileSystem
        options.log.backgroundSyncInterval = nil
        let release1 = Array(personIndexes.prefix(2))
        do {
            let store = try Store(at: "/t.lensdb", options: options)
            try store.table(Person.self, named: "people", indexes: release1).put(all)
            try store.compact()
            store.close()
        }
        do {
            let store = try Store(at: "/t.lensdb", options: options)
            defer { store.close() }
            let people = try store.table(Person.self, named: "people", indexes: personIndexes)
            #expect(store.statistics.tables.first?.indexesInStoredOrder == release1.count)
            let deadline = ContinuousClock.now + .seconds(60)
            while store.statistics.compactions == 0 && ContinuousClock.now < deadline { usleep(2_000) }
            #expect(store.statistics.compactions == 1, "the open that sorted new indexes did not have their orders stored")
            #expect(try Self.answers(people) == Self.expected(all))
        }
        for round in 0..<2 {
            let store = try Store(at: "/t.lensdb", options: options)
            defer { store.close() }
            let people = try store.table(Person.self, named: "people", indexes: personIndexes)
            #expect(store.statistics.tables.first?.indexesInStoredOrder == personIndexes.count, "round \(round): an index was sorted again")
            #expect(try Self.answers(people) == Self.expected(all))
            usleep(50_000)
            #expect(store.statistics.compactions == 0, "round \(round): an open with every order stored compacted")
        }
    }

    @Test func aStoreOpenedWithoutTheTypeCarriesTheOrdersThroughItsCompactions() throws {
        let fileSystem = SimulatedFileSystem()
        let all = Self.people(200, seed: 8)
        try Self.storePeople(all, on: fileSystem)
        do {
            // As `logtool compact` does: bytes only, never the type.
            let store = try tableStore(fileSystem)
            try store.compact()
            store.close()
        }
        let store = try tableStore(fileSystem)
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        #expect(store.statistics.tables.first?.indexesInStoredOrder == personIndexes.count)
        #expect(try Self.answers(people) == Self.expected(all))
    }

    @Test func aChangeAfterTheSnapshotMakesTheOpenSort() throws {
        let fileSystem = SimulatedFileSystem()
        var all = Self.people(300, seed: 9)
        do {
            let store = try tableStore(fileSystem)
            let people = try store.table(Person.self, named: "people", indexes: personIndexes)
            try people.put(all)
            try store.compact()
            store.close()
        }
        do {
            // Replayed from the log before the table is opened with its type.
            let store = try tableStore(fileSystem)
            let people = try store.table(Person.self, named: "people", indexes: personIndexes)
            all[0].city = all[0].city == "Lyon" ? "Nice" : "Lyon"
            try people.put(all[0])
            try people.remove(all[1].id)
            all.remove(at: 1)
            store.close()
        }
        let store = try tableStore(fileSystem)
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        #expect(store.statistics.tables.first?.indexesInStoredOrder == 0)
        #expect(try Self.answers(people) == Self.expected(all))
    }

    @Test func aStoredOrderThatIsNotTheIndexsOrderIsSortedInsteadAndVerifyReportsIt() throws {
        let fileSystem = SimulatedFileSystem()
        let all = Self.people(150, seed: 10)
        try Self.storePeople(all, on: fileSystem)
        // The snapshot written again with the city order reversed and the
        // age order naming one row twice: checksums right, orders wrong.
        var rewritten = 0
        try IndexOrderHintTests.rewriteOrders(fileSystem) { index, positions in
            var order = positions
            if index == "city" { order.reverse(); rewritten += 1 }
            if index == "age" { order[1] = order[0]; rewritten += 1 }
            return order
        }
        #expect(rewritten == 2)

        let report = try StoreInspector(path: "/t.lensdb", fileSystem: fileSystem).verify()
        // Verify has no types to compare keys with: it finds the order that
        // names a row twice, and only the open finds the reversed one.
        #expect(report.problems.map(\.message).filter { $0.contains("stored order of index age of people") }.count == 1,
                "\(report.problems.map(\.message))")
        #expect(report.problems.count == 1)
        let store = try tableStore(fileSystem)
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        #expect(store.statistics.tables.first?.indexesInStoredOrder == personIndexes.count - 2)
        #expect(try Self.answers(people) == Self.expected(all))
    }

    /// Among entries of one key, an index is in identifier order: a stored
    /// order with two of them swapped is not the index's, though its keys
    /// ascend, and the open sorts that index instead.
    @Test func aStoredOrderWithTiesOutOfIdentifierOrderIsSortedInstead() throws {
        let fileSystem = SimulatedFileSystem()
        let all = Self.people(150, seed: 12)
        try Self.storePeople(all, on: fileSystem)
        let byID = all.sorted { $0.id < $1.id }
        var swapped = false
        try IndexOrderHintTests.rewriteOrders(fileSystem) { index, positions in
            guard index == "city" else { return positions }
            var order = positions
            // The first two rows of the smallest city: one key, two identifiers.
            #expect(byID[Int(order[0])].city == byID[Int(order[1])].city)
            order.swapAt(0, 1)
            swapped = true
            return order
        }
        #expect(swapped)
        let store = try tableStore(fileSystem)
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        #expect(store.statistics.tables.first?.indexesInStoredOrder == personIndexes.count - 1)
        #expect(try Self.answers(people) == Self.expected(all))
        try store.checkInvariants()
        store.close()
    }

    @Test func infoNamesTheStoredOrders() throws {
        let fileSystem = SimulatedFileSystem()
        do {
            let store = try tableStore(fileSystem)
            try store.table(Person.self, named: "people", indexes: [.on(\.city), .on(\.city, \.age)]).put(Self.people(20, seed: 11))
            try store.compact()
            store.close()
        }
        let info = try StoreInspector(path: "/t.lensdb", fileSystem: fileSystem).info()
        let snapshot = try #require(info.files.first { $0.role == .snapshot })
        #expect(snapshot.indexOrders == ["people.city", "people.city+age"])
        #expect(snapshot.formatVersion == SnapshotFormat.plainVersion)
    }

    @Test func statisticsAddUpEncodingsAndMemoryPerTable() throws {
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        let places = try store.table(Place.self, named: "places")
        let all = Self.people(100, seed: 12)
        try people.put(all)
        try places.put(Place(id: "x", label: "Lyon"))
        let encoder = ValueEncoder()
        let encoded = try all.reduce(0) { $0 + (try encoder.encode($1)).count }
        var statistics = store.statistics.tables
        #expect(statistics.map(\.name) == ["people", "places"])
        #expect(statistics[0].entities == 100 && statistics[0].encodedBytes == encoded)
        #expect(statistics[0].residentBytes > encoded, "boxes, the row tree and seven indexes")
        #expect(statistics[1].indexes == 0 && statistics[1].entities == 1)

        var changed = all[0]
        changed.name += "-with-a-longer-name"
        try people.put(changed)
        try people.remove(all[1].id)
        statistics = store.statistics.tables
        let expected = encoded - (try encoder.encode(all[0])).count + (try encoder.encode(changed)).count
            - (try encoder.encode(all[1])).count
        #expect(statistics[0].entities == 99 && statistics[0].encodedBytes == expected)
    }
}

/// A table without indexes, keyed by string.
private struct Place: Entity, Equatable {
    var id: String
    var label: String
}
