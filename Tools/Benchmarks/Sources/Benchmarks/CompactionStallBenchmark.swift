import Dispatch
import Foundation
import LensDB
import Synchronization

/// Commit latency of one writer, without and during back-to-back compactions
/// of a 100k-entry store: how long compaction holds writers.
let compactionStallWorkload = Workload(
    name: "compaction-stall",
    summary: "commit latency percentiles of one writer without and during compactions (100k entries)"
) {
    let path = NSTemporaryDirectory() + "lensdb-bench-stall-\(getpid()).lensdb"
    defer { try? FileManager.default.removeItem(atPath: path) }
    try fillStore(at: path, entries: 100_000)
    let store = try Store(at: path, options: benchmarkOptions())
    defer { store.close() }
    var rows: [[String]] = []
    for durability in [Durability.full, .buffered] {
        let quiet = try latencies(store, durability: durability, compacting: false)
        let busy = try latencies(store, durability: durability, compacting: true)
        rows.append(row("\(durability), no compaction", quiet.samples, compactions: 0))
        rows.append(row("\(durability), compacting", busy.samples, compactions: busy.compactions))
        rows.append(["\(durability): p99 with / without", String(format: "%.2f×", percentile(busy.samples, 0.99) / percentile(quiet.samples, 0.99)), "", "", ""])
    }
    printTable(["commits", "p50 µs", "p99 µs", "max µs", "compactions"], rows)
}

private func row(_ label: String, _ samples: [Double], compactions: Int) -> [String] {
    [label, micro(percentile(samples, 0.5)), micro(percentile(samples, 0.99)), micro(samples.max() ?? 0), "\(compactions)"]
}

private func micro(_ seconds: Double) -> String { String(format: "%.0f", seconds * 1e6) }

private func percentile(_ samples: [Double], _ p: Double) -> Double {
    let sorted = samples.sorted()
    return sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

/// Commits small puts for 2 s, timing each; with `compacting`, another thread
/// compacts in a loop meanwhile.
private func latencies(_ store: Store, durability: Durability, compacting: Bool) throws -> (samples: [Double], compactions: Int) {
    let done = Atomic<Bool>(false)
    let compactions = Atomic<Int>(0)
    let group = DispatchGroup()
    if compacting {
        DispatchQueue.global().async(group: group) {
            while !done.load(ordering: .relaxed) {
                // A failed compaction shows as fewer compactions in the table.
                if (try? store.compact()) != nil { compactions.add(1, ordering: .relaxed) }
            }
        }
    }
    var samples: [Double] = []
    let end = now() + 2
    var index = 0
    while now() < end {
        let start = now()
        try store.write(durability: durability) { tx in tx.put(entryValue(index), for: Array("hot-\(index % 100)".utf8), in: "hot") }
        samples.append(now() - start)
        index += 1
    }
    done.store(true, ordering: .relaxed)
    group.wait()
    return (samples, compactions.load(ordering: .relaxed))
}
