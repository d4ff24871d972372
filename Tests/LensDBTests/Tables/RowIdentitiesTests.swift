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
    /// and walk runs of taken slots.
    @Test func holdsExactlyTheRowsInserted() {
        var random = SeededGenerator.fromEnvironment("rowIdentities")
        for round in 0..<200 {
            let rows = (0..<Int.random(in: 0...3_000, using: &random)).map {
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
