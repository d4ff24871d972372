import Foundation
import LensDB

/// The document of the lens workloads: a typed leaf (`counter`) beside a
/// few other fields, and for the large root about 1 MiB of names.
struct LensBenchState: Codable, Sendable {
    var counter = 0
    var theme = "light"
    var protection: [String: Bool] = ["enabled": false]
    var names: [String] = []

    static func large() -> LensBenchState {
        LensBenchState(names: (0..<8192).map { "name \($0) " + String(repeating: "n", count: 118) })
    }
}

/// A store for a lens workload in `directory`: default options but no
/// automatic compaction, so a window never pays for one.
func lensBenchStore(_ directory: String, _ name: String, _ durability: Durability) throws -> Store {
    var options = StoreOptions(durability: durability)
    options.compactionLogRatio = nil
    return try Store(at: "\(directory)/\(name).lensdb", options: options)
}

func lensBenchDirectory(_ label: String) throws -> String {
    let directory = NSTemporaryDirectory() + "lensdb-bench-\(label)-\(getpid())"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    return directory
}

/// Typed leaf reads/s and sets/s, against the byte-level root API writing
/// a value of the same size, with `.full` and `.buffered` durability.
let lensWorkload = Workload(
    name: "lens",
    summary: "root lens: typed leaf reads/s and sets/s (.full, .buffered) vs the byte-level root API"
) {
    let directory = try lensBenchDirectory("lens")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let stores = try [Durability.full, .buffered].map { try lensBenchStore(directory, "\($0)", $0) }
    defer { for store in stores { store.close() } }
    let leaves = try stores.map { try $0.root(LensBenchState.self, named: "app", default: LensBenchState()).lens(\.counter) }
    for leaf in leaves { try leaf.set(1) }
    let encoder = ValueEncoder()
    var next = 1
    func lensSet(_ index: Int, until deadline: Double) throws -> Int {
        var count = 0
        while now() < deadline {
            next += 1
            try leaves[index].set(next)
            count += 1
        }
        return count
    }
    func rawSet(_ index: Int, until deadline: Double) throws -> Int {
        var count = 0
        while now() < deadline {
            next += 1
            let bytes = try encoder.encode(next)
            try stores[index].write { tx in tx.setRoot(.encoded(bytes), named: "raw", encoding: .valueFormat) }
            count += 1
        }
        return count
    }
    let results = try interleave([
        Contender(name: "lens .full") { try lensSet(0, until: $0) },
        Contender(name: "raw .full") { try rawSet(0, until: $0) },
        Contender(name: "lens .buffered") { try lensSet(1, until: $0) },
        Contender(name: "raw .buffered") { try rawSet(1, until: $0) },
    ], rounds: 5, window: 0.4)
    printTable(["set", "commits/s", "vs byte-level setRoot", "per round: median (min–max)"], [
        ["typed leaf, .full", format(results.rate(0)), percent(results.rate(0) / results.rate(1)),
         percentSpread(results.roundRatios(0) { results.roundRates[1][$0] })],
        ["byte-level setRoot, .full", format(results.rate(1)), "100%", ""],
        ["typed leaf, .buffered", format(results.rate(2)), percent(results.rate(2) / results.rate(3)),
         percentSpread(results.roundRatios(2) { results.roundRates[3][$0] })],
        ["byte-level setRoot, .buffered", format(results.rate(3)), "100%", ""],
    ])

    let leaf = leaves[1]
    let store = stores[1]
    var sum = 0
    let reads = try interleave([
        Contender(name: "lens read") { deadline in
            var count = 0
            while now() < deadline { for _ in 0..<1000 { sum &+= leaf.value }; count += 1000 }
            return count
        },
        Contender(name: "version read") { deadline in
            var count = 0
            while now() < deadline { for _ in 0..<1000 { sum &+= Int(store.current.lsn) }; count += 1000 }
            return count
        },
    ], rounds: 5, window: 0.3)
    print("")
    printTable(["read", "reads/s", "vs taking the latest version", "per round: median (min–max)"], [
        ["typed leaf (lens.value)", format(reads.rate(0)), percent(reads.rate(0) / reads.rate(1)),
         percentSpread(reads.roundRatios(0) { reads.roundRates[1][$0] })],
        ["store.current alone", format(reads.rate(1)), "100%", ""],
    ])
    if sum == 42 { print("") }  // keeps the reads from being optimized away
}

/// A one-field update of a 1 MiB root against the same update of a root
/// holding little else: log bytes per commit and commits/s.
let lensDeltaWorkload = Workload(
    name: "lens-delta",
    summary: "delta logging: one-field updates of a 1 MiB root vs a small root (log bytes and commits/s)"
) {
    let directory = try lensBenchDirectory("lens-delta")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let setups: [(String, Durability, LensBenchState)] = [
        ("small-full", .full, LensBenchState()), ("large-full", .full, .large()),
        ("small-buffered", .buffered, LensBenchState()), ("large-buffered", .buffered, .large()),
    ]
    let stores = try setups.map { try lensBenchStore(directory, $0.0, $0.1) }
    defer { for store in stores { store.close() } }
    var counters: [Lens<Int>] = []
    for (store, setup) in zip(stores, setups) {
        let root = try store.root(LensBenchState.self, named: "app", default: LensBenchState())
        var document = setup.2
        document.counter = 1
        try root.set(document)
        counters.append(root.lens(\.counter))
    }
    let rootBytes = try setups.map { try ValueEncoder().encode($0.2).count }
    let startBytes = stores.map { $0.statistics.bytesLogged }
    let startCommits = stores.map { $0.statistics.commits }
    var next = 1
    let results = try interleave(counters.indices.map { index in
        Contender(name: setups[index].0) { deadline in
            var count = 0
            while now() < deadline {
                next += 1
                try counters[index].set(next)
                count += 1
            }
            return count
        }
    }, rounds: 5, window: 0.4)
    let perCommit = stores.indices.map { index in
        Double(stores[index].statistics.bytesLogged - startBytes[index]) / Double(stores[index].statistics.commits - startCommits[index])
    }
    printTable(["root", "root bytes", "log bytes per commit", "commits/s", "vs small root", "per round: median (min–max)"],
        stores.indices.map { index in
            let small = index - index % 2
            return [setups[index].0, "\(rootBytes[index])", String(format: "%.0f", perCommit[index]), format(results.rate(index)),
                    percent(results.rate(index) / results.rate(small)),
                    index == small ? "" : percentSpread(results.roundRatios(index) { results.roundRates[small][$0] })]
        })
}
