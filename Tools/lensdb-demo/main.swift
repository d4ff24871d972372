// The README's main job: writes a store, reopens it, and shows what is in it.
// Usage: lensdb-demo [STORE-DIRECTORY]
import Foundation
import LensDB

/// The people the sample wrote, as a program declares them.
struct Person: Entity {
    var id: Int64
    var name: String
    var city: String
    var age: Int
}

let path = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory() + "lensdb-demo.lensdb"

do {
    // 1. Write: three transactions (people, orders, a settings document), each
    //    durable when it returns: the log was synced durably
    //    (fdatasync on Linux, F_FULLFSYNC on macOS and iOS).
    let lastLSN = try DemoStore.write(at: path)
    print("wrote people, orders and the settings document to \(path) (last LSN \(lastLSN))")

    // 2. Reopen: the snapshot (if any) is loaded and the log replayed.
    let store = try Store(at: path)
    defer { store.close() }
    let statistics = store.openStatistics
    print(String(format: "reopened in %.1f ms: ", statistics.seconds * 1000)
        + "\(statistics.recovery.recordsReplayed) records replayed, \(statistics.items) items")

    // 3. Show what is in it, as JSON, without the program's types.
    let state = store.current
    for table in state.tableNames {
        let encoding = state.encoding(ofTable: table)
        print("table \(table) (\(encoding.map { "\($0)" } ?? "unknown encoding")):")
        for (key, value) in state.entries(in: table).sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let shownKey = RenderedValue(key: key, encoding: encoding?.key).text
            print("  \(shownKey) → \(RenderedValue(value: try value.bytes(), encoding: encoding?.value).text)")
        }
    }
    for name in state.rootNames {
        print("root \(name): \(RenderedValue(value: try state.root(named: name)!.bytes(), encoding: state.encoding(ofRoot: name)).text)")
    }
    // 4. The same table, typed: entities decoded once, indexed, queried.
    let people = try store.table(Person.self, named: "people", indexes: [.on(\.city), .on(\.age)])
    let parisians = people.query.filter(\.city == "Paris").sorted(by: \.age, .descending)
    print("people in Paris, oldest first: " + (try parisians.all()).map { "\($0.name) (\($0.age))" }.joined(separator: ", "))
    print(parisians.explain())
    if statistics.recovery.recordsReplayed > 30 {
        try store.compact()
        print("compacted: the next open loads one snapshot instead of replaying the log")
    }
} catch {
    FileHandle.standardError.write(Data("lensdb-demo: \(error)\n".utf8))
    exit(1)
}
