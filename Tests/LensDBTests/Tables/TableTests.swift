import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// Typed tables through the public API: put, get, remove, transactions
/// across tables and reopen.
@Suite struct TableTests {
    let alice = Person(id: 1, name: "Alice", email: "alice@example.com", city: "Paris", age: 34, score: 9.5)
    let bob = Person(id: 2, name: "Bob", email: "bob@example.com", city: "Lyon", age: 27, score: 7)

    @Test func putGetRemoveSurviveReopenAndCompaction() throws {
        let fileSystem = SimulatedFileSystem()
        do {
            let store = try tableStore(fileSystem)
            let people = try store.table(Person.self, named: "people", indexes: personIndexes)
            try people.put(alice)
            try people.put([bob, Person(id: 3, name: "Chloé", email: "c@example.com", city: "Paris", age: 41, score: 8)])
            try people.remove(3)
            #expect(people[1] == alice && people[2] == bob && people[3] == nil)
            #expect(people.count == 2 && people.all() == [alice, bob])
            store.close()
        }
        for round in 0..<2 {
            let store = try tableStore(fileSystem)
            let people = try store.table(Person.self, named: "people", indexes: personIndexes)
            #expect(people.all() == [alice, bob], "round \(round)")
            #expect(try people.query.filter(\.city == "Paris").all() == [alice])
            if round == 0 { try store.compact() }
            store.close()
        }
    }

    /// A table keyed by `UInt64` holds its rows as integers until an
    /// identifier above `Int64.max` arrives, then as values: every entity
    /// stays where it was, in identifier order, before and after a reopen
    /// (which builds the tree at once) and a compaction, and a reader
    /// holding the version from before the change still reads its own.
    @Test func identifiersAboveInt64MaxJoinAnIntegerTable() async throws {
        struct Counter: Entity, Equatable { var id: UInt64; var count: Int }
        let fileSystem = SimulatedFileSystem()
        let low = [UInt64(0), 1, 7, UInt64(Int64.max)].map { Counter(id: $0, count: Int($0 % 100)) }
        let high = [UInt64(Int64.max) + 1, UInt64.max].map { Counter(id: $0, count: 3) }
        do {
            let store = try tableStore(fileSystem)
            let counters = try store.table(Counter.self, named: "counters", indexes: [.on(\.count)])
            try counters.put(low)
            let before = counters.snapshot()
            let reader = Task.detached { (0..<200).allSatisfy { _ in before.all() == low } }
            try counters.put(high[1])
            try counters.put(high[0])
            try counters.remove(7)
            #expect(await reader.value)
            #expect(before.all() == low && before[UInt64.max] == nil)
            #expect(counters.all() == low.filter { $0.id != 7 } + high)
            #expect(counters[UInt64.max] == high[1] && counters[7] == nil)
            store.close()
        }
        for round in 0..<2 {
            let store = try tableStore(fileSystem)
            let counters = try store.table(Counter.self, named: "counters", indexes: [.on(\.count)])
            #expect(counters.all() == low.filter { $0.id != 7 } + high, "round \(round)")
            #expect(try counters.query.filter(\.count == 3).all() == high, "round \(round)")
            #expect(counters[UInt64(Int64.max) + 1] == high[0] && counters[0] == low[0], "round \(round)")
            if round == 0 { try store.compact() }
            store.close()
        }
    }

    @Test func anEqualPutWritesNoRecord() throws {
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        try people.put(alice)
        let lsn = store.current.lsn
        try people.put(alice)
        try people.put([alice, bob])
        #expect(store.current.lsn == lsn + 1, "only bob was new")
        var older = alice
        older.age += 1
        try people.put(older)
        #expect(store.current.lsn == lsn + 2)
    }

    /// Identifiers are stored in NFC, the form a put requires: an entry
    /// the byte-level API stored under another form of the same text is
    /// not taken for that entity (a put of it would write a second entry,
    /// and the table would hold two entities of one identifier), but
    /// quarantined as undecodable, its bytes kept.
    @Test func aStringIdentifierStoredInAnotherFormThanNFCIsNotAnEntity() throws {
        struct Tag: Entity, Equatable {
            var id: String
            var uses: Int
        }
        let fileSystem = SimulatedFileSystem()
        let decomposed = "caf" + "e\u{301}", composed = "caf\u{E9}"
        do {
            let store = try tableStore(fileSystem)
            let tags = try store.table(Tag.self, named: "tags")
            #expect(throws: TableError.identifierNotNormalized(table: "tags", id: decomposed)) { try tags.put(Tag(id: decomposed, uses: 1)) }
            try tags.put(Tag(id: "tea", uses: 2))
            store.close()
        }
        do {
            // Through the byte-level API, with the table not open with its type.
            let store = try tableStore(fileSystem)
            let encoding = TableEncoding(key: .string, value: .valueFormat)
            try store.write { tx in
                tx.put(.encoded(try ValueEncoder().encode(Tag(id: decomposed, uses: 3))), for: Array(decomposed.utf8), in: "tags", encoding: encoding)
            }
            store.close()
        }
        let store = try tableStore(fileSystem)
        let tags = try store.table(Tag.self, named: "tags", onUndecodable: .quarantine)
        #expect(tags.all() == [Tag(id: "tea", uses: 2)])
        #expect(tags[composed] == nil)
        #expect(tags.quarantined.map(\.key) == [Array(decomposed.utf8)])
        try tags.put(Tag(id: composed, uses: 4))
        #expect(tags.all().map(\.id) == [composed, "tea"] && tags.quarantined.count == 1)
    }

    /// An entity whose identifier is its key's canonical equivalent in
    /// another form (NFD bytes under the NFC key) is not the key's entity
    /// either: `==` on strings holds the two equal, so the open compares
    /// bytes. Taken for it, its row would be ordered by bytes that are not
    /// its key's, and a put of the NFC identifier would leave an index entry
    /// beside the row it replaced. From the log and from a snapshot.
    @Test func anEntityWhoseIdentifierIsItsKeyInAnotherFormIsNotAnEntity() throws {
        struct Tag: Entity, Equatable {
            var id: String
            var uses: Int
        }
        let decomposed = "caf" + "e\u{301}", composed = "caf\u{E9}"
        for compacted in [false, true] {
            let fileSystem = SimulatedFileSystem()
            do {
                let store = try tableStore(fileSystem)
                try store.table(Tag.self, named: "tags", indexes: [.on(\.uses)]).put(Tag(id: "tea", uses: 2))
                store.close()
            }
            do {
                // Through the byte-level API, with the table not open with its type.
                let store = try tableStore(fileSystem)
                try store.write { tx in
                    tx.put(.encoded(try ValueEncoder().encode(Tag(id: decomposed, uses: 3))), for: Array(composed.utf8), in: "tags",
                           encoding: TableEncoding(key: .string, value: .valueFormat))
                }
                if compacted { try store.compact() }
                store.close()
            }
            let store = try tableStore(fileSystem)
            do {
                _ = try store.table(Tag.self, named: "tags", indexes: [.on(\.uses)])
                Issue.record("an open with .fail opened, compacted: \(compacted)")
            } catch let TableError.undecodable(_, id, _, _, reason, count) {
                #expect(id == composed && count == 1 && reason.contains("not its identifier"), "\(id) \(reason)")
            }
            let tags = try store.table(Tag.self, named: "tags", indexes: [.on(\.uses)], onUndecodable: .quarantine)
            #expect(tags.all() == [Tag(id: "tea", uses: 2)] && tags[composed] == nil, "compacted: \(compacted)")
            #expect(tags.quarantined.map(\.key) == [Array(composed.utf8)])
            // A put over quarantined bytes takes their removal in the same transaction.
            try store.write { tx in
                try tx[tags].remove(composed)
                try tx[tags].put(Tag(id: composed, uses: 3))
            }
            #expect(try tags.query.filter(\.uses == 3).all() == [Tag(id: composed, uses: 3)])
            #expect(tags.all().map(\.id) == [composed, "tea"] && tags.quarantined.isEmpty, "the put replaced the quarantined bytes")
            store.close()
        }
    }

    /// A table handle writes only in its own store's transactions: one
    /// kept from an earlier open of the store, used in a transaction of the
    /// store opened again before the table is, would have written the
    /// table as that handle holds it and hidden what the store holds.
    @Test func aTableHandleOfAnotherStoreWritesNothingInThisOnesTransaction() throws {
        let fileSystem = SimulatedFileSystem()
        let first = try tableStore(fileSystem)
        let stale = try first.table(Person.self, named: "people", indexes: personIndexes)
        try stale.put(alice)
        first.close()

        let store = try tableStore(fileSystem)
        #expect(throws: TableError.storeMismatch(table: "people")) {
            try store.write { tx in try tx[stale].put(bob) }
        }
        #expect(throws: TableError.storeMismatch(table: "people")) {
            try store.write { tx in try tx[stale].remove(alice.id) }
        }
        let other = try tableStore(SimulatedFileSystem(), path: "/other.lensdb")
        #expect(throws: TableError.storeMismatch(table: "people")) {
            try other.write { tx in try tx[stale].put([bob]) }
        }
        #expect(other.current.tableNames.isEmpty)
        other.close()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        #expect(people.all() == [alice])
        try store.write { tx in try tx[people].put(bob) }
        #expect(people.all() == [alice, bob])
        store.close()
    }

    /// An entity stored under another identifier's key is no entity of
    /// the table: an open with `.quarantine` keeps its bytes aside under
    /// that key, and one with `.fail` says which key holds it. The same
    /// whether the open reads the table from the log or from a snapshot.
    @Test func anEntityStoredUnderAnotherIdentifiersKeyIsNotAnEntity() throws {
        struct Counter: Entity, Equatable {
            var id: Int64
            var count: Int
        }
        for compacted in [false, true] {
            let fileSystem = SimulatedFileSystem()
            do {
                let store = try tableStore(fileSystem)
                try store.table(Counter.self, named: "counters").put([Counter(id: 1, count: 10), Counter(id: 2, count: 20)])
                store.close()
            }
            do {
                // Counter 5's bytes under 7's key, through the byte-level API.
                let store = try tableStore(fileSystem)
                try store.write { tx in
                    tx.put(.encoded(try ValueEncoder().encode(Counter(id: 5, count: 50))), for: OrderedKey.int64(7), in: "counters",
                           encoding: TableEncoding(key: .int64, value: .valueFormat))
                }
                if compacted { try store.compact() }
                store.close()
            }
            let store = try tableStore(fileSystem)
            do {
                _ = try store.table(Counter.self, named: "counters")
                Issue.record("an open with .fail opened, compacted: \(compacted)")
            } catch let TableError.undecodable(_, id, _, _, reason, count) {
                #expect(id == "7" && count == 1 && reason.contains("not its identifier 5"), "\(id) \(reason)")
            }
            let counters = try store.table(Counter.self, named: "counters", onUndecodable: .quarantine)
            #expect(counters.all() == [Counter(id: 1, count: 10), Counter(id: 2, count: 20)], "compacted: \(compacted)")
            #expect(counters[5] == nil && counters[7] == nil)
            #expect(counters.quarantined.map(\.key) == [OrderedKey.int64(7)])
            store.close()
        }
    }

    /// An open summarizes each entity's stored bytes as a put summarizes
    /// its encoding, so an equal put after a reopen, from the log or from a
    /// snapshot, still writes nothing.
    @Test func anEqualPutAfterAReopenWritesNoRecord() throws {
        let fileSystem = SimulatedFileSystem()
        do {
            let store = try tableStore(fileSystem)
            try store.table(Person.self, named: "people", indexes: personIndexes).put([alice, bob])
            store.close()
        }
        for source in ["log", "snapshot"] {
            let store = try tableStore(fileSystem)
            let people = try store.table(Person.self, named: "people", indexes: personIndexes)
            let lsn = store.current.lsn
            try people.put(alice)
            try people.put([bob, alice])
            #expect(store.current.lsn == lsn, "opened from the \(source)")
            var older = bob
            older.age += 1
            try people.put(older)
            try people.put(bob)
            #expect(store.current.lsn == lsn + 2, "opened from the \(source)")
            try store.compact()
            store.close()
        }
    }

    @Test func uniqueIndexRefusesADuplicateAndTheTransactionChangesNothing() throws {
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        try people.put(alice)
        var twin = bob
        twin.email = alice.email
        #expect(throws: TableError.uniqueViolation(index: "people.email", value: "\"alice@example.com\"")) {
            try people.put([bob, twin])
        }
        #expect(people.count == 1 && people[2] == nil, "bob, in the same transaction, was not written either")
        var moved = alice
        moved.city = "Nice"
        try people.put(moved)
        #expect(people[1]?.city == "Nice", "an entity keeps its own unique value when it changes")
    }

    @Test func aTransactionAcrossTablesAndARootIsOneRecord() throws {
        struct Order: Entity, Equatable { var id: UUID; var person: Int64; var total: Double }
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        let orders = try store.table(Order.self, named: "orders")
        let order = Order(id: UUID(), person: 1, total: 12)
        let before = store.current.lsn
        try store.write { tx in
            try tx[people].put(alice)
            #expect(tx[people][1] == alice, "a transaction reads its own writes")
            #expect(try tx[people].query.filter(\.city == "Paris").count() == 1)
            try tx[orders].put(order)
            tx.setRoot([1], named: "marker")
        }
        #expect(store.current.lsn == before + 1)
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try store.write { tx in
                try tx[people].put(bob)
                try tx[orders].remove(order.id)
                throw Refused()
            }
        }
        #expect(people[2] == nil && orders[order.id] == order, "a throw inside the block changes nothing")
    }

    @Test func openingTwiceGivesTheSameTableAndAnotherTypeIsAnError() throws {
        struct Other: Entity { var id: Int64; var x: Int }
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        try people.put(alice)
        let again = try store.table(Person.self, named: "people", indexes: personIndexes)
        #expect(again[1] == alice)
        #expect(throws: TableError.self) { try store.table(Other.self, named: "people") }
        #expect(throws: TableError.self) { try store.table(Person.self, named: "people", indexes: [.on(\.city)]) }
        let raw = try tableStore()
        try raw.write { tx in tx.put([1], for: [1], in: "bytes") }
        #expect(throws: TableError.encodingMismatch(table: "bytes", stored: .raw, expected: TableEncoding(key: .int64, value: .valueFormat))) {
            try raw.table(Person.self, named: "bytes")
        }
        // The same fields under an identifier of another type: the keys are
        // stored otherwise, and the error says the identifier type changed.
        struct Renumbered: Entity { var id: String; var name: String; var age: Int; var city: String; var email: String }
        let fileSystem = SimulatedFileSystem()
        let written = try tableStore(fileSystem)
        try written.table(Person.self, named: "people").put(alice)
        written.close()
        let reopened = try tableStore(fileSystem)
        defer { reopened.close() }
        let changed = #expect(throws: TableError.encodingMismatch(
            table: "people", stored: TableEncoding(key: .int64, value: .valueFormat), expected: TableEncoding(key: .string, value: .valueFormat)
        )) { try reopened.table(Renumbered.self, named: "people") }
        #expect(changed.map { "\($0)" }?.contains("the identifier type changed") == true)
        // Value-format values under keys of another encoding, put through
        // the byte-level API: the same mismatch, whose advice names that API too.
        let bytes = try tableStore()
        try bytes.write { tx in
            tx.put(.encoded(try ValueEncoder().encode(alice)), for: Array("alice".utf8), in: "people",
                   encoding: TableEncoding(key: .raw, value: .valueFormat))
        }
        let byteLevel = #expect(throws: TableError.encodingMismatch(
            table: "people", stored: TableEncoding(key: .raw, value: .valueFormat), expected: TableEncoding(key: .int64, value: .valueFormat)
        )) { try bytes.table(Person.self, named: "people") }
        let advice = byteLevel.map { "\($0)" } ?? ""
        #expect(advice.contains("the identifier type changed") && advice.contains("byte-level API") && advice.contains("store.current.value(in:key:)"), "\(advice)")
    }

    @Test func readersHoldingAnOldVersionKeepIt() throws {
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        try people.put(alice)
        let old = store.current
        try people.put(bob)
        try people.remove(1)
        #expect(try Query(table: people, source: .state(old)).all() == [alice])
        #expect(try Query(table: people, source: .state(old)).filter(\.city == "Lyon").count() == 0)
        #expect(people.all() == [bob])
    }

    /// A point read lends the row from the version's tree instead of
    /// retaining it: a snapshot must still read its entities after every
    /// later version has replaced or removed them and dropped its own hold.
    @Test func aSnapshotReadsItsEntitiesAfterLaterVersionsReplacedThem() throws {
        let store = try tableStore()
        defer { store.close() }
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        var random = SeededGenerator.fromEnvironment("TableTests.aSnapshotReadsItsEntitiesAfterLaterVersionsReplacedThem")
        let first = (1...Int64(3_000)).map { Person.random($0, using: &random) }
        try people.put(first)
        let snapshot = people.snapshot()
        try people.put(first.map { person in
            var person = person
            person.name += " again"
            return person
        })
        try people.remove(Array(1...Int64(1_500)))
        // Large commits free the versions they replace on another thread.
        for _ in 0..<3 { try people.put(Person.random(1, using: &random)) }
        #expect(first.allSatisfy { snapshot[$0.id] == $0 })
        #expect(people[2] == nil && people[1_501]?.name == first[1_500].name + " again")
    }
}
