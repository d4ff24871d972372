import Glibc
import InMemoryLogging
import LensTestSupport
import Logging
import Testing
@testable import LensDB

/// `StoreOptions.logger` gets what an operator needs, with metadata to act
/// on, and nothing per commit.
@Suite struct StoreLoggingTests {
    /// Options with a capturing logger, on `fileSystem`.
    func capturing(_ fileSystem: any FileSystem, _ options: StoreOptions = StoreOptions()) -> (StoreOptions, InMemoryLogHandler) {
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "test", factory: { _ in handler })
        logger.logLevel = .trace
        var options = options
        options.fileSystem = fileSystem
        options.logger = logger
        return (options, handler)
    }

    func entries(_ handler: InMemoryLogHandler, _ message: String) -> [InMemoryLogHandler.Entry] {
        handler.entries.filter { $0.message.description == message }
    }

    @Test func openAfterACrashLogsTheTornTailTheRelogAndTheOpen() throws {
        let fileSystem = SimulatedFileSystem()
        let (options, handler) = capturing(fileSystem)
        let store = try Store(at: "/s.lensdb", options: options)
        for index in 0..<3 { try store.write { tx in tx.put(bytes("v\(index)"), for: bytes("k\(index)"), in: "t") } }
        fileSystem.crash(seed: 1, model: .keepAll)
        let log = "/s.lensdb/log-0000000000000001.log"
        let records = try #require(fileSystem.contents(of: log))
        let end = records.count - records.reversed().prefix { $0 == 0 }.count
        fileSystem.setContents(Array(records[..<end]) + [1, 2, 3, 4, 5], of: log)
        handler.clear()

        let reopened = try Store(at: "/s.lensdb", options: options)
        let torn = try #require(entries(handler, "cut a torn tail").first)
        #expect(torn.level == .notice)
        #expect(torn.metadata["file"] == .string(log))
        #expect(torn.metadata["offset"] == "\(end)")
        #expect(torn.metadata["bytes"] == "5")
        #expect(torn.metadata["store"] == "/s.lensdb")
        let relog = try #require(entries(handler, "wrote the unproven tail again").first)
        #expect(relog.metadata["lastLSN"] == "3")
        #expect(relog.metadata["log"] == "/s.lensdb/log-0000000000000002.log")
        let opened = try #require(entries(handler, "opened").first)
        #expect(opened.metadata["lsn"] == "3")
        #expect(opened.metadata["recordsReplayed"] == "3")
        #expect(reopened.current.lsn == 3)
    }

    @Test func openRemovingAnObsoleteLogSaysWhichFiles() throws {
        let fileSystem = SimulatedFileSystem()
        let (options, handler) = capturing(fileSystem)
        let store = try Store(at: "/s.lensdb", options: options)
        try store.write { tx in tx.put(bytes("v"), for: bytes("k"), in: "t") }
        let log = "/s.lensdb/log-0000000000000001.log"
        let old = try #require(fileSystem.contents(of: log))
        try store.compact()
        store.close()
        // A crash between the snapshot's rename and the removal of what it replaces.
        fileSystem.setContents(old, of: log)
        handler.clear()
        _ = try Store(at: "/s.lensdb", options: options)
        let removed = try #require(entries(handler, "removed logs").first)
        #expect(removed.metadata["files"] == .array([.string(log)]))
    }

    @Test func salvageDropLogsTheLostLSNsAndWhy() throws {
        let fileSystem = SimulatedFileSystem()
        let (options, handler) = capturing(fileSystem, StoreOptions(compression: .none, recovery: .salvage))
        let store = try Store(at: "/s.lensdb", options: options)
        for index in 0..<3 { try store.write { tx in tx.put(bytes("value \(index)"), for: bytes("k\(index)"), in: "t") } }
        store.close()
        let log = "/s.lensdb/log-0000000000000001.log"
        var contents = try #require(fileSystem.contents(of: log))
        var reader = try LogReader(bytes: contents, path: log, policy: .strict)
        _ = try reader.next()
        let second = try #require(try reader.next())
        contents[Int(second.offset) + second.frameSize - 1] ^= 0x40
        fileSystem.setContents(contents, of: log)
        handler.clear()

        let reopened = try Store(at: "/s.lensdb", options: options)
        let dropped = try #require(entries(handler, "salvage dropped records").first)
        #expect(dropped.level == .warning)
        #expect(dropped.metadata["file"] == .string(log))
        #expect(dropped.metadata["offset"] == "\(second.offset)")
        #expect(dropped.metadata["lostLSNs"] == "2..<3")
        #expect(dropped.metadata["reason"] == "checksumMismatch")
        #expect(reopened.current.count(in: "t") == 2)
    }

    @Test func compactionLogsItsStartAndEndWithSizesAndTimes() throws {
        let (options, handler) = capturing(SimulatedFileSystem())
        let store = try Store(at: "/s.lensdb", options: options)
        for index in 0..<20 { try store.write { tx in tx.put(bytes("value \(index)"), for: bytes("k\(index)"), in: "t") } }
        try store.compact()
        let started = try #require(entries(handler, "compaction started").first)
        let finished = try #require(entries(handler, "compaction finished").first)
        #expect(started.metadata["generation"] == "2")
        #expect(started.metadata["lsn"] == "20")
        for key in ["snapshotBytes", "logBytes", "seconds", "stallMicroseconds"] {
            #expect(finished.metadata[key] != nil, "compaction finished has \(key)")
        }
        let logBytes = Int(finished.metadata["logBytes"]?.description ?? "") ?? 0
        let snapshotBytes = Int(finished.metadata["snapshotBytes"]?.description ?? "") ?? 0
        #expect(logBytes > 20 * 20, "20 records were replaced")
        #expect(snapshotBytes > 0)
    }

    @Test func failStopIsLoggedOnceWithItsCause() throws {
        let fileSystem = SimulatedFileSystem()
        let (options, handler) = capturing(fileSystem)
        let store = try Store(at: "/s.lensdb", options: options)
        try store.write { tx in tx.put(bytes("v"), for: bytes("k"), in: "t") }
        fileSystem.injectFault(Fault(.failedSync, operations: [.sync], pathSuffix: ".log"))
        #expect(throws: StoreError.self) { try store.write { tx in tx.put(bytes("w"), for: bytes("k"), in: "t") } }
        #expect(throws: StoreError.self) { try store.write { tx in tx.put(bytes("x"), for: bytes("k"), in: "t") } }
        let failures = entries(handler, "store failed; read-only until reopened")
        #expect(failures.count == 1)
        #expect(failures.first?.level == .critical)
        #expect(failures.first?.metadata["cause"] == .string("\(store.failure!)"))
    }

    @Test func lockContentionIsLoggedWhenItStartsAndWhenOpenGivesUp() throws {
        let directory = try TemporaryDirectory("logging")
        defer { directory.remove() }
        let path = directory.path + "/s.lensdb"
        let holder = try Store(at: path)
        defer { holder.close() }
        let (options, handler) = capturing(POSIXFileSystem())
        #expect(throws: StoreError.self) { try Store(at: path, options: options) }
        #expect(entries(handler, "store is locked; retrying").count == 1)
        let gaveUp = try #require(entries(handler, "store is locked; giving up").first)
        #expect(gaveUp.metadata["holder"] == "\(getpid())")
        #expect(gaveUp.metadata["attempts"] == "\(Store.lockAttempts)")
    }

    @Test func commitsLogNothing() throws {
        let (options, handler) = capturing(SimulatedFileSystem(), StoreOptions(durability: .buffered))
        let store = try Store(at: "/s.lensdb", options: options)
        handler.clear()
        for index in 0..<50 { try store.write { tx in tx.put(bytes("v\(index)"), for: bytes("k"), in: "t") } }
        try store.flush()
        #expect(handler.entries.isEmpty)
    }
}
