// The examples of the "Getting started" article, which quotes the lines
// between each pair of markers verbatim (ArticleExampleTests checks that it
// does); the lines after them check that the code does what the article says.
import Foundation
import LensDB
import LensTestSupport
import Testing

@Suite struct GettingStartedExample {
    @Test func aTypedTableARootLensAndATransactionOverBoth() throws {
        let directory = try TemporaryDirectory("getting-started")
        defer { directory.remove() }
        let path = "\(directory.path)/app.lensdb"
        // article:begin GettingStarted.md
        struct Person: Entity {
            var id: Int64
            var name: String
            var email: String
            var city: String
            var age: Int
        }

        // Creates the store if needed, recovers it, and takes its lock.
        let store = try Store(at: path)
        let people = try store.table(Person.self, named: "people",
                                     indexes: [.on(\.city), .on(\.age), .unique(\.email)])

        // Each put is one atomic, durable transaction.
        try people.put(Person(id: 1, name: "Ada", email: "ada@example.com", city: "London", age: 36))
        try people.put([
            Person(id: 2, name: "Grace", email: "grace@example.com", city: "New York", age: 45),
            Person(id: 3, name: "Alan", email: "alan@example.com", city: "London", age: 41),
        ])

        // Reads come from memory and never wait for a writer.
        let ada = people[1]                                        // Person?, no decoding
        let londoners = try people.query
            .filter(\.city == "London" && \.age >= 40)
            .sorted(by: \.name)
            .all()                                                 // [Alan]
        let younger = try people.query.filter(\.age < 40).count()  // 1
        // article:end
        #expect(ada?.name == "Ada")
        #expect(londoners.map(\.name) == ["Alan"])
        #expect(younger == 1)

        // article:begin GettingStarted.md
        struct AppState: Codable, Sendable {
            var theme = "light"
            var fontSize = 14
            var favorites: [Int64] = []
        }

        let state = try store.root(AppState.self, named: "app", default: AppState())
        let theme = state.lens(\.theme)

        try theme.set("dark")                     // durable when it returns
        try state.update { app in                 // a throw in here changes nothing
            app.fontSize += 2
            app.favorites.append(3)
        }
        let now = (theme.value, state.value.fontSize)   // ("dark", 16)
        // article:end
        #expect(now == ("dark", 16))
        #expect(state.value.favorites == [3])

        // article:begin GettingStarted.md
        // Tables and lenses in one transaction: all of it or nothing.
        try store.write { tx in
            try tx[people].remove(2)
            try tx[theme].set("light")
        }

        // Flushes, marks the end as clean, and releases the lock.
        store.close()
        // article:end

        let reopened = try Store(at: path)
        defer { reopened.close() }
        let again = try reopened.table(Person.self, named: "people", indexes: [.on(\.city), .on(\.age), .unique(\.email)])
        #expect(again.all().map(\.name) == ["Ada", "Alan"])
        let stateAgain = try reopened.root(AppState.self, named: "app", default: AppState())
        #expect(stateAgain.value.theme == "light" && stateAgain.value.fontSize == 16 && stateAgain.value.favorites == [3])
    }

    @Test func aDurabilityForTheStoreAndOneForAWrite() throws {
        let directory = try TemporaryDirectory("getting-started-durability")
        defer { directory.remove() }
        let path = "\(directory.path)/app.lensdb"
        struct Person: Entity, Equatable {
            var id: Int64
            var name: String
        }
        let grace = Person(id: 2, name: "Grace"), alan = Person(id: 3, name: "Alan")
        // article:begin GettingStarted.md
        var options = StoreOptions(durability: .buffered)
        options.compactionLogRatio = 2        // compact once the logs are twice the snapshot (the default)
        let store = try Store(at: path, options: options)
        let people = try store.table(Person.self, named: "people")

        try people.put(grace)                 // survives a crash of the program
        try store.write(durability: .full) { tx in
            try tx[people].put(alan)          // survives a power cut, and so does grace
        }
        // article:end
        #expect(store.statistics.syncs >= 1)
        store.close()
        let reopened = try Store(at: path)
        defer { reopened.close() }
        #expect(try reopened.table(Person.self, named: "people").all() == [grace, alan])
    }

    @Test func theByteLevelLayerUnderneath() throws {
        let directory = try TemporaryDirectory("getting-started-bytes")
        defer { directory.remove() }
        let path = "\(directory.path)/notes.lensdb"
        // article:begin GettingStarted.md
        struct Note: Codable, Equatable {
            var title: String
            var body: String
        }
        let encoder = ValueEncoder(), decoder = ValueDecoder()
        let store = try Store(at: path)

        // Keys and values are bytes; here, Codable values in LensDB's encoding.
        try store.write { tx in
            tx.put(try encoder.encode(Note(title: "Hello", body: "First note")), for: try encoder.encode(1), in: "notes")
            tx.setRoot(try encoder.encode("2026-11-24"), named: "last-import")
        }

        // One committed version, held for as long as you like.
        let version = store.current
        let stored = version.value(in: "notes", key: try encoder.encode(1))
        let note = try stored.map { try decoder.decode(Note.self, from: $0.bytes()) }   // Hello
        // article:end
        #expect(note == Note(title: "Hello", body: "First note"))
        let imported = try #require(version.root(named: "last-import"))
        #expect(try decoder.decode(String.self, from: imported.bytes()) == "2026-11-24")
        store.close()
    }
}
