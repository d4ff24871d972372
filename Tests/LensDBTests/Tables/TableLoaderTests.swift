import Foundation
import LensLog
import LensTestSupport
import Testing
@testable import LensDB

/// A large table's first open decodes its entries and builds its indexes on
/// several threads. Split into runs of a few entries, a load must give what
/// one thread gives: the same rows, indexes, quarantine and errors.
@Suite struct TableLoaderTests {
    /// Entries as a snapshot of `people` holds them, in key order, with the
    /// entries at `broken` replaced by bytes that are no person; and, when
    /// `reversed`, given in reverse, as a snapshot LensDB did not write might.
    ///
    /// `inPlace` loads it as an open does, from a snapshot written with
    /// those items: each entry read in place in its chunk. A filler
    /// table's large entries come between every five people, so that the
    /// people lie in many chunks, a few in each, and runs of 7 end inside
    /// chunks.
    static func state(_ people: [Person], broken: Set<Int>, reversed: Bool, inPlace: Bool = false) throws -> StoreState {
        var loader = SnapshotLoader(lastLSN: 9)
        var items: [SnapshotItem] = [.table(id: 1, name: "people"), .table(id: 2, name: "filler"),
                                     .tableEncoding(table: 1, key: KeyEncoding.int64.rawValue, value: ValueEncoding.valueFormat.rawValue)]
        var entries = try people.sorted { $0.id < $1.id }.enumerated().map { place, person in
            (OrderedKey.int64(person.id), broken.contains(place) ? try ValueEncoder().encode(["no": "person"]) : try ValueEncoder().encode(person))
        }
        if reversed { entries.reverse() }
        for (place, (key, value)) in entries.enumerated() {
            items.append(.entry(table: 1, key: key, value: value))
            if place % 5 == 4 { items.append(.entry(table: 2, key: OrderedKey.int64(Int64(place)), value: [UInt8](repeating: 7, count: 20_000))) }
        }
        // The indexes' orders, as a compaction of the people stores them.
        var whole = SnapshotLoader(lastLSN: 9)
        _ = whole.add(.table(id: 1, name: "people"))
        for person in people { _ = whole.add(.entry(table: 1, key: OrderedKey.int64(person.id), value: try ValueEncoder().encode(person))) }
        let storage = try TableLoader<Person>(name: "people", indexes: personIndexes, policy: .fail).load(from: whole.state)
        for (index, positions) in storage.indexOrders() { items.append(.indexOrder(table: 1, index: index, start: 0, positions: positions)) }
        guard inPlace else {
            for item in items { #expect(loader.add(item) == nil) }
            return loader.state
        }
        let file = try SnapshotLoaderTests.snapshot(items, lastLSN: 9)
        #expect(file.chunkCount >= 2, "\(file.chunkCount) chunks for \(people.count) people")
        return try Store.loadState(from: file)
    }

    /// What a load gives, as comparable values: each index's identifiers in
    /// its order, the quarantined keys, or the error's text.
    static func outcome(_ state: StoreState, policy: UndecodablePolicy, entriesPerThread: Int) -> [String] {
        var loader = TableLoader<Person>(name: "people", indexes: personIndexes, policy: policy)
        loader.entriesPerThread = entriesPerThread
        do {
            let storage = try loader.load(from: state)
            try storage.checkInvariants()
            var outcome = ["rows: \(IndexOrderHintTests.rowsOf(storage).map(\.id))"]
            outcome += storage.indexes.map { "\($0.definition): \(IndexOrderHintTests.orderOf($0))" }
            outcome.append("quarantined: \(storage.quarantine.keys.sorted { $0.lexicographicallyPrecedes($1) })")
            outcome.append("in stored order: \(storage.indexesInStoredOrder)")
            return outcome
        } catch {
            return ["\(error)"]
        }
    }

    @Test func aLoadSplitIntoRunsGivesWhatOneThreadGives() throws {
        var random = SeededGenerator.fromEnvironment(default: 41)
        for round in 0..<12 {
            let count = Int.random(in: 20...90, using: &random)
            let people = (1...count).map { Person.random(Int64($0) * 5 - 40, using: &random) }
            let broken = round % 3 == 0 ? [] : Set((0..<Int.random(in: 1...3, using: &random)).map { _ in Int.random(in: 0..<count, using: &random) })
            let state = try Self.state(people, broken: broken, reversed: round % 4 == 1)
            let inPlace = try Self.state(people, broken: broken, reversed: round % 4 == 1, inPlace: true)
            for policy in [UndecodablePolicy.fail, .quarantine] {
                let alone = Self.outcome(state, policy: policy, entriesPerThread: .max)
                let split = Self.outcome(state, policy: policy, entriesPerThread: 7)
                #expect(split == alone, "round \(round), \(policy)")
                // Read in place, from chunks a run ends inside of.
                #expect(Self.outcome(inPlace, policy: policy, entriesPerThread: 7) == alone, "round \(round), \(policy), in place")
                #expect(Self.outcome(inPlace, policy: policy, entriesPerThread: .max) == alone, "round \(round), \(policy), in place")
                if broken.isEmpty {
                    #expect(alone.last == "in stored order: \(personIndexes.count)", "\(alone)")
                } else if policy == .fail {
                    #expect(alone.count == 1 && alone[0].contains("\(broken.count)"), "\(alone)")
                }
            }
        }
    }

    /// Each row an open decodes is freed exactly once: with its table,
    /// or when the load throws first (an entry that does not decode, a
    /// unique key held twice). Rows come from a snapshot (in key order) or
    /// from a table changed since (a hash map, whose rows are put in order
    /// after decoding), in runs of 7 (on a machine of two cores or more)
    /// or in one, into two indexes built side by side; a quarantined entry
    /// leaves a row fewer, and an empty table none.
    @Test func decodedRowsAreFreedOnceWhetherALoadEndsOrThrows() throws {
        func state(_ count: Int, hashed: Bool, broken: Int? = nil, twice: Int? = nil) throws -> StoreState {
            let entries = try (0..<count).map { $0 + 1 }.map { id in
                let value = id == broken ? try ValueEncoder().encode(["no": "row"])
                    : try ValueEncoder().encode(Tracked(id: Int64(id), group: id == twice ? 1 : id))
                return (OrderedKey.int64(Int64(id)), value)
            }
            if hashed {
                var state = StoreState()
                for (key, value) in entries { try state.apply(.put(table: "tracked", key: key, value: .encoded(value))) }
                return state
            }
            var loader = SnapshotLoader(lastLSN: 3)
            #expect(loader.add(.table(id: 1, name: "tracked")) == nil)
            for (key, value) in entries { #expect(loader.add(.entry(table: 1, key: key, value: value)) == nil) }
            return loader.state
        }
        func load(_ state: StoreState, runsOf entriesPerThread: Int, policy: UndecodablePolicy = .fail) throws -> TableStorage {
            var loader = TableLoader<Tracked>(name: "tracked", indexes: [.unique(\.group), .on(\.group)], policy: policy)
            loader.entriesPerThread = entriesPerThread
            return try loader.load(from: state)
        }
        func live() -> Int { Life.live.withLock { $0 } }
        for hashed in [false, true] {
            for entriesPerThread in [7, Int.max] {
                let context = "hashed \(hashed), runs of \(entriesPerThread)"
                do {
                    let storage = try load(try state(40, hashed: hashed), runsOf: entriesPerThread)
                    #expect(live() == 40, "\(context)")
                    #expect(IndexOrderHintTests.rowsOf(storage).map(\.id) == (1...40).map { .int(Int64($0)) }, "\(context)")
                    try storage.checkInvariants()
                    let quarantining = try load(try state(40, hashed: hashed, broken: 17), runsOf: entriesPerThread, policy: .quarantine)
                    #expect(live() == 40 + 39, "\(context), one entry quarantined")
                    #expect(IndexOrderHintTests.rowsOf(quarantining).map(\.id) == (1...40).filter { $0 != 17 }.map { .int(Int64($0)) }, "\(context)")
                    try quarantining.checkInvariants()
                    let empty = try load(try state(0, hashed: hashed), runsOf: entriesPerThread)
                    #expect(empty.count == 0 && live() == 79, "\(context), an empty table")
                }
                #expect(live() == 0, "\(context)")
                #expect(throws: TableError.self) { try load(try state(40, hashed: hashed, broken: 23), runsOf: entriesPerThread) }
                #expect(live() == 0, "\(context), an entry that does not decode")
                #expect(throws: TableError.self) { try load(try state(40, hashed: hashed, twice: 31), runsOf: entriesPerThread) }
                #expect(live() == 0, "\(context), a unique key held twice")
            }
        }
    }

    /// The runs cut every entry into exactly one run, in order, none
    /// smaller than asked unless there is only one.
    @Test func runsCoverEveryEntryOnce() {
        for count in [0, 1, 6, 7, 13, 14, 15, 100, 16_384, 100_000] {
            for smallest in [1, 7, 16_384] {
                let runs = Parallel.runs(of: count, smallest: smallest)
                #expect(runs.first?.lowerBound == 0 && runs.last?.upperBound == count)
                #expect(zip(runs, runs.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
                #expect(runs.count == 1 || runs.allSatisfy { $0.count >= smallest }, "\(count) by \(smallest): \(runs)")
                #expect(runs.count <= max(1, Parallel.threads))
            }
        }
    }
}

/// An entity whose every decoded or made copy holds a ``Life``, so that a
/// test sees each one freed.
struct Tracked: Entity {
    var id: Int64
    var group: Int
    let life = Life()

    init(id: Int64, group: Int) {
        self.id = id
        self.group = group
    }

    enum CodingKeys: String, CodingKey { case id, group }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        group = try container.decode(Int.self, forKey: .group)
    }
}

/// Counts the instances alive, which only
/// `decodedRowsAreFreedOnceWhetherALoadEndsOrThrows` makes.
final class Life: Sendable {
    static let live = Locked(0)
    init() { Self.live.withLock { $0 += 1 } }
    deinit { Self.live.withLock { $0 -= 1 } }
}
