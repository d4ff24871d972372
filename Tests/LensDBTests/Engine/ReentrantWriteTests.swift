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
