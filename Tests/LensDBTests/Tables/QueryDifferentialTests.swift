import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// Random entities and random queries: what the planner answers, through
/// whatever index it picks (or reuses for a shape it planned before), must
/// equal a naive scan, filter and sort, on the latest version and on
/// versions readers held while commits went on.
@Suite struct QueryDifferentialTests {
    /// A query and the same query written out naively.
    struct Case {
        var query: (Query<Person>) -> Query<Person>
        var keep: (Person) -> Bool
        var before: (Person, Person) -> Bool
        var offset = 0
        var limit: Int?
        var text: String
    }

    static func randomCase(_ random: inout SeededGenerator, sample: [Person], shapes: inout [String: Int]) -> Case {
        var (filter, keep, text) = randomFilter(&random, depth: 0, shapes: &shapes)
        let forced = Int.random(in: 0..<10, using: &random)
        if forced == 1 {
            // A small page of one city over a wide span of ages, by score:
            // the shape an index on city, age and score serves by merging
            // one run of scores per age.
            let city = Person.cities.randomElement(using: &random)!
            let low = Int.random(in: 5...40, using: &random), high = low + Int.random(in: 10...40, using: &random)
            let (order, before, orderText) = scoreOrder(&random)
            let offset = Int.random(in: 0...3, using: &random), limit = Int.random(in: 1...5, using: &random)
            let after = Int.random(in: 0..<4, using: &random) == 0 ? sample.randomElement(using: &random) : nil
            return Case(
                query: { base in
                    let query = order(base.filter(\.city == city && \.age >= low && \.age <= high)).offset(offset).limit(limit)
                    return after.map { query.after($0) } ?? query
                },
                keep: { person in
                    person.city == city && person.age >= low && person.age <= high && (after.map { before($0, person) } ?? true)
                },
                before: before, offset: offset, limit: limit,
                text: "city == \(city) && age in \(low)...\(high)\(orderText) after \(after.map { "\($0.id)" } ?? "none") offset \(offset) limit \(limit)")
        }
        if forced == 2 {
            // Cities in a list, by score: runs of an index on city and score, merged.
            let cities = Array(Person.cities.shuffled(using: &random).prefix(Int.random(in: 2...4, using: &random)))
            let (order, before, orderText) = scoreOrder(&random)
            let offset = Int.random(in: 0...5, using: &random), limit = Int.random(in: 1...8, using: &random)
            return Case(query: { order($0.filter(.in(\.city, cities))).offset(offset).limit(limit) },
                        keep: { cities.contains($0.city) }, before: before, offset: offset, limit: limit,
                        text: "city in \(cities)\(orderText) offset \(offset) limit \(limit)")
        }
        if forced == 0 {
            // Equalities on two indexed fields, each selective: the shape an
            // intersection of two indexes serves, which random && rarely makes.
            let age = Int.random(in: 10...70, using: &random), score = Double(Int.random(in: 0...40, using: &random)) / 4
            filter = \.age == age && \.score == score
            keep = { $0.age == age && $0.score == score }
            text = "age == \(age) && score == \(score)"
        } else if Bool.random(using: &random) {
            let (second, secondKeep, secondText) = randomFilter(&random, depth: 0, shapes: &shapes)
            let firstKeep = keep
            filter = filter && second
            keep = { firstKeep($0) && secondKeep($0) }
            text += " && " + secondText
        }
        let byID: (Person, Person) -> Bool = { $0.id < $1.id }
        var order: (Query<Person>) -> Query<Person> = { $0 }
        var before = byID
        switch Int.random(in: 0..<6, using: &random) {
        case 0: break
        case 1:
            order = { $0.sorted(by: \.score, .descending) }
            before = { $0.score != $1.score ? $0.score > $1.score : $0.id < $1.id }
            text += " by score desc"
        case 2:
            order = { $0.sorted(by: \.age).then(by: \.name, .descending) }
            before = { $0.age != $1.age ? $0.age < $1.age : $0.name != $1.name ? $0.name > $1.name : $0.id < $1.id }
            text += " by age, name desc"
        case 3:
            order = { $0.sorted(by: \.nickname) }
            before = { a, b in
                switch (a.nickname, b.nickname) {
                case let (x?, y?) where x != y: return x < y
                case (nil, _?): return true
                case (_?, nil): return false
                default: return a.id < b.id
                }
            }
            text += " by nickname"
        case 4:
            order = { $0.sorted(by: \.city, .descending).then(by: \.score) }
            before = { $0.city != $1.city ? $0.city > $1.city : $0.score != $1.score ? $0.score < $1.score : $0.id < $1.id }
            text += " by city desc, score"
        default:
            let ids = (0..<3).map { _ in Int64.random(in: 1...400, using: &random) }
            var ranks: [Int64: Int] = [:]
            for (rank, id) in ids.enumerated() where ranks[id] == nil { ranks[id] = rank }
            order = { $0.sorted(byIdentifiers: ids) }
            before = { (ranks[$0.id] ?? .max, $0.id) < (ranks[$1.id] ?? .max, $1.id) }
            text += " by identifiers \(ids)"
        }
        let offset = Bool.random(using: &random) ? Int.random(in: 0...30, using: &random) : 0
        let limit: Int? = Bool.random(using: &random) ? Int.random(in: 0...25, using: &random) : nil
        let after = Int.random(in: 0..<4, using: &random) == 0 ? sample.randomElement(using: &random) : nil
        let query: (Query<Person>) -> Query<Person> = { base in
            var query = order(base.filter(filter)).offset(offset)
            if let limit { query = query.limit(limit) }
            if let after { query = query.after(after) }
            return query
        }
        var keepAll = keep
        if let after {
            let firstKeep = keep
            keepAll = { firstKeep($0) && before(after, $0) }
            text += " after \(after.id)"
        }
        return Case(query: query, keep: keepAll, before: before, offset: offset, limit: limit,
                    text: text + " offset \(offset) limit \(limit.map(String.init) ?? "none")")
    }

    /// By score, ascending or descending, with identifiers breaking ties.
    static func scoreOrder(
        _ random: inout SeededGenerator
    ) -> ((Query<Person>) -> Query<Person>, (Person, Person) -> Bool, String) {
        if Bool.random(using: &random) {
            return ({ $0.sorted(by: \.score, .descending) },
                    { $0.score != $1.score ? $0.score > $1.score : $0.id < $1.id }, " by score desc")
        }
        return ({ $0.sorted(by: \.score) }, { $0.score != $1.score ? $0.score < $1.score : $0.id < $1.id }, " by score")
    }

    /// The access each plan starts with (the second line of `explain()`).
    static let planKinds = ["scan", "use index", "intersect", "walk index", "primary key"]
    /// Shapes of plans the planner must have chosen at least once: an
    /// ordered walk of a two-field index within an equality, index ranges
    /// that leave no condition to check, a sort that keeps only the
    /// offset + limit first matches, and a walk that merges a run per value
    /// of an `in` (``MergedWalkTests`` has data on which a walk merging the
    /// distinct values of a range is chosen).
    static let planFeatures = [
        ("walk within an equality", "backwards (= "),
        ("walk of a two-field index", "walk index people.city+score"),
        ("no condition left", "nothing left to check"),
        ("top offset + limit", "keeping the first"),
        ("merged intersection", ", merged (reads"),
        ("merged walk of in values", "walk index people.city+score, merging"),
    ]

    /// Filters nest `&&`, `||` and `!` at depths 0 ..< this; below, only leaves.
    static let compoundDepths = 3

    /// A random filter, the same condition as a closure, and its text.
    /// `shapes` counts the compound nodes made, by operator and depth.
    static func randomFilter(
        _ random: inout SeededGenerator, depth: Int, shapes: inout [String: Int]
    ) -> (Filter<Person>, (Person) -> Bool, String) {
        let city = Person.cities.randomElement(using: &random)!
        let age = Int.random(in: 5...75, using: &random)
        let score = Double(Int.random(in: 0...40, using: &random)) / 4
        let id = Int64.random(in: 1...400, using: &random)
        // 0...12 are leaves; 13...15 (`||`, `!`, `&&`) only where nesting may go on.
        switch Int.random(in: 0..<(depth < compoundDepths ? 16 : 13), using: &random) {
        case 0: return (\.city == city, { $0.city == city }, "city == \(city)")
        case 1:
            let cities = Array(Person.cities.shuffled(using: &random).prefix(Int.random(in: 0...3, using: &random)))
            return (.in(\.city, cities), { cities.contains($0.city) }, "city in \(cities)")
        case 2: return (\.age >= age, { $0.age >= age }, "age >= \(age)")
        case 3: return (\.age < age, { $0.age < age }, "age < \(age)")
        case 4: return (\.age == age, { $0.age == age }, "age == \(age)")
        case 5: return (\.score > score, { $0.score > score }, "score > \(score)")
        case 6: return (\.score <= score, { $0.score <= score }, "score <= \(score)")
        case 7: return (\.nickname == nil, { $0.nickname == nil }, "nickname == nil")
        case 8: return (\.nickname >= "bo", { $0.nickname.map { $0 >= "bo" } ?? false }, "nickname >= bo")
        case 9: return (\.name ~= /^[AB]/, { $0.name.hasPrefix("A") || $0.name.hasPrefix("B") }, "name ~= ^[AB]")
        case 10: return (.where { $0.age % 3 == 0 }, { $0.age % 3 == 0 }, "where age % 3 == 0")
        case 11: return (\.id == id, { $0.id == id }, "id == \(id)")
        case 12:
            let ids = (0..<3).map { _ in Int64.random(in: 1...400, using: &random) }
            return (.in(\.id, ids), { ids.contains($0.id) }, "id in \(ids)")
        case 13:
            shapes["|| at depth \(depth)", default: 0] += 1
            let (a, keepA, textA) = randomFilter(&random, depth: depth + 1, shapes: &shapes)
            let (b, keepB, textB) = randomFilter(&random, depth: depth + 1, shapes: &shapes)
            return (a || b, { keepA($0) || keepB($0) }, "(\(textA) || \(textB))")
        case 14:
            shapes["! at depth \(depth)", default: 0] += 1
            let (a, keepA, textA) = randomFilter(&random, depth: depth + 1, shapes: &shapes)
            return (!a, { !keepA($0) }, "!(\(textA))")
        default:
            shapes["&& at depth \(depth)", default: 0] += 1
            let (a, keepA, textA) = randomFilter(&random, depth: depth + 1, shapes: &shapes)
            let (b, keepB, textB) = randomFilter(&random, depth: depth + 1, shapes: &shapes)
            return (a && b, { keepA($0) && keepB($0) }, "(\(textA) && \(textB))")
        }
    }

    func expected(_ testCase: Case, over people: [Person]) -> [Person] {
        var result = people.filter(testCase.keep).sorted(by: testCase.before).dropFirst(testCase.offset)
        if let limit = testCase.limit { result = result.prefix(limit) }
        return Array(result)
    }

    @Test func plannedQueriesEqualANaiveScanAcrossCommitsAndHeldVersions() throws {
        var random = SeededGenerator.fromEnvironment("queryDifferential")
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes + [.on(\.city, \.age, \.score)])
        var model: [Int64: Person] = [:]
        var held: [(StoreState, [Person])] = []
        var checked = 0
        var plans: [String: Int] = [:]
        var shapes: [String: Int] = [:]
        for round in 0..<12 {
            try store.write { tx in
                for _ in 0..<Int.random(in: 20...60, using: &random) {
                    let id = Int64.random(in: 1...400, using: &random)
                    if Int.random(in: 0..<4, using: &random) == 0 {
                        try tx[people].remove(id)
                        model[id] = nil
                    } else {
                        let person = Person.random(id, using: &random)
                        try tx[people].put(person)
                        model[id] = person
                    }
                }
            }
            let everyone = model.values.sorted { $0.id < $1.id }
            #expect(people.all() == everyone)
            if round % 4 == 1 { held.append((store.current, everyone)) }
            for _ in 0..<60 {
                let testCase = Self.randomCase(&random, sample: everyone, shapes: &shapes)
                let answer = try testCase.query(people.query).all()
                checked += 1
                let plan = testCase.query(people.query).explain()
                let access = plan.split(separator: "\n")[1]
                for kind in Self.planKinds where access.contains(kind) { plans[kind, default: 0] += 1 }
                for (feature, text) in Self.planFeatures where plan.contains(text) { plans[feature, default: 0] += 1 }
                let wanted = expected(testCase, over: everyone)
                if answer != wanted {
                    Issue.record("round \(round): \(testCase.text)\n\(testCase.query(people.query).explain())")
                    return
                }
                // count() and ids() run the plan without copying entities out.
                if try testCase.query(people.query).count() != wanted.count || testCase.query(people.query).ids() != wanted.map(\.id) {
                    Issue.record("round \(round): count or ids differ from all(): \(testCase.text)")
                    return
                }
            }
        }
        for (version, everyone) in held {
            for _ in 0..<60 {
                let testCase = Self.randomCase(&random, sample: everyone, shapes: &shapes)
                let query = testCase.query(Query(table: people, source: .state(version)))
                let wanted = expected(testCase, over: everyone)
                #expect(try query.all() == wanted, "held version: \(testCase.text)\n\(query.explain())")
                #expect(try query.count() == wanted.count && query.ids() == wanted.map(\.id), "held version: \(testCase.text)")
                checked += 1
            }
        }
        print("queryDifferential: \(checked) queries checked, \(people.plans.reusedCount) plans reused from their shape, plans \(plans), filter shapes \(shapes.sorted { $0.key < $1.key })")
        // Shapes repeat with other values, so answers from reused plans
        // (``PlanCache``) were checked too.
        #expect(people.plans.reusedCount > 100)
        for kind in Self.planKinds + Self.planFeatures.map(\.0) {
            #expect(plans[kind, default: 0] > 0, "no query was planned with \(kind)")
        }
        // Each operator at the top and nested in another: a generator that
        // stops making one (as a `case` pattern once hid `||`) fails here.
        for shape in ["&&", "||", "!"] {
            for depth in 0..<2 {
                #expect(shapes["\(shape) at depth \(depth)", default: 0] > 0, "the filter generator made no \(shape) at depth \(depth)")
            }
        }
    }
}
