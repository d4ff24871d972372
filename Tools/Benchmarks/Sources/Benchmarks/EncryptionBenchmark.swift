import Foundation
import LensDB

/// Encryption at rest against the same store plain, taking turns in one
/// run: W1 (100k inserts in one durable transaction), W2 (single-entity
/// durable commits on a 100k table) and W6 (open 100k until every person is
/// ready), typed tables as a program uses them. Every ratio is per round,
/// encrypted over plain, median (min–max). Goal: encrypted at most 15%
/// slower on each.
let encryptionWorkload = Workload(
    name: "encryption",
    summary: "W1/W2/W6 on an encrypted store vs the same store plain (AES-256-GCM), taking turns"
) {
    let key = EncryptionKey.random()
    var rows: [[String]] = []
    rows.append(try encryptedW1(key))
    let plainPath = BenchPath("enc-plain"), sealedPath = BenchPath("enc-sealed")
    defer { plainPath.remove(); sealedPath.remove() }
    let (plainStore, plain) = try openPeople(plainPath.path, key: nil)
    let (sealedStore, sealed) = try openPeople(sealedPath.path, key: key)
    for (store, table) in [(plainStore, plain), (sealedStore, sealed)] {
        for batch in stride(from: 1, through: 100_000, by: 10_000) {
            let people = (Int64(batch)...Int64(batch + 9_999)).map { BenchPerson.make($0) }
            try store.write(durability: .buffered) { tx in try tx[table].put(people) }
        }
        try store.flush()
    }
    rows.append(try encryptedW2(plain, sealed))
    for store in [plainStore, sealedStore] {
        try store.compact()
        store.close()
    }
    rows.append(try encryptedW6(plainPath.path, sealedPath.path, key: key))
    printTable(["workload", "plain", "encrypted", "encrypted / plain", "goal"], rows)
}

/// A store with the people table, `.full` durability, encrypted with `key` when given.
private func openPeople(_ path: String, key: EncryptionKey?) throws -> (Store, LensDB.Table<BenchPerson>) {
    var options = benchmarkOptions()
    options.encryptionKey = key
    let store = try Store(at: path, options: options)
    return (store, try store.table(BenchPerson.self, named: "people", indexes: lensIndexes))
}

/// W1: 100,000 inserts in one durable transaction into a new store; the
/// two sides alternate, 5 rounds.
private func encryptedW1(_ key: EncryptionKey) throws -> [String] {
    let people = (1...100_000).map { BenchPerson.make(Int64($0)) }
    var rates: [[Double]] = [[], []]
    for round in 0..<5 {
        for step in 0..<2 {
            let side = (round + step) % 2
            let path = BenchPath("enc-w1-\(side)")
            defer { path.remove() }
            let (store, table) = try openPeople(path.path, key: side == 0 ? nil : key)
            let start = now()
            try table.put(people)
            rates[side].append(Double(people.count) / (now() - start))
            store.close()
        }
    }
    return ["W1 100k inserts, one durable transaction (rows/s)", format(median(rates[0])), format(median(rates[1])),
            percentSpread(zip(rates[1], rates[0]).map { $0 / $1 }), "≥ 87% (≤ 15% slower)"]
}

/// W2: one entity per durable commit, one writer; the two stores take
/// turns in windows of 0.4 s, 8 rounds.
private func encryptedW2(_ plain: LensDB.Table<BenchPerson>, _ sealed: LensDB.Table<BenchPerson>) throws -> [String] {
    var version = 0
    let commits = { (table: LensDB.Table<BenchPerson>) in
        Contender(name: "") { deadline in
            var count = 0
            while now() < deadline {
                version += 1
                try table.put(BenchPerson.make(Int64(version % 100_000 + 1), version: version))
                count += 1
            }
            return count
        }
    }
    let results = try interleave([commits(plain), commits(sealed)], rounds: 8, window: 0.4)
    return ["W2 single-entity durable commits, 1 writer (commits/s)", format(results.rate(0)), format(results.rate(1)),
            percentSpread(results.roundRatios(1) { results.roundRates[0][$0] }), "≥ 87% (≤ 15% slower)"]
}

/// W6: open 100k until every person is ready, after a compaction; the two
/// alternate, 5 opens each. The ratio is of open times, so lower is better.
private func encryptedW6(_ plainPath: String, _ sealedPath: String, key: EncryptionKey) throws -> [String] {
    var times: [[Double]] = [[], []]
    for round in 0..<10 {
        let side = round % 2
        let start = now()
        let (store, people) = try openPeople(side == 0 ? plainPath : sealedPath, key: side == 0 ? nil : key)
        precondition(people.count == 100_000)
        times[side].append(now() - start)
        store.close()
    }
    return ["W6 open 100k until every person is ready (seconds, median)", String(format: "%.3f s", median(times[0])),
            String(format: "%.3f s", median(times[1])), percentSpread(zip(times[1], times[0]).map { $0 / $1 }),
            "≤ 115% (≤ 15% slower)"]
}
