import ArgumentParser
import LensDB

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a store's files, versions, LSN ranges, tables and what recovery would do.",
        discussion: """
        Reads without the store's lock, so it is safe while a program writes the store. \
        Exit code 1 when a default open would fail; the report then shows what \
        `repair` would keep.

        Examples:
          logtool info state.lensdb
          logtool info state.lensdb --json | jq '.files[] | select(.role == "log")'
        """)

    @OptionGroup var options: CommonOptions

    func run() throws {
        let report = try options.inspector().info()
        if options.json {
            try printJSON(report)
        } else {
            printText(report)
        }
        if !report.opensCleanly { throw ExitCode(1) }
    }

    private func printText(_ report: InfoReport) {
        print("store \(report.path): last LSN \(report.lastLSN)")
        print("encryption: \(report.encryption)")
        print("files:")
        for file in report.files {
            var line = "  \(file.role) \(file.name) (\(file.size) bytes"
            if let version = file.formatVersion { line += ", format v\(version)" }
            if let generation = file.generation { line += ", generation \(generation)" }
            if file.role == .log, let first = file.firstLSN {
                line += ", LSN \(first)…\(file.lastLSN.map(String.init) ?? "(empty)"), \(file.records ?? 0) records"
            }
            if file.role == .snapshot, let last = file.lastLSN { line += ", through LSN \(last), \(file.records ?? 0) items" }
            if let ratio = file.compressionRatio { line += String(format: ", stored/raw %.2f", ratio) }
            if let encryption = file.encryption { line += ", \(encryption)" }
            if let orders = file.indexOrders, !orders.isEmpty { line += ", index orders \(orders.joined(separator: " "))" }
            print(line + ")" + (file.problem.map { " — \($0)" } ?? ""))
        }
        print("tables:")
        for table in report.tables {
            print("  \(table.name): \(table.entries) entries (\(table.encoding == "unknown" ? "unknown encoding" : table.encoding)), schema version \(table.schemaVersion)")
        }
        printMigrations(report)
        let roots = report.rootEncodings.map { root in
            let encoding = ValueEncoding.allCases.first { $0.name == root.encoding }
            return "\(root.name) (\(encoding.map { "values: \($0)" } ?? "unknown encoding"))"
        }
        print("root documents: \(roots.isEmpty ? "none" : roots.joined(separator: ", "))")
        print("recovery now:")
        for line in report.recovery { print("  \(line)") }
    }

    /// The migration history, oldest first, each with the tables it changed.
    private func printMigrations(_ report: InfoReport) {
        if let problem = report.migrationProblem { return print("migrations: unreadable — \(problem)") }
        print("migrations: \(report.migrations.isEmpty ? "none" : "\(report.migrations.count) applied")")
        for (number, migration) in report.migrations.enumerated() {
            let tables = migration.tables.isEmpty ? "no tables" : migration.tables.joined(separator: ", ")
            print("  \(number + 1). \(migration.name) (LSN \(migration.lsn)): \(tables)")
        }
    }
}
