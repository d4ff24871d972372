import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// A put of many entities takes its index changes in at its end, rebuilding
/// an index when the batch is large beside it. Whatever the batch holds, the
/// table must end as the same entities put one at a time leave it.
@Suite struct BatchPutTests {
    /// Each index's identifiers in its order, and the rows' identifiers.
    static func orders<T>(_ people: Table<T>, in store: Store) -> [String] {
        let storage = people.storage(in: store.current)
        return ["rows: \(IndexOrderHintTests.rowsOf(storage).map(\.id))"]
            + storage.indexes.map { "\($0.definition): \(IndexOrderHintTests.orderOf($0))" }
    }

    /// A batch as users send them: new entities and changed ones, in any
    /// order, some given twice (the last wins), some unchanged.
    static func batch(_ count: Int, among ids: ClosedRange<Int64>, using random: inout SeededGenerator) -> [Person] {
        var batch = (0..<count).map { _ in Person.random(Int64.random(in: ids, using: &random), using: &random) }
        if Bool.random(using: &random) { batch.sort { $0.id < $1.id } }
        // Unique emails per identifier, so only the violation test violates.
        return batch.map { person in
            var person = person
            person.email = "p\(person.id)@example.com"
            return person
        }
    }

    @Test func aBatchLeavesTheIndexesAsPutsOneAtATimeDo() throws {
        var random = SeededGenerator.fromEnvironment("BatchPutTests.aBatchLeavesTheIndexesAsPutsOneAtATimeDo")
        for round in 0..<16 {
            let batched = try tableStore(), single = try tableStore()
            let inBatches = try batched.table(Person.self, named: "people", indexes: personIndexes)
            let oneByOne = try single.table(Person.self, named: "people", indexes: personIndexes)
            for _ in 0..<4 {
                // From a few entities beside the table (changed in place) to
                // many times its size (rebuilt), over a range that repeats ids.
                let size = [1, 3, 20, 150][Int.random(in: 0...3, using: &random)]
                let batch = Self.batch(size, among: 1...Int64(40 + round * 10), using: &random)
                let before = inBatches.snapshot()
                let orderBefore = try before.query.sorted(by: \.age).all()
                try inBatches.put(batch)
                try single.write { tx in for person in batch { try tx[oneByOne].put(person) } }
                #expect(Self.orders(inBatches, in: batched) == Self.orders(oneByOne, in: single), "round \(round)")
                #expect(try before.query.sorted(by: \.age).all() == orderBefore, "a version read before the batch keeps its order")
            }
            let query = { (people: Table<Person>) in
                try people.query.filter(\.city == "Lyon" && \.age >= 30).sorted(by: \.score, .descending).all()
            }
            #expect(try query(inBatches) == query(oneByOne))
            try batched.checkInvariants()
        }
    }

    /// A large batch changes each index on a thread of its own, in place
    /// or rebuilt; the indexes must be those one thread makes.
    @Test func indexesRebuiltOnSeveralThreadsAreThoseOneThreadBuilds() throws {
        var random = SeededGenerator.fromEnvironment("BatchPutTests.indexesRebuiltOnSeveralThreadsAreThoseOneThreadBuilds")
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        try people.put(Self.batch(400, among: 1...500, using: &random))
        // Batches changed in place (fewer than one change per 16 entries) and rebuilt.
        for (round, size) in [3, 10, 20, 60, 200, 900].enumerated() {
            let batch = Self.batch(size, among: 1...600, using: &random)
            var deferred: [IndexChange] = []
            var split = people.storage(in: store.current)
            for person in batch {
                split.put(RowBox(person, id: try identifierValue(person.id), lsn: 1), id: try identifierValue(person.id), deferring: &deferred)
            }
            var alone = split
            split.apply(deferred, changesPerThread: 2)
            alone.apply(deferred, changesPerThread: .max)
            try split.checkInvariants()
            #expect(split.indexes.map(IndexOrderHintTests.orderOf) == alone.indexes.map(IndexOrderHintTests.orderOf), "round \(round)")
        }
    }

    /// Batches mixed with removes before and after them, some stopped
    /// midway by an entity that does not encode or by a unique violation,
    /// over fields that are nil or NaN, some loads (in identifier order,
    /// into an empty table): the transaction must read, through its
    /// indexes, what puts one at a time give, and commit the same, whether
    /// the batch encoded its entities on one thread or on several.
    @Test func batchesStoppedMidwayAmongRemovesReadAsPutsOneAtATime() throws {
        var random = SeededGenerator.fromEnvironment("BatchPutTests.batchesStoppedMidwayAmongRemovesReadAsPutsOneAtATime")
        for round in 0..<16 {
            let stores = try (0..<3).map { _ in try tableStore() }
            let tables = try stores.map { try $0.table(Tagged.self, named: "tagged", indexes: Tagged.indexes) }
            let ids = 1...Int64([20, 60, 300][round % 3])
            for _ in 0..<4 {
                let steps = (0..<Int.random(in: 1...4, using: &random)).map { _ in
                    Step(removesFirst: Bool.random(using: &random), batch: Tagged.batch(among: ids, using: &random),
                         removes: (0..<Int.random(in: 0...10, using: &random)).map { _ in Int64.random(in: ids, using: &random) })
                }
                let reads = try [Step.Way.single, .batched, .encodedAhead].enumerated().map { side, way in
                    try stores[side].write { tx in try Step.run(steps, on: &tx, tables[side], way) }
                }
                #expect(reads[1] == reads[0], "round \(round)")
                #expect(reads[2] == reads[0], "round \(round)")
                let orders = zip(tables, stores).map { Self.orders($0, in: $1) }
                #expect(orders[1] == orders[0] && orders[2] == orders[0], "round \(round)")
            }
            try stores[2].checkInvariants()
        }
    }

    /// A load (a batch into an empty table, in identifier order) builds its
    /// row tree at the end: stopped midway, the tree holds exactly the
    /// entities before the stop, as puts one at a time leave them.
    @Test func aLoadStoppedMidwayHoldsTheEntitiesBeforeTheStop() throws {
        var batch = (1...Int64(300)).map { Tagged(id: $0 * 2, tag: "t\($0 % 3)", score: Double($0 % 7), group: Int($0 % 5), email: "e\($0)") }
        batch[200].email = "e3"
        for way in [Step.Way.batched, .encodedAhead] {
            let stores = try (0..<2).map { _ in try tableStore() }
            let tables = try stores.map { try $0.table(Tagged.self, named: "tagged", indexes: Tagged.indexes) }
            let reads = try [Step.Way.single, way].enumerated().map { side, way in
                try stores[side].write { tx in try Step.run([Step(removesFirst: false, batch: batch, removes: [])], on: &tx, tables[side], way) }
            }
            #expect(reads[1] == reads[0], "\(way)")
            #expect(tables[1].count == 200 && tables[1][400]?.id == 400 && tables[1][402] == nil, "\(way)")
            #expect(Self.orders(tables[1], in: stores[1]) == Self.orders(tables[0], in: stores[0]), "\(way)")
            try stores[1].checkInvariants()
        }
    }

    /// One batch of a transaction, with removes before or after it.
    struct Step {
        let removesFirst: Bool
        let batch: [Tagged]
        let removes: [Int64]

        /// Runs `steps` on `table` in `tx`, putting each batch at once or
        /// one entity at a time, and returns what index reads saw after each.
        /// How a step puts its batch.
        enum Way {
            /// One entity at a time.
            case single
            /// As one batch, each entity encoded as it is put.
            case batched
            /// As one batch, encoded ahead on several threads.
            case encodedAhead
        }

        static func run(_ steps: [Step], on tx: inout Transaction, _ table: Table<Tagged>, _ way: Way) throws -> [String] {
            var reads: [String] = []
            for step in steps {
                if step.removesFirst { try tx[table].remove(step.removes) }
                do {
                    switch way {
                    case .single: for entity in step.batch { try tx[table].put(entity) }
                    case .batched: try tx[table].put(step.batch, encodingAheadFrom: .max)
                    case .encodedAhead: try tx[table].put(step.batch, encodingAheadFrom: 1)
                    }
                } catch {
                    reads.append("stopped: \(error)")
                }
                if !step.removesFirst { try tx[table].remove(step.removes) }
                try tx[table].storage.checkInvariants()
                reads.append("\(try tx[table].query.filter(\.tag == "a").ids())")
                reads.append("\(try tx[table].query.filter(\.tag == nil).ids())")
                reads.append("\(try tx[table].query.filter(\.score >= 1.0).ids())")
                reads.append("\(try tx[table].query.filter(\.group == 2).sorted(by: \.score).ids())")
                reads.append("\(tx[table].all().map(\.id))")
            }
            return reads
        }
    }

    /// A batch logs what the same puts one at a time log, in the same
    /// order: the table's declaration before its first put, when a batch
    /// goes into a new table, refills one it emptied, or starts with
    /// entities it leaves unchanged; and with duplicates, and on every core
    /// (9,000 entities are encoded ahead, with their rows and keys when
    /// they change a filled table). Replay would take a put before
    /// its declaration, so only the record shows the order.
    @Test func aBatchLogsWhatPutsOneAtATimeLog() throws {
        func tagged(_ ids: [Int64], score: Double = 1) -> [Tagged] {
            ids.map { Tagged(id: $0, tag: "t\($0 % 3)", score: score, group: Int($0 % 5), email: nil) }
        }
        let scenarios: [(name: String, before: [Tagged], removed: [Int64], batch: [Tagged])] = [
            ("into a new table", [], [], tagged([3, 1, 2])),
            ("refilling an emptied table", tagged([1, 2]), [1, 2], tagged([2, 5])),
            ("first entities unchanged", tagged([1, 2, 3]), [], tagged([1, 2]) + tagged([3, 4], score: 2)),
            ("with duplicates", tagged([1]), [], tagged([2, 1, 2], score: 3)),
            ("encoded ahead, refilling", tagged([1]), [1], tagged(Array(1...9_000))),
            ("encoded ahead, into a filled table", tagged(Array(1...3_000)), [], tagged(Array((1...9_000).reversed()), score: 2)),
        ]
        for scenario in scenarios {
            var records: [[UInt8]] = []
            for batched in [true, false] {
                let store = Store.inMemory()
                defer { store.close() }
                let table = try store.table(Tagged.self, named: "tagged")
                if !scenario.before.isEmpty { try table.put(scenario.before) }
                try store.write { tx in
                    try tx[table].remove(scenario.removed)
                    if batched {
                        try tx[table].put(scenario.batch)
                    } else {
                        for entity in scenario.batch { try tx[table].put(entity) }
                    }
                    records.append(try TransactionFormat.encode(tx.operations))
                }
            }
            // Compared whole, reported by the first byte that differs: a
            // record of 9,000 puts is too long to print.
            let differsAt = zip(records[0], records[1]).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                ?? (records[0].count == records[1].count ? nil : min(records[0].count, records[1].count))
            #expect(differsAt == nil, "\(scenario.name): the records differ from byte \(differsAt ?? 0)")
        }
    }

    @Test func aBatchedTableReopensWithTheSameIndexes() throws {
        var random = SeededGenerator.fromEnvironment("BatchPutTests.aBatchedTableReopensWithTheSameIndexes")
        let fileSystem = SimulatedFileSystem()
        var store = try tableStore(fileSystem)
        var people = try store.table(Person.self, named: "people", indexes: personIndexes)
        try people.put(Self.batch(300, among: 1...200, using: &random))
        try people.put(Self.batch(120, among: 150...400, using: &random))
        let orders = Self.orders(people, in: store)
        store.close()
        store = try tableStore(fileSystem)
        people = try store.table(Person.self, named: "people", indexes: personIndexes)
        #expect(Self.orders(people, in: store) == orders)
    }

    /// A batch large enough to be encoded on several threads ahead of its
    /// puts throws where one entity at a time would: at the first entity
    /// that fails, whether its encoding threw or a unique index refused
    /// it, with the ones before it in the transaction and none after. A
    /// batch that does not throw leaves the bytes and indexes puts one at a
    /// time leave.
    @Test func aBatchEncodedAheadThrowsAtItsFirstFailure() throws {
        var random = SeededGenerator.fromEnvironment("BatchPutTests.aBatchEncodedAheadThrowsAtItsFirstFailure")
        let count = 3 * Parallel.itemsPerThread
        func batch() -> [Tagged] {
            (0..<count).map { place in
                Tagged(id: Int64(place + 1), tag: ["a", "b", nil].randomElement(using: &random)!,
                       score: Double(Int.random(in: 0...50, using: &random)), group: Int.random(in: 0...3, using: &random),
                       email: "e\(place + 1)")
            }
        }
        for round in 0..<4 {
            let store = try tableStore()
            let table = try store.table(Tagged.self, named: "tagged", indexes: Tagged.indexes)
            var entities = batch()
            let unencodable = Int.random(in: 0..<count, using: &random)
            entities[unencodable].unencodable = true
            // In odd rounds, a unique violation comes first, or just after.
            let violation = round % 2 == 1 ? max(1, unencodable + Int.random(in: -50...50, using: &random)) : nil
            if let violation, violation != unencodable { entities[violation].email = entities[0].email }
            let failsAt = min(unencodable, violation.map { $0 == unencodable ? unencodable : $0 } ?? unencodable)
            try store.write { tx in
                do {
                    try tx[table].put(entities)
                    Issue.record("round \(round): the batch did not throw")
                } catch is Tagged.Unencodable {
                    #expect(failsAt == unencodable, "round \(round): the encoding error came before the first failure")
                } catch is TableError {
                    #expect(failsAt == violation, "round \(round): the unique violation came before the first failure")
                }
                #expect(tx[table].count == failsAt, "round \(round): the entities before the failure, and none after")
                try tx[table].storage.checkInvariants()
            }
            // The block caught the error, so what it put commits.
            #expect(table.count == failsAt)
            try store.checkInvariants()
        }
        // Without a failure: the same bytes and indexes as puts one at a time.
        let entities = batch()
        let batched = try tableStore(), single = try tableStore()
        let inBatch = try batched.table(Tagged.self, named: "tagged", indexes: Tagged.indexes)
        let oneByOne = try single.table(Tagged.self, named: "tagged", indexes: Tagged.indexes)
        try inBatch.put(entities)
        try single.write { tx in for entity in entities { try tx[oneByOne].put(entity) } }
        #expect(Self.orders(inBatch, in: batched) == Self.orders(oneByOne, in: single))
        let bytes = { (store: Store) in store.current.entries(in: "tagged").mapValues { try? $0.bytes() } }
        #expect(bytes(batched) == bytes(single))
    }

    /// Every row a batch changes carries the LSN of the commit that put it,
    /// and every row it leaves unchanged keeps its own: consistency and
    /// live queries tell an entity's versions apart by it. Whether the
    /// batch loads an empty table or changes a filled one, and whether its
    /// rows were made as it staged them or ahead, with their encodings.
    @Test func aBatchStampsTheRowsItChangesWithItsCommit() throws {
        func tagged(_ ids: [Int64], email: String) -> [Tagged] {
            ids.map { Tagged(id: $0, tag: "t\($0 % 3)", score: Double($0 % 7), group: Int($0 % 5), email: "\(email)\($0)") }
        }
        for aheadFrom in [1, Int.max] {
            let store = try tableStore()
            let table = try store.table(Tagged.self, named: "tagged", indexes: Tagged.indexes)
            var stamps: [Int64: UInt64] = [:]
            let batches = [
                tagged(Array(1...300), email: "a"), // a load
                tagged(Array((150...450).reversed()), email: "b"), // changes and new entities
                tagged(Array(100...200), email: "b") + tagged(Array(300...320), email: "c"), // some unchanged
            ]
            for (round, batch) in batches.enumerated() {
                let unchanged = Set(batch.filter { table[$0.id] == $0 }.map(\.id))
                try store.write { tx in try tx[table].put(batch, encodingAheadFrom: aheadFrom) }
                let lsn = store.current.lsn
                for entity in batch where !unchanged.contains(entity.id) { stamps[entity.id] = lsn }
                let storage = table.storage(in: store.current)
                let wrong = stamps.filter { id, stamp in storage.row(.int(id))?.lsn != stamp }.keys.sorted()
                #expect(wrong.first == nil, "encoded ahead from \(aheadFrom), batch \(round): \(wrong.count) rows carry another LSN")
                #expect(round < 2 || !unchanged.isEmpty, "the last batch leaves some entities unchanged")
            }
        }
    }

    /// A batch throws at its first identifier that is not in NFC, with the
    /// entities before it in the transaction and none after, whether the
    /// rows were made as it staged them or ahead (where a row is made only
    /// for an identifier the put accepts), into a filled table or an empty one.
    @Test func aBatchThrowsAtItsFirstIdentifierNotInNFC() throws {
        struct Tag: Entity, Equatable {
            var id: String
            var uses: Int
        }
        let decomposed = "caf" + "e\u{301}"
        for aheadFrom in [1, Int.max] {
            for filled in [true, false] {
                let store = try tableStore()
                let tags = try store.table(Tag.self, named: "tags")
                if filled { try tags.put((0..<40).map { Tag(id: "t\($0)", uses: 0) }) }
                var batch = (0..<60).map { Tag(id: "t\($0)", uses: 1) }
                batch[35] = Tag(id: decomposed, uses: 1)
                try store.write { tx in
                    #expect(throws: TableError.identifierNotNormalized(table: "tags", id: decomposed)) {
                        try tx[tags].put(batch, encodingAheadFrom: aheadFrom)
                    }
                    let put = tx[tags].all()
                    #expect(put.count == (filled ? 40 : 35), "ahead from \(aheadFrom), filled \(filled)")
                    #expect(put.filter { $0.uses == 1 }.map(\.id).sorted() == batch[..<35].map(\.id).sorted(), "ahead from \(aheadFrom), filled \(filled)")
                }
                try store.checkInvariants()
            }
        }
    }

    @Test func aUniqueViolationMidBatchLeavesTheIndexesOfTheEntitiesBefore() throws {
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        var random = SeededGenerator(seed: 7)
        try people.put(Self.batch(10, among: 1...10, using: &random))
        var batch = Self.batch(60, among: 100...200, using: &random)
        var twin = batch[40]
        twin.id = 999
        batch.insert(twin, at: 50)
        try store.write { tx in
            #expect(throws: TableError.self) { try tx[people].put(batch) }
            // The 50 before the twin are in the transaction, and found by its indexes.
            let byCity = try tx[people].query.filter(\.city == batch[3].city).ids()
            #expect(byCity.contains(batch[3].id))
            let all = Set(tx[people].all().map(\.id))
            let byAge = try Set(tx[people].query.filter(\.age >= 0).ids())
            #expect(byAge == all, "the age index holds exactly the transaction's entities")
            #expect(all.isSuperset(of: batch[..<50].map(\.id)) && !all.contains(999))
        }
        try store.checkInvariants()
    }
}

/// An entity with nil-able fields, a NaN-able score, a unique email, and an
/// encoding that throws when `unencodable` is set.
struct Tagged: Entity, Equatable {
    struct Unencodable: Error {}

    var id: Int64
    var tag: String?
    var score: Double
    var group: Int?
    var email: String?
    var unencodable = false

    static let indexes: [Index<Tagged>] = [.on(\.tag), .on(\.score), .on(\.group, \.score), .unique(\.email), .on(\.tag, \.group)]

    enum CodingKeys: String, CodingKey { case id, tag, score, group, email }

    func encode(to encoder: Encoder) throws {
        if unencodable { throw Unencodable() }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encodeIfPresent(tag, forKey: .tag)
        try container.encode(score, forKey: .score)
        try container.encodeIfPresent(group, forKey: .group)
        try container.encodeIfPresent(email, forKey: .email)
    }

    /// A batch of 1 to 200 over `ids` (so identifiers repeat), sometimes
    /// with an entity that does not encode or an email another one has.
    static func batch(among ids: ClosedRange<Int64>, using random: inout SeededGenerator) -> [Tagged] {
        let scores: [Double] = [.nan, -0.0, 0.0, 1, 2.5, -3, .infinity]
        var batch = (0..<[1, 2, 5, 40, 200].randomElement(using: &random)!).map { _ in
            let id = Int64.random(in: ids, using: &random)
            return Tagged(id: id, tag: Bool.random(using: &random) ? nil : ["a", "b", "c"].randomElement(using: &random)!,
                          score: scores.randomElement(using: &random)!,
                          group: Bool.random(using: &random) ? nil : Int.random(in: 0...3, using: &random),
                          email: Int.random(in: 0...3, using: &random) == 0 ? nil : "e\(id)")
        }
        // A third are in identifier order, each identifier once: a load, when the table is empty.
        if Int.random(in: 0...2, using: &random) == 0 {
            batch = Dictionary(batch.map { ($0.id, $0) }, uniquingKeysWith: { $1 }).values.sorted { $0.id < $1.id }
        }
        if Int.random(in: 0...5, using: &random) == 0 { batch[Int.random(in: 0..<batch.count, using: &random)].unencodable = true }
        if Int.random(in: 0...5, using: &random) == 0 { batch[Int.random(in: 0..<batch.count, using: &random)].email = "e1" }
        return batch
    }

    static func == (a: Tagged, b: Tagged) -> Bool {
        a.id == b.id && a.tag == b.tag && (a.score == b.score || (a.score.isNaN && b.score.isNaN)) && a.group == b.group && a.email == b.email
    }
}
