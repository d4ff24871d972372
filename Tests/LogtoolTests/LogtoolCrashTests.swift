import Foundation
import LensDB
import LensTestSupport
import Testing

/// Stores as a crash leaves them, and as the next open leaves them: normal
/// states that `verify` must accept.
@Suite struct LogtoolCrashTests {
    /// A copy of `store` taken while a writer has it open: what a power cut
    /// after the last commit leaves (no CLOSED marker).
    func crashedCopy(of store: String, in stores: GoldenStores, writes: Int = 3) throws -> String {
        let writer = try Store(at: store)
        let encoder = ValueEncoder()
        for index in 0..<writes {
            try writer.write { tx in tx.put(try encoder.encode("v\(index)"), for: try encoder.encode(index), in: "live") }
        }
        let copy = store + ".crashed"
        try FileManager.default.copyItem(atPath: store, toPath: copy)
        writer.close()
        return copy
    }

    @Test func storeReopenedAfterACrashVerifiesOK() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let copy = try crashedCopy(of: try stores.healthy(), in: stores)
        try Store(at: copy).close()
        let logs = try StoreDirectory(path: copy, fileSystem: POSIXFileSystem()).list().logs
        #expect(logs.count >= 2, "the reopen logged the unproven tail again")
        let verify = try logtool("verify", copy)
        #expect(verify.status == 0, "\(verify.out)")
        #expect(verify.out.hasSuffix("OK\n"))
        #expect(try logtool("info", copy).status == 0)
        let lsns = try logtool("dump", copy, "--json").out.split(separator: "\n").map {
            (try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["lsn"] as? Int
        }
        #expect(lsns == (1...6).map { $0 }, "each transaction once, though two logs hold the re-logged tail")
    }

    @Test func logCutWhileNewIsANoteNotAProblem() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try stores.healthy()
        // A crash right after a log was created and preallocated, before its header reached the disk.
        let fresh = StoreDirectory(path: store, fileSystem: POSIXFileSystem()).logPath(generation: 9)
        try Data(count: 4096).write(to: URL(fileURLWithPath: fresh))
        let verify = try logtool("verify", store)
        #expect(verify.status == 0, "\(verify.out)")
        #expect(verify.out.contains("note: \(fresh): a log cut while new"))
    }

    @Test func crashedStoreWithATornTailVerifiesOKWithANote() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let copy = try crashedCopy(of: try stores.healthy(), in: stores)
        try stores.edit(try stores.logPath(copy)) { $0 += [UInt8](repeating: 0, count: 100) + [1, 2, 3] }
        let verify = try logtool("verify", copy)
        #expect(verify.status == 0, "\(verify.out)")
        #expect(verify.out.contains("note: "))
    }
}

/// `logtool` reading a store while this process writes and compacts it.
@Suite struct LogtoolLiveStoreTests {
    @Test func infoDumpAndVerifyOnAStoreBeingWrittenAndCompactedSucceedAndDisturbNothing() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try stores.healthy()
        var options = StoreOptions()
        options.compactionLogRatio = 0.5
        options.compactionMinimumLogBytes = 4096
        let writer = try Store(at: store, options: options)
        let done = Flag()
        let thread = Thread {
            let encoder = ValueEncoder()
            var index = 0
            while !done.isSet {
                // A failed write fails the count check below.
                try? writer.write { tx in tx.put(try encoder.encode("v\(index)"), for: try encoder.encode(index % 50), in: "live") }
                index += 1
            }
            done.count = index
        }
        thread.start()
        var statuses: [String: Int32] = [:]
        for _ in 0..<6 {
            for command in ["info", "dump", "verify"] {
                let result = try logtool(command, store)
                statuses[command] = max(statuses[command] ?? 0, result.status)
                if result.status != 0 { print("\(command): \(result.out.suffix(300)) \(result.err)") }
            }
        }
        done.set()
        while done.count == nil { usleep(1000) }
        #expect(statuses == ["info": 0, "dump": 0, "verify": 0])
        #expect(writer.current.count(in: "live") == min(50, done.count ?? 0))
        writer.close()
        #expect(try !StoreDirectory(path: store, fileSystem: POSIXFileSystem()).list().snapshots.isEmpty, "compactions ran meanwhile")
        #expect(try logtool("verify", store).out.hasSuffix("OK\n"))
    }
}

/// A stop flag and a result shared with the writer thread.
final class Flag: @unchecked Sendable {
    // Sendable proof: every access goes through `lock`.
    private let lock = NSLock()
    private var stopped = false
    private var total: Int?

    var isSet: Bool { lock.withLock { stopped } }
    func set() { lock.withLock { stopped = true } }
    var count: Int? {
        get { lock.withLock { total } }
        set { lock.withLock { total = newValue } }
    }
}
