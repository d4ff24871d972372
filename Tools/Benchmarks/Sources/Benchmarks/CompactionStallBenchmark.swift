import Dispatch
import Foundation
import LensDB
import Synchronization

/// Commit latency of one writer, without and during back-to-back compactions
/// of a 100k-entry store: how long compaction holds writers. Quiet and
/// compacting windows alternate, so both see the same spells of the machine.
let compactionStallWorkload = Workload(
    name: "compaction-stall",
    summary: "commit latency percentiles of one writer without and during compactions (100k entries)"
) {
    try compactionStall(entries: 100_000, window: 0.4)
}

/// The same on a 1M-entry store, whose snapshot takes seconds to write:
/// longer windows, so that each compacting window sees most of one.
let compactionStall1MWorkload = Workload(
    name: "compaction-stall-1m",
    summary: "commit latency percentiles of one writer without and during compactions (1M entries)"
) {
    try compactionStall(entries: 1_000_000, window: 2)
}

private func compactionStall(entries: Int, window: Double) throws {
    let path = NSTemporaryDirectory() + "lensdb-bench-stall-\(getpid()).lensdb"
    defer { try? FileManager.default.removeItem(atPath: path) }
    try fillStore(at: path, entries: entries)
    let store = try Store(at: path, options: benchmarkOptions())
    defer { store.close() }
    try store.compact()
    let compactor = Compactor(store)
    defer { compactor.stop() }
    var rows: [[String]] = []
    for durability in [Durability.full, .buffered] {
        var quiet: [Double] = []
        var busy: [Double] = []
        let compactionsBefore = compactor.completed
        for _ in 0..<5 {
            quiet += try latencies(store, durability: durability, seconds: window)
            compactor.setRunning(true)
            busy += try latencies(store, durability: durability, seconds: window)
            compactor.setRunning(false)
        }
        let compactions = compactor.completed - compactionsBefore
        rows.append(row("\(durability), no compaction", quiet, compactions: 0))
        rows.append(row("\(durability), compacting", busy, compactions: compactions))
        rows.append(["\(durability): with / without", ratio(busy, quiet, 0.5), ratio(busy, quiet, 0.99),
                     ratio(busy, quiet, 0.999), ratio(busy, quiet, 1), ""])
    }
    // p99.9 and max are where a stall shows: a dozen compactions stall a
    // dozen commits out of thousands, below what p99 sees.
    printTable(["commits", "p50 µs", "p99 µs", "p99.9 µs", "max µs", "compactions"], rows)
}

private func row(_ label: String, _ samples: [Double], compactions: Int) -> [String] {
    [label, micro(percentile(samples, 0.5)), micro(percentile(samples, 0.99)),
     micro(percentile(samples, 0.999)), micro(percentile(samples, 1)), "\(compactions)"]
}

private func ratio(_ busy: [Double], _ quiet: [Double], _ p: Double) -> String {
    String(format: "%.2f×", percentile(busy, p) / percentile(quiet, p))
}

private func micro(_ seconds: Double) -> String { String(format: "%.0f", seconds * 1e6) }

private func percentile(_ samples: [Double], _ p: Double) -> Double {
    let sorted = samples.sorted()
    return sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

/// Commits small puts for `seconds`, timing each.
private func latencies(_ store: Store, durability: Durability, seconds: Double) throws -> [Double] {
    var samples: [Double] = []
    let end = now() + seconds
    var index = 0
    while now() < end {
        let start = now()
        try store.write(durability: durability) { tx in tx.put(entryValue(index), for: Array("hot-\(index % 100)".utf8), in: "hot") }
        samples.append(now() - start)
        index += 1
    }
    return samples
}

/// A thread that compacts the store back to back while running is set.
private final class Compactor: Sendable {
    /// Checked and set together, so that turning compaction off cannot miss
    /// one that is about to start.
    private let state = Mutex<(running: Bool, compacting: Bool, stopped: Bool)>((false, false, false))
    private let count = Atomic<Int>(0)
    private let done = DispatchSemaphore(value: 0)

    init(_ store: Store) {
        Thread { [self] in
            while true {
                let (go, stopped) = state.withLock { state in
                    state.compacting = state.running && !state.stopped
                    return (state.compacting, state.stopped)
                }
                if stopped { break }
                guard go else { usleep(200); continue }
                // A failed compaction shows as fewer compactions in the table.
                if (try? store.compact()) != nil { count.add(1, ordering: .relaxed) }
                state.withLock { $0.compacting = false }
            }
            done.signal()
        }.start()
    }

    var completed: Int { count.load(ordering: .relaxed) }

    /// Turning compaction off waits for the one in progress, so that the
    /// next quiet window is quiet.
    func setRunning(_ value: Bool) {
        state.withLock { $0.running = value }
        while !value && state.withLock({ $0.compacting }) { usleep(100) }
    }

    func stop() {
        state.withLock { $0.stopped = true }
        done.wait()
    }
}
