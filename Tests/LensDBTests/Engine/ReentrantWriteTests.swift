import LensTestSupport
import Testing
@testable import LensDB

/// A write, flush or compaction of a store from inside its own write block
/// throws ``StoreError/reentrantWrite(path:)`` instead of waiting for itself,
/// and leaves the store and the outer write as they were.
@Suite struct ReentrantWriteTests {
    @Test func writeInsideAWriteBlockThrowsAndTheOuterWriteCommitsWhenItCatches() throws {
        try withTemporaryStore { path, options in
            let store = try Store(at: path, options: options)
            var inner: (any Error)?
            try store.write { tx in
                tx.put(bytes("outer"), for: bytes("a"), in: "t")
                do {
                    try store.write { tx in tx.put(bytes("inner"), for: bytes("b"), in: "t") }
                } catch {
                    inner = error
                }
            }
            #expect(inner as? StoreError == .reentrantWrite(path: path))
            #expect(try store.current.value(in: "t", key: bytes("a"))?.bytes() == bytes("outer"))
            #expect(store.current.value(in: "t", key: bytes("b")) == nil)
            #expect(store.current.lsn == 1, "one commit: the outer one")
            try store.write { tx in tx.put(bytes("later"), for: bytes("c"), in: "t") }
            store.close()
            let reopened = try Store(at: path, options: options)
            #expect(reopened.current.count(in: "t") == 2)
            #expect(reopened.current.lsn == 2)
        }
    }

    @Test func reentrantErrorLetOutOfTheBlockFailsTheOuterWriteCleanly() throws {
        try withTemporaryStore { path, options in
            let store = try Store(at: path, options: options)
            #expect(throws: StoreError.reentrantWrite(path: path)) {
                try store.write { tx in
                    tx.put(bytes("outer"), for: bytes("a"), in: "t")
                    try store.write { tx in tx.put(bytes("inner"), for: bytes("b"), in: "t") }
                }
            }
            #expect(store.current.count(in: "t") == 0)
            #expect(store.current.lsn == 0)
            #expect(store.failure == nil, "a refused nested write does not fail the store")
            try store.write { tx in tx.put(bytes("after"), for: bytes("c"), in: "t") }
            #expect(store.current.lsn == 1)
        }
    }

    /// Opening a table or a root and changing the key throw the same, on
    /// disk and in memory.
    @Test func openingATableOrRootOrChangingTheKeyInsideAWriteBlockThrowsReentrantWrite() throws {
        struct Note: Entity { var id: Int64; var text: String }
        struct Settings: Codable, Sendable { var theme = "light" }
        try withTemporaryStore { path, options in
            let store = try Store(at: path, options: options)
            try store.write { tx in
                tx.put(bytes("v"), for: bytes("k"), in: "t")
                #expect(throws: StoreError.reentrantWrite(path: path)) { try store.table(Note.self, named: "notes") }
                #expect(throws: StoreError.reentrantWrite(path: path)) { try store.root(Settings.self, named: "settings", default: Settings()) }
                #expect(throws: StoreError.reentrantWrite(path: path)) { try store.changeEncryptionKey(to: nil) }
            }
            #expect(store.current.lsn == 1)
            let notes = try store.table(Note.self, named: "notes")
            try notes.put(Note(id: 1, text: "after"))
            #expect(notes[1]?.text == "after")
        }
        let memory = Store.inMemory()
        try memory.write { _ in
            #expect(throws: StoreError.reentrantWrite(path: ":memory:")) { try memory.changeEncryptionKey(to: nil) }
            #expect(throws: StoreError.reentrantWrite(path: ":memory:")) { try memory.table(Note.self, named: "notes") }
        }
    }

    @Test func flushAndCompactInsideAWriteBlockThrowReentrantWrite() throws {
        try withTemporaryStore { path, options in
            let store = try Store(at: path, options: options)
            try store.write { tx in
                tx.put(bytes("v"), for: bytes("k"), in: "t")
                #expect(throws: StoreError.reentrantWrite(path: path)) { try store.flush() }
                #expect(throws: StoreError.reentrantWrite(path: path)) { try store.compact() }
            }
            // The refused compaction gave its slot back.
            try store.compact()
            #expect(store.openStatistics.recovery.snapshot == nil)
            store.close()
            let reopened = try Store(at: path, options: options)
            #expect(reopened.openStatistics.recovery.snapshot != nil)
            #expect(try reopened.current.value(in: "t", key: bytes("k"))?.bytes() == bytes("v"))
        }
    }

    /// What only reads the writers' side, or starts watching the store,
    /// works from inside a write block: the counters are those before the
    /// block, and a stream or follow started there begins with its commit.
    @Test(.timeLimit(.minutes(1)))
    func statisticsFailureAndNewStreamsInsideAWriteBlockWork() async throws {
        let store = try tableStore()
        let people = try store.table(Person.self, named: "people", indexes: personIndexes)
        try people.put(person(1, "Ana"))
        let manager = ConsistencyManager()
        let holder = Holder(person(2, "Bea"))
        manager.register(holder)
        struct Settings: Codable, Sendable { var theme = "light" }
        let settings = try store.root(Settings.self, named: "settings", default: Settings())
        var inside: (StoreStatistics, StoreError?)?
        var (storeChanges, tableChanges): (AsyncStream<StoreChange>?, AsyncStream<TableChange<Person>>?) = (nil, nil)
        var (inNice, themes): (AsyncStream<[Person]>?, LensValues<String>.Iterator?) = (nil, nil)
        try store.write { tx in
            try tx[people].put(person(2, "Bea", city: "Nice"))
            inside = (store.statistics, store.failure)
            storeChanges = store.changes
            tableChanges = people.changes
            inNice = people.query.filter(\.city == "Nice").values
            themes = settings.lens(\.theme).values.makeAsyncIterator()
            manager.follow(people)
        }
        #expect(inside?.0.commits == 1, "the block's own commit is not counted yet")
        #expect(inside?.0.tables.first?.entities == 1, "the tables as readers see them")
        #expect(inside?.1 == nil)
        #expect(holder.value.city == "Nice", "the follow started in the block pushed its commit")
        var nice = inNice!.makeAsyncIterator()
        // The version before the block, unless the block's commit has
        // replaced it already (a live query conflates), then that commit.
        var ids = await nice.next()?.map(\.id)
        if ids == [] { ids = await nice.next()?.map(\.id) }
        #expect(ids == [2])
        #expect(await themes?.next() == "light")
        try settings.lens(\.theme).update { $0 = "dark" }
        #expect(await themes?.next() == "dark")
        try people.put(person(3, "Cy"))
        store.close()
        var tableLSNs: [UInt64] = []
        for await change in tableChanges! { if case let .commit(commit) = change { tableLSNs.append(commit.lsn) } }
        #expect(tableLSNs == [2, 4], "the block's commit, then the next to this table")
        var storeLSNs: [UInt64] = []
        for await change in storeChanges! { if case let .commit(commit) = change { storeLSNs.append(commit.lsn) } }
        #expect(storeLSNs == [2, 3, 4])
        #expect(store.statistics.commits == 4)
    }

    /// A lens watch started inside a write block takes the writers' lock
    /// before the lenses' own, as every watch does: watches started inside
    /// and outside blocks at once never wait for each other in a circle.
    @Test(.timeLimit(.minutes(1)))
    func lensWatchesStartedInsideAndOutsideWriteBlocksAtOnceNeverDeadlock() throws {
        struct Settings: Codable, Sendable { var level = 0 }
        let store = Store.inMemory()
        let settings = try store.root(Settings.self, named: "settings", default: Settings())
        let watched = Locked(0)
        runConcurrently(threads: 2) { thread in
            for round in 0..<300 {
                // Each iterator is released at once: the next one starts
                // the commit observer again, which is what takes the lock.
                if thread == 0 {
                    try? store.write { tx in
                        tx.put(bytes("\(round)"), for: bytes("k"), in: "t")
                        _ = settings.lens(\.level).values.makeAsyncIterator()
                    }
                } else {
                    _ = settings.lens(\.level).values.makeAsyncIterator()
                    watched.withLock { $0 += 1 }
                }
            }
        }
        #expect(watched.withLock { $0 } == 300)
        #expect(store.current.lsn == 300)
    }

    @Test func asyncWriteWhoseBlockWritesTheSameStoreThrowsReentrantWrite() async throws {
        let store = Store.inMemory()
        let outcome = try await store.asyncWrite { tx in
            tx.put(bytes("outer"), for: bytes("a"), in: "t")
            return Result { try store.write { tx in tx.put(bytes("inner"), for: bytes("b"), in: "t") } }
        }
        #expect(throws: StoreError.reentrantWrite(path: ":memory:")) { try outcome.get() }
        #expect(store.current.count(in: "t") == 1)
    }

    @Test func writeToAnotherStoreInsideAWriteBlockCommitsBoth() throws {
        let first = Store.inMemory(), second = Store.inMemory()
        try first.write { tx in
            tx.put(bytes("1"), for: bytes("k"), in: "t")
            try second.write { tx in tx.put(bytes("2"), for: bytes("k"), in: "t") }
        }
        #expect(first.current.count(in: "t") == 1)
        #expect(second.current.count(in: "t") == 1)
    }
}
