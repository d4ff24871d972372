// A program that writes a store through the public API, for the tests of
// `logtool dump --follow`: a writer in a process of its own, which can
// compact, reopen, and die without closing, as a real program does.
//
// Usage: LiveWriter STORE STEP...
//   commit:N   N transactions on the table "items" (see `commit` below)
//   compact    a compaction
//   reopen     closes the store and opens it again
//   buffered   later commits return once written (`.buffered`)
//   full       later commits return once synced (`.full`, the default)
//   pause:MS   sleeps MS milliseconds
//   crash      ends the process with SIGKILL, without closing the store
// Prints the last LSN once every step is done.
import Foundation
import LensDB

/// The entity the tests export: small, with a field that changes on every put.
struct Item: Entity, Equatable {
    var id: Int64
    var name: String
    var revision: UInt64
}

/// One transaction, a function of the LSN it will have, so that runs are
/// reproducible: a put that always changes something, and every third
/// transaction a remove of another item (which writes nothing when that
/// item is absent).
func commit(_ store: Store, _ items: Table<Item>, durability: Durability) throws {
    try store.write(durability: durability) { tx in
        let lsn = store.current.lsn + 1
        let id = Int64(lsn % 17) + 1
        try tx[items].put(Item(id: id, name: "item \(id) \"quoted\" \\ back\tslash", revision: lsn))
        if lsn % 3 == 0 { try tx[items].remove(Int64((lsn + 5) % 17) + 1) }
    }
}

let arguments = CommandLine.arguments.dropFirst()
guard let path = arguments.first else {
    FileHandle.standardError.write(Data("usage: LiveWriter STORE STEP...\n".utf8))
    exit(2)
}
do {
    var store = try Store(at: path)
    var items = try store.table(Item.self, named: "items")
    var durability = Durability.full
    for step in arguments.dropFirst() {
        let parts = step.split(separator: ":")
        let count = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
        switch parts[0] {
        case "commit": for _ in 0..<count { try commit(store, items, durability: durability) }
        case "compact": try store.compact()
        case "reopen":
            store.close()
            store = try Store(at: path)
            items = try store.table(Item.self, named: "items")
        case "buffered": durability = .buffered
        case "full": durability = .full
        case "pause": usleep(useconds_t(count * 1000))
        case "crash": kill(getpid(), SIGKILL)
        default:
            FileHandle.standardError.write(Data("LiveWriter: unknown step \(step)\n".utf8))
            exit(2)
        }
    }
    print(store.current.lsn)
    store.close()
} catch {
    FileHandle.standardError.write(Data("LiveWriter: \(error)\n".utf8))
    exit(1)
}
