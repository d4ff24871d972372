import Glibc
import LensTestSupport
import Testing
@testable import LensDB

/// Error texts are what a person reads in a crash report or a log: one
/// sentence with the file, the cause and what to do, each said once.
@Suite struct StoreErrorTextTests {
    /// A full disk met while the log grows: the store's error names the
    /// store, the call, the file and the errno, and says "read-only" once.
    @Test func noSpaceWhileTheLogGrowsReadsAsOneSentence() throws {
        let fileSystem = SimulatedFileSystem()
        var options = StoreOptions(durability: .full, compression: .none)
        options.fileSystem = fileSystem
        let store = try Store(at: "/s.lensdb", options: options)
        try store.write { tx in tx.put(bytes("small"), for: bytes("k"), in: "t") }
        fileSystem.injectFault(Fault(.noSpace, operations: [.preallocate], pathSuffix: ".log"))
        let large = [UInt8](repeating: 7, count: 100_000)
        var thrown: (any Error)?
        do { try store.write { tx in tx.put(large, for: bytes("big"), in: "t") } } catch { thrown = error }
        let expected = "/s.lensdb is read-only until it is reopened because preallocating "
            + "/s.lensdb/log-0000000000000001.log failed: No space left on device (errno 28); "
            + "reads still work: fix the cause (free space, check the device), then reopen the store"
        #expect(thrown.map { "\($0)" } == expected)
        #expect(store.failure.map { "\($0)" } == expected, "later writes report the same failure")
        #expect(expected.components(separatedBy: "read-only").count == 2)
    }

    @Test func logWriterFailureSaysItsCauseWithoutTheStoresAdvice() {
        let cause = StorageError(errno: EIO, .sync, path: "/s/log-0000000000000002.log")
        #expect("\(LogError.writerFailed(cause: cause))"
            == "the log accepts no more records because syncing /s/log-0000000000000002.log failed: Input/output error (errno 5)")
    }

    @Test func lockedNamesTheHolderAndWhatToDo() throws {
        try withTemporaryStore { path, options in
            let store = try Store(at: path, options: options)
            defer { store.close() }
            let error = #expect(throws: StoreError.self) { try Store(at: path, options: options) }
            #expect(error.map { "\($0)" }
                == "\(path) is already open in this process: another Store of it holds the lock; use that Store, or close it, then open the store again")
        }
    }

    @Test func readOnlyClosedAndReentrantTexts() throws {
        #expect("\(StoreError.readOnly(path: "/a.lensdb"))"
            == "/a.lensdb was opened read-only, so it cannot be written; open it without StoreOptions.readOnly to write")
        #expect("\(StoreError.closed(path: "/a.lensdb"))" == "/a.lensdb is closed; open it again with a new Store to write")
        let store = Store.inMemory()
        try store.write { _ in
            let error = #expect(throws: StoreError.self) { try store.write { _ in } }
            #expect(error.map { "\($0)" } == ":memory:: a call that writes the store (write, flush, compact, changeEncryptionKey, or opening a table or a root) was made inside one of its write blocks, whose writers' lock that block holds; nothing changed. Make a change on that block's transaction, and make the other calls after the block returns")
        }
    }

    @Test func storageErrorWithoutAnErrnoSaysItsCodeInWords() {
        #expect("\(StorageError(.closed, .sync, path: "/s/log-1.log"))" == "syncing /s/log-1.log failed: the file is closed")
        #expect("\(StorageError(errno: ENOENT, .open, path: "/missing"))" == "opening /missing failed: No such file or directory (errno 2)")
    }
}
