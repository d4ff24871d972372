// The example of the "Tables and queries" article's section on changing an
// entity type, which quotes the lines between the markers verbatim
// (ArticleExampleTests checks that it does).
import Foundation
import LensDB
import Testing

@Suite struct SchemaDriftExample {
    @Test func threeReleasesOfOneEntityType() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("schema-drift-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("app.lensdb").path
        // article:begin TablesAndQueries.md
        // Release 1 stores contacts with a name and an email.
        struct ContactV1: Entity {
            var id: Int64
            var name: String
            var email: String
        }
        let store = try Store(at: path)
        try store.table(ContactV1.self, named: "contacts").put([
            ContactV1(id: 1, name: "Ada", email: "ada@example.com"),
            ContactV1(id: 2, name: "Alan", email: "alan@example.com"),
        ])
        store.close()

        // Release 2 adds two fields that the stored values lack. A declared
        // default alone (`var phone = ""`) would not open them: synthesized
        // Codable ignores it.
        enum NoPhone: DefaultValueProvider {
            static var defaultValue: String { "" }
        }
        struct ContactV2: Entity {
            var id: Int64
            var name: String
            var email: String
            var nickname: String?                   // stored values: nil
            @Defaulted<NoPhone> var phone: String   // stored values: ""
        }
        let release2 = try Store(at: path)
        let contacts = try release2.table(ContactV2.self, named: "contacts")
        var alan = contacts[2]!
        alan.phone = "555-0100"
        try contacts.put(alan)
        release2.close()

        // Release 3 renames email to mail, which no default covers. Open
        // with quarantine, build each entity from its stored document, and
        // replace the quarantined entries in one transaction.
        struct Contact: Entity {
            var id: Int64
            var name: String
            var mail: String
            @Defaulted<NoPhone> var phone: String
        }
        let release3 = try Store(at: path)
        let current = try release3.table(Contact.self, named: "contacts", onUndecodable: .quarantine)
        print(current.quarantined.map(\.reason))   // ["the field mail is missing", "the field mail is missing"]
        try release3.write { tx in
            for entry in tx[current].quarantined {
                guard let id = entry.id else { continue }
                var document = try entry.document()  // {"email":"ada@example.com","id":1,"name":"Ada"}
                document["mail"] = document.removeValue(forKey: "email") ?? ""
                let contact = try DocumentDecoder().decode(Contact.self, from: document)
                try tx[current].remove(id)
                try tx[current].put(contact)
            }
        }
        print(current.quarantined.isEmpty, current[2]!.phone)   // true 555-0100
        release3.close()
        // article:end
        let reopened = try Store(at: path)
        defer { reopened.close() }
        let table = try reopened.table(Contact.self, named: "contacts")
        #expect(table.quarantined.isEmpty)
        #expect(table.all().map(\.mail) == ["ada@example.com", "alan@example.com"])
        #expect(table.all().map(\.phone) == ["", "555-0100"])
    }
}
