import Foundation
import LensDB
import LensLog
import LensTestSupport
import Testing

/// `logtool` shows and judges bytes by the encoding each table recorded
/// (promise 10): raw bytes stay bytes, typed keys decode, and a sound store
/// written through any public API verifies OK.
@Suite struct LogtoolEncodingTests {
    func lines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8), options: [.fragmentsAllowed]) as? [String: Any])
        }
    }

    func bytes(fromHex hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return result
    }

    /// The entries `dump --json` shows for table `alpha`, replayed in LSN order.
    func dumpedEntries(_ store: String, snapshot: Bool = false) throws -> [[UInt8]: [UInt8]] {
        var entries: [[UInt8]: [UInt8]] = [:]
        let arguments = ["dump", store, "--json"] + (snapshot ? ["--snapshot"] : [])
        let result = try logtool(arguments)
        #expect(result.status == 0, "\(result.err)")
        for line in try lines(result.out) {
            let operations = snapshot ? [line.merging(["op": "put"]) { old, _ in old }] : (line["operations"] as? [[String: Any]] ?? [])
            for operation in operations where operation["table"] as? String == "alpha" && operation["op"] as? String != "declareTable" {
                let key = try #require(operation["key"] as? [String: Any])
                #expect(key["encoding"] as? String == "raw")
                let keyBytes = bytes(fromHex: try #require(key["hex"] as? String))
                switch operation["op"] as? String {
                case "put":
                    let value = try #require(operation["value"] as? [String: Any])
                    #expect(value["encoding"] as? String == "raw")
                    entries[keyBytes] = bytes(fromHex: try #require(value["hex"] as? String))
                case "remove": entries[keyBytes] = nil
                default: break
                }
            }
        }
        return entries
    }

    @Test func randomRawBytesVerifyAndDumpExactlyAcrossCompactionAndReopen() throws {
        var random = SeededGenerator.fromEnvironment("rawBytes")
        let directory = try TemporaryDirectory("logtool-raw")
        defer { directory.remove() }
        let path = directory.path + "/raw.lensdb"
        var expected: [[UInt8]: [UInt8]] = [:]
        let store = try Store(at: path)
        // Every byte value, as a key and inside a value, and the empty key.
        try store.write { tx in
            for byte in UInt8.min...UInt8.max {
                tx.put([byte, 0xFF &- byte], for: [byte], in: "alpha")
                expected[[byte]] = [byte, 0xFF &- byte]
            }
            tx.put([], for: [], in: "alpha")
            expected[[]] = []
        }
        for _ in 0..<40 {
            try store.write { tx in
                for _ in 0..<Int.random(in: 1...5, using: &random) {
                    let key = random.bytes(Int.random(in: 0...6, using: &random))
                    if Bool.random(using: &random) {
                        let value = random.bytes(Int.random(in: 0...90, using: &random))
                        tx.put(value, for: key, in: "alpha")
                        expected[key] = value
                    } else {
                        tx.remove(key, from: "alpha")
                        expected[key] = nil
                    }
                }
            }
        }
        store.close()
        #expect(try dumpedEntries(path) == expected)
        #expect(try logtool("verify", path).out.hasSuffix("OK\n"))
        let reopened = try Store(at: path)
        try reopened.compact()
        reopened.close()
        #expect(try dumpedEntries(path, snapshot: true) == expected)
        let verify = try logtool("verify", path)
        #expect(verify.status == 0)
        #expect(verify.out.hasSuffix("OK\n"), "\(verify.out)")
        let text = try logtool("dump", path, "--snapshot", "--table", "alpha").out
        // The random writes may have removed or replaced any one-byte key
        // (seed 1795455569115888307 removes "A"): look at a letter they left.
        let letter = try #require((UInt8(ascii: "A")...UInt8(ascii: "Z")).first { expected[[$0]] == [$0, 0xFF &- $0] })
        let line = "alpha[0x\(hex(letter)) \"\(Character(UnicodeScalar(letter)))\"] = 0x\(hex(letter))\(hex(0xFF &- letter)) \"\(Character(UnicodeScalar(letter))).\""
        #expect(text.contains(line), "raw bytes shown as hex with their ASCII")
    }

    @Test func typedKeysDecodeInKeyOrderAndVerify() throws {
        let directory = try TemporaryDirectory("logtool-typed")
        defer { directory.remove() }
        let path = directory.path + "/typed.lensdb"
        let store = try Store(at: path)
        let encoder = ValueEncoder()
        let uuids = (0..<3).map { _ in UUID() }
        try store.write { tx in
            for id in [42, -7, 1_000_000, 0] as [Int] {
                let (encoding, key) = try OrderedKey.encode(id)
                tx.put(.encoded(try encoder.encode("n\(id)")), for: key, in: "numbers", encoding: TableEncoding(key: encoding, value: .valueFormat))
            }
            for name in ["carol", "alice", "bob"] {
                let (encoding, key) = try OrderedKey.encode(name)
                tx.put(.encoded(try encoder.encode(name.count)), for: key, in: "names", encoding: TableEncoding(key: encoding, value: .valueFormat))
            }
            for uuid in uuids {
                let (encoding, key) = try OrderedKey.encode(uuid)
                tx.put(.encoded(try encoder.encode(true)), for: key, in: "ids", encoding: TableEncoding(key: encoding, value: .valueFormat))
            }
        }
        store.close()
        let logDump = try logtool("dump", path).out
        #expect(logDump.contains("declareTable numbers (keys: ordered Int64, values: value format)"), "\(logDump)")
        #expect(logDump.contains("put names[\"bob\"] = 3"), "\(logDump)")
        let compacting = try Store(at: path)
        try compacting.compact()
        compacting.close()
        let dump = try logtool("dump", path, "--snapshot").out
        let shown = dump.split(separator: "\n").map(String.init)
        #expect(shown.filter { $0.hasPrefix("numbers[") }.map { $0.prefix { $0 != "]" } + "]" }
                == ["numbers[-7]", "numbers[0]", "numbers[42]", "numbers[1000000]"])
        #expect(shown.filter { $0.hasPrefix("names[") }.map { $0.prefix { $0 != "]" } + "]" }
                == ["names[\"alice\"]", "names[\"bob\"]", "names[\"carol\"]"])
        #expect(shown.filter { $0.hasPrefix("ids[") }.map { $0.prefix { $0 != "]" } + "]" }
                == uuids.sorted().map { "ids[\($0.uuidString)]" })
        #expect(dump.contains("numbers[42] = \"n42\""))
        #expect(try logtool("verify", path).out.hasSuffix("OK\n"))
        let info = try logtool("info", path).out
        #expect(info.contains("names: 3 entries (keys: ordered String, values: value format)"), "\(info)")
    }

    @Test func valueFormatValueBrokenBelowTheChecksumIsAProblemWithItsPlace() throws {
        let directory = try TemporaryDirectory("logtool-broken")
        defer { directory.remove() }
        let path = directory.path + "/broken.lensdb"
        var options = StoreOptions()
        options.compression = .none
        let store = try Store(at: path, options: options)
        let marker: [UInt8] = Array("a value worth finding".utf8)
        let value = try ValueEncoder().encode(String(decoding: marker, as: UTF8.self))
        try store.write { tx in
            tx.put(.encoded(value), for: OrderedKey.int64(7), in: "people", encoding: TableEncoding(key: .int64, value: .valueFormat))
        }
        store.close()
        let log = try StoreDirectory(path: path, fileSystem: POSIXFileSystem()).list().logs.last!
        var file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: log.path)))
        let at = try #require(file.firstRange(of: value)).lowerBound
        file[at] = 0xEE  // no value tag is 0xEE
        rechecksumLogRecord(at: LogFormat.fileHeaderSize, in: &file, generation: log.generation)
        try Data(file).write(to: URL(fileURLWithPath: log.path))
        let verify = try logtool("verify", path)
        #expect(verify.status == 1)
        #expect(verify.out.contains("\(log.path) at offset \(LogFormat.fileHeaderSize) (LSN 1): put people[7]: the value breaks its table's encoding (valueFormat)"), "\(verify.out)")
        #expect(verify.out.hasSuffix("1 problems found\n") || verify.out.hasSuffix("1 problem found\n"), "\(verify.out)")
    }

    /// The shared crash fixtures are raw-byte stores: once a program has
    /// opened (and so recovered) them, verify finds nothing wrong.
    @Test(arguments: ["torn-batch-after-log-swap", "new-log-header-lost", "new-log-first-record-lost"])
    func crashFixturesVerifyOKOnceRecovered(fixture: String) throws {
        let directory = try TemporaryDirectory("logtool-fixture")
        defer { directory.remove() }
        let path = try Fixtures.copy(fixture, into: directory)
        try Store(at: path).close()
        let verify = try logtool("verify", path)
        #expect(verify.status == 0)
        #expect(verify.out.hasSuffix("OK\n"), "\(verify.out)")
    }
}

private func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
}
