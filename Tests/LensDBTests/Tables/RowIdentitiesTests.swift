import LensTestSupport
import Testing
@testable import LensDB

/// The set of a batch's leaving rows, which every rebuilt index asks about
/// each of its entries: a wrong answer keeps a replaced row in an index or
/// drops a live one.
struct RowIdentitiesTests {
    /// Random rows, a random part of them inserted (some twice), each asked
    /// about, held and unretained: the set holds exactly the inserted ones.
    /// Sizes run from empty to thousands, so probes wrap around the table
    /// and walk runs of taken slots; every size up to 20 and those beside
    /// powers of two come first, so the smallest sets, whose bit filter is
    /// one word, are always tried.
    @Test func holdsExactlyTheRowsInserted() {
        var random = SeededGenerator.fromEnvironment("rowIdentities")
        let edges = Array(0...20) + [31, 32, 33, 63, 64, 65, 127, 128, 129, 1023, 1024, 1025]
        for round in 0..<200 {
            let size = round < edges.count ? edges[round] : Int.random(in: 0...3_000, using: &random)
            let rows = (0..<size).map {
                RowObject(id: .int(Int64($0)), lsn: 1, encoding: .unknown)
            }
            let inserted = rows.indices.filter { _ in Bool.random(using: &random) }
            var set = RowIdentities(minimumCapacity: inserted.count)
            for place in inserted {
                set.insert(rows[place])
                if Int.random(in: 0..<4, using: &random) == 0 { set.insert(rows[place]) }
            }
            #expect(set.count == inserted.count, "round \(round)")
            #expect(set.isEmpty == inserted.isEmpty, "round \(round)")
            let expected = Set(inserted)
            let held = rows.indices.filter { set.contains(rows[$0]) }
            let lent = rows.indices.filter { set.contains(Unmanaged.passUnretained(rows[$0])) }
            #expect(Set(held) == expected, "round \(round)")
            #expect(Set(lent) == expected, "round \(round)")
        }
    }
}
