import LensTestSupport
import Testing
@testable import LensDB

/// The persistent B+tree against a sorted-array reference: random inserts,
/// replacements and removals, ordered walks from bounds in both directions,
/// ranks, and old versions that stay exactly as they were.
@Suite struct PersistentBTreeTests {
    /// A sorted array of (key, value): the obviously right ordered map.
    struct Reference {
        var entries: [(key: Int, value: Int)] = []
        func index(_ key: Int) -> Int { entries.partitionIndex { $0.key >= key } }
        mutating func set(_ key: Int, _ value: Int) -> Int? {
            let at = index(key)
            if at < entries.count && entries[at].key == key {
                defer { entries[at].value = value }
                return entries[at].value
            }
            entries.insert((key, value), at: at)
            return nil
        }
        mutating func remove(_ key: Int) -> Int? {
            let at = index(key)
            guard at < entries.count && entries[at].key == key else { return nil }
            return entries.remove(at: at).value
        }
    }

    func walk(_ tree: PersistentBTree<Int, Int>, from bound: Int? = nil) -> [Int] {
        var keys: [Int] = []
        tree.forEach(from: { key in bound.map { key < $0 } ?? false }) { key, _ in keys.append(key); return true }
        return keys
    }

    func walkReversed(_ tree: PersistentBTree<Int, Int>, from bound: Int? = nil) -> [Int] {
        var keys: [Int] = []
        tree.forEachReversed(from: { key in bound.map { key > $0 } ?? false }) { key, _ in keys.append(key); return true }
        return keys
    }

    @Test func randomChangesMatchASortedArrayAndOldVersionsStayWhole() throws {
        var random = SeededGenerator.fromEnvironment("persistentBTree")
        var tree = PersistentBTree<Int, Int>()
        var reference = Reference()
        var versions: [(PersistentBTree<Int, Int>, [(key: Int, value: Int)])] = []
        for step in 0..<30_000 {
            let key = Int.random(in: 0..<4000, using: &random)
            if Int.random(in: 0..<10, using: &random) < 6 {
                #expect(tree.updateValue(step, forKey: key) == reference.set(key, step))
            } else {
                #expect(tree.removeValue(forKey: key) == reference.remove(key))
            }
            if step % 3000 == 0 { versions.append((tree, reference.entries)) }
            if step % 997 == 0 {
                #expect(tree.checkInvariants() == nil, "\(tree.checkInvariants() ?? "")")
                #expect(tree.count == reference.entries.count)
            }
        }
        #expect(walk(tree) == reference.entries.map(\.key))
        #expect(walkReversed(tree) == reference.entries.map(\.key).reversed())
        for _ in 0..<200 {
            let bound = Int.random(in: -10..<4010, using: &random)
            #expect(walk(tree, from: bound) == reference.entries.map(\.key).filter { $0 >= bound })
            #expect(walkReversed(tree, from: bound) == reference.entries.map(\.key).filter { $0 <= bound }.reversed())
            #expect(tree.rank(of: { $0 < bound }) == reference.index(bound))
            let probe = Int.random(in: 0..<4000, using: &random)
            #expect(tree.value(for: probe) == reference.entries.first { $0.key == probe }?.value)
            if !reference.entries.isEmpty {
                let rank = Int.random(in: 0..<reference.entries.count, using: &random)
                #expect(tree.entry(atRank: rank)?.key == reference.entries[rank].key)
            }
        }
        for (version, entries) in versions {
            #expect(walk(version) == entries.map(\.key), "an old version changed")
            #expect(version.count == entries.count)
            #expect(version.checkInvariants() == nil)
        }
    }

    @Test func removingEverythingLeavesAnEmptyTreeAndEarlyStopsStop() {
        var tree = PersistentBTree<Int, Int>()
        for key in 0..<5000 { tree.updateValue(key, forKey: key) }
        let full = tree
        var seen = 0
        tree.forEach(from: { $0 < 100 }) { _, _ in seen += 1; return seen < 10 }
        #expect(seen == 10)
        for key in stride(from: 0, to: 5000, by: 2) { tree.removeValue(forKey: key) }
        #expect(tree.checkInvariants() == nil)
        for key in stride(from: 1, to: 5000, by: 2) { tree.removeValue(forKey: key) }
        #expect(tree.isEmpty && tree.first == nil && walk(tree).isEmpty)
        #expect(full.count == 5000 && walk(full) == Array(0..<5000))
    }
}
