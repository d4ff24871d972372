// The README's main job: writes a store, reopens it, and shows what is in it.
// Usage: lensdb-demo [STORE-DIRECTORY]
import Foundation
import LensDB

struct Person: Codable {
    var id: Int64
    var name: String
    var city: String
    var age: Int
}

struct Settings: Codable {
    var theme: String
    var launches: Int
}

let path = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory() + "lensdb-demo.lensdb"
let encoder = ValueEncoder()

do {
    // 1. Write: one transaction puts three people and the settings document.
    let store = try Store(at: path)
    let launches = try store.current.root(named: "settings")
        .map { try ValueDecoder().decode(Settings.self, from: $0.bytes()).launches } ?? 0
    let people = [
        Person(id: 1, name: "Alice", city: "Paris", age: 34),
        Person(id: 2, name: "Bob", city: "Lyon", age: 27),
        Person(id: 3, name: "Chloé", city: "Paris", age: 41),
    ]
    try store.write { tx in
        for person in people {
            tx.put(try encoder.encode(person), for: try encoder.encode(person.id), in: "people")
        }
        tx.setRoot(.encoded(try encoder.encode(Settings(theme: "dark", launches: launches + 1))), named: "settings")
    }
    print("wrote 3 people and the settings to \(path) (durable: the write returned after fdatasync)")
    store.close()

    // 2. Reopen: the snapshot (if any) is loaded and the log replayed.
    let reopened = try Store(at: path)
    let statistics = reopened.openStatistics
    print("reopened in \(String(format: "%.1f", statistics.seconds * 1000)) ms: \(statistics.recovery.recordsReplayed) records replayed, \(statistics.items) items, last LSN \(reopened.current.lsn)")

    // 3. Show what is in it, as JSON, without the program's types.
    let state = reopened.current
    for table in state.tableNames {
        print("table \(table):")
        for (key, value) in state.entries(in: table).sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let keyJSON = try Document(decodingBinary: key).jsonString()
            print("  \(keyJSON) → \(try Document(decodingBinary: value.bytes()).jsonString())")
        }
    }
    for name in state.rootNames {
        print("root \(name): \(try Document(decodingBinary: state.root(named: name)!.bytes()).jsonString())")
    }
    reopened.close()
} catch {
    FileHandle.standardError.write(Data("lensdb-demo: \(error)\n".utf8))
    exit(1)
}
