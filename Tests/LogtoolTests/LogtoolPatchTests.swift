import Foundation
@_spi(CrashTesting) import LensDB
import LensLog
import LensTestSupport
import Testing

/// `logtool` on patches of root documents (log operation 7): dump shows the
/// member's path and its value as JSON, verify judges the value, and the
/// snapshot holds the whole document.
@Suite struct LogtoolPatchTests {
    func patchedStore(in directory: TemporaryDirectory, compressed: Bool = true) throws -> String {
        let path = directory.path + "/patched.lensdb"
        var options = StoreOptions()
        options.compression = compressed ? .lz4 : .none
        let store = try Store(at: path, options: options)
        let start: Document = ["protection": ["enabled": false], "flags": ["beta-2": true]]
        try store.write { tx in tx.setRoot(.encoded(start.binaryEncoded()), named: "app", encoding: .valueFormat) }
        try store.write { tx in
            tx.patchRoot(named: "app", at: ["protection", "enabled"], to: Document.string("a value worth finding").binaryEncoded())
            tx.patchRoot(named: "app", at: ["flags", "beta-2"], to: nil)
        }
        store.close()
        return path
    }

    @Test func dumpShowsEachPatchWithItsPathAndValueAsJSON() throws {
        let directory = try TemporaryDirectory("logtool-patch")
        defer { directory.remove() }
        let path = try patchedStore(in: directory)
        let text = try logtool("dump", path).out
        #expect(text.contains("  patchRoot app.protection.enabled = \"a value worth finding\"\n"), "\(text)")
        #expect(text.contains("  patchRoot app.flags[\"beta-2\"] removed\n"), "\(text)")
        let json = String(try logtool("dump", path, "--json").out.split(separator: "\n").last ?? "")
        let record = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let operations = try #require(record["operations"] as? [[String: Any]])
        #expect(operations.count == 2)
        #expect(operations[0]["op"] as? String == "patchRoot" && operations[0]["root"] as? String == "app")
        #expect(operations[0]["path"] as? [String] == ["protection", "enabled"] && operations[0]["change"] as? String == "set")
        let value = try #require(operations[0]["value"] as? [String: Any])
        #expect(value["encoding"] as? String == "valueFormat" && value["json"] as? String == "a value worth finding")
        #expect(operations[1]["change"] as? String == "remove" && operations[1]["value"] == nil)
        #expect(try logtool("verify", path).out.hasSuffix("OK\n"))
        let store = try Store(at: path)
        try store.compact()
        store.close()
        let snapshot = try logtool("dump", path, "--snapshot").out
        #expect(snapshot.contains("root app = {\"flags\":{},\"protection\":{\"enabled\":\"a value worth finding\"}}"), "\(snapshot)")
        #expect(try logtool("verify", path).out.hasSuffix("OK\n"))
    }

    @Test func aPatchValueBrokenBelowTheChecksumIsAProblemWithItsPath() throws {
        let directory = try TemporaryDirectory("logtool-patch-broken")
        defer { directory.remove() }
        let path = try patchedStore(in: directory, compressed: false)
        let log = try StoreDirectory(path: path, fileSystem: POSIXFileSystem()).list().logs.last!
        var file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: log.path)))
        var reader = try LogReader(bytes: file, path: log.path, policy: .strict)
        _ = try reader.next()
        let second = try #require(try reader.next()).offset
        let value = Document.string("a value worth finding").binaryEncoded()
        let at = try #require(file.firstRange(of: value)).lowerBound
        file[at] = 0xEE  // no value tag is 0xEE
        rechecksumLogRecord(at: Int(second), in: &file, generation: log.generation)
        try Data(file).write(to: URL(fileURLWithPath: log.path))
        let verify = try logtool("verify", path)
        #expect(verify.status == 1)
        #expect(verify.out.contains("(LSN 2): patchRoot app.protection.enabled: the value breaks"), "\(verify.out)")
    }
}
