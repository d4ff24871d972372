import Foundation
import LensDB
import LensLog
import LensTestSupport
import Testing

/// The `--json` reports parse, and `dump` selects by LSN.
@Suite struct LogtoolJSONTests {
    func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func infoJSONNamesRolesVersionsAndLSNRanges() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try stores.healthy(compacted: true)
        let info = try object(try logtool("info", store, "--json").out)
        let files = try #require(info["files"] as? [[String: Any]])
        let snapshot = try #require(files.first { $0["role"] as? String == "snapshot" })
        #expect(snapshot["formatVersion"] as? Int == Int(SnapshotFormat.plainVersion))
        #expect(snapshot["lastLSN"] as? Int == 4)
        let log = try #require(files.first { $0["role"] as? String == "log" })
        #expect(log["firstLSN"] as? Int == 5)
        #expect(log["records"] as? Int == 0)
        #expect(info["opensCleanly"] as? Bool == true)
        #expect(info["roots"] as? [String] == ["settings"])
    }

    @Test func verifyJSONCarriesProblemsWithFileOffsetAndLSN() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let (store, log, offset) = try stores.flippedMidLog()
        let result = try logtool("verify", store, "--json")
        #expect(result.status == 1)
        let problems = try #require(try object(result.out)["problems"] as? [[String: Any]])
        #expect(problems.count == 1)
        #expect(problems.first?["file"] as? String == log)
        #expect(problems.first?["offset"] as? Int == offset)
        #expect(problems.first?["lsn"] as? Int == 2)
    }

    @Test func dumpFromToSelectsTheLSNsAndDumpOfADamagedStoreShowsTheRest() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let healthy = try stores.healthy()
        let middle = try logtool("dump", healthy, "--from", "2", "--to", "2", "--json").out.split(separator: "\n")
        #expect(try middle.map { try object(String($0))["lsn"] as? Int } == [2])
        let others = try GoldenStores()
        defer { others.directory.remove() }
        let (damaged, _, _) = try others.flippedMidLog()
        let rest = try logtool("dump", damaged, "--json")
        #expect(rest.status == 0)
        #expect(try rest.out.split(separator: "\n").map { try object(String($0))["lsn"] as? Int } == [1, 3])
    }

    /// A date ISO 8601 text cannot name (damage, or past year 9999) prints
    /// as its seconds since 2001, in `--json` and in the text dump alike;
    /// any other as ISO 8601.
    @Test func datesPastWhatISO8601NamesPrintAsNumbersNotAsAnotherDate() throws {
        let directory = try TemporaryDirectory("dates")
        defer { directory.remove() }
        let path = "\(directory.path)/dates.lensdb"
        let store = try Store(at: path)
        let encoding = TableEncoding(key: .int64, value: .valueFormat)
        let dates = [Date(timeIntervalSince1970: 1_700_000_000), Date(timeIntervalSinceReferenceDate: .nan), Date(timeIntervalSince1970: 253_402_300_800)]
        try store.write { tx in
            for (index, date) in dates.enumerated() {
                tx.put(.encoded((["d": .date(date)] as Document).binaryEncoded()), for: OrderedKey.int64(Int64(index)), in: "dates", encoding: encoding)
            }
        }
        store.close()
        let json = try logtool("dump", path, "--json")
        #expect(json.status == 0, "\(json.err)")
        let operations = try #require(try object(String(json.out.split(separator: "\n")[0]))["operations"] as? [[String: Any]])
        let shown = try operations.filter { $0["op"] as? String == "put" }.map { operation in
            let value = try #require(operation["value"] as? [String: Any])
            return try #require((value["json"] as? [String: Any])?["d"])
        }
        #expect(shown[0] as? String == "2023-11-14T22:13:20Z")
        #expect(shown[1] as? String == "NaN")
        #expect((shown[2] as? NSNumber)?.doubleValue == dates[2].timeIntervalSinceReferenceDate)
        let text = try logtool("dump", path).out
        #expect(text.contains(#"{"d":"2023-11-14T22:13:20.000Z"}"#) && text.contains(#"{"d":NaN}"#), "\(text)")
        #expect(text.contains(#"{"d":252423993600.0}"#), "\(text)")
    }
}
