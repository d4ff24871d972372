import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// ``TableStatistics`` against what a table holds: the encodings of its
/// entities through quarantine, removals, transactions that throw and a
/// change of the entity's shape.
@Suite struct TableStatisticsTests {
    /// `encodedBytes` adds up the encodings of the entities the table
    /// holds: not the quarantined ones, not those of a transaction that threw.
    @Test func encodedBytesFollowQuarantineRemovalsAndThrownTransactions() throws {
        let fileSystem = SimulatedFileSystem()
        let all = IndexOrderTests.people(30, seed: 25)
        try IndexOrderTests.storePeople(all, on: fileSystem, compacting: false)
        do {
            // Bytes no Person decodes from, put before the typed open.
            let store = try tableStore(fileSystem)
            let encoding = TableEncoding(key: .int64, value: .valueFormat)
            try store.write { tx in
                tx.put(.encoded(try ValueEncoder().encode(["name": "no id"])), for: OrderedKey.int64(999), in: "people", encoding: encoding)
            }
            store.close()
        }
        let store = try tableStore(fileSystem)
        let people = try store.table(Person.self, named: "people", indexes: personIndexes, onUndecodable: .quarantine)
        let encoder = ValueEncoder()
        func truth() throws -> Int { try people.all().reduce(0) { $0 + (try encoder.encode($1)).count } }
        func reported() -> Int? { store.statistics.tables.first?.encodedBytes }
        #expect(store.statistics.tables.first?.quarantined == 1)
        #expect(reported() == (try truth()))

        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try store.write { tx in
                var changed = all[0]
                changed.name += String(repeating: "x", count: 100)
                try tx[people].put(changed)
                try tx[people].remove(all[1].id)
                throw Stop()
            }
        }
        #expect(reported() == (try truth()))
        try people.remove(999)
        try people.remove(all[2].id)
        try store.write { tx in tx.remove(OrderedKey.int64(all[3].id), from: "people") }
        #expect(store.statistics.tables.first?.quarantined == 0)
        #expect(reported() == (try truth()))
        store.close()
    }

    /// Entities read from bytes an earlier shape of their type wrote count
    /// those bytes, as stored, until a snapshot stores them re-encoded.
    @Test func encodedBytesCountWhatIsStoredUntilASnapshotReencodes() throws {
        let fileSystem = SimulatedFileSystem()
        let wide = (1...20).map { Wide(id: Int64($0), name: "n\($0)", legacy: String(repeating: "l", count: $0)) }
        do {
            let store = try tableStore(fileSystem)
            try store.table(Wide.self, named: "things").put(wide)
            store.close()
        }
        let encoder = ValueEncoder()
        let stored = try wide.reduce(0) { $0 + (try encoder.encode($1)).count }
        let narrow = try wide.reduce(0) { $0 + (try encoder.encode(Narrow(id: $1.id, name: $1.name))).count }
        do {
            let store = try tableStore(fileSystem)
            _ = try store.table(Narrow.self, named: "things")
            #expect(store.statistics.tables.first?.encodedBytes == stored)
            try store.compact()
            store.close()
        }
        let store = try tableStore(fileSystem)
        _ = try store.table(Narrow.self, named: "things")
        #expect(store.statistics.tables.first?.encodedBytes == narrow)
        store.close()
    }
}

/// An entity as an earlier version of a program wrote it, and as a later one reads it.
private struct Wide: Entity {
    var id: Int64
    var name: String
    var legacy: String
}

private struct Narrow: Entity {
    var id: Int64
    var name: String
}
