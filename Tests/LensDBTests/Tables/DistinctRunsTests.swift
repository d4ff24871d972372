import Foundation
import LensTestSupport
import Testing
@testable import LensDB

private struct Pair: Entity {
    var id: Int64
    var first: Int
    var second: Int
}

/// The skip scan that splits a range of a composite index into the runs
/// of its next field's values (`IndexStorage.distinctRuns`), and the
/// range's ends it starts from, each against the index read entry by
/// entry. Runs from empty to longer than a leaf, nodes reshaped by
/// removals, the range's end keys known (as a planner passes them) or not,
/// and limits below and above the number of runs.
struct DistinctRunsTests {
    @Test func runsAreTheValuesOfTheNextFieldInOrderWithTheirRanks() throws {
        var random = SeededGenerator.fromEnvironment("DistinctRunsTests.runsAreTheValuesOfTheNextFieldInOrderWithTheirRanks")
        let store = try tableStore(checkingInvariants: false)
        defer { store.close() }
        let pairs = try store.table(Pair.self, named: "pairs", indexes: [.on(\.first, \.second)])
        for round in 0..<6 {
            // Each value of `second` repeats up to 70 times: runs end inside
            // leaves (32 entries) and at their edges, and span several.
            var members: [Pair] = []
            for first in 0..<4 {
                for second in 0..<Int.random(in: 0...12, using: &random) {
                    for _ in 0..<Int.random(in: 1...70, using: &random) {
                        members.append(Pair(id: Int64(members.count + round * 10_000), first: first, second: second))
                    }
                }
            }
            try pairs.put(members.shuffled(using: &random))
            try pairs.remove(members.filter { _ in Int.random(in: 0..<5, using: &random) == 0 }.map(\.id))
            let index = pairs.storage(in: store.current).indexes[0]
            for first in 0..<5 {
                let range = KeyRange(prefix: [.int(Int64(first))])
                let ends = index.ends(of: range)
                // Read entry by entry: each value of the second field with its ranks.
                var expected: [(value: IndexValue, ranks: Range<Int>)] = []
                for rank in ends.ranks {
                    let value = index.key(atRank: rank)![1]
                    if let last = expected.last, last.value == value {
                        expected[expected.count - 1].ranks = last.ranks.lowerBound..<rank + 1
                    } else {
                        expected.append((value, rank..<rank + 1))
                    }
                }
                for known in [ends, RangeEnds(ranks: ends.ranks)] {
                    for limit in [expected.count, expected.count + 1, 1_000] {
                        let runs = index.distinctRuns(within: known, prefix: [.int(Int64(first))], field: 1, limit: limit)
                        #expect(runs?.map(\.value) == expected.map(\.value), "round \(round), first \(first), limit \(limit)")
                        #expect(runs?.map(\.ranks) == expected.map(\.ranks), "round \(round), first \(first), limit \(limit)")
                    }
                    if expected.count > 1 {
                        #expect(index.distinctRuns(within: known, prefix: [.int(Int64(first))], field: 1, limit: expected.count - 1) == nil,
                                "round \(round), first \(first)")
                    }
                }
            }
            try pairs.remove(members.map(\.id))
        }
    }

    /// The ends of a range (`ends(of:)` and `ranks(of:)`, a descent to
    /// each end), against the entries read one by one: ranges narrow and
    /// wide, inside a leaf and across many, bounds inclusive or not, crossed
    /// bounds (whose descents end in the wrong order, and which hold
    /// nothing), and ends past either edge of the index.
    @Test func rangeEndsAreTheRanksOfTheEntriesWithin() throws {
        var random = SeededGenerator.fromEnvironment("DistinctRunsTests.rangeEndsAreTheRanksOfTheEntriesWithin")
        let store = try tableStore(checkingInvariants: false)
        defer { store.close() }
        let pairs = try store.table(Pair.self, named: "pairs", indexes: [.on(\.first, \.second)])
        let members = (0..<6000).map { Pair(id: Int64($0), first: Int.random(in: 0..<3, using: &random), second: Int.random(in: 0..<400, using: &random)) }
        try pairs.put(members.shuffled(using: &random))
        let index = pairs.storage(in: store.current).indexes[0]
        let keys = (0..<index.count).map { index.key(atRank: $0)! }
        var crossed = 0
        for _ in 0..<400 {
            let first = IndexValue.int(Int64(Int.random(in: -1...3, using: &random)))
            let low = Int.random(in: -5...405, using: &random)
            let high = low + (Bool.random(using: &random) ? Int.random(in: -3...6, using: &random) : Int.random(in: 0...400, using: &random))
            let lower = Int.random(in: 0..<5, using: &random) == 0 ? nil : KeyRange.Bound(value: .int(Int64(low)), inclusive: Bool.random(using: &random))
            let upper = Int.random(in: 0..<5, using: &random) == 0 ? nil : KeyRange.Bound(value: .int(Int64(high)), inclusive: Bool.random(using: &random))
            let range = KeyRange(prefix: [first], lower: lower, upper: upper)
            if range.isEmpty { crossed += 1 }
            let within = keys.indices.filter { rank in
                let key = keys[rank]
                guard key[0] == first else { return false }
                if let lower, key[1] < lower.value || (!lower.inclusive && key[1] == lower.value) { return false }
                if let upper, upper.value < key[1] || (!upper.inclusive && key[1] == upper.value) { return false }
                return true
            }
            let ends = index.ends(of: range)
            #expect(ends.ranks.count == within.count, "\(range)")
            #expect(index.ranks(of: range) == ends.ranks, "\(range)")
            if let firstRank = within.first, let lastRank = within.last {
                #expect(ends.ranks == firstRank..<lastRank + 1, "\(range)")
                if let known = ends.first { #expect(known == keys[firstRank], "\(range)") }
                if let known = ends.last { #expect(known == keys[lastRank], "\(range)") }
            }
        }
        // Crossed bounds came up: their ends must not be taken as a range.
        #expect(crossed > 10)
    }
}
