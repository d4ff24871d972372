import Foundation
import LensDB
import LensLog
import LensTestSupport
import Testing

@Suite struct LogtoolTests {
    @Test func helpListsSubcommandsExitCodesAndExamples() throws {
        let result = try logtool("--help")
        #expect(result.status == 0)
        for word in ["info", "dump", "verify", "repair", "compact", "demo", "Exit codes", "Examples"] {
            #expect(result.out.contains(word), "help lacks \(word)")
        }
    }

    @Test func everySubcommandsHelpHasExamplesAndExitsWithZero() throws {
        for subcommand in ["info", "dump", "verify", "repair", "compact", "demo"] {
            let help = try logtool(subcommand, "--help")
            #expect(help.status == 0)
            #expect(help.out.contains("Example"), "\(subcommand) --help has no example")
        }
    }

    @Test func noSubcommandIsAUsageErrorWithTheHelpOnStderr() throws {
        let result = try logtool()
        #expect(result.status == 2)
        #expect(result.out.isEmpty)
        #expect(result.err.contains("SUBCOMMANDS"))
    }

    @Test func usageErrorsExitWithTwo() throws {
        #expect(try logtool("no-such-subcommand").status == 2)
        #expect(try logtool("verify").status == 2)
        #expect(try logtool("repair", "/tmp/x").status == 2, "repair needs --output or --in-place")
        #expect(try logtool("dump", "/tmp/x", "--from", "5", "--to", "2").status == 2)
    }

    @Test func healthyStoreVerifiesOKAndInfoShowsTablesAndRoots() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try stores.healthy(compacted: true)
        let verify = try logtool("verify", store)
        #expect(verify.status == 0)
        #expect(verify.out.hasSuffix("OK\n"))
        let info = try logtool("info", store)
        #expect(info.status == 0)
        #expect(info.out.contains("people: 3 entries"))
        #expect(info.out.contains("orders: 3 entries"))
        #expect(info.out.contains("root documents: settings"))
        #expect(info.out.contains("snapshot"))
    }

    @Test func dumpJSONLinesParseAndRoundTripTheValues() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try stores.healthy()
        let dump = try logtool("dump", store, "--json")
        #expect(dump.status == 0)
        let lines = dump.out.split(separator: "\n")
        #expect(lines.count == 3)
        let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
        #expect(first?["lsn"] as? Int == 1)
        let operations = first?["operations"] as? [[String: Any]]
        #expect(operations?.first?["op"] as? String == "declareTable", "the first put into a table declares its encoding")
        let put = try #require(operations?.first { $0["op"] as? String == "put" })
        let value = try #require((put["value"] as? [String: Any])?["json"])
        let document = try Document(json: String(decoding: try JSONSerialization.data(withJSONObject: value as Any), as: UTF8.self))
        #expect(document["name"] == "Alice")
        let orders = try logtool("dump", store, "--table", "orders", "--json").out.split(separator: "\n")
        #expect(orders.count == 2)
        for line in orders {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            let tables = (object?["operations"] as? [[String: Any]])?.map { $0["table"] as? String }
            #expect(tables?.allSatisfy { $0 == "orders" } == true, "only the table's operations")
        }
        let snapshotless = try logtool("dump", store, "--snapshot")
        #expect(snapshotless.status == 1, "no snapshot yet")
    }

    @Test func tornTailIsANoteNotAProblem() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try stores.healthy()
        // A crash leaves no clean-close marker: only then is a short log a torn tail.
        try FileManager.default.removeItem(atPath: "\(store)/\(StoreDirectory.closedMarkerName)")
        try stores.edit(try stores.logPath(store)) { $0.removeLast(7) }
        let verify = try logtool("verify", store)
        #expect(verify.status == 0)
        #expect(verify.out.contains("torn tail"))
        #expect(try logtool("info", store).out.contains("cuts a torn tail"))
    }

    @Test func flippedByteMidLogIsAProblemWithFileOffsetAndLSN() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let (store, log, offset) = try stores.flippedMidLog()
        let verify = try logtool("verify", store)
        #expect(verify.status == 1)
        #expect(verify.out.contains("\(log) at offset \(offset) (LSN 2)"))
        #expect(verify.out.hasSuffix("problems found\n") || verify.out.hasSuffix("problem found\n"))
        let info = try logtool("info", store)
        #expect(info.status == 1, "info says open would fail")
    }

    @Test func repairThenVerifyPrintsOKAndRepairingTwiceGivesTheSameBytes() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let (store, _, _) = try stores.flippedMidLog()
        let first = "\(stores.directory.path)/first.lensdb", second = "\(stores.directory.path)/second.lensdb"
        let repair = try logtool("repair", store, "--output", first)
        #expect(repair.status == 0)
        #expect(repair.out.contains("LSNs 2..<3"), "says what was lost")
        #expect(try logtool("verify", first).out.hasSuffix("OK\n"))
        #expect(try logtool("repair", store, "--output", second).status == 0)
        let firstSnapshot = try Data(contentsOf: URL(fileURLWithPath: try stores.snapshotPath(first)))
        let secondSnapshot = try Data(contentsOf: URL(fileURLWithPath: try stores.snapshotPath(second)))
        #expect(firstSnapshot == secondSnapshot)
        #expect(try logtool("verify", store).status == 1, "the input is untouched")
        #expect(try logtool("repair", store, "--output", first).status == 1, "never overwrites")
    }

    @Test func repairInPlaceKeepsABackupAndSaysWhere() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try stores.healthy()
        try stores.edit(try stores.logPath(store)) { $0.removeLast(3) }
        let repair = try logtool("repair", store, "--in-place")
        #expect(repair.status == 0)
        let backup = repair.out.split(separator: "\n").first { $0.hasPrefix("original moved to: ") }?.dropFirst("original moved to: ".count)
        #expect(backup.map { FileManager.default.fileExists(atPath: String($0)) } == true)
        #expect(try logtool("verify", store).out.hasSuffix("OK\n"))
    }

    @Test func damagedSnapshotsAreProblems() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let truncated = try stores.healthy("truncated", compacted: true)
        try stores.edit(try stores.snapshotPath(truncated)) { $0.removeLast(10) }
        let badChecksum = try stores.healthy("checksum", compacted: true)
        try stores.edit(try stores.snapshotPath(badChecksum)) { $0[$0.count / 2] ^= 1 }
        for store in [truncated, badChecksum] {
            let verify = try logtool("verify", store)
            #expect(verify.status == 1)
            #expect(verify.out.contains("snapshot"))
            #expect(try logtool("info", store).status == 1)
        }
    }

    @Test func newerFormatVersionAndNonStoresAreClearErrors() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let newer = try stores.healthy("newer")
        try stores.edit(try stores.logPath(newer)) { bytes in
            bytes[8] = UInt8(LogFormat.version + 1)
            let crc = CRC32C.checksum(Array(bytes[0..<32]))
            for index in 0..<4 { bytes[32 + index] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(index))) }
        }
        let verify = try logtool("verify", newer)
        #expect(verify.status == 1)
        #expect(verify.out.contains("newer than this LensDB reads"))
        let text = "\(stores.directory.path)/text"
        try FileManager.default.createDirectory(atPath: text, withIntermediateDirectories: true)
        try Data("hello".utf8).write(to: URL(fileURLWithPath: text + "/notes.txt"))
        for path in [text, "\(stores.directory.path)/missing"] {
            let info = try logtool("info", path)
            #expect(info.status == 1)
            #expect(info.err.contains("is not a LensDB store"))
        }
    }

    @Test(.enabled(if: LockHolder.isAvailable, "needs flock(1) to hold the lock from another process"))
    func repairAndCompactRefuseWhileAnotherProcessHoldsTheLock() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try stores.healthy()
        let holder = try LockHolder(lockFile: store + "/LOCK")
        defer { holder.release() }
        var refused = false
        for _ in 0..<200 where !refused {
            let result = try logtool("compact", store)
            refused = result.status == 1 && result.err.contains("in use by")
            if !refused { usleep(10_000) }
        }
        #expect(refused)
        let repair = try logtool("repair", store, "--output", "\(stores.directory.path)/out.lensdb")
        #expect(repair.status == 1)
        #expect(repair.err.contains("in use by"))
        #expect(try logtool("info", store).status == 0, "reading needs no lock")
    }

    @Test func infoAndDumpDoNotDisturbAStoreThatIsBeingWritten() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try stores.healthy()
        let writer = try Store(at: store)
        let encoder = ValueEncoder()
        for index in 0..<20 {
            try writer.write { tx in tx.put(try encoder.encode("v\(index)"), for: try encoder.encode(index), in: "live") }
            #expect(try logtool("info", store).status == 0)
            #expect(try logtool("dump", store, "--table", "live").status == 0)
        }
        try writer.write { tx in tx.put(try encoder.encode("last"), for: try encoder.encode(99), in: "live") }
        #expect(writer.current.count(in: "live") == 21)
        writer.close()
        #expect(try logtool("verify", store).out.hasSuffix("OK\n"))
    }

    @Test func repairSalvagesTheChunksOfADamagedSnapshotWhoseLogsAreGone() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try stores.healthy(compacted: true)
        try stores.edit(try stores.snapshotPath(store)) { $0[$0.count - 40] ^= 0x01 }
        let output = "\(stores.directory.path)/salvaged.lensdb"
        let repair = try logtool("repair", store, "--output", output)
        #expect(repair.status == 0, "\(repair.err)")
        #expect(repair.out.contains("did not verify"), "says what was lost")
        #expect(try logtool("verify", output).out.hasSuffix("OK\n"))
    }
}
