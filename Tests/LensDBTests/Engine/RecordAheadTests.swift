import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// A large batch put makes its transaction's record beside its index work,
/// and the commit logs that record, continued with whatever the block did
/// after the batch. The log must hold exactly the bytes a record made at
/// the commit holds, and a reopened store exactly what was committed.
@Suite struct RecordAheadTests {
    /// Large enough to change the indexes on several threads.
    static let batchSize = TableStorage.indexChangesPerThread + 500

    static func people(_ ids: ClosedRange<Int64>, seed: String) -> [Person] {
        var random = SeededGenerator.fromEnvironment(seed)
        return ids.map { Person.random($0, using: &random) }
    }

    @Test func aBatchMakesTheRecordACommitWouldMake() throws {
        let store = try tableStore()
        defer { store.close() }
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        let batch = Self.people(1...Int64(Self.batchSize), seed: "RecordAheadTests.aBatchMakesTheRecordACommitWouldMake")
        try store.write { tx in
            try tx[people].put(batch)
            let ahead = try #require(tx.recordMadeAhead, "a large batch makes its record ahead")
            #expect(ahead.count == tx.operationCount)
            #expect(try ahead.record.payload == TransactionFormat.encode(tx.operations))
            #expect(try tx.recordOfEveryOperation()?.payload == TransactionFormat.encode(tx.operations))
        }
        #expect(people.count == batch.count)
    }

    @Test func operationsAfterTheBatchContinueItsRecord() throws {
        let fileSystem = SimulatedFileSystem()
        let batch = Self.people(1...Int64(Self.batchSize), seed: "RecordAheadTests.operationsAfterTheBatchContinueItsRecord")
        let second = Self.people(Int64(Self.batchSize + 1)...Int64(2 * Self.batchSize), seed: "RecordAheadTests.second")
        var late = batch[6]
        late.name = "changed after the batches"
        do {
            let store = try tableStore(fileSystem)
            let people = try store.table(Person.self, named: "people", indexes: personIndexes)
            try store.write { tx in
                try tx[people].put(batch)
                let first = try #require(tx.recordMadeAhead).count
                // A second batch continues the first's record; single
                // operations after it are encoded at the commit.
                try tx[people].put(second)
                #expect(try #require(tx.recordMadeAhead).count > first)
                try tx[people].put(late)
                try tx[people].remove(9)
                tx.put([1, 2, 3], for: [4], in: "raw")
                let made = try #require(try tx.recordOfEveryOperation())
                #expect(try made.payload == TransactionFormat.encode(tx.operations))
            }
            store.close()
        }
        let store = try tableStore(fileSystem)
        defer { store.close() }
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        #expect(people.count == 2 * Self.batchSize - 1)
        #expect(people[7] == late)
        #expect(people[9] == nil)
        #expect(people[Int64(2 * Self.batchSize)] == second.last)
        #expect(store.current.value(in: "raw", key: [4]) != nil)
        try store.checkInvariants()
    }

    /// With no index but unique ones, which each put keeps current, a
    /// batch has no index work for the record to go beside: the commit
    /// makes it, as before.
    @Test func aTableWithOnlyUniqueIndexesMakesItsRecordAtTheCommit() throws {
        let fileSystem = SimulatedFileSystem()
        let batch = Self.people(1...Int64(Self.batchSize), seed: "RecordAheadTests.aTableWithOnlyUniqueIndexesMakesItsRecordAtTheCommit")
        do {
            let store = try tableStore(fileSystem)
            let people = try store.table(Person.self, named: "people", indexes: [.unique(\.email)])
            try store.write { tx in
                try tx[people].put(batch)
                #expect(tx.recordMadeAhead == nil)
            }
            store.close()
        }
        let store = try tableStore(fileSystem)
        defer { store.close() }
        let people = try store.table(Person.self, named: "people", indexes: [.unique(\.email)])
        #expect(people.all() == batch)
    }

    /// A batch that throws part way makes no record ahead: most blocks let
    /// the error end them, and a record of a dropped transaction is waste.
    @Test func aBatchThatThrowsMakesNoRecordAhead() throws {
        let store = try tableStore()
        defer { store.close() }
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        var batch = Self.people(1...Int64(Self.batchSize), seed: "RecordAheadTests.aBatchThatThrowsMakesNoRecordAhead")
        batch[batch.count - 1].email = batch[0].email
        try store.write { tx in
            #expect(throws: TableError.self) { try tx[people].put(batch) }
            #expect(tx.recordMadeAhead == nil)
        }
        #expect(people.count == batch.count - 1, "the block caught the error, so the puts before it commit")
    }

    /// Observers read the operations after the record is made: the record
    /// ahead must leave them all in place.
    @Test func anObservedBatchDeliversEveryOperation() throws {
        let store = try tableStore()
        defer { store.close() }
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        let delivered = Locked(0)
        let (_, token) = store.addCommitObserver { transaction in delivered.withLock { $0 += transaction.operations.count } }
        defer { store.removeCommitObserver(token) }
        let batch = Self.people(1...Int64(Self.batchSize), seed: "RecordAheadTests.anObservedBatchDeliversEveryOperation")
        try store.write { tx in try tx[people].put(batch) }
        // The puts and the table's declaration.
        #expect(delivered.withLock { $0 } == batch.count + 1)
    }
}
