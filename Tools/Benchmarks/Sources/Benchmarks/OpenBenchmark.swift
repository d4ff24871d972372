import Foundation
import LensDB

/// Open time of a store of 100k entries of ~150 bytes, from the log alone
/// and from a snapshot: two copies of one store, one of them compacted,
/// opened in turn so that both see the same spells of the machine.
let openWorkload = Workload(
    name: "open",
    summary: "open time for 100,000 entries of ~150 bytes: replaying the log vs loading a snapshot"
) {
    let logPath = NSTemporaryDirectory() + "lensdb-bench-open-\(getpid())-log.lensdb"
    let snapshotPath = NSTemporaryDirectory() + "lensdb-bench-open-\(getpid())-snapshot.lensdb"
    defer { for path in [logPath, snapshotPath] { try? FileManager.default.removeItem(atPath: path) } }
    try fillStore(at: logPath, entries: 100_000)
    try FileManager.default.copyItem(atPath: logPath, toPath: snapshotPath)
    let store = try Store(at: snapshotPath, options: benchmarkOptions())
    try store.compact()
    store.close()

    var fromLog: [OpenStatistics] = []
    var fromSnapshot: [OpenStatistics] = []
    for _ in 0..<7 {
        fromLog.append(try timedOpen(logPath))
        fromSnapshot.append(try timedOpen(snapshotPath))
    }
    let log = median(fromLog)
    let snapshot = median(fromSnapshot)
    let logBytes = Double(log.recovery.logBytes)
    let snapshotBytes = Double(snapshot.recovery.snapshot?.size ?? 0)
    let snapshotLogBytes = Double(snapshot.recovery.logBytes)
    printTable(["open from", "snapshot bytes", "log bytes", "seconds (median of 7)", "MB/s", "entries/s"], [
        ["log (100 records of 1000 puts)", "0", "\(Int(logBytes))", String(format: "%.3f", log.seconds),
         format(logBytes / log.seconds / 1e6), format(Double(log.items) / log.seconds)],
        ["snapshot", "\(Int(snapshotBytes))", "\(Int(snapshotLogBytes))", String(format: "%.3f", snapshot.seconds),
         format((snapshotBytes + snapshotLogBytes) / snapshot.seconds / 1e6), format(Double(snapshot.items) / snapshot.seconds)],
    ])
    print("\nsnapshot open is \(String(format: "%.2f", log.seconds / snapshot.seconds))× faster than log replay "
        + "(per pair: \(timesSpread(zip(fromLog, fromSnapshot).map { $0.seconds / $1.seconds })))")
}

private func median(_ opens: [OpenStatistics]) -> OpenStatistics {
    opens.sorted { $0.seconds < $1.seconds }[opens.count / 2]
}

func benchmarkOptions() -> StoreOptions {
    var options = StoreOptions()
    options.compactionLogRatio = nil
    return options
}

/// `entries` puts of ~150-byte values, 1000 a transaction.
func fillStore(at path: String, entries: Int) throws {
    let store = try Store(at: path, options: benchmarkOptions())
    defer { store.close() }
    for batch in stride(from: 0, to: entries, by: 1000) {
        try store.write(durability: .buffered) { tx in
            for index in batch..<min(batch + 1000, entries) {
                tx.put(entryValue(index), for: Array("person-\(index)".utf8), in: "people")
            }
        }
    }
    try store.flush()
}

/// ~150 bytes that compress about as well as a typical encoded record.
func entryValue(_ index: Int) -> [UInt8] {
    Array("{\"id\":\(index),\"name\":\"Person \(index)\",\"email\":\"person\(index)@example.com\",\"city\":\"Paris\",\"age\":\(index % 90),\"score\":\(Double(index) * 1.5)}".utf8)
}

/// Opens read-only (the same recovery, no new files) and returns the open's own timing.
private func timedOpen(_ path: String) throws -> OpenStatistics {
    var options = benchmarkOptions()
    options.readOnly = true
    let store = try Store(at: path, options: options)
    defer { store.close() }
    return store.openStatistics
}
