import Foundation
import LensDB

/// The LensDB side of W1 and W6 alone, for `perf record`: fills 100k people
/// in one transaction, compacts, and opens the table five times; or, named
/// on the command line, another workload on those people (`updates` is W7,
/// `durable-puts` and `durable-raw` are W2's commits, typed or by key),
/// or W1's inserts alone, twelve times (`inserts`).
let tableProfileWorkload = Workload(
    name: "table-profile",
    summary: "LensDB alone: 100k inserts in one transaction, then five opens (for profiling)"
) {
    let path = BenchPath("profile")
    defer { path.remove() }
    // LENSDB_PROFILE_PEOPLE sets another size, for `queries` or the opens at 10k or 1M.
    let count = environmentInt("LENSDB_PROFILE_PEOPLE", default: 100_000)
    if CommandLine.arguments.contains("inserts") {
        // W1's typed side alone, twelve times, each into a new store.
        let people = (1...count).map { BenchPerson.make(Int64($0)) }
        var times: [Double] = []
        for _ in 0..<12 {
            let fresh = BenchPath("profile-inserts")
            defer { fresh.remove() }
            let (store, table) = try openLensPeople(fresh.path)
            let start = now()
            try table.put(people)
            times.append(now() - start)
            store.close()
        }
        let sorted = times.sorted()
        print(times.map { String(format: "%.3f", $0) }.joined(separator: " "))
        print(String(format: "%d inserts in one durable transaction, median of 12: %.3f s (%.3f–%.3f)", count, sorted[6], sorted[0], sorted[11]))
        return
    }
    do {
        let (store, people) = try openLensPeople(path.path)
        let start = now()
        // In transactions of at most 100k: a record holds at most 64 MiB.
        for start in stride(from: 1, through: count, by: 100_000) {
            try people.put((start...min(start + 99_999, count)).map { BenchPerson.make(Int64($0)) })
        }
        print(String(format: "insert: %.3f s", now() - start))
        try store.compact()
        store.close()
    }
    if CommandLine.arguments.contains("tablenone") {
        let (store, people) = try openLensPeople(path.path)
        let start = now()
        for index in 0..<50000 {
            try store.write(durability: Durability.none) { tx in try tx[people].put(BenchPerson.make(Int64(index % 100_000 + 1), version: 9)) }
        }
        print(String(format: "µs per table put without sync: %.1f", (now() - start) / 50000 * 1e6))
        store.close()
        return
    }
    if CommandLine.arguments.contains("w3") {
        // W3 alone: 8 threads × 250 durable commits each, typed puts against
        // the core's raw puts on the same store, in turns.
        let (store, people) = try openLensPeople(path.path)
        for round in 1...5 {
            var start = now()
            runThreads(8) { thread in
                for commit in 0..<250 { try? people.put(BenchPerson.make(Int64(thread * 1000 + commit + 1), version: round)) }
            }
            let typed = 2000 / (now() - start)
            start = now()
            runThreads(8) { thread in
                for commit in 0..<250 { try? store.write { tx in tx.put([UInt8(commit % 256)], for: [3, UInt8(thread)], in: "raw") } }
            }
            print(String(format: "8 threads × 250 durable commits: typed %.0f/s, raw %.0f/s", typed, 2000 / (now() - start)))
        }
        store.close()
        return
    }
    if CommandLine.arguments.contains("updates") {
        let (store, people) = try openLensPeople(path.path)
        var random = SystemRandomNumberGenerator()
        var cpu: [Double] = []
        // LENSDB_PROFILE_ROUNDS runs more, so that a profile is mostly updates.
        let rounds = environmentInt("LENSDB_PROFILE_ROUNDS", default: 5)
        // LENSDB_PROFILE_SETTLE=1 starts each round with the process quiet,
        // as W7's turns start: otherwise a round shares the cores with the
        // freeing of what the round before replaced.
        let settles = ProcessInfo.processInfo.environment["LENSDB_PROFILE_SETTLE"] == "1"
        for round in 1...rounds {
            let updates = (0..<10_000).map { _ in BenchPerson.make(Int64.random(in: 1...100_000, using: &random), version: 100 + round) }
            if settles { settle() }
            let (start, startCPU) = (now(), processCPU())
            try store.write { tx in try tx[people].put(updates) }
            cpu.append(processCPU() - startCPU)
            print(String(format: "10k updates in one transaction: %.3f s (CPU %.3f s)", now() - start, cpu.last!))
        }
        print(String(format: "CPU per 10k updates, median of %d: %.4f s", rounds, median(cpu)))
        store.close()
        return
    }
    if CommandLine.arguments.contains("none") {
        let (store, _) = try openLensPeople(path.path)
        let start = now()
        for index in 0..<50000 { try store.write(durability: Durability.none) { tx in tx.put([UInt8(index % 256)], for: [2, UInt8(index % 7)], in: "raw") } }
        print(String(format: "µs per raw commit without sync: %.1f", (now() - start) / 50000 * 1e6), store.statistics)
        store.close()
        return
    }
    if CommandLine.arguments.contains("commit-cpu") {
        // The tables benchmark's commit CPU row alone: typed puts against
        // the core's on 100k people each, in turns.
        let (store, people) = try openLensPeople(path.path)
        let corePath = BenchPath("profile-core")
        defer { corePath.remove() }
        let core = try CorePeople(corePath.path)
        try core.fill(count: 100_000)
        let changes = ChangedPeople()
        for _ in 0..<3 { print(try commitCPU(store, people, core, changes).joined(separator: " | ")) }
        core.store.close()
        store.close()
        return
    }
    if CommandLine.arguments.contains("durable-puts") || CommandLine.arguments.contains("durable-raw") {
        // W2's commits, 5000, for `perf stat` and `perf record`: each a
        // typed put on the 100k people, or (`durable-raw`) W2's core side,
        // the same person's encoded bytes replacing them under its key
        // among the core's own 100k.
        let start: Double
        if CommandLine.arguments.contains("durable-raw") {
            let corePath = BenchPath("profile-core")
            defer { corePath.remove() }
            let core = try CorePeople(corePath.path)
            try core.fill(count: count)
            start = now()
            for index in 0..<5000 {
                try core.store.write { tx in try core.put(BenchPerson.make(Int64(index + 1), version: 4), in: &tx) }
            }
            core.store.close()
        } else {
            let (store, people) = try openLensPeople(path.path)
            start = now()
            for index in 0..<5000 {
                try store.write { tx in try tx[people].put(BenchPerson.make(Int64(index + 1), version: 4)) }
            }
            store.close()
        }
        print(String(format: "µs per durable commit: %.1f", (now() - start) / 5000 * 1e6))
        return
    }
    if CommandLine.arguments.contains("commits") {
        let (store, people) = try openLensPeople(path.path)
        for round in 0..<3 {
            var start = now()
            for index in 0..<1000 { try store.write { tx in tx.put([UInt8(index % 256)], for: [1, UInt8(round)], in: "raw") } }
            let raw = 1000 / (now() - start)
            start = now()
            for index in 0..<1000 { try people.put(BenchPerson.make(Int64(index + 1), version: round + 1)) }
            let puts = 1000 / (now() - start)
            start = now()
            for index in 0..<10000 { try store.write(durability: Durability.none) { tx in try tx[people].put(BenchPerson.make(Int64(index + 1), version: round + 7)) } }
            let cpu = (now() - start) / 10000 * 1e6
            start = now()
            for index in 0..<10000 { try store.write(durability: Durability.none) { tx in tx.put([UInt8(index % 256)], for: [2, UInt8(round)], in: "raw") } }
            let rawCPU = (now() - start) / 10000 * 1e6
            print(String(format: "raw commits/s %.0f, table puts/s %.0f; µs per put without sync: table %.1f, raw %.1f", raw, puts, cpu, rawCPU))
        }
        store.close()
        return
    }
    if CommandLine.arguments.contains("queries") {
        let (store, people) = try openLensPeople(path.path)
        var found = 0
        let queryStart = now()
        let queries = environmentInt("LENSDB_PROFILE_QUERIES", default: 20000)
        // LENSDB_PROFILE_OFFSET pages deeper than W5's 40.
        let offset = environmentInt("LENSDB_PROFILE_OFFSET", default: 40)
        for count in 0..<queries {
            let age = 18 + count % 57, city = "City \(count % 100)"
            let ages: Filter<BenchPerson> = \.age >= age && \.age <= age + 5
            let filter: Filter<BenchPerson> = ages && \.city == city
            found += try people.query.filter(filter).sorted(by: \.score, .descending).offset(offset).limit(20).all().count
        }
        print(String(format: "%d queries: %.3f s (%d)", queries, now() - queryStart, found))
        store.close()
        return
    }
    if CommandLine.arguments.contains("counts") {
        // Broad results (about 5,000 people each) counted and listed by
        // identifier, against copying the same people out: in turns.
        let (store, people) = try openLensPeople(path.path)
        for _ in 0..<3 {
            var times: [String: Double] = [:], found = 0
            for way in ["all", "count", "ids"] {
                let start = now()
                for round in 0..<200 {
                    let query = people.query.filter(\.age >= 18 + round % 57 && \.age <= 20 + round % 57)
                    switch way {
                    case "all": found &+= try query.all().count
                    case "count": found &+= try query.count()
                    default: found &+= try query.ids().count
                    }
                }
                times[way] = now() - start
            }
            print(String(format: "200 queries: all().count %.3f s, count() %.3f s, ids() %.3f s (%d)",
                         times["all"]!, times["count"]!, times["ids"]!, found))
        }
        store.close()
        return
    }
    if CommandLine.arguments.contains("scans") {
        // A filter no index serves: every query reads every row.
        let (store, people) = try openLensPeople(path.path)
        let start = now()
        var found = 0
        for count in 0..<50 { found += try people.query.filter(\.name == "Person \(count * 997 + 1)").all().count }
        print(String(format: "50 scans: %.3f s (%d)", now() - start, found))
        store.close()
        return
    }
    if CommandLine.arguments.contains("reads") {
        let (store, people) = try openLensPeople(path.path)
        var random = SystemRandomNumberGenerator()
        let ids = (0..<100_000).map { _ in Int64.random(in: 1...Int64(count), using: &random) }
        let start = now()
        var ages = 0
        for _ in 0..<20 {
            let version = people.snapshot()
            for id in ids { ages &+= version[id]!.age }
        }
        print(String(format: "2M reads: %.3f s (%d)", now() - start, ages))
        var found = 0
        let queryStart = now()
        for count in 0..<2000 {
            let age = 18 + count % 57, city = "City \(count % 100)"
            let ages: Filter<BenchPerson> = \.age >= age && \.age <= age + 5
            let filter: Filter<BenchPerson> = ages && \.city == city
            found += try people.query.filter(filter).sorted(by: \.score, .descending).offset(40).limit(20).all().count
        }
        print(String(format: "2000 queries: %.3f s (%d)", now() - queryStart, found))
        print(people.query.filter(\.age >= 30 && \.age <= 35 && \.city == "City 3").sorted(by: \.score, .descending).offset(40).limit(20).explain())
        store.close()
        return
    }
    for _ in 0..<5 {
        var start = now()
        let bare = try Store(at: path.path, options: benchmarkOptions())
        let bareCount = try bare.table(BenchPerson.self, named: "people").count
        precondition(bareCount == count)
        print(String(format: "open without indexes: %.3f s", now() - start))
        bare.close()
        start = now()
        let (store, people) = try openLensPeople(path.path)
        let opened = now()
        precondition(people.count == count)
        let table = store.statistics.tables.first { $0.name == "people" }
        print(String(format: "open: %.3f s (store %.3f s), %d of %d indexes in stored order", opened - start, store.openStatistics.seconds,
                     table?.indexesInStoredOrder ?? 0, table?.indexes ?? 0))
        store.close()
    }
}
