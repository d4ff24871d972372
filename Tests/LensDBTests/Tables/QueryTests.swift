import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// Filter semantics, order, paging, results and plans, each as the DocC
/// article "Tables and queries" states them.
@Suite struct QueryTests {
    let people: Table<Person>
    let store: Store

    init() throws {
        store = try tableStore()
        people = try store.table(Person.self, named: "people", indexes: personIndexes)
        var random = SeededGenerator(seed: 11)
        try people.put((1...300).map { Person.random($0, using: &random) })
    }

    func naive(_ filter: (Person) -> Bool) -> [Person] { people.all().filter(filter) }

    @Test func comparisonsAndBooleanOperatorsMatchTheirSwiftMeaning() throws {
        #expect(try people.query.filter(\.age >= 18 && \.city == "Paris").all() == naive { $0.age >= 18 && $0.city == "Paris" })
        #expect(try people.query.filter(\.age < 30 || \.city != "Lyon").all() == naive { $0.age < 30 || $0.city != "Lyon" })
        #expect(try people.query.filter(!(\.score > 5)).all() == naive { !($0.score > 5) })
        #expect(try people.query.filter(\.age <= 20).filter(\.age > 15).all() == naive { $0.age <= 20 && $0.age > 15 })
    }

    @Test func nilEqualsNilAndFailsEveryOrderingComparison() throws {
        #expect(try people.query.filter(\.nickname == nil).all() == naive { $0.nickname == nil })
        #expect(try people.query.filter(\.nickname != nil).all() == naive { $0.nickname != nil })
        #expect(try people.query.filter(\.nickname >= "a").all() == naive { $0.nickname.map { $0 >= "a" } ?? false })
        #expect(try people.query.filter(\.nickname < "zz").count() == naive { $0.nickname != nil }.count, "nil fails <")
    }

    @Test func inAndItsEmptySetAndRegexAndClosures() throws {
        #expect(try people.query.filter(.in(\.city, ["Paris", "Lyon"])).all() == naive { ["Paris", "Lyon"].contains($0.city) })
        #expect(try people.query.filter(.in(\.city, [String]())).count() == 0, "an empty set matches nothing")
        #expect(try people.query.filter(\.name ~= /na/).all() == naive { $0.name.contains("na") }, "matches anywhere")
        #expect(try people.query.filter(\.name ~= /^A/).all() == naive { $0.name.hasPrefix("A") }, "unless anchored")
        #expect(try people.query.filter(\.nickname ~= /o/).all() == naive { $0.nickname?.contains("o") ?? false })
        #expect(try people.query.filter(.where { $0.age % 2 == 0 }).all() == naive { $0.age % 2 == 0 })
    }

    @Test func ordersAreTotalWithTiesInIdentifierOrderAndNilFirst() throws {
        let sorted = try people.query.sorted(by: \.score, .descending).then(by: \.name).all()
        let expected = people.all().sorted { a, b in
            if a.score != b.score { return a.score > b.score }
            if a.name != b.name { return a.name < b.name }
            return a.id < b.id
        }
        #expect(sorted == expected)
        let byNickname = try people.query.sorted(by: \.nickname).all()
        #expect(byNickname.prefix { $0.nickname == nil }.count == naive { $0.nickname == nil }.count, "nil sorts first")
        #expect(try people.query.sorted(by: \.nickname, .descending).all().last?.nickname == nil, "and last descending")
        let first = try people.query.sorted(byIdentifiers: [5, 1, 999]).all()
        #expect(first.prefix(2).map(\.id) == [5, 1])
        let rest: [Int64] = people.all().map(\.id).filter { ![5, 1].contains($0) }
        #expect(first.dropFirst(2).map(\.id) == rest)
    }

    @Test func pagingByOffsetLimitAndAfterSplitsTheOrderExactly() throws {
        let query = people.query.filter(\.age > 20).sorted(by: \.score, .descending)
        let all = try query.all()
        #expect(try query.offset(40).limit(20).all() == Array(all.dropFirst(40).prefix(20)))
        var pages: [Person] = []
        var last: Person?
        repeat {
            let page = try (last.map { query.after($0) } ?? query).limit(17).all()
            pages += page
            last = page.last
        } while last != nil
        #expect(pages == all, "keyset pages cover the results once, in order")
        #expect(try query.first() == all.first)
        #expect(try query.ids() == all.map(\.id))
        #expect(throws: QueryError.negativeLimit(-1)) { try query.limit(-1).all() }
    }

    @Test func groupsComeInOrderOfFirstAppearance() throws {
        let query = people.query.sorted(by: \.age).limit(50)
        let groups = try query.grouped(by: \.city)
        let flat = try query.all()
        var expectedKeys: [String] = []
        for person in flat where !expectedKeys.contains(person.city) { expectedKeys.append(person.city) }
        #expect(groups.map(\.key) == expectedKeys)
        for group in groups { #expect(group.entities == flat.filter { $0.city == group.key }) }
    }

    /// `limit(.max)` is a query like any other: offset + limit is held at
    /// `Int.max` where the planner and the sort add them, never trapping.
    @Test func aLimitAsLargeAsAnyIntAnswersInFull() throws {
        let byScore = naive { _ in true }.sorted { $0.score != $1.score ? $0.score < $1.score : $0.id < $1.id }
        #expect(try people.query.sorted(by: \.score).limit(.max).all() == byScore)
        #expect(try people.query.sorted(by: \.score).offset(3).limit(.max).all() == Array(byScore.dropFirst(3)))
        #expect(try people.query.filter(\.city == "Paris").sorted(by: \.score, .descending).offset(2).limit(.max).count()
            == max(0, byScore.filter { $0.city == "Paris" }.count - 2))
        #expect(people.query.filter(\.city == "Paris" && \.age > 20).sorted(by: \.score).offset(1).limit(.max).explain().contains("query people"))
    }

    /// An `in` of more values than ranges a plan reads one index by still
    /// narrows that field, and one value on the next field narrows each of
    /// its ranges, which multiplies nothing: no condition is left to check.
    @Test func manyInValuesStillNarrowTheirField() throws {
        let store = try tableStore()
        defer { store.close() }
        let byCityAndAge = try store.table(Person.self, named: "people", indexes: [.on(\.city, \.age)])
        try byCityAndAge.put(people.all())
        let cities = (0..<70).map { "Nowhere \($0)" } + ["Paris", "Lyon"]
        let query = byCityAndAge.query.filter(.in(\.city, cities) && \.age == 30)
        let plan = query.explain()
        #expect(plan.contains("use index people.city+age"), "\(plan)")
        #expect(plan.contains("nothing left to check"), "\(plan)")
        #expect(try query.all() == naive { ["Paris", "Lyon"].contains($0.city) && $0.age == 30 })
    }

    /// Two `in` lists whose values would multiply past the ranges a plan
    /// reads one index by: the first field's values make the ranges, and
    /// the second field is left to the filter, not multiplied into 100
    /// ranges.
    @Test func inListsMultiplyingPastTheRangeCapLeaveTheLaterFieldToTheFilter() throws {
        let store = try tableStore()
        defer { store.close() }
        let byCityAndAge = try store.table(Person.self, named: "people", indexes: [.on(\.city, \.age)])
        try byCityAndAge.put(people.all())
        let cities = ["Paris", "Lyon"] + (0..<8).map { "Nowhere \($0)" }
        let ages = Array(25..<35)
        let query = byCityAndAge.query.filter(.in(\.city, cities) && .in(\.age, ages))
        let plan = query.explain()
        #expect(plan.split(separator: "\n")[1].contains("use index people.city+age"), "\(plan)")
        #expect(Self.rangeCount(plan) == cities.count, "\(plan)")
        #expect(!plan.contains("nothing left to check"), "\(plan)")
        let wanted = naive { cities.contains($0.city) && ages.contains($0.age) }
        #expect(!wanted.isEmpty)
        #expect(try query.all() == wanted)
        #expect(try query.count() == wanted.count)
        // Fewer values, within the cap, fix both fields: no filter is left.
        let few = byCityAndAge.query.filter(.in(\.city, ["Paris", "Lyon"]) && .in(\.age, ages)).explain()
        #expect(Self.rangeCount(few) == 2 * ages.count, "\(few)")
        #expect(few.contains("nothing left to check"), "\(few)")
        // At the cap, 8 × 8 ranges fix both fields; 5 × 13 would pass it.
        let atCap = byCityAndAge.query.filter(.in(\.city, Array(cities.prefix(8))) && .in(\.age, Array(25..<33))).explain()
        #expect(Self.rangeCount(atCap) == 64 && atCap.contains("nothing left to check"), "\(atCap)")
        let pastCap = byCityAndAge.query.filter(.in(\.city, Array(cities.prefix(5))) && .in(\.age, Array(25..<38))).explain()
        #expect(Self.rangeCount(pastCap) == 5 && !pastCap.contains("nothing left to check"), "\(pastCap)")
        // On three fields, the cap stops at the middle one: 2 × 10 ranges
        // fix city and age, and four scores, which would make 80, are left
        // to the filter with the fields after.
        let byThree = try store.table(Person.self, named: "three", indexes: [.on(\.city, \.age, \.score)])
        try byThree.put(people.all())
        let inCitiesAndAges = naive { ["Paris", "Lyon"].contains($0.city) && ages.contains($0.age) }
        let scores = Array(Set(inCitiesAndAges.map(\.score)).sorted().prefix(4))
        #expect(scores.count == 4)
        let three = byThree.query.filter(.in(\.city, ["Paris", "Lyon"]) && .in(\.age, ages) && .in(\.score, scores))
        #expect(Self.rangeCount(three.explain()) == 2 * ages.count && !three.explain().contains("nothing left to check"), "\(three.explain())")
        let wantedOfThree = inCitiesAndAges.filter { scores.contains($0.score) }
        #expect(!wantedOfThree.isEmpty)
        #expect(try three.all() == wantedOfThree)
    }

    /// How many ranges a plan's index access reads (its second line).
    static func rangeCount(_ plan: String) -> Int {
        plan.split(separator: "\n")[1].components(separatedBy: " | ").count
    }

    @Test func plansUseTheMostSelectiveIndexAndWalkIndexesForLimits() throws {
        #expect(people.query.filter(\.city == "Paris").explain().contains("use index people.city (= \"Paris\")"))
        #expect(people.query.filter(\.city == "Paris" && \.age >= 30 && \.age <= 35).explain().contains("use index people.city+age (= \"Paris\", >= 30, <= 35)"))
        #expect(people.query.filter(.in(\.city, ["Nice", "Lyon"])).explain().contains("use index people.city"))
        #expect(people.query.filter(\.email == "p7@example.com").explain().contains("use index people.email"))
        #expect(people.query.filter(\.name == "Ana1").explain().contains("scan"), "no index on name")
        #expect(people.query.filter(.where { $0.age > 3 }).explain().contains("scan"))
        #expect(people.query.sorted(by: \.score, .descending).limit(5).explain().contains("by walking index people.score backwards"))
        #expect(people.query.filter(\.age > 60).sorted(by: \.age).explain().contains("by walking index people.age"))
        #expect(people.query.sorted(by: \.name).explain().contains("by sorting"))
        #expect(try people.query.filter(\.email == "p7@example.com").all().map(\.id) == [7])
        #expect(people.query.filter(\.id == 7).explain().contains("use the primary key: 1 identifier"))
        #expect(people.query.filter(.in(\.id, [9, 3, 999]) && \.age > 0).explain().contains("primary key: 3"))
        #expect(try people.query.filter(.in(\.id, [9, 3, 999])).all().map(\.id) == [3, 9])
    }

    /// A program's own `IndexableValue` may give two of its values one key
    /// (here crimson indexes as red). An `in` naming both reads that key's
    /// entries once: each entity is one result, and `count()`, which counts
    /// the ranges instead of walking them, agrees.
    @Test func anInWhoseValuesShareAnIndexKeyAnswersEachEntityOnce() throws {
        let store = try tableStore()
        defer { store.close() }
        let swatches = try store.table(Swatch.self, named: "swatches", indexes: [.on(\.shade)])
        try swatches.put([Swatch(id: 1, shade: .red), Swatch(id: 2, shade: .crimson), Swatch(id: 3, shade: .blue)])
        let query = swatches.query.filter(.in(\.shade, [.red, .crimson, .red]))
        #expect(query.explain().contains("nothing left to check"), "\(query.explain())")
        #expect(try query.all().map(\.id) == [1, 2])
        #expect(try query.ids() == [1, 2])
        #expect(try query.count() == 2)
        #expect(try query.sorted(by: \.id, .descending).offset(1).count() == 1)
    }

    /// An `in` whose values a program's own `IndexableValue` gives as
    /// integers and as doubles, past 2^53 where `Double` no longer holds
    /// every integer, answers as a scan does whatever order its set hands
    /// the values in: the index reads a range per exact value.
    @Test func anInMixingIntegerAndDoubleKeysAnswersAsAScanDoes() throws {
        let store = try tableStore()
        defer { store.close() }
        let indexed = try store.table(Measure.self, named: "indexed", indexes: [.on(\.amount)])
        let plain = try store.table(Measure.self, named: "plain")
        var failures: [String] = []
        for k in Int64(0)..<40 {
            let n: Int64 = (1 << 53) + 4 * k
            let rows = [Measure(id: 2 * k + 1, amount: .whole(n)), Measure(id: 2 * k + 2, amount: .whole(n + 1))]
            try indexed.put(rows)
            try plain.put(rows)
            let values: [MixedAmount] = [.whole(n + 1), .real(Double(n)), .whole(n)]
            let query = indexed.query.filter(.in(\.amount, values))
            let answers = (try query.all().map(\.id), try query.ids(), try query.count())
            let scanned = try plain.query.filter(.in(\.amount, values)).all().map(\.id)
            if scanned != [2 * k + 1, 2 * k + 2] || answers.0 != scanned || answers.1 != scanned || answers.2 != 2 {
                failures.append("k \(k): all \(answers.0), ids \(answers.1), count \(answers.2), scan \(scanned)")
            }
            try indexed.remove(rows.map(\.id))
            try plain.remove(rows.map(\.id))
        }
        #expect(failures.isEmpty, "\(failures)")
    }
    /// Amounts a program's own `IndexableValue` gives as integers and as
    /// doubles compare by their exact values, in an index, in a sort and
    /// in a filter, before and after a reopen that loads the index's stored
    /// order: 2^53 + 1 as an integer is above 2^53 as a double, though
    /// `Double(2^53 + 1)` is 2^53, and 2^53 as a double ties 2^53 as an
    /// integer alone.
    @Test func integerAndDoubleAmountsPast2To53KeepTheirExactOrder() throws {
        let fileSystem = SimulatedFileSystem()
        let big = Int64(1) << 53
        // Put out of order, so that the order read back is the index's.
        let measures = [Measure(id: 1, amount: .whole(big + 1)), Measure(id: 2, amount: .real(Double(big) + 2)),
                        Measure(id: 3, amount: .real(Double(big))), Measure(id: 4, amount: .whole(big)),
                        Measure(id: 5, amount: .whole(big - 1))]
        for reopened in [false, true] {
            let store = try tableStore(fileSystem)
            let indexed = try store.table(Measure.self, named: "indexed", indexes: [.on(\.amount)])
            let plain = try store.table(Measure.self, named: "plain")
            if !reopened {
                try indexed.put(measures)
                try plain.put(measures)
                try store.compact()
            } else {
                #expect(store.statistics.tables.first { $0.name == "indexed" }?.indexesInStoredOrder == 1, "the stored order still fits")
            }
            for table in [indexed, plain] {
                let which = "\(table.name), reopened \(reopened)"
                // Ties (ids 3 and 4) in identifier order.
                #expect(try table.query.sorted(by: \.amount).all().map(\.id) == [5, 3, 4, 1, 2], "\(which)")
                #expect(try table.query.filter(\.amount > MixedAmount.real(Double(big))).all().map(\.id).sorted() == [1, 2], "\(which)")
                #expect(try table.query.filter(\.amount <= MixedAmount.real(Double(big))).all().map(\.id).sorted() == [3, 4, 5], "\(which)")
                #expect(try table.query.filter(.in(\.amount, [MixedAmount.whole(big + 1)])).all().map(\.id) == [1], "\(which)")
            }
            store.close()
        }
    }
}

/// Amounts in the order their index keeps, as a program that sorts and
/// filters by them would declare it.
extension MixedAmount: Comparable {
    static func < (a: MixedAmount, b: MixedAmount) -> Bool { a.indexValue < b.indexValue }
}

private struct Measure: Entity, Equatable {
    var id: Int64
    var amount: MixedAmount
}

/// A shade a program indexes by its name, crimson as red.
private enum Shade: String, Codable, Hashable, Sendable, IndexableValue {
    case red, crimson, blue
    var indexValue: IndexValue { .string(self == .crimson ? "red" : rawValue) }
}

private struct Swatch: Entity, Equatable {
    var id: Int64
    var shade: Shade
}
