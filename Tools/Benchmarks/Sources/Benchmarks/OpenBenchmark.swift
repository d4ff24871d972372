import Foundation
import LensDB

/// Open time of a store of 100k entries of ~150 bytes, from the log alone
/// and from a snapshot.
let openWorkload = Workload(
    name: "open",
    summary: "open time for 100,000 entries of ~150 bytes: replaying the log vs loading a snapshot"
) {
    let path = NSTemporaryDirectory() + "lensdb-bench-open-\(getpid()).lensdb"
    defer { try? FileManager.default.removeItem(atPath: path) }
    try fillStore(at: path, entries: 100_000)

    let fromLog = try timedOpen(path)
    let store = try Store(at: path, options: benchmarkOptions())
    try store.compact()
    store.close()
    let fromSnapshot = try timedOpen(path)
    let snapshotBytes = Double(fromSnapshot.statistics.recovery.snapshot?.size ?? 0)
    let logBytes = Double(fromLog.statistics.recovery.logBytes)
    printTable(["open from", "bytes on disk", "seconds", "MB/s", "entries/s"], [
        ["log (100 records of 1000 puts)", format(logBytes), String(format: "%.3f", fromLog.seconds),
         format(logBytes / fromLog.seconds / 1e6), format(100_000 / fromLog.seconds)],
        ["snapshot", format(snapshotBytes), String(format: "%.3f", fromSnapshot.seconds),
         format(snapshotBytes / fromSnapshot.seconds / 1e6), format(100_000 / fromSnapshot.seconds)],
    ])
    print("\nsnapshot open is \(String(format: "%.2f", fromLog.seconds / fromSnapshot.seconds))× faster than log replay")
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
private func timedOpen(_ path: String) throws -> (seconds: Double, statistics: OpenStatistics) {
    var options = benchmarkOptions()
    options.readOnly = true
    var best: OpenStatistics?
    for _ in 0..<3 {
        let store = try Store(at: path, options: options)
        if best == nil || store.openStatistics.seconds < best!.seconds { best = store.openStatistics }
        store.close()
    }
    return (best!.seconds, best!)
}
