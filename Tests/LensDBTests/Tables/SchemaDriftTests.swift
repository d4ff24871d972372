import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// Promise 9: a stored value that no longer decodes as its type is never
/// dropped or overwritten silently.
@Suite struct SchemaDriftTests {
    struct NoteV1: Entity, Equatable { var id: Int64; var text: String }
    /// The same table after a release that added a non-optional field.
    struct NoteV2: Entity, Equatable { var id: Int64; var text: String; var priority: Int }
    /// And one that added it as an optional: old values decode with nil.
    struct NoteV3: Entity, Equatable { var id: Int64; var text: String; var priority: Int? }

    func writeV1(_ fileSystem: SimulatedFileSystem) throws {
        let store = try tableStore(fileSystem)
        let notes = try store.table(NoteV1.self, named: "notes")
        try notes.put((1...5).map { NoteV1(id: $0, text: "note \($0)") })
        store.close()
    }

    @Test func aTypeThatGainedANonOptionalFieldFailsToOpenNamingTheFirstIdAndPath() throws {
        let fileSystem = SimulatedFileSystem()
        try writeV1(fileSystem)
        let store = try tableStore(fileSystem)
        #expect(throws: TableError.undecodable(table: "notes", id: "1", codingPath: "priority", reason: "the field priority is missing", count: 5)) {
            try store.table(NoteV2.self, named: "notes")
        }
        let v3 = try store.table(NoteV3.self, named: "notes")
        #expect(v3[2] == NoteV3(id: 2, text: "note 2", priority: nil), "a field added as optional decodes as nil")
    }

    @Test func quarantineKeepsTheBytesDurableUntilAnExplicitRemove() throws {
        let fileSystem = SimulatedFileSystem()
        try writeV1(fileSystem)
        do {
            let store = try tableStore(fileSystem)
            let notes = try store.table(NoteV2.self, named: "notes", onUndecodable: .quarantine)
            #expect(notes.count == 0)
            #expect(notes.quarantined.map(\.id) == [1, 2, 3, 4, 5])
            #expect(notes.quarantined.allSatisfy { $0.reason.contains("priority") })
            try notes.put(NoteV2(id: 9, text: "new", priority: 1))
            #expect(throws: TableError.quarantined(table: "notes", id: "3")) { try notes.put(NoteV2(id: 3, text: "x", priority: 2)) }
            try notes.remove(4)
            #expect(notes.quarantined.map(\.id) == [1, 2, 3, 5])
            try store.compact()
            store.close()
        }
        // The old program still reads every value it wrote and was not removed.
        let store = try tableStore(fileSystem)
        let old = try store.table(NoteV1.self, named: "notes", onUndecodable: .quarantine)
        #expect(old.all() == [1, 2, 3, 5].map { NoteV1(id: $0, text: "note \($0)") } + [NoteV1(id: 9, text: "new")],
                "the old type ignores the new field")
        #expect(old.quarantined.isEmpty)
    }
}
