import Foundation
import LensDB
import LensTestSupport
import Testing

/// The export path end to end: a live writer commits while `logtool dump
/// --follow --json` feeds `COPY changes(doc) FROM STDIN` in a real
/// PostgreSQL, then SQL checks what arrived.
///
/// Runs when `LENSDB_POSTGRES_URL` names a PostgreSQL server (15 or later)
/// whose role may create schemas; `Tools/postgres-export-test` starts one on
/// loopback and sets it, and `.ci/run` runs that script, so CI always runs
/// this test. Without the variable the test is skipped, saying so.
@Suite struct PostgresExportTests {
    static let url = ProcessInfo.processInfo.environment["LENSDB_POSTGRES_URL"]
    /// COPY's CSV format with quote and delimiter bytes that JSON text never
    /// holds (logtool escapes every control character), so each line arrives
    /// as it is; the text format would take JSON's backslashes as escapes.
    static let copy = #"COPY changes(doc) FROM STDIN WITH (FORMAT csv, QUOTE e'\x01', DELIMITER e'\x02')"#
    static let replayQuery = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tools/postgres-export-replay.sql").path

    /// Every psql of one test works in its own schema.
    let schema = "lensdb_export_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")

    var environment: [String: String] {
        ProcessInfo.processInfo.environment.merging(["PGOPTIONS": "-c search_path=\(schema)"]) { $1 }
    }

    /// Runs psql with `arguments` after the connection; returns its output,
    /// unaligned and without headers.
    @discardableResult
    func psql(_ arguments: [String], input: String? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", Self.url!] + arguments
        process.environment = environment
        let out = Pipe(), err = Pipe(), stdin = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        try process.run()
        if let input {
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try stdin.fileHandleForWriting.close()
        }
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw PostgresFailure(arguments: arguments, message: errors) }
        return output
    }

    struct PostgresFailure: Error, CustomStringConvertible {
        var arguments: [String]
        var message: String
        var description: String { "psql \(arguments.joined(separator: " ")) failed: \(message)" }
    }

    /// `logtool ARGUMENTS | psql -c COPY …`, started in the background.
    func pipeIntoCopy(_ logtoolArguments: [String], outputPath: String) throws -> BackgroundProcess {
        let quoted = ([logtoolBinary.path] + logtoolArguments).map { "'\($0)'" }.joined(separator: " ")
        let script = "set -o pipefail; \(quoted) | psql -X -q -v ON_ERROR_STOP=1 \"$LENSDB_POSTGRES_URL\" -c \"$COPY\""
        return try BackgroundProcess(
            URL(fileURLWithPath: "/bin/bash"), ["-c", script], outputPath: outputPath,
            environment: environment.merging(["COPY": Self.copy]) { $1 })
    }

    @Test(.enabled(if: url != nil, "no PostgreSQL to export into: set LENSDB_POSTGRES_URL, or run Tools/postgres-export-test, which starts one"))
    func liveWriterExportedThroughCopyArrivesOnceInOrderAndReplaysToTheStoredTable() throws {
        try psql(["-c", "CREATE SCHEMA \(schema); CREATE TABLE \(schema).changes (seq bigserial PRIMARY KEY, doc jsonb NOT NULL)"])
        defer { _ = try? psql(["-c", "DROP SCHEMA \(schema) CASCADE"]) }  // a schema left behind is harmless; the test's outcome stands
        let directory = try TemporaryDirectory("export")
        defer { directory.remove() }
        let store = directory.path + "/live.lensdb"
        #expect(try runLiveWriter(store, ["commit:1"]).status == 0)

        let total = LogtoolFollowTests.total
        let export = try pipeIntoCopy(
            ["dump", store, "--follow", "--json", "--from", "1", "--until", "\(total)", "--interval", "0.02"],
            outputPath: directory.path + "/export.out")
        #expect(try runLiveWriter(store, LogtoolFollowTests.firstWriter).signalled)
        #expect(try runLiveWriter(store, LogtoolFollowTests.secondWriter + ["pause:400", "compact"]).status == 0)
        #expect(export.waitForExit(seconds: 60), "the export ends at --until")
        #expect(export.process.terminationStatus == 0, "\(export.standardError)")

        // Every LSN once, in the order the rows arrived.
        let arrival = try psql(["-c", """
            WITH arrived AS (SELECT seq, (doc->>'lsn')::bigint AS lsn FROM changes)
            SELECT count(*), count(DISTINCT lsn), min(lsn), max(lsn),
                   (SELECT count(*) FROM (SELECT lsn - lag(lsn) OVER (ORDER BY seq) AS step FROM arrived) AS steps WHERE step <> 1)
            FROM arrived
            """])
        #expect(arrival == "\(total)|\(total)|1|\(total)|0\n", "rows|distinct LSNs|first|last|steps other than +1")

        // The table replayed in SQL is the table in the store's snapshot.
        let replayed = try psql(["-v", "table=items", "-f", Self.replayQuery])
        let snapshot = try logtool("dump", store, "--snapshot", "--json", "--table", "items")
        #expect(snapshot.status == 0)
        try psql(["-c", "CREATE TABLE stored (doc jsonb NOT NULL)"])
        try psql(["-c", "COPY stored(doc) FROM STDIN WITH (FORMAT csv, QUOTE e'\\x01', DELIMITER e'\\x02')"], input: snapshot.out)
        let stored = try psql(["-c", "SELECT doc->'key', doc->'value' FROM stored ORDER BY doc->'key'"])
        #expect(stored.split(separator: "\n").count == snapshot.out.split(separator: "\n").count)
        #expect(!stored.isEmpty)
        #expect(replayed == stored)
    }
}
