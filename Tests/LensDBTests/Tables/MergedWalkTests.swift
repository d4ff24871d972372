import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// Walks that merge runs of one index: `city == c && age in a...b`, by
/// score, on an index on city, age and score, reads one run of scores per
/// age and merges them, stopping at offset + limit; `city in [...]`, by
/// score, merges a run per city of an index on city and score, and
/// `city in [...] && age == a` a run per city of the three-field index. Each
/// answer must equal a naive filter and sort, on the latest version, on a
/// version a reader held while commits went on, on a reader's own thread,
/// and after a reopen.
@Suite struct MergedWalkTests {
    static let indexes: [Index<Person>] = [.on(\.city), .on(\.age), .on(\.city, \.age, \.score), .on(\.city, \.score)]
    static let cities = ["Paris", "Lyon", "Nice"]

    /// Many people share each city and age, as a range of ages must hold
    /// many more entries than a page for a merge to pay.
    static func person(_ id: Int64, using random: inout SeededGenerator) -> Person {
        Person(id: id, name: ["Ana", "Bea", "Cy"].randomElement(using: &random)!, email: "p\(id)@example.com",
               city: cities.randomElement(using: &random)!, age: Int.random(in: 20...29, using: &random),
               score: Double(Int.random(in: 0...60, using: &random)) / 4, nickname: nil)
    }

    /// A query of the merged shapes and the same query written out.
    struct Case {
        var query: (Query<Person>) -> Query<Person>
        var keep: (Person) -> Bool
        var before: (Person, Person) -> Bool
        var offset: Int
        var limit: Int
        var text: String

        func expected(_ people: [Person]) -> [Int64] {
            Array(people.filter(keep).sorted(by: before).dropFirst(offset).prefix(limit).map(\.id))
        }
    }

    static func randomCase(_ random: inout SeededGenerator, sample: [Person]) -> Case {
        let descending = Bool.random(using: &random)
        let byName = Int.random(in: 0..<3, using: &random) == 0
        let before = { (a: Person, b: Person) -> Bool in
            if a.score != b.score { return descending ? a.score > b.score : a.score < b.score }
            if byName, a.name != b.name { return a.name < b.name }
            return a.id < b.id
        }
        let order = { (query: Query<Person>) -> Query<Person> in
            let sorted = query.sorted(by: \.score, descending ? .descending : .ascending)
            return byName ? sorted.then(by: \.name) : sorted
        }
        var filter: Filter<Person>
        var keep: (Person) -> Bool
        var text: String
        let shape = Int.random(in: 0..<6, using: &random)
        if shape == 0 {
            let chosen = Array(cities.shuffled(using: &random).prefix(Int.random(in: 2...3, using: &random)))
            (filter, keep, text) = (.in(\.city, chosen), { chosen.contains($0.city) }, "city in \(chosen)")
        } else if shape == 1 {
            // Cities in a list and one age fix both fields before the
            // score: a run per city, each at that age.
            let chosen = Array(cities.shuffled(using: &random).prefix(Int.random(in: 2...3, using: &random)))
            let age = Int.random(in: 20...29, using: &random)
            filter = .in(\.city, chosen) && \.age == age
            keep = { chosen.contains($0.city) && $0.age == age }
            text = "city in \(chosen) && age == \(age)"
        } else {
            let city = cities.randomElement(using: &random)!
            let low = Int.random(in: 18...27, using: &random), high = low + Int.random(in: 0...8, using: &random)
            let exclusive = Bool.random(using: &random)
            filter = \.city == city && \.age >= low && (exclusive ? \.age < high : \.age <= high)
            keep = { $0.city == city && $0.age >= low && (exclusive ? $0.age < high : $0.age <= high) }
            text = "city == \(city) && age in \(low)\(exclusive ? "..<" : "...")\(high)"
        }
        if Int.random(in: 0..<4, using: &random) == 0 {
            // A condition on the order's own field narrows each run.
            let least = Double(Int.random(in: 0...50, using: &random)) / 4
            let previous = keep
            filter = filter && \.score >= least
            keep = { previous($0) && $0.score >= least }
            text += " && score >= \(least)"
        }
        let after = Int.random(in: 0..<4, using: &random) == 0 ? sample.randomElement(using: &random) : nil
        if let after {
            let previous = keep
            keep = { previous($0) && before(after, $0) }
            text += " after \(after.id)"
        }
        let offset = Int.random(in: 0...30, using: &random), limit = Int.random(in: 1...20, using: &random)
        let query = { (base: Query<Person>) -> Query<Person> in
            let query = order(base.filter(filter)).offset(offset).limit(limit)
            return after.map { query.after($0) } ?? query
        }
        return Case(query: query, keep: keep, before: before, offset: offset, limit: limit,
                    text: text + " by score\(descending ? " desc" : "")\(byName ? ", name" : "") offset \(offset) limit \(limit)")
    }

    /// Checks `count` random cases against `everyone` (the version `base`
    /// reads); returns how many were planned as a merged walk.
    @discardableResult
    static func check(_ count: Int, _ base: () -> Query<Person>, _ everyone: [Person], _ random: inout SeededGenerator) -> Int {
        var merged = 0
        for _ in 0..<count {
            let testCase = randomCase(&random, sample: everyone)
            let query = testCase.query(base())
            let plan = query.explain()
            if plan.contains(", merging ") { merged += 1 }
            let answer = (try? query.all().map(\.id)) ?? []
            if answer != testCase.expected(everyone) {
                Issue.record("\(testCase.text), seed \(random.seed)\n\(plan)")
                return merged
            }
        }
        return merged
    }

    @Test func mergedWalksAnswerAsANaiveSortAcrossCommitsHeldVersionsAndAReopen() throws {
        var random = SeededGenerator.fromEnvironment("mergedWalk")
        let fileSystem = SimulatedFileSystem()
        var model: [Int64: Person] = [:]
        var held: [(TableSnapshot<Person>, [Person])] = []
        var merged = 0, checked = 0
        do {
            let store = try tableStore(fileSystem)
            defer { store.close() }
            let people = try store.table(Person.self, named: "people", indexes: Self.indexes)
            for round in 0..<6 {
                try store.write { tx in
                    for _ in 0..<(round == 0 ? 2400 : 300) {
                        let id = Int64.random(in: 1...3000, using: &random)
                        if Int.random(in: 0..<5, using: &random) == 0 {
                            try tx[people].remove(id)
                            model[id] = nil
                        } else {
                            let person = Self.person(id, using: &random)
                            try tx[people].put(person)
                            model[id] = person
                        }
                    }
                }
                let everyone = model.values.sorted { $0.id < $1.id }
                if round % 2 == 0 { held.append((people.snapshot(), everyone)) }
                merged += Self.check(80, { people.query }, everyone, &random)
                checked += 80
            }
            for (version, everyone) in held {
                merged += Self.check(40, { version.query }, everyone, &random)
                checked += 40
            }
            try store.compact()
        }
        let store = try tableStore(fileSystem)
        defer { store.close() }
        let people = try store.table(Person.self, named: "people", indexes: Self.indexes)
        let everyone = model.values.sorted { $0.id < $1.id }
        #expect(people.all() == everyone)
        // The snapshot stored the three-field index's order, and the open built it in that order.
        let statistics = store.statistics.tables.first { $0.name == "people" }
        #expect(statistics?.indexesInStoredOrder == Self.indexes.count)
        merged += Self.check(80, { people.query }, everyone, &random)
        checked += 80
        print("mergedWalk: \(checked) queries checked, \(merged) planned as merged walks")
        // Most cases are of the merged shapes, on data where a merge pays.
        #expect(merged * 3 > checked, "only \(merged) of \(checked) queries were planned as merged walks")
    }

    /// A walk whose every entry matches skips its offset by rank, then
    /// finds the ends of the group of equal values the offset lands in: by
    /// stepping from the offset's entry when the group is small, by
    /// descents when it is large. Every offset, across groups of 1 to 200
    /// equal scores, must page as a naive sort does, descending and ascending.
    @Test func anOffsetLandingInASmallOrALargeGroupPagesAsANaiveSort() throws {
        let store = try tableStore()
        defer { store.close() }
        let people = try store.table(Person.self, named: "people", indexes: Self.indexes)
        // Scores in groups of 200, 1, 70, 2 and 33 people, in Lyon at 25;
        // others elsewhere, so the run lies inside the index.
        let sizes = [200, 1, 70, 2, 33]
        var everyone: [Person] = [], id: Int64 = 0
        for (group, size) in sizes.enumerated() {
            for _ in 0..<size {
                id += 1
                everyone.append(Person(id: id, name: "P", email: "p\(id)@example.com", city: "Lyon", age: 25, score: Double(group), nickname: nil))
            }
        }
        for city in ["Brest", "Paris"] {
            for age in [24, 25, 26] {
                for score in 0..<3 {
                    id += 1
                    everyone.append(Person(id: id, name: "Q", email: "q\(id)@example.com", city: city, age: age, score: Double(score), nickname: nil))
                }
            }
        }
        try people.put(everyone)
        let matches = everyone.filter { $0.city == "Lyon" && $0.age == 25 }
        for descending in [true, false] {
            let sorted = matches.sorted {
                $0.score != $1.score ? (descending ? $0.score > $1.score : $0.score < $1.score) : $0.id < $1.id
            }
            for offset in 0...matches.count {
                let query = people.query.filter(\.city == "Lyon" && \.age == 25)
                    .sorted(by: \.score, descending ? .descending : .ascending).offset(offset).limit(7)
                let expected = Array(sorted.dropFirst(offset).prefix(7).map(\.id))
                let found = try query.all().map(\.id)
                #expect(found == expected, "offset \(offset), descending \(descending)\n\(query.explain())")
                if offset == 40 { #expect(query.explain().contains("walk index people.city+age+score"), "\(query.explain())") }
            }
        }
        // A run that fixes the order's field too (`score == 0`, the group
        // of 200) is one group: an offset deep into it, and paging after
        // one of its entities, page by identifier as a naive sort does.
        let zero = matches.filter { $0.score == 0 }.map(\.id).sorted()
        let fixed = people.query.filter(\.city == "Lyon" && \.age == 25 && \.score == 0).sorted(by: \.score, .descending)
        #expect(fixed.limit(1).explain().contains("walk index people.city+age+score"), "\(fixed.limit(1).explain())")
        for offset in [0, 60, 150, 195] {
            #expect(try fixed.offset(offset).limit(7).all().map(\.id) == Array(zero.dropFirst(offset).prefix(7)), "offset \(offset)")
        }
        let after = everyone.first { $0.id == zero[120] }!
        #expect(try fixed.after(after).limit(7).all().map(\.id) == Array(zero[121..<128]))
    }

    /// The plan for the W5 shape names the runs it merges, and a small
    /// table (whose range is no larger than the page) is sorted instead.
    @Test func explainNamesTheRunsAMergedWalkMerges() throws {
        var random = SeededGenerator.fromEnvironment("mergedWalkExplain")
        let store = try tableStore()
        defer { store.close() }
        let people = try store.table(Person.self, named: "people", indexes: Self.indexes)
        try people.put((1...3000).map { Self.person($0, using: &random) })
        let query = people.query.filter(\.city == "Lyon" && \.age >= 22 && \.age <= 24).sorted(by: \.score, .descending).offset(10).limit(5)
        let plan = query.explain()
        #expect(plan.contains("walk index people.city+age+score backwards, merging 3 runs"), "\(plan)")
        #expect(plan.contains("= \"Lyon\", = 22 | = \"Lyon\", = 23 | = \"Lyon\", = 24"), "\(plan)")
        #expect(plan.contains("nothing left to check"), "\(plan)")
        // An `in` on the first field and an equality on the second: every
        // run has both fields fixed, whether walked in order or read as ranges.
        let cities = people.query.filter(.in(\.city, ["Lyon", "Nice"]) && \.age == 23)
        let walked = cities.sorted(by: \.score, .descending).offset(10).limit(5).explain()
        #expect(walked.contains("walk index people.city+age+score backwards, merging 2 runs"), "\(walked)")
        #expect(walked.contains("= \"Lyon\", = 23 | = \"Nice\", = 23"), "\(walked)")
        let read = cities.explain()
        #expect(read.contains("use index people.city+age+score (= \"Lyon\", = 23 | = \"Nice\", = 23)"), "\(read)")
        #expect(read.contains("nothing left to check"), "\(read)")
        let small = try tableStore()
        defer { small.close() }
        let few = try small.table(Person.self, named: "people", indexes: Self.indexes)
        try few.put((1...30).map { Self.person($0, using: &random) })
        let sorted = few.query.filter(\.city == "Lyon" && \.age >= 22 && \.age <= 24).sorted(by: \.score, .descending).offset(10).limit(5).explain()
        #expect(!sorted.contains("merging"), "\(sorted)")
    }

    /// Bounds that cross (`age > 27 && age < 22`) hold no entry, whichever
    /// way the plan reads the index. The first crossed query of a shape
    /// whose merged walk is cached makes the walk count its range (a
    /// descent to each end, which cross): it must find nothing, refuse the
    /// walk, and answer nothing; the next ones, and the same filters
    /// without an order, answer nothing too.
    @Test func crossedBoundsAnswerNothing() throws {
        var random = SeededGenerator.fromEnvironment("mergedWalkCrossed")
        let store = try tableStore()
        defer { store.close() }
        let people = try store.table(Person.self, named: "people", indexes: Self.indexes)
        try people.put((1...2000).map { Self.person($0, using: &random) })
        let paged = { (low: Int, high: Int) in
            people.query.filter(\.city == "Lyon" && \.age > low && \.age < high).sorted(by: \.score, .descending).offset(3).limit(5)
        }
        let wide = paged(21, 25)
        #expect(try wide.all().count == 5)
        #expect(wide.explain().contains("merging"), "\(wide.explain())")
        let reused = people.plans.reusedCount
        for (low, high) in [(27, 22), (25, 25), (29, 20)] {
            #expect(try paged(low, high).all().isEmpty, "\(low), \(high)\n\(paged(low, high).explain())")
            if (low, high) == (27, 22) { #expect(people.plans.reusedCount == reused, "the walk was reused for crossed bounds") }
            let crossed = people.query.filter(\.city == "Lyon" && \.age > low && \.age < high)
            #expect(try crossed.all().isEmpty && crossed.count() == 0, "\(low), \(high)\n\(crossed.explain())")
        }
    }

    /// Paging with `after` through every result, five at a time, yields
    /// the whole answer once, in order.
    @Test func pagingAfterTheLastResultVisitsEveryMatchOnce() throws {
        var random = SeededGenerator.fromEnvironment("mergedWalkPaging")
        let store = try tableStore()
        defer { store.close() }
        let people = try store.table(Person.self, named: "people", indexes: Self.indexes)
        let everyone = (1...2000).map { Self.person($0, using: &random) }
        try people.put(everyone)
        let base = people.query.filter(\.city == "Nice" && \.age > 21 && \.age <= 27).sorted(by: \.score, .descending)
        #expect(base.limit(5).explain().contains("merging"))
        var pages: [Int64] = []
        var last: Person?
        while true {
            let page = try (last.map { base.after($0) } ?? base).limit(5).all()
            guard !page.isEmpty else { break }
            pages += page.map(\.id)
            last = page.last
        }
        let expected = everyone.filter { $0.city == "Nice" && $0.age > 21 && $0.age <= 27 }
            .sorted { $0.score != $1.score ? $0.score > $1.score : $0.id < $1.id }.map(\.id)
        #expect(pages == expected)
    }

    /// A reader on its own thread queries the version it holds while the
    /// writer commits: each answer is its version's.
    @Test func aReaderOnAnotherThreadSeesItsVersionsAnswers() async throws {
        var random = SeededGenerator.fromEnvironment("mergedWalkReader")
        let store = try tableStore()
        defer { store.close() }
        let people = try store.table(Person.self, named: "people", indexes: Self.indexes)
        try people.put((1...2000).map { Self.person($0, using: &random) })
        let readerSeed = random.next()
        let reading = Task.detached { () -> [String] in
            var random = SeededGenerator(seed: readerSeed)
            var failures: [String] = []
            for _ in 0..<30 {
                let version = people.snapshot()
                let everyone = version.all()
                for _ in 0..<5 {
                    let testCase = Self.randomCase(&random, sample: everyone)
                    let answer = (try? testCase.query(version.query).all().map(\.id)) ?? []
                    if answer != testCase.expected(everyone) { failures.append(testCase.text) }
                }
            }
            return failures
        }
        for _ in 0..<40 {
            try store.write { tx in
                for _ in 0..<50 { try tx[people].put(Self.person(Int64.random(in: 1...2500, using: &random), using: &random)) }
            }
        }
        let failures = await reading.value
        #expect(failures.isEmpty, "reader seed \(readerSeed): \(failures)")
    }
}
