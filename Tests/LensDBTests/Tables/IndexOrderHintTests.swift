import Foundation
import LensLog
import LensTestSupport
import Testing
@testable import LensDB

/// A stored index order is a hint: an open that uses it must build the
/// index a sort would, whatever the keys, identifiers and history of the
/// table, and must still find what a sort finds (a unique key repeated).
@Suite struct IndexOrderHintTests {
    /// Rewrites the newest snapshot of the store at `/t.lensdb`, each
    /// index order replaced by what `change` returns for it.
    static func rewriteOrders(_ fileSystem: SimulatedFileSystem, _ change: (String, [UInt32]) -> [UInt32]) throws {
        try rewriteSnapshot(fileSystem) { items in
            items.map { item in
                guard case let .indexOrder(table, index, start, positions) = item else { return item }
                return .indexOrder(table: table, index: index, start: start, positions: change(index, positions))
            }
        }
    }

    /// Writes the newest snapshot of the store at /t.lensdb again, with the
    /// items `change` makes of its own: checksums right, contents as given.
    static func rewriteSnapshot(_ fileSystem: SimulatedFileSystem, _ change: ([SnapshotItem]) -> [SnapshotItem]) throws {
        let path = try #require(StoreDirectory(path: "/t.lensdb", fileSystem: fileSystem).list().snapshots.last?.path)
        let snapshot = try SnapshotFile(fileSystem: fileSystem, path: path)
        var items: [SnapshotItem] = []
        try snapshot.forEachItem { items.append($0) }
        let writer = try SnapshotWriter(fileSystem: fileSystem, path: path, generation: snapshot.generation, lastLSN: snapshot.lastLSN)
        for item in change(items) {
            switch item {
            case let .table(id, name): try writer.addTable(id: id, name: name)
            case let .tableEncoding(table, key, value): try writer.addTableEncoding(table: table, key: key, value: value)
            case let .entry(table, key, value): try writer.addEntry(table: table, key: key, value: value)
            case let .root(name, value): try writer.addRoot(name: name, value: value)
            case let .rootEncoding(name, value): try writer.addRootEncoding(name: name, value: value)
            case let .indexOrder(table, index, _, positions): try writer.addIndexOrder(table: table, index: index, positions: positions)
            }
        }
        try writer.finish()
    }

    // MARK: Keys whose order is not total

    /// A date that is not a number (`Date(timeIntervalSinceReferenceDate: .nan)`
    /// encodes and decodes as itself) must sort somewhere: were it equal to
    /// every date, entries around it would pass for ascending, and a stored
    /// order with later dates first would be taken for the index's order.
    @Test func aStoredOrderAroundADateThatIsNotANumberIsSortedInstead() throws {
        let fileSystem = SimulatedFileSystem()
        let readings = [5.0, .nan, 3, .nan, 1].enumerated().map { Reading(id: Int64($0.offset + 1), taken: Date(timeIntervalSinceReferenceDate: $0.element)) }
        do {
            let store = try tableStore(fileSystem)
            try store.table(Reading.self, named: "readings", indexes: [.on(\.taken)]).put(readings)
            try store.compact()
            store.close()
        }
        // Identifier order: 5, NaN, 3, NaN, 1, which is not the dates' order.
        try Self.rewriteOrders(fileSystem) { _, positions in positions.indices.map { UInt32($0) } }
        let store = try tableStore(fileSystem)
        let table = try store.table(Reading.self, named: "readings", indexes: [.on(\.taken)])
        #expect(store.statistics.tables.first?.indexesInStoredOrder == 0)
        #expect(try table.query.filter(\.taken == Date(timeIntervalSinceReferenceDate: 3)).all().map(\.id) == [3])
        #expect(try table.query.filter(\.taken < Date(timeIntervalSinceReferenceDate: 4)).all().map(\.id).sorted() == [3, 5])
        #expect(try table.query.sorted(by: \.taken).all().map(\.id) == [5, 3, 1, 2, 4])
    }

    /// A stored order that names a place twice and misses another is
    /// refused, and the index sorted: an open moves each place's key into
    /// the index once, and a place moved twice would release its label
    /// twice. (With keys that compare as a strict weak order, its pairs
    /// cannot all ascend either; the count refuses it first.) The keys mix
    /// integers and doubles near 2^53.
    @Test func aStoredOrderNamingAPlaceTwiceIsRefusedWhateverItsKeysCompare() throws {
        let fileSystem = SimulatedFileSystem()
        let big = Int64(1) << 53
        let amounts: [MixedAmount] = [.whole(big + 1), .real(Double(big)), .whole(big), .whole(7)]
        // Labels too long to be stored inline, so each key holds an allocation.
        let ledgers = amounts.enumerated().map { Ledger(id: Int64($0.offset + 1), amount: $0.element, label: String(repeating: "label \($0.offset) ", count: 8)) }
        do {
            let store = try tableStore(fileSystem)
            try store.table(Ledger.self, named: "ledgers", indexes: [.on(\.amount, \.label)]).put(ledgers)
            try store.compact()
            store.close()
        }
        try Self.rewriteOrders(fileSystem) { _, _ in [2, 0, 1, 2] }
        let store = try tableStore(fileSystem)
        let table = try store.table(Ledger.self, named: "ledgers", indexes: [.on(\.amount, \.label)])
        #expect(store.statistics.tables.first?.indexesInStoredOrder == 0)
        let ids = Self.orderOf(table.storage(in: store.current).indexes[0])
        #expect(Set(ids) == Set((1...4).map { IndexValue.int(Int64($0)) }), "index ids: \(ids)")
        #expect(try table.query.sorted(by: \.label).all() == ledgers)
        store.close()
    }

    /// An order stored when integers and doubles compared through `Double`
    /// put 2^53 + 1 as an integer and 2^53 as a double, which tied, in
    /// place order; they compare exactly now, the other way round. Such an
    /// order no longer ascends: the open refuses it and sorts, and the
    /// index holds the exact order, as one built by puts one at a time does.
    @Test func anOrderStoredUnderRoundedNumberComparisonsIsSortedAgain() throws {
        let fileSystem = SimulatedFileSystem()
        let big = Int64(1) << 53
        let ledgers = [Ledger(id: 1, amount: .whole(big + 1), label: "a"), Ledger(id: 2, amount: .real(Double(big)), label: "a")]
        do {
            let store = try tableStore(fileSystem)
            try store.table(Ledger.self, named: "ledgers", indexes: [.on(\.amount)]).put(ledgers)
            try store.compact()
            store.close()
        }
        var stored: [UInt32] = []
        try Self.rewriteOrders(fileSystem) { _, positions in
            stored = positions
            return [0, 1]
        }
        #expect(stored == [1, 0], "the order written now")
        let store = try tableStore(fileSystem)
        defer { store.close() }
        let table = try store.table(Ledger.self, named: "ledgers", indexes: [.on(\.amount)])
        #expect(store.statistics.tables.first?.indexesInStoredOrder == 0)
        #expect(Self.orderOf(table.storage(in: store.current).indexes[0]) == [.int(2), .int(1)])
        let oneByOne = try store.table(Ledger.self, named: "one by one", indexes: [.on(\.amount)])
        for ledger in ledgers { try oneByOne.put(ledger) }
        #expect(Self.orderOf(oneByOne.storage(in: store.current).indexes[0]) == [.int(2), .int(1)])
    }

    /// The same dates put one by one, indexes kept by inserts: a date that
    /// is not a number comes after every other, as a double that is not one does.
    @Test func datesThatAreNotNumbersSortLastInAnIndex() throws {
        let store = try tableStore()
        let table = try store.table(Reading.self, named: "readings", indexes: [.on(\.taken)])
        for (offset, interval) in [5.0, .nan, 3, .nan, 1, 4, .nan, 2].enumerated() {
            try table.put(Reading(id: Int64(offset + 1), taken: Date(timeIntervalSinceReferenceDate: interval)))
        }
        #expect(try table.query.sorted(by: \.taken).all().map(\.id) == [5, 8, 3, 6, 1, 2, 4, 7])
        #expect(try table.query.filter(\.taken < Date(timeIntervalSinceReferenceDate: 3.5)).all().map(\.id).sorted() == [3, 5, 8])
    }

    // MARK: Index definitions that changed

    /// An app update that makes an index unique: the order the old,
    /// non-unique index stored is the new one's order too, and the repeated
    /// key it holds must still fail the open.
    @Test func anIndexMadeUniqueOverAStoredOrderStillFindsTheRepeatedKey() throws {
        let fileSystem = SimulatedFileSystem()
        do {
            let store = try tableStore(fileSystem)
            try store.table(Person.self, named: "people", indexes: [.on(\.city)]).put(IndexOrderTests.people(50, seed: 21))
            try store.compact()
            store.close()
        }
        let store = try tableStore(fileSystem)
        #expect(throws: TableError.self) {
            try store.table(Person.self, named: "people", indexes: [.unique(\.city)])
        }
        // Both indexes share the name `city` and one stored order.
        let people = try store.table(Person.self, named: "people", indexes: [.on(\.city), .on(\.age)])
        #expect(store.statistics.tables.first?.indexesInStoredOrder == 1)
        #expect(try people.query.filter(\.city == "Lyon").all() == people.all().filter { $0.city == "Lyon" })
    }

    /// `.on(\.email)` and `.unique(\.email)` share the name `email`: the
    /// one order stored under it serves both, and the unique one still
    /// refuses a repeated address.
    @Test func twoIndexesOfOneNameBothUseItsStoredOrder() throws {
        let fileSystem = SimulatedFileSystem()
        let all = IndexOrderTests.people(120, seed: 22)
        let indexes: [Index<Person>] = [.on(\.email), .unique(\.email), .on(\.nickname)]
        do {
            let store = try tableStore(fileSystem)
            try store.table(Person.self, named: "people", indexes: indexes).put(all)
            try store.compact()
            store.close()
        }
        let store = try tableStore(fileSystem)
        let people = try store.table(Person.self, named: "people", indexes: indexes)
        #expect(store.statistics.tables.first?.indexesInStoredOrder == 3)
        #expect(try people.query.sorted(by: \.email, .descending).all().map(\.id) == all.sorted { $0.email > $1.email }.map(\.id))
        #expect(try people.query.filter(\.nickname == nil).all().map(\.id) == all.filter { $0.nickname == nil }.map(\.id).sorted())
        var clash = all[0]
        clash.id = 10_000
        #expect(throws: TableError.self) { try people.put(clash) }
    }

    // MARK: Identifiers of every kind

    /// Ties in an index are broken by identifier: the stored order of an
    /// index whose keys repeat must give the same answers after a reopen,
    /// for identifiers of each key encoding.
    @Test func tiesAcrossIdentifiersOfEveryKindKeepTheirOrderThroughAStoredOrder() throws {
        var random = SeededGenerator.fromEnvironment(default: 23)
        let strings = ["é", "e", "z", "Ω", "ß", "ä", "a", "日本", "Z", "ü", "ñ", "😀", "ǅ", "ﬁ", "Å"].map(\.precomposedStringWithCanonicalMapping)
        try Self.checkTies(strings.map { TaggedEntity(id: $0, group: Int.random(in: 0..<3, using: &random)) })
        try Self.checkTies((0..<40).map { _ in TaggedEntity(id: UUID(), group: Int.random(in: 0..<3, using: &random)) })
        try Self.checkTies((0..<40).map { _ in TaggedEntity(id: Int64.random(in: -1_000...1_000, using: &random) * 1_000_003, group: Int.random(in: 0..<3, using: &random)) })
        try Self.checkTies((0..<40).map { n in TaggedEntity(id: CodeID(kind: ["b", "a", "ab"][n % 3], number: n - 20), group: Int.random(in: 0..<3, using: &random)) })
    }

    private static func checkTies<ID: Codable & Hashable & Comparable & Sendable>(_ entities: [TaggedEntity<ID>]) throws {
        let fileSystem = SimulatedFileSystem()
        let unique = Dictionary(entities.map { ($0.id, $0) }) { a, _ in a }.values.map { $0 }
        func answers(_ table: Table<TaggedEntity<ID>>) throws -> [[ID]] {
            var answers: [[ID]] = []
            for group in 0..<3 { answers.append(try table.query.filter(\.group == group).all().map(\.id)) }
            answers.append(try table.query.sorted(by: \.group, .descending).all().map(\.id))
            return answers
        }
        let before: [[ID]]
        do {
            let store = try tableStore(fileSystem)
            let table = try store.table(TaggedEntity<ID>.self, named: "tagged", indexes: [.on(\.group)])
            try table.put(unique)
            before = try answers(table)
            try store.compact()
            store.close()
        }
        // Places count entries as the snapshot stores them: in key byte order.
        let path = try #require(StoreDirectory(path: "/t.lensdb", fileSystem: fileSystem).list().snapshots.last?.path)
        var keys: [[UInt8]] = []
        try SnapshotFile(fileSystem: fileSystem, path: path).forEachItem { item in
            if case let .entry(_, key, _) = item { keys.append(key) }
        }
        #expect(keys.count == unique.count)
        #expect(zip(keys, keys.dropFirst()).allSatisfy { $0.lexicographicallyPrecedes($1) }, "\(ID.self)")
        let store = try tableStore(fileSystem)
        let table = try store.table(TaggedEntity<ID>.self, named: "tagged", indexes: [.on(\.group)])
        #expect(store.statistics.tables.first?.indexesInStoredOrder == 1, "\(ID.self)")
        #expect(try answers(table) == before, "\(ID.self)")
        // And the order a sort gives: one built from the same rows, no hint.
        let sorted = IndexStorage(table.storage(in: store.current).indexes[0].definition, rows: rowsOf(table.storage(in: store.current)))
        #expect(sorted.count == unique.count)
        #expect(orderOf(sorted) == orderOf(table.storage(in: store.current).indexes[0]), "\(ID.self)")
        store.close()
    }

    static func rowsOf(_ storage: TableStorage) -> [RowObject] {
        var rows: [RowObject] = []
        storage.forEachRow { rows.append($0) }
        return rows
    }

    static func orderOf(_ index: IndexStorage) -> [IndexValue] {
        var ids: [IndexValue] = []
        index.forEach(in: .everything) { _, row in ids.append(row.id); return true }
        return ids
    }

    // MARK: Encrypted snapshots

    /// A sealed snapshot (format 4) carries the orders as a plain one does,
    /// and so does the snapshot a key change writes.
    @Test func anEncryptedStoreOpensItsIndexesInTheStoredOrder() throws {
        let fileSystem = SimulatedFileSystem()
        let all = IndexOrderTests.people(80, seed: 26)
        func store(_ key: EncryptionKey) throws -> Store {
            var options = StoreOptions(encryptionKey: key)
            options.fileSystem = fileSystem
            options.checksInvariants = true
            options.compactionLogRatio = nil
            options.log.backgroundSyncInterval = nil
            options.log.preallocationChunk = 4096
            return try Store(at: "/t.lensdb", options: options)
        }
        do {
            let first = try store(TestKeys.first)
            try first.table(Person.self, named: "people", indexes: personIndexes).put(all)
            try first.compact()
            first.close()
        }
        let snapshot = try #require(StoreDirectory(path: "/t.lensdb", fileSystem: fileSystem).list().snapshots.last?.path)
        #expect(try SnapshotFile(fileSystem: fileSystem, path: snapshot, cipher: TestKeys.first).version == SnapshotFormat.version)
        do {
            let second = try store(TestKeys.first)
            let people = try second.table(Person.self, named: "people", indexes: personIndexes)
            #expect(second.statistics.tables.first?.indexesInStoredOrder == personIndexes.count)
            #expect(try IndexOrderTests.answers(people) == IndexOrderTests.expected(all))
            try second.changeEncryptionKey(to: TestKeys.second)
            second.close()
        }
        let third = try store(TestKeys.second)
        let people = try third.table(Person.self, named: "people", indexes: personIndexes)
        #expect(third.statistics.tables.first?.indexesInStoredOrder == personIndexes.count)
        #expect(try IndexOrderTests.answers(people) == IndexOrderTests.expected(all))
        third.close()
    }

    // MARK: Changes before the typed open

    /// Bytes put and removed through the untyped API after the snapshot:
    /// the stored orders no longer describe the table, and the open sorts.
    @Test func aByteLevelChangeBeforeTheTypedOpenMakesItSort() throws {
        let fileSystem = SimulatedFileSystem()
        var all = IndexOrderTests.people(60, seed: 24)
        try IndexOrderTests.storePeople(all, on: fileSystem)
        do {
            let store = try tableStore(fileSystem)
            var moved = all[0]
            moved.city = moved.city == "Lyon" ? "Nice" : "Lyon"
            all[0] = moved
            let encoding = TableEncoding(key: .int64, value: .valueFormat)
            try store.write { tx in
                tx.put(.encoded(try ValueEncoder().encode(moved)), for: OrderedKey.int64(moved.id), in: "people", encoding: encoding)
            }
            try store.compact()
            store.close()
        }
        let store = try tableStore(fileSystem)
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        #expect(store.statistics.tables.first?.indexesInStoredOrder == 0)
        #expect(try IndexOrderTests.answers(people) == IndexOrderTests.expected(all))
    }

    // MARK: Reading orders

    /// The loader joins the items of one order only when each continues the
    /// last, and only for a table the snapshot declared.
    @Test func anOrderWhoseItemsDoNotContinueOneAnotherIsAProblem() {
        var loader = SnapshotLoader(lastLSN: 1)
        #expect(loader.add(.indexOrder(table: 0, index: "i", start: 0, positions: [0])) != nil, "table 0 is not declared yet")
        #expect(loader.add(.table(id: 0, name: "t")) == nil)
        #expect(loader.add(.indexOrder(table: 0, index: "i", start: 1, positions: [0])) != nil)
        #expect(loader.add(.indexOrder(table: 0, index: "i", start: .max, positions: [0])) != nil)
        #expect(loader.add(.indexOrder(table: 0, index: "i", start: 0, positions: [0, 1])) == nil)
        #expect(loader.add(.indexOrder(table: 0, index: "i", start: 0, positions: [0, 1])) != nil, "the same piece twice")
        #expect(loader.add(.indexOrder(table: 0, index: "i", start: 2, positions: [2])) == nil)
        #expect(loader.state.indexOrders["t"]?["i"] == [0, 1, 2])
    }

    // MARK: Entries out of key order

    /// Snapshots LensDB writes hold each table's entries in key order, and
    /// the loader keeps them so. One written otherwise loads as its items
    /// say: sorted, and the last value given for a repeated key wins.
    @Test func entriesOutOfOrderOrRepeatedLoadAsTheirItemsSay() throws {
        var loader = SnapshotLoader(lastLSN: 1)
        #expect(loader.add(.table(id: 0, name: "t")) == nil)
        for (key, value) in [([3], [30]), ([1], [10]), ([2], [20]), ([1], [11]), ([0, 9], [9])] as [([UInt8], [UInt8])] {
            #expect(loader.add(.entry(table: 0, key: key, value: value)) == nil)
        }
        let state = loader.state
        #expect(state.count(in: "t") == 4)
        #expect(try state.value(in: "t", key: [1])?.bytes() == [11])
        #expect(try state.value(in: "t", key: [0, 9])?.bytes() == [9])
        #expect(state.value(in: "t", key: [0]) == nil)
        #expect(state.value(in: "t", key: [4]) == nil)
        var keys: [[UInt8]] = []
        try state.forEachEncodedEntry(in: "t") { key, _ in keys.append(Array(key)) }
        #expect(keys == [[0, 9], [1], [2], [3]])
        #expect(state.entries(in: "t").count == 4)
    }

    /// A typed open of a snapshot whose entries come in reverse sorts its
    /// rows, and a byte-level write to a table as its snapshot holds it
    /// changes that table alone, across a reopen.
    @Test func aSnapshotWithItsEntriesReversedStillOpensEveryWay() throws {
        let fileSystem = SimulatedFileSystem()
        let all = IndexOrderTests.people(120, seed: 31)
        do {
            let store = try tableStore(fileSystem)
            try store.table(Person.self, named: "people", indexes: personIndexes).put(all)
            try store.write { tx in for key in 0..<20 { tx.put([UInt8(key)], for: [UInt8(key)], in: "bytes") } }
            try store.compact()
            store.close()
        }
        try Self.rewriteSnapshot(fileSystem) { items in
            let entries = items.filter { if case .entry = $0 { true } else { false } }
            return items.filter { if case .entry = $0 { false } else { true } }.flatMap { item -> [SnapshotItem] in
                guard case let .table(id, _) = item else { return [item] }
                return [item] + entries.filter { if case let .entry(table, _, _) = $0 { table == id } else { false } }.reversed()
            }
        }
        do {
            let store = try tableStore(fileSystem)
            #expect(try store.current.value(in: "bytes", key: [7])?.bytes() == [7])
            try store.write { tx in tx.put([70], for: [7], in: "bytes") }
            let people = try store.table(Person.self, named: "people", indexes: personIndexes)
            #expect(store.statistics.tables.first?.indexesInStoredOrder == personIndexes.count)
            #expect(try IndexOrderTests.answers(people) == IndexOrderTests.expected(all))
            try store.checkInvariants()
            store.close()
        }
        let store = try tableStore(fileSystem)
        #expect(store.current.count(in: "bytes") == 20)
        #expect(try store.current.value(in: "bytes", key: [7])?.bytes() == [70])
        #expect(try store.current.value(in: "bytes", key: [8])?.bytes() == [8])
        #expect(try IndexOrderTests.answers(store.table(Person.self, named: "people", indexes: personIndexes)) == IndexOrderTests.expected(all))
        store.close()
    }
}

/// A reading whose date may be no number at all.
private struct Reading: Entity {
    var id: Int64
    var taken: Date
}

/// An entity of any identifier type, in one of three groups.
private struct TaggedEntity<ID: Codable & Hashable & Comparable & Sendable>: Entity {
    var id: ID
    var group: Int
}

/// An identifier stored in the value format: its order is its bytes'.
private struct CodeID: Codable, Hashable, Comparable, Sendable {
    var kind: String
    var number: Int
    static func < (a: CodeID, b: CodeID) -> Bool { (a.kind, a.number) < (b.kind, b.number) }
}

private struct Ledger: Entity, Equatable {
    var id: Int64
    var amount: MixedAmount
    var label: String
}
