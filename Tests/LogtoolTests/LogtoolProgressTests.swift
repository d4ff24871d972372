import Foundation
import LensDB
import LensLog
import LensTestSupport
import Testing

/// Progress: what the library reports, and when logtool shows it.
@Suite struct LogtoolProgressTests {
    /// Collects progress reports.
    final class Reports: Sendable {
        let all = Locked<[InspectionProgress]>([])
        var handler: ProgressHandler { { progress in self.all.withLock { $0.append(progress) } } }
        func of(_ phase: InspectionProgress.Phase) -> [InspectionProgress] { all.withLock { $0.filter { $0.phase == phase } } }
    }

    /// A store with `count` entries across several logs and a snapshot.
    func largerStore(_ stores: GoldenStores, count: Int = 600) throws -> String {
        let path = try stores.healthy()
        let store = try Store(at: path)
        let encoder = ValueEncoder()
        for index in 0..<count {
            try store.write { tx in tx.put(try encoder.encode("value \(index)"), for: try encoder.encode(index), in: "many") }
            if index == count / 2 { try store.compact() }
        }
        store.close()
        return path
    }

    func filesSize(_ path: String) throws -> Int64 {
        let listing = try StoreDirectory(path: path, fileSystem: POSIXFileSystem()).list()
        return try (listing.snapshots + listing.logs).reduce(Int64(0)) { total, file in
            total + Int64(try FileManager.default.attributesOfItem(atPath: file.path)[.size] as! Int)
        }
    }

    func expectClimbsTo(_ total: Int64, _ reports: [InspectionProgress], _ what: String) {
        #expect(reports.count >= 2, "\(what): reports along the way, not only at the end")
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.done <= $1.done }, "\(what): done never decreases")
        #expect(reports.allSatisfy { $0.total == total }, "\(what): total is \(total)")
        #expect(reports.last?.done == total, "\(what): ends at its total")
    }

    @Test func repairReportsReadingEveryFileThenWritingEveryItem() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try largerStore(stores)
        let size = try filesSize(store)
        let reports = Reports()
        let report = try StoreInspector(path: store).repair(to: stores.directory.path + "/out.lensdb", progress: reports.handler)
        expectClimbsTo(size, reports.of(.reading), "reading")
        expectClimbsTo(Int64(report.entries), reports.of(.writingSnapshot), "writing")
        #expect(reports.all.withLock { $0.firstIndex { $0.phase == .writingSnapshot }! > $0.lastIndex { $0.phase == .reading }! })
    }

    @Test func compactAndDumpReportTheirProgress() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try largerStore(stores)
        let dumped = Reports()
        try StoreInspector(path: store).dump(progress: dumped.handler) { _ in }
        expectClimbsTo(try filesSize(store), dumped.of(.reading), "dump")
        let size = try filesSize(store)
        let compacted = Reports()
        _ = try StoreInspector(path: store).compact(progress: compacted.handler)
        expectClimbsTo(size, compacted.of(.reading), "compact reading")
        #expect(compacted.of(.writingSnapshot).last.map { $0.done == $0.total && $0.total > 600 } == true)
    }

    /// Pipes are not terminals: nothing but the result, even with no delay.
    @Test func noProgressTextWhenStderrIsNotATerminal() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try largerStore(stores, count: 50)
        let runs = [["verify", store], ["dump", store], ["repair", store, "--output", store + ".out"], ["compact", store]]
        for arguments in runs {
            let result = try logtool(arguments, environment: ["LOGTOOL_PROGRESS_DELAY": "0"])
            #expect(result.status == 0, "\(arguments): \(result.err)")
            #expect(result.err.isEmpty, "\(arguments[0]) wrote to stderr: \(result.err)")
        }
    }

    /// Through a pseudo-terminal (`script`): progress is drawn, and erased,
    /// unless --json or --quiet is given.
    @Test(arguments: ["verify", "dump", "repair", "compact"])
    func onATerminalProgressShowsExceptWithJSONOrQuiet(subcommand: String) throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try largerStore(stores, count: 50)
        func onTerminal(_ flags: String, output: String) throws -> String {
            var command = "\(logtoolBinary.path) \(subcommand) \(store) \(flags)"
            if subcommand == "repair" { command += " --output \(store).\(output)" }
            if subcommand == "dump" { command += " > \(store).\(output).txt" }
            let result = try run("/usr/bin/script", ["-qec", command, "/dev/null"], environment: ["LOGTOOL_PROGRESS_DELAY": "0"])
            #expect(result.status == 0, "\(command): \(result.out)")
            return result.out
        }
        let shown = try onTerminal("", output: "plain")
        #expect(shown.contains("\(subcommand): reading"), "\(subcommand) shows progress on a terminal: \(shown)")
        #expect(shown.contains("\r\u{1B}[K"), "and erases it")
        for flag in ["--json", "--quiet"] {
            let output = try onTerminal(flag, output: String(flag.dropFirst(2)))
            #expect(!output.contains("reading"), "\(subcommand) \(flag) shows no progress: \(output)")
        }
    }
}

/// Runs `executable` with no standard input; stdout and stderr together.
func run(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> (status: Int32, out: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    process.standardInput = FileHandle.nullDevice
    let out = Pipe()
    process.standardOutput = out
    process.standardError = out
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
