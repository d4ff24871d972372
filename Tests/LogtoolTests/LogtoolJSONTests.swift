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
}
