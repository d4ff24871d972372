import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// The planner's sets of terms: a word for the first 64, more words past
/// them. A query of more terms than one word holds plans as any other.
@Suite struct TermSetTests {
    @Test func membershipCountUnionAndSubsetHoldOnBothSidesOfTheFirstWord() {
        var set = TermSet()
        for position in [0, 5, 63, 64, 130] { set.insert(position) }
        #expect(set.count == 5)
        for position in 0..<200 {
            #expect(set.contains(position) == [0, 5, 63, 64, 130].contains(position), "\(position)")
        }
        #expect(!set.contains(-1))
        let other: TermSet = [5, 70]
        let united = set.union(other)
        #expect(united.count == 6)
        #expect(united.contains(70) && united.contains(130) && united.contains(0))
        #expect(other.isSubset(of: united) && set.isSubset(of: united))
        #expect(!united.isSubset(of: set) && !set.isSubset(of: other))
        // A word emptied of nothing it held still compares equal.
        var grown: TermSet = [1]
        grown.formUnion([200])
        #expect(grown != [1])
        #expect(TermSet([1]).union(TermSet()) == [1])
        #expect(TermSet([64]).isSubset(of: [64, 1]) && !TermSet([64]).isSubset(of: [1]))
        #expect(TermSet([200]) == TermSet([200]))
    }

    /// 70 conditions, the city's and 69 bounds of the age, which the index
    /// on city+age+score folds into one range: every one is implied, and
    /// nothing is left to check.
    @Test func aQueryOfSeventyTermsIsPlannedAndAnsweredLikeAShortOne() throws {
        let (store, table, everyone) = try PlanCacheTests.people()
        defer { store.close() }
        var filter: Filter<Person> = \.city == "Paris"
        for low in 0..<68 { filter = filter && \.age >= low % 21 }
        filter = filter && \.age <= 21
        let query = table.query.filter(filter).sorted(by: \.score, .descending).offset(2).limit(5)
        #expect(try query.all().map(\.id) == PlanCacheTests.expected(everyone, "Paris"))
        #expect(try query.count() == 5)
        // The short query's plan reads the same index.
        let plan = try #require(query.explain().split(separator: "\n").dropFirst().first)
        #expect(plan.contains("city+age+score"), "\(plan)")
        // Over one word, the implied terms must be counted past it too:
        // else the plan would check conditions it already decided.
        #expect(query.explain().contains("nothing left to check"), "\(query.explain())")
    }
}
