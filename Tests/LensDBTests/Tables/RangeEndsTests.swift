import Foundation
import LensTestSupport
import Testing
@testable import LensDB

private struct Pair: Entity {
    var id: Int64
    var first: Int
    var second: Int
}

/// The ends of an index range (`IndexStorage.ends(of:)` and `ranks(of:)`,
/// a descent to each end), against the entries read one by one: ranges
/// narrow and wide, inside a leaf and across many, bounds inclusive or
/// not, crossed bounds (whose descents end in the wrong order, and which
/// hold nothing), and ends past either edge of the index.
struct RangeEndsTests {
    @Test func rangeEndsAreTheRanksOfTheEntriesWithin() throws {
        var random = SeededGenerator.fromEnvironment("RangeEndsTests.rangeEndsAreTheRanksOfTheEntriesWithin")
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
