// The example of the "Getting started" article, which quotes the lines
// between the markers verbatim (ArticleExampleTests checks that it does).
import Foundation
import LensDB
import Testing

@Suite struct GettingStartedExample {
    @Test func openWriteReadClose() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("getting-started-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("notes.lensdb").path
        // article:begin
        struct Note: Codable, Equatable {
            var title: String
            var body: String
        }
        let encoder = ValueEncoder(), decoder = ValueDecoder()

        // Creates the store if needed, recovers it, and takes its lock.
        let store = try Store(at: path)

        // One atomic, durable transaction: both notes or neither.
        try store.write { tx in
            tx.put(try encoder.encode(Note(title: "Hello", body: "First note")), for: try encoder.encode(1), in: "notes")
            tx.put(try encoder.encode(Note(title: "Later", body: "Second note")), for: try encoder.encode(2), in: "notes")
        }

        // Reads come from memory and never wait for a writer.
        let state = store.current
        if let stored = state.value(in: "notes", key: try encoder.encode(1)) {
            let note = try decoder.decode(Note.self, from: stored.bytes())
            print(note.title)  // Hello
        }

        // Releases the lock; the next open need not log anything again.
        store.close()
        // article:end
        let reopened = try Store(at: path)
        defer { reopened.close() }
        let second = try #require(reopened.current.value(in: "notes", key: try encoder.encode(2)))
        #expect(try decoder.decode(Note.self, from: second.bytes()) == Note(title: "Later", body: "Second note"))
        #expect(reopened.current.count(in: "notes") == 2)
    }
}
