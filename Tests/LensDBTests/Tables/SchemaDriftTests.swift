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
        #expect(throws: TableError.undecodable(table: "notes", id: "1", codingPath: "priority", missingField: "priority",
                                               reason: "the field priority is missing", count: 5)) {
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

    /// The advice names the missing field and says exactly what opens the
    /// old values: each way it names is tested below.
    @Test func aMissingFieldIsNamedWithTheWaysThatOpenTheOldValues() throws {
        let fileSystem = SimulatedFileSystem()
        try writeV1(fileSystem)
        let store = try tableStore(fileSystem)
        let error = #expect(throws: TableError.self) { try store.table(NoteV2.self, named: "notes") }
        let expected: String = "table notes: 5 stored value(s) no longer decode as the type; the first is 1 at priority: "
            + "the field priority is missing. A default value in the declaration (var priority = …) does not help, "
            + "since synthesized Codable ignores it; make priority optional, declare it @Defaulted<Provider>, "
            + "or decode it in a hand-written init(from:) with decodeIfPresent(_:forKey: .priority) ?? default; "
            + "or open the table with onUndecodable: .quarantine, read each entry of its quarantined list as a Document, and replace it"
        #expect(error.map { "\($0)" } == expected)
    }

    /// A field added with a default value in its declaration.
    struct NoteWithDeclaredDefault: Entity, Equatable { var id: Int64; var text: String; var priority = 0 }

    @Test func aDefaultValueInTheDeclarationAloneStillFailsToOpen() throws {
        let fileSystem = SimulatedFileSystem()
        try writeV1(fileSystem)
        let store = try tableStore(fileSystem)
        let error = #expect(throws: TableError.self) { try store.table(NoteWithDeclaredDefault.self, named: "notes") }
        guard case let .undecodable(_, _, _, missingField, _, count)? = error else {
            Issue.record("expected undecodable, got \(String(describing: error))")
            return
        }
        #expect(missingField == "priority" && count == 5)
    }

    /// The field decoded as the advice says: `decodeIfPresent ?? default`
    /// in a hand-written `init(from:)`.
    struct NoteDecodingIfPresent: Entity, Equatable {
        var id: Int64
        var text: String
        var priority: Int

        init(id: Int64, text: String, priority: Int) {
            self.id = id
            self.text = text
            self.priority = priority
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(Int64.self, forKey: .id)
            text = try container.decode(String.self, forKey: .text)
            priority = try container.decodeIfPresent(Int.self, forKey: .priority) ?? 0
        }
    }

    @Test func aHandWrittenInitWithDecodeIfPresentOpensTheOldValuesAcrossAReopen() throws {
        let fileSystem = SimulatedFileSystem()
        try writeV1(fileSystem)
        do {
            let store = try tableStore(fileSystem)
            let notes = try store.table(NoteDecodingIfPresent.self, named: "notes")
            #expect(notes.all() == (1...5).map { NoteDecodingIfPresent(id: $0, text: "note \($0)", priority: 0) })
            #expect(notes.quarantined.isEmpty)
            try notes.put(NoteDecodingIfPresent(id: 2, text: "note 2", priority: 7))
            store.close()
        }
        let store = try tableStore(fileSystem)
        let notes = try store.table(NoteDecodingIfPresent.self, named: "notes")
        #expect(notes[2]?.priority == 7 && notes[3]?.priority == 0, "the stored field wins over the default")
    }

    enum NoPriority: DefaultValueProvider { static var defaultValue: Int { 0 } }
    /// The field declared `@Defaulted`, as the advice says.
    struct NoteWithDefaulted: Entity, Equatable { var id: Int64; var text: String; @Defaulted<NoPriority> var priority: Int }

    @Test func aDefaultedFieldOpensTheOldValuesAndKeepsNewOnesAcrossAReopen() throws {
        let fileSystem = SimulatedFileSystem()
        try writeV1(fileSystem)
        do {
            let store = try tableStore(fileSystem)
            let notes = try store.table(NoteWithDefaulted.self, named: "notes", indexes: [.on(\.priority)])
            #expect(notes.all() == (1...5).map { NoteWithDefaulted(id: $0, text: "note \($0)", priority: 0) })
            try notes.put(NoteWithDefaulted(id: 4, text: "urgent", priority: 3))
            #expect(try notes.query.filter(\.priority == 3).ids() == [4], "an index on a defaulted field serves queries")
            store.close()
        }
        let store = try tableStore(fileSystem)
        let notes = try store.table(NoteWithDefaulted.self, named: "notes")
        #expect(notes.all().map(\.priority) == [0, 0, 0, 3, 0])
    }

    /// A field whose type changed, not one that is missing.
    struct NoteWithNumericText: Entity, Equatable { var id: Int64; var text: Int }

    @Test func aChangedFieldTypeGetsTheHandWrittenInitAndQuarantineAdvice() throws {
        let fileSystem = SimulatedFileSystem()
        try writeV1(fileSystem)
        let store = try tableStore(fileSystem)
        let error = #expect(throws: TableError.self) { try store.table(NoteWithNumericText.self, named: "notes") }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.hasPrefix("table notes: 5 stored value(s) no longer decode as the type; the first is 1 at text: expected Int"))
        let advice: String = ". Decode the stored form in a hand-written init(from:), or open the table with onUndecodable: "
            + ".quarantine, read each entry of its quarantined list as a Document, and replace it"
        #expect(text.hasSuffix(advice))
        #expect(!text.contains("optional"), "making a field optional does not help a value of another type")
    }
}
