import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// A table's rows by identifier, held as integers while every identifier
/// is one: a wrong answer loses an entity or finds one that is gone.
struct RowTreeTests {
    /// Random puts and removes, mirrored in a dictionary: after each step
    /// the tree holds exactly its entries, in identifier order, and finds
    /// each present identifier, no absent one, and no identifier of
    /// another kind. Partway, an identifier that is not an integer goes in
    /// (a `UInt64` above `Int64.max` or a string), and the tree holds
    /// values from then on, every entry kept.
    @Test func holdsWhatWasPutInOrderBeforeAndAfterItHoldsValues() {
        var random = SeededGenerator.fromEnvironment("RowTreeTests.holdsWhatWasPutInOrderBeforeAndAfterItHoldsValues")
        for round in 0..<40 {
            var tree = RowTree(), expected: [IndexValue: RowObject] = [:]
            let steps = Int.random(in: 1...600, using: &random)
            let widening = Bool.random(using: &random) ? Int.random(in: 0..<steps, using: &random) : nil
            for step in 0..<steps {
                var id = IndexValue.int(Int64.random(in: -300...300, using: &random))
                if step == widening {
                    id = Bool.random(using: &random) ? .uint(UInt64(Int64.max) + UInt64.random(in: 1...9, using: &random)) : .string("s\(step)")
                }
                if step != widening, Int.random(in: 0..<4, using: &random) == 0 {
                    #expect(tree.removeValue(forKey: id) === expected.removeValue(forKey: id), "round \(round) step \(step)")
                } else {
                    let row = RowObject(id: id, lsn: UInt64(step), encoding: .unknown)
                    #expect(tree.updateValue(row, forKey: id) === expected.updateValue(row, forKey: id), "round \(round) step \(step)")
                }
            }
            #expect(tree.holdsIntegers == (widening == nil), "round \(round)")
            #expect(tree.count == expected.count && tree.checkInvariants() == nil, "round \(round)")
            var walked: [(IndexValue, RowObject)] = []
            tree.forEach { id, row in
                walked.append((id, row))
                return true
            }
            let sorted = expected.sorted { $0.key < $1.key }
            #expect(walked.map(\.0) == sorted.map(\.key), "round \(round)")
            #expect(zip(walked, sorted).allSatisfy { $0.1 === $1.value }, "round \(round)")
            // A double of integral value is the integer, as IndexValue orders them.
            for probe in -310...310 {
                #expect(tree.value(for: .int(Int64(probe))) === expected[.int(Int64(probe))], "round \(round) id \(probe)")
                #expect(tree.value(for: .double(Double(probe))) === expected[.int(Int64(probe))], "round \(round) id \(probe)")
            }
            #expect(tree.value(for: .double(0.5)) == nil && tree.value(for: .string("1")) == nil, "round \(round)")
        }
    }

    /// Replaced and removed through a double of integral value, a tree of
    /// integers changes the entry of that integer, as a tree of values does.
    @Test func aDoubleOfIntegralValueNamesItsInteger() {
        let one = RowObject(id: .int(1), lsn: 1, encoding: .unknown), other = RowObject(id: .int(1), lsn: 2, encoding: .unknown)
        var tree = RowTree()
        tree.updateValue(one, forKey: .int(1))
        #expect(tree.updateValue(other, forKey: .double(1)) === one)
        #expect(tree.holdsIntegers && tree.count == 1 && tree.value(for: .int(1)) === other)
        #expect(tree.removeValue(forKey: .double(1.5)) == nil && tree.removeValue(forKey: .double(1)) === other)
        #expect(tree.isEmpty)
    }

    /// A change to a tree no other version shares is made in place, in
    /// either form: a put copying its path each time would be slow, never
    /// wrong, so only the root's identity tells. A version that shares the
    /// tree keeps its nodes and its rows.
    @Test func aChangeNoOtherVersionSharesIsMadeInPlace() {
        for widened in [false, true] {
            let rows = (0..<10_000).map { RowObject(id: .int(Int64($0)), lsn: 1, encoding: .unknown) }
            var tree = RowTree(count: rows.count, id: { rows[$0].id }, row: { rows[$0] })
            if widened { tree.updateValue(RowObject(id: .string("x"), lsn: 2, encoding: .unknown), forKey: .string("x")) }
            #expect(tree.holdsIntegers == !widened)
            let root = tree.rootIdentity
            tree.updateValue(RowObject(id: .int(5), lsn: 2, encoding: .unknown), forKey: .int(5))
            #expect(tree.rootIdentity == root, "widened: \(widened)")
            #expect(tree.removeValue(forKey: .int(6)) === rows[6] && tree.rootIdentity == root, "widened: \(widened)")
            let version = tree
            tree.updateValue(RowObject(id: .int(7), lsn: 3, encoding: .unknown), forKey: .int(7))
            #expect(tree.rootIdentity != root && version.rootIdentity == root, "widened: \(widened)")
            #expect(version.value(for: .int(7)) === rows[7] && tree.value(for: .int(7)) !== rows[7], "widened: \(widened)")
        }
    }

    /// Built at once, as a load or an open builds it: integers when every
    /// identifier is one, values as soon as one is not.
    @Test func aBuiltTreeHoldsIntegersOnlyWhenEveryIdentifierIsOne() {
        for ids in [[IndexValue.int(-5), .int(0), .int(7)], [.int(1), .int(2), .uint(UInt64.max)], [.string("a"), .string("b")], []] {
            let rows = ids.map { RowObject(id: $0, lsn: 1, encoding: .unknown) }
            let tree = RowTree(count: rows.count, id: { ids[$0] }, row: { rows[$0] })
            #expect(tree.holdsIntegers == ids.allSatisfy { if case .int = $0 { true } else { false } }, "\(ids)")
            #expect(tree.count == ids.count && tree.checkInvariants() == nil, "\(ids)")
            for (id, row) in zip(ids, rows) { #expect(tree.value(for: id) === row, "\(id)") }
        }
    }
}
