// The examples of the "Migrations" article, which quotes the lines between
// the markers verbatim (ArticleExampleTests checks that it does).
import Foundation
import LensDB
import Testing

@Suite struct MigrationsExample {
    struct ContactV1: Entity {
        var id: Int64
        var name: String
        var email: String
        var age: String
    }

    @Test func releasesThatMigrateTheirContacts() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("migrations-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("app.lensdb").path
        let release1 = try Store(at: path)
        try release1.table(ContactV1.self, named: "contacts").put([
            ContactV1(id: 1, name: "Ada", email: "ada@example.com", age: "36"),
            ContactV1(id: 2, name: "Alan", email: "alan@example.com", age: "41"),
        ])
        release1.close()

        // article:begin Migrations.md
        // Release 2's contact: a field added, one renamed, one now a number.
        struct Contact: Entity {
            var id: Int64
            var fullName: String
            var email: String
            var phone: String
            var age: Int
        }

        // Every migration the app ever shipped, in order, under names that never change.
        var migrator = Migrator()
        migrator.registerMigration("add-phone") { migration in
            try migration.addField("phone", default: "", inTable: "contacts")
        }
        migrator.registerMigration("rename-name") { migration in
            try migration.renameField("name", to: "fullName", inTable: "contacts")
        }
        migrator.registerMigration("age-as-number") { migration in
            try migration.changeField("age", inTable: "contacts", from: String.self, to: Int.self) { Int($0) ?? 0 }
        }

        // Opens the store, then runs the migrations it has not run yet, each once.
        let store = try Store(at: path, migrator: migrator)
        let contacts = try store.table(Contact.self, named: "contacts")
        print(contacts[1]!.fullName, contacts[1]!.age)    // Ada 36
        // article:end
        #expect(contacts[1]!.fullName == "Ada" && contacts[1]!.age == 36)
        #expect(contacts[2]!.phone == "")

        // article:begin Migrations.md
        let history = try store.migrationHistory()
        print(history.applied.map(\.name))                 // ["add-phone", "rename-name", "age-as-number"]
        print(history.schemaVersion(ofTable: "contacts"))  // 3
        // article:end
        #expect(history.applied.map(\.name) == ["add-phone", "rename-name", "age-as-number"])
        #expect(history.schemaVersion(ofTable: "contacts") == 3)
        store.close()

        try olderRelease(path)
        try tableSteps(path)
    }

    /// A release that knows only the first migration meets the store.
    private func olderRelease(_ path: String) throws {
        var migrator = Migrator()
        migrator.registerMigration("add-phone") { migration in
            try migration.addField("phone", default: "", inTable: "contacts")
        }
        // article:begin Migrations.md
        do {
            _ = try Store(at: path, migrator: migrator)
        } catch MigrationError.unknownMigrations(let store, let names) {
            // A newer release migrated this store; nothing was changed.
            print("\(store) needs a newer release: it ran \(names)")
        }
        // article:end
        #expect(throws: MigrationError.unknownMigrations(store: path, names: ["rename-name", "age-as-number"])) {
            _ = try Store(at: path, migrator: migrator)
        }
    }

    /// Release 3 reshapes the tables.
    private func tableSteps(_ path: String) throws {
        struct Contact: Entity {
            var id: Int64
            var fullName: String
            var email: String
            var phone: String
            var age: Int
        }
        var migrator = Migrator()
        for name in ["add-phone", "rename-name", "age-as-number"] { migrator.registerMigration(name) { _ in } }
        // article:begin Migrations.md
        migrator.registerMigration("split-emails") { migration in
            // Each contact's email moves to a table of its own, under the same id.
            try migration.splitRows(of: "contacts", into: "emails") { contact in
                guard let email = contact.removeValue(forKey: "email") else { return nil }
                return ["address": email]
            }
        }
        migrator.registerMigration("archive-elders") { migration in
            try migration.moveRows(from: "contacts", to: "archivedContacts") { contact in contact["age"] == 41 }
        }
        migrator.registerMigration("rename-contacts") { migration in
            try migration.renameTable("contacts", to: "people")
        }
        migrator.registerMigration("drop-archive") { migration in
            try migration.dropTable("archivedContacts")
        }
        // article:end
        let store = try Store(at: path, migrator: migrator)
        defer { store.close() }
        #expect(store.current.tableNames == ["emails", "people"])
        #expect(try store.migrationHistory().schemaVersions == ["emails": 1, "people": 6])
    }
}
