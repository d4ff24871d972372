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
