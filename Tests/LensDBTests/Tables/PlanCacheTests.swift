import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// A query of a shape its table handle ran before reuses the way chosen
/// then, only where that way leaves nothing to check and reads no more
/// than any other: a walk under a limit, or an index range whose entries
/// fit the page. Values that make another way the right one plan afresh.
@Suite struct PlanCacheTests {
    static let reusedText = "the way an earlier query of this shape chose"

    /// 400 people in Paris over ages 20...29, 6 in Brest aged 20 or 21.
    static func people() throws -> (Store, Table<Person>, [Person]) {
        let store = try tableStore()
        let table = try store.table(Person.self, named: "people", indexes: MergedWalkTests.indexes)
        var everyone: [Person] = []
        for id in Int64(1)...406 {
            everyone.append(Person(id: id, name: "P\(id)", email: "p\(id)@example.com", city: id <= 400 ? "Paris" : "Brest",
                                   age: 20 + Int(id % (id <= 400 ? 10 : 2)), score: Double(id * 37 % 101) / 4, nickname: nil))
        }
        try table.put(everyone)
        return (store, table, everyone)
    }

    /// `city == c && age in 20...21`, by score descending, offset 2 limit 5.
    static func page(_ table: Table<Person>, _ city: String) -> Query<Person> {
        table.query.filter(\.city == city && \.age >= 20 && \.age <= 21).sorted(by: \.score, .descending).offset(2).limit(5)
    }

    static func expected(_ everyone: [Person], _ city: String) -> [Int64] {
        let matches = everyone.filter { $0.city == city && (20...21).contains($0.age) }
        let sorted = matches.sorted { $0.score != $1.score ? $0.score > $1.score : $0.id < $1.id }
        return Array(sorted.dropFirst(2).prefix(5).map(\.id))
    }

    @Test func aShapeReusesItsWalkOrItsRangeAsTheValuesCallFor() throws {
        let (store, table, everyone) = try Self.people()
        defer { store.close() }
        // Each step: the city asked for, the way its plan must take, and
        // whether that way is reused from an earlier query of the shape.
        let steps: [(city: String, way: String, reused: Bool)] = [
            // Six matches: the range fits the page; nothing is cached yet.
            ("Brest", "use index people.city+age+score", false),
            ("Brest", "use index people.city+age+score", true),
            // 80 matches: the cached range holds more than the page, so
            // the shape is planned afresh, and walks.
            ("Paris", "walk index people.city+age+score backwards, merging 2 runs", false),
            ("Paris", "walk index people.city+age+score backwards, merging 2 runs", true),
            // The walk is tried first, and does not apply to a range within
            // the page; the range cached before it does.
            ("Brest", "use index people.city+age+score", true),
        ]
        var reused = table.plans.reusedCount
        for (step, (city, way, isReused)) in steps.enumerated() {
            let plan = Self.page(table, city).explain()
            #expect(plan.contains(way), "step \(step): \(plan)")
            #expect(plan.contains(Self.reusedText) == isReused, "step \(step): \(plan)")
            let expected = Self.expected(everyone, city)
            #expect(!expected.isEmpty)
            #expect(try Self.page(table, city).all().map(\.id) == expected, "step \(step)")
            // explain() and all() each plan once; all() reuses what a
            // fresh explain() chose.
            #expect(table.plans.reusedCount - reused == (isReused ? 2 : 1), "step \(step)")
            reused = table.plans.reusedCount
        }
    }

    /// Threads running one shape with values that call for either way
    /// share the handle's cache while a writer commits; each answer must be
    /// its own version's.
    @Test func threadsShareTheCacheWhileAWriterCommits() throws {
        let (store, table, _) = try Self.people()
        defer { store.close() }
        let wrong = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 3) { thread in
            if thread == 0 {
                // Moves people between the cities, one commit at a time.
                for id in Int64(1)...60 {
                    guard var person = table[id] else { continue }
                    person.city = person.city == "Paris" ? "Brest" : "Paris"
                    do { try table.put(person) } catch { wrong.withLock { $0.append("put \(id): \(error)") } }
                }
                return
            }
            for round in 0..<150 {
                let city = (round + thread) % 2 == 0 ? "Paris" : "Brest"
                let snapshot = table.snapshot()
                let query = Query(table: table, source: .state(snapshot.state))
                let found = try? query.filter(\.city == city && \.age >= 20 && \.age <= 21)
                    .sorted(by: \.score, .descending).offset(2).limit(5).all().map(\.id)
                let expected = Self.expected(snapshot.all(), city)
                if found != expected { wrong.withLock { $0.append("thread \(thread) round \(round) \(city): \(String(describing: found)), expected \(expected)") } }
            }
        }
        #expect(wrong.withLock { $0 }.isEmpty)
        #expect(table.plans.reusedCount > 100)
    }

    @Test func aWayThatLeavesAConditionToCheckIsNeverReused() throws {
        let (store, table, everyone) = try Self.people()
        defer { store.close() }
        // `name` has no index: every way leaves it to check.
        let query = table.query.filter(\.city == "Paris" && \.name == "P10").sorted(by: \.score).limit(3)
        for _ in 0..<3 {
            #expect(!query.explain().contains(Self.reusedText))
            #expect(try query.all().map(\.id) == [10])
        }
        #expect(table.plans.reusedCount == 0)
        // Two cities fix a run each, and the range is exact: reused. Where
        // ages would multiply the cities' ranges past 64, the planner stops
        // fixing fields by them, so `age` is left to check, and the way is
        // not reused.
        let few = table.query.filter(.in(\.city, ["Paris", "Brest"]) && .in(\.age, [21, 22]))
        _ = few.explain()
        #expect(few.explain().contains(Self.reusedText))
        let cities = ["Paris", "Brest"] + (0..<70).map { "Town \($0)" }
        let many = table.query.filter(.in(\.city, cities) && .in(\.age, [21, 22]))
        #expect(!many.explain().contains(Self.reusedText), "\(many.explain())")
        #expect(try many.all().map(\.id) == everyone.filter { [21, 22].contains($0.age) }.map(\.id))
        // One score fixes the walk's run of city+score; two would
        // interleave within it, so the walk would leave them to check.
        let scores = [everyone[0].score, everyone[1].score]
        let one = table.query.filter(\.city == "Paris" && .in(\.score, [scores[0]])).sorted(by: \.score).limit(3)
        _ = one.explain()
        #expect(one.explain().contains("walk index people.city+score (= \"Paris\", "), "\(one.explain())")
        #expect(one.explain().contains(Self.reusedText))
        let two = table.query.filter(\.city == "Paris" && .in(\.score, scores)).sorted(by: \.score).limit(3)
        #expect(!two.explain().contains(Self.reusedText), "\(two.explain())")
        let byScore = everyone.filter { $0.city == "Paris" && scores.contains($0.score) }.sorted { ($0.score, $0.id) < ($1.score, $1.id) }
        #expect(try two.all().map(\.id) == byScore.prefix(3).map(\.id))
    }

    /// A merged walk reads at most offset + limit entries, but starts each
    /// run with a descent: for values whose runs hold few matches, reading
    /// them as a range and sorting them costs less, and is planned afresh.
    @Test func aMergedWalkIsNotReusedWhereItsMatchesCostLessAsARange() throws {
        let store = try tableStore(checkingInvariants: false)
        defer { store.close() }
        let table = try store.table(Person.self, named: "people", indexes: [.on(\.city), .on(\.city, \.score)])
        // 40 towns of 100 people, 40 of one.
        var everyone: [Person] = []
        for id in Int64(1)...4_040 {
            everyone.append(Person(id: id, name: "n", email: "e\(id)", city: id <= 4_000 ? "Big \(id % 40)" : "Small \(id % 40)",
                                   age: 1, score: Double(id % 97), nickname: nil))
        }
        try table.put(everyone)
        let big = (0..<40).map { "Big \($0)" }, small = (0..<40).map { "Small \($0)" }
        let page = { (cities: [String]) in table.query.filter(.in(\.city, cities)).sorted(by: \.score).limit(5) }
        _ = page(big).explain()
        #expect(page(big).explain().contains("walk index people.city+score, merging 40 runs"))
        #expect(page(big).explain().contains(Self.reusedText))
        // 40 matches: one run each would cost 40 descents.
        let plan = page(small).explain()
        #expect(!plan.contains(Self.reusedText), "\(plan)")
        #expect(plan.contains("use index people.city"), "\(plan)")
        let expected = everyone.filter { small.contains($0.city) }.sorted { ($0.score, $0.id) < ($1.score, $1.id) }.prefix(5)
        #expect(try page(small).all().map(\.id) == expected.map(\.id))
    }

    /// Past its capacity, a new shape empties the cache; a shape already
    /// in it is stored again without emptying it.
    @Test func aFullCacheEmptiesForANewShapeOnly() throws {
        let (store, table, _) = try Self.people()
        defer { store.close() }
        let storage = table.storage(in: store.current)
        let cache = PlanCache(capacity: 2)
        let byAge = { (city: String) in try table.query.filter(\.city == city && \.age == 21).limit(3).spec() }
        let inCity = try table.query.filter(\.city == "Paris").spec()
        let older = try table.query.filter(\.city == "Paris" && \.age >= 21).spec()
        func reused(_ spec: QuerySpec) -> Bool { cache.plan(spec, storage).reused }
        #expect(try !reused(byAge("Brest")) && !reused(inCity))
        #expect(try reused(byAge("Brest")) && reused(inCity))
        // 40 people in Paris are 21, more than the page: planned afresh,
        // and stored again under its shape, in the full cache.
        #expect(try !reused(byAge("Paris")))
        #expect(reused(inCity))
        // A third shape empties it.
        #expect(!reused(older))
        #expect(try !reused(byAge("Brest")))
    }

    /// A cached way names an index by position; a version whose index at
    /// that position indexes other fields plans afresh.
    @Test func aWayIsReusedOnlyOnTheIndexItWasChosenOn() throws {
        // The same people in two stores, whose tables list the same two
        // indexes in opposite orders.
        let narrow: [Index<Person>] = [.on(\.city, \.age, \.score), .on(\.city, \.age)]
        var storages: [TableStorage] = []
        var query: Query<Person>?
        for indexes in [narrow, narrow.reversed()] {
            let store = try tableStore()
            defer { store.close() }
            let table = try store.table(Person.self, named: "people", indexes: indexes)
            try table.put(try Self.people().2)
            storages.append(table.storage(in: store.current))
            query = query ?? Self.page(table, "Brest")
        }
        let spec = try #require(query).spec()
        let cache = PlanCache()
        // The range's narrowest index, city+age, is the one read.
        #expect(cache.plan(spec, storages[0]).describe(spec, storages[0]).contains("use index people.city+age ("))
        #expect(cache.plan(spec, storages[0]).reused)
        // The same position now holds city+age+score: the way is not
        // reused, and the planner picks city+age again, at its new position.
        let replanned = cache.plan(spec, storages[1])
        #expect(!replanned.reused)
        #expect(replanned.describe(spec, storages[1]).contains("use index people.city+age ("))
    }
}
