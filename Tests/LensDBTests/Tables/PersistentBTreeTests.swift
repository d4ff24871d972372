import LensTestSupport
import Synchronization
import Testing
@testable import LensDB

/// The trees here are keyed by plain integers.
extension Int: BTreeKey {}

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
        var neighborsMissed = 0
        for _ in 0..<200 {
            let bound = Int.random(in: -10..<4010, using: &random)
            #expect(walk(tree, from: bound) == reference.entries.map(\.key).filter { $0 >= bound })
            #expect(walkReversed(tree, from: bound) == reference.entries.map(\.key).filter { $0 <= bound }.reversed())
            // By place, as index walks read their entries: the same keys,
            // and a walk stopped by its body stops there.
            let stopAfter = Int.random(in: 1...40, using: &random)
            var placed: [Int] = [], placedDown: [Int] = []
            tree.forEachPlace(descending: false, from: { $0.pointee < bound }) {
                placed.append($0.pointee)
                return placed.count < stopAfter
            }
            tree.forEachPlace(descending: true, from: { $0.pointee > bound }) {
                placedDown.append($0.pointee)
                return placedDown.count < stopAfter
            }
            let keys = reference.entries.map(\.key)
            #expect(placed == Array(keys.filter { $0 >= bound }.prefix(stopAfter)), "seed \(random.seed)")
            #expect(placedDown == Array(keys.filter { $0 <= bound }.reversed().prefix(stopAfter)), "seed \(random.seed)")
            #expect(tree.rank(of: { $0 < bound }) == reference.index(bound))
            // The keys around the rank, where the descent's leaf holds them.
            let before = tree.rankAndNeighbor(ofPlace: { $0.pointee < bound }, before: true)
            let at = tree.rankAndNeighbor(ofPlace: { $0.pointee < bound }, before: false)
            #expect(before.rank == reference.index(bound))
            #expect(at.rank == reference.index(bound))
            if let key = before.key { #expect(key == keys[before.rank - 1]) } else if before.rank > 0 { neighborsMissed += 1 }
            if let key = at.key { #expect(key == keys[at.rank]) } else if at.rank < keys.count { neighborsMissed += 1 }
            let probe = Int.random(in: 0..<4000, using: &random)
            #expect(tree.value(for: probe) == reference.entries.first { $0.key == probe }?.value)
            if !reference.entries.isEmpty {
                let rank = Int.random(in: 0..<reference.entries.count, using: &random)
                #expect(tree.entry(atRank: rank)?.key == reference.entries[rank].key)
            }
        }
        // Only a rank at a leaf's edge leaves a neighbor in another leaf.
        #expect(neighborsMissed < 80, "\(neighborsMissed) of 400 neighbors not found")
        for (version, entries) in versions {
            #expect(walk(version) == entries.map(\.key), "an old version changed")
            #expect(version.count == entries.count)
            #expect(version.checkInvariants() == nil)
        }
    }

    /// An entry that carries more than its order, as an index entry carries
    /// its row: equal entries (`==` reads only `key`) are told apart by `tag`.
    struct Tagged: BTreeKey, WholeEntryKey {
        let key: Int
        let tag: Int
        static func < (a: Self, b: Self) -> Bool { a.key < b.key }
        static func == (a: Self, b: Self) -> Bool { a.key == b.key }
    }

    /// Trees built from sorted entries, at the sizes where a leaf or an
    /// inner level fills up, keep every invariant, rank and entry, take
    /// changes afterwards, and a small one takes no more room than the same
    /// entries inserted one at a time.
    @Test func builtTreesHoldTheirEntriesAtEveryFillBoundary() {
        let fill = PersistentBTree<Int, Int>.leafCapacity * 3 / 4
        for count in [0, 1, 2, fill - 1, fill, fill + 1, fill * fill, fill * fill + 1, fill * fill * 2 + 3] {
            let entries = (0..<count).map { (key: $0 * 2, value: $0) }
            var tree = PersistentBTree(sorted: entries)
            #expect(tree.checkInvariants() == nil, "\(count)")
            #expect(tree.count == count)
            #expect(walk(tree) == entries.map(\.key), "\(count)")
            for rank in Set([0, count / 2, count - 1]) where rank >= 0 && rank < count {
                #expect(tree.entry(atRank: rank)?.key == rank * 2, "\(count) at \(rank)")
                #expect(tree.rank(of: { $0 < rank * 2 }) == rank)
            }
            var marks = PersistentBTree<Int, EntryMark>.Builder(capacity: count)
            for entry in entries { marks.append(entry.key, EntryMark()) }
            let built = marks.tree()
            #expect(built.checkInvariants() == nil && built.count == count, "\(count)")
            // Odd keys between the built ones, then every other one out.
            for key in stride(from: 1, to: 2 * count, by: 2) { tree.updateValue(-key, forKey: key) }
            for key in stride(from: 0, to: 2 * count, by: 4) { tree.removeValue(forKey: key) }
            #expect(tree.checkInvariants() == nil, "\(count) after changes")
            #expect(walk(tree) == (0..<2 * count).filter { $0 % 4 != 0 }, "\(count) after changes")
        }
        for count in [1, 5, fill - 1] {
            var inserted = PersistentBTree<Int, Int>()
            for key in 0..<count { inserted.updateValue(key, forKey: key) }
            let built = PersistentBTree(sorted: (0..<count).map { (key: $0, value: $0) })
            #expect(built.allocatedBytes <= inserted.allocatedBytes, "\(count): \(built.allocatedBytes) against \(inserted.allocatedBytes)")
        }
    }

    /// Index entries are whole entries, which a replacement stores in
    /// place of the equal one; a table's integer keys and plain values are
    /// not, so a copied leaf keeps sharing its keys.
    @Test func indexEntriesAndOnlyThemAreWholeEntries() {
        #expect(OneFieldEntry.isWholeEntry && TwoFieldEntry.isWholeEntry && ThreeFieldEntry.isWholeEntry && Tagged.isWholeEntry)
        #expect(!Int64.isWholeEntry && !IndexValue.isWholeEntry && !Int.isWholeEntry)
    }

    /// In a tree without values, a replacement stores the new entry, and
    /// every separator above it follows, as an index's must (a separator
    /// left pointing at a replaced row would read freed memory). A removal
    /// of an absent entry by ``PersistentBTree/removeValue(forPresentKey:)``
    /// changes nothing. Old versions keep their own entries.
    @Test func replacedEntriesAndTheirSeparatorsAreTheNewOnes() throws {
        var random = SeededGenerator.fromEnvironment("persistentBTreeTagged")
        var tree = PersistentBTree<Tagged, EntryMark>()
        var reference: [Int: Int] = [:]
        var versions: [(PersistentBTree<Tagged, EntryMark>, [Int: Int])] = []
        let identical = { (a: Tagged, b: Tagged) in a.key == b.key && a.tag == b.tag }
        for step in 0..<20_000 {
            let key = Int.random(in: 0..<2000, using: &random)
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6:
                tree.updateValue(EntryMark(), forKey: Tagged(key: key, tag: step))
                reference[key] = step
            case 6..<9:
                let removed = tree.removeValue(forPresentKey: Tagged(key: key, tag: -1)) != nil
                #expect(removed == (reference.removeValue(forKey: key) != nil))
            default:
                let removed = tree.removeValue(forKey: Tagged(key: key, tag: -1)) != nil
                #expect(removed == (reference.removeValue(forKey: key) != nil))
            }
            if step % 2000 == 0 { versions.append((tree, reference)) }
            if step % 499 == 0 { #expect(tree.checkInvariants(identical: identical) == nil, "\(tree.checkInvariants(identical: identical) ?? "")") }
        }
        func entries(_ tree: PersistentBTree<Tagged, EntryMark>) -> [Int: Int] {
            var found: [Int: Int] = [:]
            tree.forEach { entry, _ in found[entry.key] = entry.tag; return true }
            return found
        }
        #expect(tree.checkInvariants(identical: identical) == nil)
        #expect(entries(tree) == reference && tree.count == reference.count)
        for (version, held) in versions {
            #expect(entries(version) == held, "an old version changed")
            #expect(version.checkInvariants(identical: identical) == nil)
        }
    }

    /// The first leaf of an internal node that is not the first is emptied
    /// without merging (its neighbour is full), so that node's first key
    /// changes, and its parent's separator must follow. Random changes
    /// rarely get there: a small leaf usually merges first. The keys are
    /// laid out for sequential inserts: leaves split at 32 entries into
    /// halves of 16, internal nodes at 16 children into 8 and 9, so the
    /// seventeenth leaf (keys 25,600 to 27,100) begins an internal node.
    @Test func emptyingTheFirstLeafOfAnInnerNodeMovesItsSeparator() {
        var tree = PersistentBTree<Tagged, EntryMark>()
        for key in 0..<1200 { tree.updateValue(EntryMark(), forKey: Tagged(key: key * 100, tag: key)) }
        for extra in 1...16 { tree.updateValue(EntryMark(), forKey: Tagged(key: 27_200 + extra, tag: -extra)) }
        let identical = { (a: Tagged, b: Tagged) in a.key == b.key && a.tag == b.tag }
        let before = tree
        for key in stride(from: 271, through: 256, by: -1) {
            #expect(tree.removeValue(forPresentKey: Tagged(key: key * 100, tag: 0)) != nil)
            #expect(tree.checkInvariants(identical: identical) == nil, "after removing \(key * 100)")
        }
        // The subtree's new first entry, replaced by an equal one.
        tree.updateValue(EntryMark(), forKey: Tagged(key: 27_200, tag: 99_999))
        #expect(tree.checkInvariants(identical: identical) == nil)
        #expect(before.checkInvariants(identical: identical) == nil && before.count == 1216)
    }

    /// Two internal nodes merge only when their children fit in one: 16 in
    /// an index tree (values of no size), 32 in a row tree. The first
    /// internal node is grown to its most children by splitting leaves,
    /// then its neighbour's leaves are emptied but three, a key at a time.
    /// Random changes rarely get there; a merge by the leaves' capacity
    /// would make an index node of 19 children.
    @Test func internalNodesMergeOnlyWithinTheirTreesCapacity() {
        func check<Value: Sendable>(_ value: Value) {
            typealias Tree = PersistentBTree<Int, Value>
            let leafFill = Tree.leafCapacity * 3 / 4, branchFill = Tree.branchCapacity * 3 / 4
            var builder = Tree.Builder(capacity: leafFill * branchFill * branchFill)
            for key in 0..<leafFill * branchFill * branchFill { builder.append(key * 10, value) }
            var tree = builder.tree()
            // Nine entries more split a leaf of 24: one child more each.
            for leaf in 0..<Tree.branchCapacity - branchFill {
                for extra in 0..<9 { tree.updateValue(value, forKey: (leaf * leafFill + extra) * 10 + 1) }
            }
            #expect(tree.checkInvariants() == nil, "\(Value.self) after the splits")
            for key in (branchFill + 3) * leafFill..<2 * branchFill * leafFill {
                tree.removeValue(forKey: key * 10)
                if let problem = tree.checkInvariants() {
                    Issue.record("\(Value.self) after removing \(key * 10): \(problem)")
                    return
                }
            }
        }
        check(EntryMark())
        check(0)
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

    /// What an index walk prefetches rows by: `ahead` names each entry
    /// before `body` reaches it, in the walk's order, only entries of the
    /// tree from the walk's start on, and never more than a few places
    /// ahead; in both directions, from random bounds, with early stops.
    @Test func aheadNamesEachEntryBeforeTheWalkReachesIt() {
        var random = SeededGenerator.fromEnvironment("persistentBTreeAhead")
        var tree = PersistentBTree<Int, Int>()
        var keys: [Int] = []
        for _ in 0..<3000 {
            let key = Int.random(in: 0..<20_000, using: &random)
            if tree.updateValue(key * 2, forKey: key) == nil { keys.append(key) }
        }
        keys.sort()
        let lookahead = PersistentBTree<Int, Int>.lookahead
        for _ in 0..<200 {
            let bound = Int.random(in: -5..<20_005, using: &random)
            let stopAfter = Int.random(in: 1..<400, using: &random)
            for descending in [false, true] {
                var announced: [Int] = [], walked: [Int] = []
                let ahead = { (key: Int, value: Int) in
                    #expect(value == key * 2)
                    announced.append(key)
                }
                let body = { (key: Int, _: Int) -> Bool in
                    #expect(announced.contains(key), "walked to \(key) before it was announced")
                    #expect(announced.count <= walked.count + lookahead + 1, "announced more than \(lookahead) entries ahead")
                    walked.append(key)
                    return walked.count < stopAfter
                }
                if descending {
                    tree.forEachReversed(from: { $0 > bound }, ahead: ahead, body)
                } else {
                    tree.forEach(from: { $0 < bound }, ahead: ahead, body)
                }
                let expected = descending ? Array(keys.filter { $0 <= bound }.reversed()) : keys.filter { $0 >= bound }
                #expect(walked == Array(expected.prefix(stopAfter)))
                // Announced in order, each once, from the start: a prefix of the walk itself.
                #expect(announced == Array(expected.prefix(announced.count)), "seed \(random.seed)")
            }
        }
    }

    /// A cursor visits what a walk from the same bound visits, in both
    /// directions, and from a rank what follows that place, on trees of
    /// one leaf to three levels, and on an old version while the tree it
    /// came from changes on.
    @Test func cursorsMoveAsWalksDo() {
        var random = SeededGenerator.fromEnvironment("persistentBTreeCursor")
        for size in [0, 1, 5, 31, 33, 700, 30_000] {
            var tree = PersistentBTree<Int, Int>()
            for _ in 0..<size { tree.updateValue(0, forKey: Int.random(in: 0..<(size * 3), using: &random)) }
            let held = tree
            let keys = walk(held)
            for _ in 0..<40 { tree.updateValue(1, forKey: Int.random(in: 0..<(size * 3 + 1), using: &random)) }
            for _ in 0..<60 {
                let bound = Int.random(in: -2...(size * 3 + 2), using: &random)
                let stopAfter = Int.random(in: 1...(size + 2), using: &random)
                for descending in [false, true] {
                    var cursor = PersistentBTree<Int, Int>.Cursor(held, descending: descending) { descending ? $0 > bound : $0 < bound }
                    var visited: [Int] = []
                    while visited.count < stopAfter, let (key, value) = cursor.entry {
                        #expect(value == 0)
                        visited.append(key)
                        cursor.advance()
                    }
                    let expected = descending ? Array(keys.filter { $0 <= bound }.reversed()) : keys.filter { $0 >= bound }
                    #expect(visited == Array(expected.prefix(stopAfter)), "size \(size), bound \(bound), seed \(random.seed)")
                }
                // From a rank: the keys from that place in ascending order on.
                let rank = Int.random(in: -1...(keys.count + 1), using: &random)
                var cursor = PersistentBTree<Int, Int>.Cursor(held, atRank: rank)
                var visited: [Int] = []
                while visited.count < stopAfter, let (key, _) = cursor.entry {
                    visited.append(key)
                    cursor.advance()
                }
                let expected = keys.indices.contains(rank) ? Array(keys[rank...].prefix(stopAfter)) : []
                #expect(visited == expected, "size \(size), rank \(rank), seed \(random.seed)")
                // Turned at a rank: the keys from that place in descending order on.
                var down = PersistentBTree<Int, Int>.Cursor(held, atRank: rank).turned()
                visited = []
                while visited.count < stopAfter, let (key, _) = down.entry {
                    visited.append(key)
                    down.advance()
                }
                let below = keys.indices.contains(rank) ? Array(keys[...rank].reversed().prefix(stopAfter)) : []
                #expect(visited == below, "size \(size), rank \(rank) turned, seed \(random.seed)")
            }
        }
    }

    /// A builder owns the leaf it fills by hand, not through ARC, and hands
    /// that reference on: whether the last leaf is open, just filled or the
    /// whole tree, every key and value a built tree took is alive while the
    /// tree is and released once with it, and the open leaf itself is
    /// freed with the tree (it holds nothing by then: its entries moved
    /// into a leaf of their own size). A builder dropped before it builds
    /// releases its entries and its open leaf too.
    @Test func builtTreesReleaseEveryEntryWithTheirLastVersion() {
        let fill = PersistentBTree<CountedKey, Counted>.leafCapacity * 3 / 4
        for count in [0, 1, fill - 1, fill, fill + 1, fill * 3, fill * 3 + 2] {
            let census = Census()
            weak var openLeaf: AnyObject?
            do {
                var builder = PersistentBTree<CountedKey, Counted>.Builder(capacity: count)
                for key in 0..<count { builder.append(CountedKey(key, census), Counted(key, census)) }
                openLeaf = builder.openLeaf
                #expect((openLeaf == nil) == (count % fill == 0), "\(count) entries")
                let tree = builder.tree()
                #expect(census.live.withLock { $0 } == 2 * count, "\(count) entries")
                var seen = 0
                tree.forEach { key, value in
                    #expect(key.key == seen && value.value == seen)
                    seen += 1
                    return true
                }
                #expect(seen == count && tree.checkInvariants() == nil, "\(count) entries")
            }
            #expect(census.live.withLock { $0 } == 0, "\(count) entries: keys or values left alive")
            #expect(openLeaf == nil, "\(count) entries: the open leaf left alive")
        }
        let census = Census()
        weak var openLeaf: AnyObject?
        do {
            var dropped = PersistentBTree<CountedKey, Counted>.Builder(capacity: fill * 2)
            for key in 0..<fill + 3 { dropped.append(CountedKey(key, census), Counted(key, census)) }
            openLeaf = dropped.openLeaf
            #expect(openLeaf != nil && census.live.withLock { $0 } == 2 * (fill + 3))
        }
        #expect(census.live.withLock { $0 } == 0 && openLeaf == nil, "a dropped builder left entries or its leaf alive")
    }

    /// A walk by place visits every entry in key order and stops where its
    /// body says; a tree built of copies made from those places (as an
    /// index's rebuild makes one) holds the same entries, each key a copy
    /// of its own: the copy lives on after the original tree is gone, and
    /// nothing is left alive once both are.
    @Test func aTreeCopiedByPlaceHoldsItsOwnCopyOfEveryEntry() {
        let fill = PersistentBTree<CountedKey, Counted>.leafCapacity * 3 / 4
        for count in [0, 1, fill, fill * 40 + 7] {
            let census = Census()
            do {
                var copy = PersistentBTree<CountedKey, EntryMark>.Builder(capacity: count)
                var stoppedAt: [Int] = []
                do {
                    var builder = PersistentBTree<CountedKey, EntryMark>.Builder(capacity: count)
                    for key in 0..<count { builder.append(CountedKey(key, census), EntryMark()) }
                    let tree = builder.tree()
                    tree.forEachPlace { place in
                        copy.append(copying: place, EntryMark())
                        return true
                    }
                    #expect(census.live.withLock { $0 } == count, "\(count) entries")
                    tree.forEachPlace { place in
                        stoppedAt.append(place.pointee.key)
                        return stoppedAt.count < count / 2
                    }
                }
                #expect(stoppedAt == Array(Array(0..<max(1, count / 2)).prefix(count)), "\(count) entries")
                // The original is gone: the copies hold the keys' tokens.
                #expect(census.live.withLock { $0 } == count, "\(count) entries: a copy did not retain its key")
                let copied = copy.tree()
                #expect(copied.checkInvariants() == nil && copied.count == count, "\(count) entries")
                var seen = 0
                copied.forEach { key, _ in
                    #expect(key.key == seen)
                    seen += 1
                    return true
                }
                #expect(seen == count, "\(count) entries")
            }
            #expect(census.live.withLock { $0 } == 0, "\(count) entries: keys left alive")
        }
    }

    /// A node is one allocation whose slots the tree initializes, moves and
    /// destroys by hand. Keys and values that count their own lives show
    /// that every one a tree took is released once, whatever the changes
    /// (splits, merges, replacements, nodes grown and shrunk, bulk builds)
    /// and however many versions share its nodes: none is left alive once
    /// every version is gone, and none is released early (a version still
    /// reads each of its own).
    @Test func everyKeyAndValueIsReleasedOnceWhenItsLastVersionGoes() {
        var random = SeededGenerator.fromEnvironment("persistentBTreeLifetimes")
        let census = Census()
        do {
            var tree = PersistentBTree<CountedKey, Counted>()
            var reference: [Int: Int] = [:]
            var versions: [(PersistentBTree<CountedKey, Counted>, [Int: Int])] = []
            for step in 0..<12_000 {
                let key = Int.random(in: 0..<1500, using: &random)
                // Mostly puts, then mostly removals: nodes split, then merge.
                if Int.random(in: 0..<10, using: &random) < (step < 8000 ? 6 : 2) {
                    let old = tree.updateValue(Counted(step, census), forKey: CountedKey(key, census))
                    #expect(old?.value == reference.updateValue(step, forKey: key))
                } else {
                    #expect(tree.removeValue(forKey: CountedKey(key, census))?.value == reference.removeValue(forKey: key))
                }
                if step % 1500 == 0 { versions.append((tree, reference)) }
                if step == 6000 {
                    // Halfway, a bulk build of everything, which changes go on in.
                    var builder = PersistentBTree<CountedKey, Counted>.Builder(capacity: reference.count)
                    for (key, value) in reference.sorted(by: { $0.key < $1.key }) { builder.append(CountedKey(key, census), Counted(value, census)) }
                    tree = builder.tree()
                }
            }
            #expect(tree.checkInvariants() == nil, "\(tree.checkInvariants() ?? ""), seed \(random.seed)")
            for (version, held) in versions + [(tree, reference)] {
                var seen: [Int: Int] = [:]
                version.forEach { key, value in seen[key.key] = value.value; return true }
                #expect(seen == held, "a version lost or changed an entry, seed \(random.seed)")
            }
            #expect(census.live.withLock { $0 } > 0)
        }
        #expect(census.live.withLock { $0 } == 0, "keys or values left alive, seed \(random.seed)")
    }
}

/// How many ``Counted`` objects are alive.
private final class Census: Sendable {
    let live = Mutex(0)
}

/// A value that counts itself alive in its census.
private final class Counted: Sendable {
    let value: Int
    let census: Census
    init(_ value: Int, _ census: Census) {
        self.value = value
        self.census = census
        census.live.withLock { $0 += 1 }
    }
    deinit { census.live.withLock { $0 -= 1 } }
}

/// A key that holds a ``Counted``: ordered by `key` alone.
private struct CountedKey: BTreeKey {
    let key: Int
    let token: Counted
    init(_ key: Int, _ census: Census) {
        self.key = key
        token = Counted(key, census)
    }
    static func < (a: Self, b: Self) -> Bool { a.key < b.key }
    static func == (a: Self, b: Self) -> Bool { a.key == b.key }
}
