import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// Quarantined values are reachable through the public API: read as
/// documents, and replaced by entities built from them in one transaction.
@Suite struct SchemaDriftRepairTests {
    struct ContactV1: Entity, Equatable { var id: Int64; var name: String; var email: String }
    /// The next release: a non-optional field added, one renamed.
    struct ContactV2: Entity, Equatable { var id: Int64; var name: String; var mail: String; var phone: String }

    func writeV1(_ fileSystem: SimulatedFileSystem) throws {
        let store = try tableStore(fileSystem)
        let contacts = try store.table(ContactV1.self, named: "contacts")
        try contacts.put((1...4).map { ContactV1(id: $0, name: "name \($0)", email: "\($0)@example.com") })
        store.close()
    }

    /// The entity a repair builds from an old value's document.
    static func repaired(_ document: Document) throws -> ContactV2 {
        var document = document
        document["mail"] = document.removeValue(forKey: "email") ?? ""
        document["phone"] = ""
        return try DocumentDecoder().decode(ContactV2.self, from: document)
    }

    @Test func quarantinedValuesReadAsDocumentsAndAreRepairedInOneTransactionAcrossAReopen() throws {
        let fileSystem = SimulatedFileSystem()
        try writeV1(fileSystem)
        do {
            let store = try tableStore(fileSystem)
            #expect(throws: TableError.undecodable(table: "contacts", id: "1", codingPath: "mail", missingField: "mail",
                                                   reason: "the field mail is missing", count: 4)) {
                try store.table(ContactV2.self, named: "contacts")
            }
            let contacts = try store.table(ContactV2.self, named: "contacts", onUndecodable: .quarantine)
            #expect(contacts.count == 0 && contacts.quarantined.map(\.id) == [1, 2, 3, 4])
            let first = try #require(contacts.quarantined.first)
            #expect(try first.document() == ["id": 1, "name": "name 1", "email": "1@example.com"])
            try contacts.put(ContactV2(id: 9, name: "new", mail: "9@example.com", phone: "555"))
            try store.write { tx in
                for entry in tx[contacts].quarantined {
                    guard let id = entry.id else { continue }
                    let contact = try Self.repaired(try entry.document())
                    try tx[contacts].remove(id)
                    try tx[contacts].put(contact)
                }
                #expect(tx[contacts].quarantined.isEmpty, "the transaction sees its own repairs")
            }
            #expect(contacts.quarantined.isEmpty)
            #expect(contacts[3] == ContactV2(id: 3, name: "name 3", mail: "3@example.com", phone: ""))
            store.close()
        }
        let store = try tableStore(fileSystem)
        let contacts = try store.table(ContactV2.self, named: "contacts")
        #expect(contacts.quarantined.isEmpty)
        #expect(contacts.all().map(\.id) == [1, 2, 3, 4, 9])
        #expect(contacts.all().map(\.mail) == ["1@example.com", "2@example.com", "3@example.com", "4@example.com", "9@example.com"])
    }

    /// A repair is all or nothing: a throw part way leaves every entry
    /// quarantined, bytes and all, and nothing of the entities built.
    @Test func aRepairThatThrowsPartWayLeavesEveryEntryQuarantined() throws {
        let fileSystem = SimulatedFileSystem()
        try writeV1(fileSystem)
        let store = try tableStore(fileSystem)
        let contacts = try store.table(ContactV2.self, named: "contacts", onUndecodable: .quarantine)
        let before = contacts.quarantined
        struct GiveUp: Error {}
        #expect(throws: GiveUp.self) {
            try store.write { tx in
                for entry in tx[contacts].quarantined {
                    guard let id = entry.id else { continue }
                    if id == 3 { throw GiveUp() }
                    try tx[contacts].remove(id)
                    try tx[contacts].put(try Self.repaired(try entry.document()))
                }
            }
        }
        #expect(contacts.count == 0)
        #expect(contacts.quarantined.map(\.id) == before.map(\.id))
        #expect(contacts.quarantined.map(\.bytes) == before.map(\.bytes))
        store.close()
        let reopened = try tableStore(fileSystem)
        let old = try reopened.table(ContactV1.self, named: "contacts")
        #expect(old.count == 4, "the old type still reads every value")
    }

    @Test func aPutOverAQuarantinedEntrySaysHowToReplaceIt() throws {
        let fileSystem = SimulatedFileSystem()
        try writeV1(fileSystem)
        let store = try tableStore(fileSystem)
        let contacts = try store.table(ContactV2.self, named: "contacts", onUndecodable: .quarantine)
        let error = #expect(throws: TableError.quarantined(table: "contacts", id: "2")) {
            try contacts.put(ContactV2(id: 2, name: "x", mail: "x", phone: ""))
        }
        let expected: String = "table contacts: the stored value of 2 is quarantined, and a put would overwrite it; "
            + "to replace it, remove it and put the new value in one transaction (tx[table].remove(id), then tx[table].put(value))"
        #expect(error.map { "\($0)" } == expected)
        #expect(contacts.quarantined.count == 4)
    }
}
