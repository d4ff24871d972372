import Foundation
import LensLog
import LensTestSupport
import Testing
@testable import LensDB

/// Every migration step through the public API, each checked after the
/// store is closed and opened again.
@Suite struct MigrationStepTests {
    @Test func fieldStepsRunOnceAndSurviveAReopen() throws {
        let fileSystem = SimulatedFileSystem()
        try MigrationFixtures.release1Store(fileSystem).close()

        let store = try tableStore(fileSystem)
        #expect(try MigrationFixtures.release2.migrate(store) == ["add-phone", "rename-name", "rename-email", "age-as-number"])
        store.close()

        let reopened = try tableStore(fileSystem)
        defer { reopened.close() }
        var release3 = MigrationFixtures.release2
        release3.registerMigration("add-notes") { try $0.addField("notes", default: "", inTable: "contacts") }
        #expect(try release3.pendingMigrations(in: reopened) == ["add-notes"])
        #expect(try MigrationFixtures.release2.pendingMigrations(in: reopened).isEmpty)
        let lsn = reopened.current.lsn
        #expect(try MigrationFixtures.release2.migrate(reopened).isEmpty, "a migration ran twice")
        #expect(reopened.current.lsn == lsn, "an up-to-date store was written")
        let history = try reopened.migrationHistory()
        #expect(history.applied.map(\.name) == ["add-phone", "rename-name", "rename-email", "age-as-number"])
        #expect(history.applied.map(\.tables) == Array(repeating: ["contacts"], count: 4))
        #expect(history.schemaVersion(ofTable: "contacts") == 4)
        let contacts = try reopened.table(ContactV2.self, named: "contacts")
        #expect(contacts.all() == MigrationFixtures.contacts.map(MigrationFixtures.upgraded))
    }

    @Test func removeFieldAndADocumentChangeSurviveAReopen() throws {
        let fileSystem = SimulatedFileSystem()
        try MigrationFixtures.release1Store(fileSystem).close()
        var migrator = Migrator()
        migrator.registerMigration("drop-email") { try $0.removeField("email", inTable: "contacts") }
        migrator.registerMigration("shout") { migration in
            try migration.changeField("name", inTable: "contacts") { name in
                guard case let .string(text) = name else { return name }
                return .string(text.uppercased())
            }
        }
        let store = try tableStore(fileSystem)
        try migrator.migrate(store)
        store.close()
        struct Contact: Entity, Equatable {
            var id: Int64
            var name: String
            var email: String?
            var age: String
        }
        let reopened = try tableStore(fileSystem)
        defer { reopened.close() }
        #expect(try reopened.table(Contact.self, named: "contacts").all()
                == MigrationFixtures.contacts.map { Contact(id: $0.id, name: $0.name.uppercased(), email: nil, age: $0.age) })
        #expect(try reopened.migrationHistory().schemaVersion(ofTable: "contacts") == 2)
    }

    @Test func concurrentMigratesRunEachMigrationOnce() throws {
        let fileSystem = SimulatedFileSystem()
        try MigrationFixtures.release1Store(fileSystem).close()
        let store = try tableStore(fileSystem)
        defer { store.close() }
        let ran = Locked<[String]>([])
        runConcurrently(threads: 4) { _ in
            // Every thread migrates the same store; a failure shows as a
            // migration missing from `ran` or run twice.
            guard let names = try? MigrationFixtures.release2.migrate(store) else { return }
            ran.withLock { $0 += names }
        }
        #expect(ran.withLock { $0.sorted() } == MigrationFixtures.release2.migrationNames.sorted())
        #expect(try store.migrationHistory().applied.map(\.name) == MigrationFixtures.release2.migrationNames)
        #expect(try store.table(ContactV2.self, named: "contacts").all() == MigrationFixtures.contacts.map(MigrationFixtures.upgraded))
    }

    @Test func renamingOntoATableWithRowsOrMovingOntoTheirKeysChangesNothing() throws {
        let fileSystem = SimulatedFileSystem()
        try MigrationFixtures.release1Store(fileSystem).close()
        let store = try tableStore(fileSystem)
        defer { store.close() }
        var copy = Migrator()
        copy.registerMigration("copy") { migration in
            try migration.splitRows(of: "contacts", into: "backup") { row in row }
        }
        try copy.migrate(store)
        let before = MigrationFixtures.contents(store.current)
        var rename = copy
        rename.registerMigration("rename") { try $0.renameTable("contacts", to: "backup") }
        #expect(throws: MigrationError.tableExists(store: "/t.lensdb", migration: "rename", table: "backup")) { try rename.migrate(store) }
        var merge = copy
        merge.registerMigration("merge") { try $0.moveRows(from: "contacts", to: "backup") }
        #expect(throws: MigrationError.keyConflict(store: "/t.lensdb", migration: "merge", table: "backup", key: "1")) { try merge.migrate(store) }
        #expect(MigrationFixtures.contents(store.current) == before)
    }

    @Test func renameTableKeepsRawBytesAndTheirEncoding() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try tableStore(fileSystem)
        try store.write { tx in tx.put([0xFF, 0x00], for: [1], in: "blobs") }
        var migrator = Migrator()
        migrator.registerMigration("rename-blobs") { try $0.renameTable("blobs", to: "payloads") }
        try migrator.migrate(store)
        store.close()
        let reopened = try tableStore(fileSystem)
        defer { reopened.close() }
        #expect(reopened.current.tableNames == ["payloads"])
        #expect(try reopened.current.value(in: "payloads", key: [1])?.bytes() == [0xFF, 0x00])
        #expect(reopened.current.encoding(ofTable: "payloads") == TableEncoding(key: .raw, value: .raw))
        #expect(try reopened.migrationHistory().schemaVersions == ["payloads": 1])
    }

    @Test func addFieldKeepsAValueARowHas() throws {
        let store = Store.inMemory()
        try store.write { tx in
            tx.put(.encoded(try ValueEncoder().encode(["id": 1, "phone": "555"] as Document)), for: OrderedKey.int64(1),
                   in: "contacts", encoding: TableEncoding(key: .int64, value: .valueFormat))
        }
        var migrator = Migrator()
        migrator.registerMigration("add-phone") { try $0.addField("phone", default: "", inTable: "contacts") }
        try migrator.migrate(store)
        let stored = try Document(decodingBinary: try #require(store.current.value(in: "contacts", key: OrderedKey.int64(1))).bytes())
        #expect(stored["phone"] == "555")
    }

    @Test func tableStepsRenameSplitMergeAndDrop() throws {
        let fileSystem = SimulatedFileSystem()
        try MigrationFixtures.release1Store(fileSystem).close()
        var migrator = Migrator()
        migrator.registerMigration("rename") { try $0.renameTable("contacts", to: "people") }
        migrator.registerMigration("split-by-rows") { migration in
            try migration.moveRows(from: "people", to: "elders") { row in
                guard case let .string(age) = row["age"] else { return false }
                return age >= "24"
            }
        }
        migrator.registerMigration("split-by-fields") { migration in
            try migration.splitRows(of: "people", into: "emails") { row in
                guard let email = row.removeValue(forKey: "email") else { return nil }
                return ["id": row["id"], "email": email]
            }
        }
        migrator.registerMigration("merge") { try $0.moveRows(from: "elders", to: "people") }
        migrator.registerMigration("drop") { try $0.dropTable("emails") }
        let store = try tableStore(fileSystem)
        try migrator.migrate(store)
        store.close()

        let reopened = try tableStore(fileSystem)
        defer { reopened.close() }
        #expect(reopened.current.tableNames == ["people"])
        let history = try reopened.migrationHistory()
        #expect(history.schemaVersions == ["people": 4])
        #expect(history.applied.map(\.tables) == [["contacts", "people"], ["elders", "people"], ["emails", "people"], ["elders", "people"], ["emails"]])
        struct Person: Entity, Equatable {
            var id: Int64
            var name: String
            var age: String
            var email: String?
        }
        let people = try reopened.table(Person.self, named: "people")
        // Rows 1–3 lost their email to the split; 4 and 5 had moved to elders first.
        #expect(people.all() == MigrationFixtures.contacts.map { Person(id: $0.id, name: $0.name, age: $0.age, email: $0.id >= 4 ? $0.email : nil) })
    }

    @Test func convertRowsUsesTheOldAndNewTypes() throws {
        let fileSystem = SimulatedFileSystem()
        try MigrationFixtures.release1Store(fileSystem).close()
        var migrator = Migrator()
        migrator.registerMigration("to-v2") { migration in
            try migration.convertRows(inTable: "contacts", from: ContactV1.self, to: ContactV2.self, MigrationFixtures.upgraded)
        }
        try tableStore(fileSystem).close()  // an open alone changes nothing
        let store = try tableStore(fileSystem)
        try migrator.migrate(store)
        store.close()
        let reopened = try tableStore(fileSystem)
        defer { reopened.close() }
        #expect(try reopened.table(ContactV2.self, named: "contacts").all() == MigrationFixtures.contacts.map(MigrationFixtures.upgraded))
        #expect(try reopened.migrationHistory().schemaVersion(ofTable: "contacts") == 1)
    }

    @Test func convertRowsRefusesAnEntityWhoseIdentifierChanged() throws {
        let fileSystem = SimulatedFileSystem()
        try MigrationFixtures.release1Store(fileSystem).close()
        var migrator = Migrator()
        migrator.registerMigration("renumber") { migration in
            try migration.convertRows(inTable: "contacts", from: ContactV1.self, to: ContactV2.self) { old in
                var new = MigrationFixtures.upgraded(old)
                new.id += 100
                return new
            }
        }
        let store = try tableStore(fileSystem)
        defer { store.close() }
        let before = store.current.lsn
        #expect(throws: MigrationError.identifierChanged(store: "/t.lensdb", migration: "renumber", table: "contacts", key: "1", newIdentifier: "101")) {
            try migrator.migrate(store)
        }
        #expect(store.current.lsn == before)
    }

    @Test func quarantinedRowsMigrateWithTheRest() throws {
        let fileSystem = SimulatedFileSystem()
        try MigrationFixtures.release1Store(fileSystem).close()
        // A release that forgot its migration quarantines every contact…
        let drifted = try tableStore(fileSystem)
        #expect(try drifted.table(ContactV2.self, named: "contacts", onUndecodable: .quarantine).quarantined.count == 5)
        drifted.close()
        // …and the next one, which has it, opens them all.
        let fixed = try tableStore(fileSystem)
        defer { fixed.close() }
        try MigrationFixtures.release2.migrate(fixed)
        let contacts = try fixed.table(ContactV2.self, named: "contacts", onUndecodable: .quarantine)
        #expect(contacts.quarantined.isEmpty)
        #expect(contacts.count == 5)
    }

    @Test func aRowThatDoesNotDecodeStopsTheMigrationOrStaysAsItIs() throws {
        let fileSystem = SimulatedFileSystem()
        try MigrationFixtures.release1Store(fileSystem).close()
        // A row that was never a contact, written through the byte-level API.
        let disk = try tableStore(fileSystem)
        try disk.write { tx in
            tx.put(.encoded(try ValueEncoder().encode(["id": 9, "name": "odd"] as Document)), for: OrderedKey.int64(9),
                   in: "contacts", encoding: TableEncoding(key: .int64, value: .valueFormat))
        }
        disk.close()
        func migrator(_ policy: UndecodablePolicy) -> Migrator {
            var migrator = Migrator()
            migrator.registerMigration("to-v2") { migration in
                try migration.convertRows(inTable: "contacts", from: ContactV1.self, to: ContactV2.self, onUndecodable: policy,
                                          MigrationFixtures.upgraded)
            }
            return migrator
        }
        let strict = try tableStore(fileSystem)
        let before = strict.current.lsn
        #expect(throws: MigrationError.self) { try migrator(.fail).migrate(strict) }
        #expect(strict.current.lsn == before, "a failed migration wrote something")
        #expect(try strict.migrationHistory().applied.isEmpty)
        try migrator(.quarantine).migrate(strict)
        strict.close()
        let reopened = try tableStore(fileSystem)
        defer { reopened.close() }
        let contacts = try reopened.table(ContactV2.self, named: "contacts", onUndecodable: .quarantine)
        #expect(contacts.count == 5)
        #expect(contacts.quarantined.map(\.id) == [9])
    }

    @Test func aTableAlreadyOpenWithItsTypeIsRefused() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try MigrationFixtures.release1Store(fileSystem)
        defer { store.close() }
        let before = store.current.lsn
        #expect(throws: MigrationError.tableIsOpen(store: "/t.lensdb", migration: "add-phone", table: "contacts")) {
            try MigrationFixtures.release2.migrate(store)
        }
        #expect(store.current.lsn == before)
    }

    @Test func progressIsReportedInBatches() throws {
        let store = Store.inMemory()
        try store.write { tx in
            for id in Int64(1)...5 {
                tx.put(.encoded(try ValueEncoder().encode(["id": .int(id)] as Document)), for: OrderedKey.int64(id),
                       in: "things", encoding: TableEncoding(key: .int64, value: .valueFormat))
            }
        }
        var migrator = Migrator()
        migrator.progressInterval = 2
        migrator.registerMigration("add-flag") { try $0.addField("flag", default: true, inTable: "things") }
        let reports = Locked<[Int]>([])
        try migrator.migrate(store) { progress in
            #expect(progress.migration == "add-flag" && progress.table == "things" && progress.totalRows == 5)
            reports.withLock { $0.append(progress.completedRows) }
        }
        #expect(reports.withLock { $0 } == [2, 4, 5])
    }
}
