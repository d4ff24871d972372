import Foundation
import LensTestSupport
@testable import LensDB

/// A contact as release 1 stored it.
struct ContactV1: Entity, Equatable {
    var id: Int64
    var name: String
    var email: String
    var age: String
}

/// The same contact after the migrations of ``MigrationFixtures/release2``:
/// a field added, two renamed, one whose type changed.
struct ContactV2: Entity, Equatable {
    var id: Int64
    var fullName: String
    var mail: String
    var phone: String
    var age: Int
}

enum MigrationFixtures {
    static let contacts = (1...5).map { ContactV1(id: $0, name: "name\($0)", email: "c\($0)@example.com", age: "\(20 + $0)") }

    static func upgraded(_ old: ContactV1) -> ContactV2 {
        ContactV2(id: old.id, fullName: old.name, mail: old.email, phone: "", age: Int(old.age)!)
    }

    /// Release 2's migrator: one field step a migration.
    static var release2: Migrator {
        var migrator = Migrator()
        migrator.registerMigration("add-phone") { try $0.addField("phone", default: "", inTable: "contacts") }
        migrator.registerMigration("rename-name") { try $0.renameField("name", to: "fullName", inTable: "contacts") }
        migrator.registerMigration("rename-email") { try $0.renameField("email", to: "mail", inTable: "contacts") }
        migrator.registerMigration("age-as-number") {
            try $0.changeField("age", inTable: "contacts", from: String.self, to: Int.self) { Int($0) ?? 0 }
        }
        return migrator
    }

    /// A store on `fileSystem` holding release 1's contacts.
    static func release1Store(_ fileSystem: SimulatedFileSystem, checkingInvariants: Bool = true) throws -> Store {
        let store = try tableStore(fileSystem, checkingInvariants: checkingInvariants)
        try store.table(ContactV1.self, named: "contacts").put(contacts)
        return store
    }

    /// Every table's rows and every root, as bytes.
    static func contents(_ state: StoreState) -> MigrationCrashCheck.Contents { MigrationCrashCheck.contents(state) }
}
