import Foundation
import LensDB
import LensLog

/// The document of the notification workload: 10,000 leaves in 100 groups,
/// so a write copies two dictionaries of 100 entries, not one of 10,000.
struct LensBenchGroups: Codable, Sendable {
    var groups: [String: [String: Int]] = Dictionary(uniqueKeysWithValues: (0..<100).map { group in
        ("g\(group)", Dictionary(uniqueKeysWithValues: (0..<100).map { ("k\($0)", 0) }))
    })
}

/// Commits/s of one-leaf updates with 10 and with 10,000 lenses watched
/// on distinct leaves of the same document: a commit should find the one
/// lens it changed without visiting the others (goal: within 2×).
let lensNotifyWorkload = Workload(
    name: "lens-notify",
    summary: "notifications: one-leaf commits/s with 10 vs 10,000 watched lenses on distinct leaves"
) {
    let directory = try lensBenchDirectory("lens-notify")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let watchedCounts = [10, 10_000]
    let stores = try watchedCounts.map { try lensBenchStore(directory, "watched-\($0)", .buffered) }
    defer { for store in stores { store.close() } }
    var leaves: [[Lens<Int?>]] = []
    var consumers: [Task<Void, Never>] = []
    let received = Counter()
    for (store, count) in zip(stores, watchedCounts) {
        let root = try store.root(LensBenchGroups.self, named: "app", default: LensBenchGroups())
        try root.set(LensBenchGroups())
        let groups = root.lens(\.groups)
        let watched = (0..<count).map { index in
            groups.lens(key: "g\(index % 100)").lens(key: "k\(index / 100)") as Lens<Int?>
        }
        for leaf in watched {
            consumers.append(Task { for await _ in leaf.values { received.add() } })
        }
        leaves.append(watched)
    }
    // Every watcher has taken its first value, so the windows measure commits only.
    while received.value < watchedCounts.reduce(0, +) { usleep(1000) }
    defer { for consumer in consumers { consumer.cancel() } }
    var next = 0
    let results = try interleave(leaves.indices.map { index in
        Contender(name: "\(watchedCounts[index]) watched") { deadline in
            var count = 0
            let watched = leaves[index]
            while now() < deadline {
                next += 1
                try watched[next % watched.count].set(next)
                count += 1
            }
            return count
        }
    }, rounds: 5, window: 0.4)
    printTable(["lenses watched", "commits/s (.buffered)", "µs per commit", "vs 10 watched", "per round: median (min–max)"],
        leaves.indices.map { index in
            ["\(watchedCounts[index])", format(results.rate(index)), String(format: "%.1f", 1e6 / results.rate(index)),
             String(format: "%.2f×", results.rate(0) / results.rate(index)),
             index == 0 ? "" : timesSpread(results.roundRatios(0) { results.roundRates[index][$0] })]
        })
}

/// A count shared with the consumer tasks.
final class Counter: Sendable {
    private let count = Locked(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
