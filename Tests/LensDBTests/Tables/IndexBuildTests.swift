import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// An entity whose identifiers are chosen to share their leading bits, so
/// that index entries with equal keys can only be told apart by reading
/// their rows' identifiers.
private struct Member<ID: Codable & Hashable & Comparable & Sendable>: Entity {
    var id: ID
    var group: Int
    var note: String
}

/// Index builds from rows: sorted, or in a snapshot's stored order when
/// that order fits, with keys that tie on every field and identifiers
/// whose leading bits tie (integers above 2^18 a step apart, strings that
/// share their first bytes).
struct IndexBuildTests {
    @Test func indexesOfIdentifiersWithTiedLeadingBitsBuildSortedAndInStoredOrder() throws {
        try Self.check((0..<600).map { Int64(5_000_000_000) + Int64($0) })
        try Self.check((0..<600).map { "user-\(String(format: "%06d", $0))" })
    }

    private static func check<ID: Codable & Hashable & Comparable & Sendable>(_ ids: [ID]) throws {
        let store = try tableStore()
        defer { store.close() }
        var random = SeededGenerator.fromEnvironment("indexBuild")
        let table = try store.table(Member<ID>.self, named: "members", indexes: [.on(\.group), .on(\.group, \.note)])
        // Few groups and notes: long runs of equal keys. Notes are longer
        // than a string held inline, and share their first bytes.
        let members = ids.map {
            Member(id: $0, group: Int.random(in: 0..<3, using: &random), note: "a note long enough for the heap \(Int.random(in: 0..<2, using: &random))")
        }
        try table.put(members)
        let byGroup = members.sorted { ($0.group, $0.id) < ($1.group, $1.id) }.map(\.id)
        #expect(try table.query.sorted(by: \.group).all().map(\.id) == byGroup)

        let storage = table.storage(in: store.current)
        let rows = IndexOrderHintTests.rowsOf(storage)
        var places: [ObjectIdentifier: UInt32] = [:]
        for (place, row) in rows.enumerated() { places[ObjectIdentifier(row)] = UInt32(place) }
        for index in storage.indexes {
            let expected = IndexOrderHintTests.orderOf(index)
            let sorted = IndexStorage(index.definition, rows: rows)
            #expect(!sorted.builtInStoredOrder)
            #expect(IndexOrderHintTests.orderOf(sorted) == expected, "\(index.definition)")
            let order = sorted.order(places: places)
            let stored = IndexStorage(index.definition, rows: rows, storedOrder: order)
            #expect(stored.builtInStoredOrder, "\(index.definition)")
            #expect(IndexOrderHintTests.orderOf(stored) == expected, "\(index.definition)")
            // Two places of equal keys swapped: keys still ascend, but
            // identifiers do not. Then orders that name a place twice, miss
            // one, or name one past the end. Each is refused and sorted.
            let tie = order.indices.dropFirst().first { Self.key(rows, order[$0 - 1], index) == Self.key(rows, order[$0], index) }!
            var swapped = order
            swapped.swapAt(tie - 1, tie)
            let wrong = [swapped, Array(order.dropLast()), [order[0], order[0]] + order.dropFirst(2), order + [order[0]],
                         order.map { $0 == 0 ? UInt32(rows.count) : $0 }, order.reversed()]
            for (number, bad) in wrong.enumerated() {
                let refused = IndexStorage(index.definition, rows: rows, storedOrder: bad)
                #expect(!refused.builtInStoredOrder, "\(index.definition), wrong order \(number)")
                #expect(IndexOrderHintTests.orderOf(refused) == expected, "\(index.definition), wrong order \(number)")
            }
        }
        try store.checkInvariants()
    }

    private static func key(_ rows: [RowObject], _ place: UInt32, _ index: IndexStorage) -> IndexedKey {
        index.definition.key(rows[Int(place)])
    }
}
