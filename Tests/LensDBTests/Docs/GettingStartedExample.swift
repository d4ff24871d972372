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
        // article:begin GettingStarted.md
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

    @Test func aBufferedStoreWithADurableWrite() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("getting-started-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("notes.lensdb").path
        struct Note: Codable, Equatable {
            var title: String
            var body: String
        }
        let encoder = ValueEncoder()
        // article:begin GettingStarted.md
        var options = StoreOptions(durability: .buffered)
        options.compactionLogRatio = 2           // compact once the logs are twice the snapshot (the default)
        let store = try Store(at: path, options: options)
        try store.write(durability: .full) {     // this one survives a power cut
            $0.put(try encoder.encode(Note(title: "Kept", body: "Synced")), for: try encoder.encode(3), in: "notes")
        }
        // article:end
        #expect(store.current.count(in: "notes") == 1)
        store.close()
    }
}
