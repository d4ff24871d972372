import Foundation
import LensDB
import LensTestSupport
import Testing

/// `logtool info` shows each table's schema version and the store's
/// migration history, read from the files without the program's migrator.
@Suite struct LogtoolMigrationTests {
    @Test func infoShowsSchemaVersionsAndMigrationHistory() throws {
        let directory = try TemporaryDirectory("logtool-migrations")
        defer { directory.remove() }
        let path = directory.path + "/migrated.lensdb"
        try DemoStore.write(at: path)
        let before = try logtool("info", path).out
        #expect(before.contains("people: 3 entries (keys: ordered Int64, values: value format), schema version 0"), "\(before)")
        #expect(before.contains("migrations: none"), "\(before)")

        var migrator = Migrator()
        migrator.registerMigration("add-email") { try $0.addField("email", default: "", inTable: "people") }
        migrator.registerMigration("rename-orders") { try $0.renameTable("orders", to: "purchases") }
        migrator.registerMigration("people-age-as-text") {
            try $0.changeField("age", inTable: "people", from: Int.self, to: String.self) { "\($0)" }
        }
        try Store(at: path, migrator: migrator).close()

        let run = try logtool("info", path)
        #expect(run.status == 0, "\(run.err)")
        let lines = run.out.split(separator: "\n").map(String.init)
        #expect(lines.contains("  people: 3 entries (keys: ordered Int64, values: value format), schema version 2"), "\(run.out)")
        #expect(lines.contains("  purchases: 3 entries (keys: ordered Int64, values: value format), schema version 1"), "\(run.out)")
        #expect(!run.out.contains("  orders:"), "\(run.out)")
        let history = Array(lines.drop { $0 != "migrations: 3 applied" }.prefix(4))
        #expect(history == [
            "migrations: 3 applied",
            "  1. add-email (LSN 4): people",
            "  2. rename-orders (LSN 5): orders, purchases",
            "  3. people-age-as-text (LSN 6): people",
        ], "\(run.out)")

        let json = try logtool("info", path, "--json").out
        #expect(json.contains("\"schemaVersion\""), "\(json)")
        #expect(json.contains("\"rename-orders\""), "\(json)")
    }

    @Test func infoSaysWhenTheHistoryDoesNotRead() throws {
        let directory = try TemporaryDirectory("logtool-migrations")
        defer { directory.remove() }
        let path = directory.path + "/newer.lensdb"
        let store = try Store(at: path)
        try store.write { tx in
            tx.setRoot(.encoded(try ValueEncoder().encode(["format": 9] as Document)), named: MigrationHistory.rootName, encoding: .valueFormat)
        }
        store.close()
        let run = try logtool("info", path)
        #expect(run.status == 0, "an unreadable history is no reason to fail info: \(run.err)")
        #expect(run.out.contains("migrations: unreadable — \(path): the migration history (root lensdb.migrations) cannot be read because its layout is version 9"), "\(run.out)")
    }
}
