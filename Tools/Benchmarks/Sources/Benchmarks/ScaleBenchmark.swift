import Dispatch
import Foundation
import LensDB
import Synchronization

/// A large store (10M entries of ~150 bytes, about 1.5 GB of values;
/// `LENSDB_BENCH_SCALE_ENTRIES` changes the count): open time from the log
/// and from a snapshot, compaction time, peak RSS during compaction as a
/// multiple of the state (goal: below 1.5×), and `.full` commit latency
/// before and while it compacts. Each measurement runs in a child process
/// of its own, so that peaks and the state are its alone.
let scaleWorkload = Workload(
    name: "scale",
    summary: "open, compaction, peak RSS and commit latency of a 10M-entry store"
) {
    let entries = environmentInt("LENSDB_BENCH_SCALE_ENTRIES", default: 10_000_000)
    let path = NSTemporaryDirectory() + "lensdb-bench-scale-\(getpid()).lensdb"
    defer { try? FileManager.default.removeItem(atPath: path) }
    let started = now()
    try fillStore(at: path, entries: entries)
    print("filled \(entries) entries in " + String(format: "%.1f s", now() - started) + "; log \(directoryBytes(path) >> 20) MiB\n")
    let fromLog = try runProbe(["scale-probe", "open", path])
    let compaction = try runProbe(["scale-probe", "compact", path])
    let fromSnapshot = try runProbe(["scale-probe", "open", path])
    let state = compaction["state"]!
    printTable(["measure", "value"], [
        ["entries", "\(entries)"],
        ["open from the log: seconds", String(format: "%.2f", fromLog["seconds"]!)],
        ["open from the log: entries/s", format(Double(entries) / fromLog["seconds"]!)],
        ["open from the log: peak RSS above state MiB", mebi(fromLog["peak"]! - fromLog["state"]!)],
        ["open from a snapshot: seconds", String(format: "%.2f", fromSnapshot["seconds"]!)],
        ["open from a snapshot: entries/s", format(Double(entries) / fromSnapshot["seconds"]!)],
        ["state (RSS kept after open) MiB", mebi(state)],
        ["snapshot MiB", mebi(compaction["snapshot"]!)],
        ["compaction: seconds", String(format: "%.2f", compaction["seconds"]!)],
        ["compaction: peak RSS MiB (× state)", mebi(compaction["peak"]!) + String(format: " (%.2f×)", compaction["peak"]! / state)],
        latencyRow("before compacting (2 s)", "before", compaction),
        latencyRow("while compacting", "busy", compaction),
        latencyRow("after compacting (2 s)", "after", compaction),
    ])
}

/// In a child process: `open` opens the store and reports its time, its
/// peak and the state it keeps; `compact` opens it, times `.full` commits
/// for two seconds, then again while one compaction runs, and reports the
/// compaction's time and the peak RSS during it, then times commits for
/// two seconds more.
func scaleProbe(_ task: String, _ path: String) throws {
    trimMalloc()
    let before = residentBytes()
    resetPeakResident()
    let started = now()
    let store = try Store(at: path, options: benchmarkOptions())
    defer { store.close() }
    var result = ["seconds": now() - started, "peak": Double(peakResidentBytes() - before)]
    trimMalloc()
    result["state"] = Double(residentBytes() - before)
    if task == "compact" {
        let quietBefore = commitLatencies(store, while: { _ in true }, seconds: 2)
        let writer = BusyWriter(store)
        resetPeakResident()
        let compactionStart = now()
        try store.compact()
        result["seconds"] = now() - compactionStart
        result["peak"] = Double(peakResidentBytes() - before)
        let busy = writer.stop()
        // Quiet windows before and after, so that both sides of the
        // compaction are in the baseline.
        let quietAfter = commitLatencies(store, while: { _ in true }, seconds: 2)
        result["snapshot"] = Double(directoryBytes(path, suffix: ".snap"))
        for (name, samples) in [("before", quietBefore), ("after", quietAfter), ("busy", busy)] {
            let sorted = samples.sorted()
            func at(_ p: Double) -> Double { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
            result[name + "50"] = at(0.5)
            result[name + "99"] = at(0.99)
            result[name + "999"] = at(0.999)
            result[name + "Max"] = sorted.last ?? 0
            result[name + "Count"] = Double(sorted.count)
        }
    }
    print(result.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
}

/// A thread that commits and times `.full` commits until stopped.
private final class BusyWriter: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let samples = Mutex<[Double]>([])
    private let done = DispatchSemaphore(value: 0)

    init(_ store: Store) {
        Thread { [self] in
            let measured = commitLatencies(store, while: { _ in !self.stopping.load(ordering: .relaxed) }, seconds: .infinity)
            samples.withLock { $0 = measured }
            done.signal()
        }.start()
    }

    func stop() -> [Double] {
        stopping.store(true, ordering: .relaxed)
        done.wait()
        return samples.withLock { $0 }
    }
}

/// `.full` commits of one small put, timed one by one, while `going` holds, for at most `seconds`.
private func commitLatencies(_ store: Store, while going: (Int) -> Bool, seconds: Double) -> [Double] {
    var samples: [Double] = []
    let end = now() + seconds
    var index = 0
    while going(index), now() < end {
        let start = now()
        // A failed commit ends the sample; the table shows how many there were.
        guard (try? store.write(durability: .full) { tx in
            tx.put(entryValue(index), for: Array("hot-\(index % 100)".utf8), in: "hot")
        }) != nil else { break }
        samples.append(now() - start)
        index += 1
    }
    return samples
}

/// The bytes of the files in `path` whose names end with `suffix`.
func directoryBytes(_ path: String, suffix: String = "") -> Int {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    return names.filter { $0.hasSuffix(suffix) }.reduce(0) { total, name in
        total + ((try? FileManager.default.attributesOfItem(atPath: path + "/" + name)[.size] as? Int) ?? 0)
    }
}

private func latencyRow(_ label: String, _ name: String, _ result: [String: Double]) -> [String] {
    let values = ["50", "99", "999", "Max"].map { micro(result[name + $0]!) }.joined(separator: " / ")
    return ["`.full` commits \(label): p50 / p99 / p99.9 / max µs (count)", values + " (\(Int(result[name + "Count"]!)))"]
}

private func micro(_ seconds: Double) -> String { String(format: "%.0f", seconds * 1e6) }
