import Dispatch
import Foundation
import GRDB
import LensDB
import LensLog

/// W1–W7 of the tables issue: LensDB and GRDB (SQLite, WAL, synchronous=FULL)
/// on the same people, the same indexes, taking turns within one run.
let tablesWorkload = Workload(
    name: "tables",
    summary: "LensDB tables vs GRDB on 100k people: W1–W7 and disk, contenders taking turns"
) {
    var rows: [[String]] = []
    rows.append(try w1Inserts())
    let lensPath = BenchPath("tables-lens"), grdbPath = BenchPath("tables-grdb")
    defer { lensPath.remove(); grdbPath.remove() }
    let (store, people) = try openLensPeople(lensPath.path)
    let pool = try openGRDBPeople(grdbPath.path, create: true)
    try fillBoth(lens: people, store: store, grdb: pool, count: 100_000)
    rows.append(try w2SingleCommits(people, pool))
    rows.append(try w3ConcurrentCommits(people, pool))
    rows.append(try w4PointReads(people, pool, count: 100_000))
    rows.append(try w5Query(people, pool, count: 100_000))
    rows.append(try w7Updates(store, people, pool))
    // Disk and open: after a compaction and a checkpoint, as a program that
    // has run for a while leaves them.
    try store.compact()
    store.close()
    try pool.writeWithoutTransaction { try $0.checkpoint(.truncate) }
    try pool.close()
    let lensBytes = Double(diskBytes(lensPath.path))
    let grdbBytes = Double(["", "-wal", "-shm"].reduce(Int64(0)) { $0 + diskBytes(grdbPath.path + $1) })
    rows.append(try w6Open(lensPath.path, grdbPath.path, count: 100_000))
    rows.append(["disk after compaction / checkpoint", "\(Int(lensBytes)) bytes", "\(Int(grdbBytes)) bytes",
                 String(format: "%.2f× the bytes", lensBytes / grdbBytes), "≤ 0.5×"])
    printTable(["workload", "LensDB", "GRDB", "LensDB vs GRDB (per round: median (min–max))", "goal"], rows)
}

/// W1: 100,000 inserts in one durable transaction, each side into a new store.
private func w1Inserts() throws -> [String] {
    let people = (1...100_000).map { BenchPerson.make(Int64($0)) }
    var lensRates: [Double] = [], grdbRates: [Double] = []
    for _ in 0..<3 {
        let lensPath = BenchPath("w1-lens"), grdbPath = BenchPath("w1-grdb")
        defer { lensPath.remove(); grdbPath.remove() }
        let (store, table) = try openLensPeople(lensPath.path)
        var start = now()
        try table.put(people)
        lensRates.append(Double(people.count) / (now() - start))
        store.close()
        let pool = try openGRDBPeople(grdbPath.path, create: true)
        start = now()
        try pool.write { db in for person in people { try person.insert(db) } }
        grdbRates.append(Double(people.count) / (now() - start))
        try pool.close()
    }
    return row("W1 100k inserts, one durable transaction (rows/s)", lensRates, grdbRates, goal: "≥ 10×")
}

/// W2: one entity per durable commit, one writer, on the 100k table.
private func w2SingleCommits(_ people: LensDB.Table<BenchPerson>, _ pool: DatabasePool) throws -> [String] {
    var version = 0
    let results = try interleave([
        Contender(name: "LensDB") { deadline in
            var count = 0
            while now() < deadline {
                version += 1
                try people.put(BenchPerson.make(Int64(version % 100_000 + 1), version: version))
                count += 1
            }
            return count
        },
        Contender(name: "GRDB") { deadline in
            var count = 0
            while now() < deadline {
                version += 1
                let person = BenchPerson.make(Int64(version % 100_000 + 1), version: version)
                try pool.write { db in try person.update(db) }
                count += 1
            }
            return count
        },
    ], rounds: 6, window: 0.4)
    return row("W2 single-entity durable commits, 1 writer (commits/s)", results, goal: "≥ 2×")
}

/// W3: 8 threads × 250 durable commits; the rate of the whole.
private func w3ConcurrentCommits(_ people: LensDB.Table<BenchPerson>, _ pool: DatabasePool) throws -> [String] {
    var lensRates: [Double] = [], grdbRates: [Double] = []
    let failures = Locked(0)
    for round in 0..<3 {
        for lens in [round % 2 == 0, round % 2 != 0] {
            let start = now()
            runThreads(8) { thread in
                for commit in 0..<250 {
                    let person = BenchPerson.make(Int64(thread * 1000 + commit + 1), version: round * 10 + (lens ? 1 : 2))
                    do {
                        if lens { try people.put(person) } else { try pool.write { db in try person.update(db) } }
                    } catch {
                        failures.withLock { $0 += 1 }
                    }
                }
            }
            let rate = 2000 / (now() - start)
            if lens { lensRates.append(rate) } else { grdbRates.append(rate) }
        }
    }
    precondition(failures.withLock { $0 } == 0, "W3: commits failed")
    return row("W3 8 threads × 250 durable commits (commits/s)", lensRates, grdbRates, goal: "≥ 10×")
}

/// W4: 100,000 random point reads by id returning a person.
private func w4PointReads(_ people: LensDB.Table<BenchPerson>, _ pool: DatabasePool, count: Int) throws -> [String] {
    var random = SystemRandomNumberGenerator()
    let ids = (0..<100_000).map { _ in Int64.random(in: 1...Int64(count), using: &random) }
    let results = try interleave(pointReadContenders(people, pool, ids), rounds: 6, window: 0.4)
    return row("W4 100k random point reads by id (reads/s)", results, goal: "≥ 50×")
}

func pointReadContenders(_ people: LensDB.Table<BenchPerson>, _ pool: DatabasePool, _ ids: [Int64]) -> [Contender] {
    [
        Contender(name: "LensDB") { deadline in
            var count = 0, ages = 0
            repeat {
                // One version for the batch, as GRDB reads in one transaction.
                let version = people.snapshot()
                for id in ids { ages &+= version[id]!.age }
                count += ids.count
            } while now() < deadline
            precondition(ages != 0)
            return count
        },
        Contender(name: "GRDB") { deadline in
            var count = 0, ages = 0
            repeat {
                try pool.read { db in
                    let statement = try db.cachedStatement(sql: "SELECT * FROM person WHERE id = ?")
                    for id in ids { ages &+= try BenchPerson.fetchOne(statement, arguments: [id])!.age }
                }
                count += ids.count
            } while now() < deadline
            precondition(ages != 0)
            return count
        },
    ]
}

/// W5: `age in a...a+5 && city == c`, by score descending, offset 40, limit 20.
private func w5Query(_ people: LensDB.Table<BenchPerson>, _ pool: DatabasePool, count: Int) throws -> [String] {
    let results = try interleave(queryContenders(people, pool), rounds: 6, window: 0.4)
    return row("W5 age range && city, by score desc, offset 40 limit 20 (queries/s)", results, goal: "≥ 100×")
}

func queryContenders(_ people: LensDB.Table<BenchPerson>, _ pool: DatabasePool) -> [Contender] {
    let sql = "SELECT * FROM person WHERE age BETWEEN ? AND ? AND city = ? ORDER BY score DESC, id LIMIT 20 OFFSET 40"
    return [
        Contender(name: "LensDB") { deadline in
            var count = 0, found = 0
            repeat {
                let age = 18 + count % 57, city = "City \(count % 100)"
                let ages: Filter<BenchPerson> = \.age >= age && \.age <= age + 5
                let filter: Filter<BenchPerson> = ages && \.city == city
                found += try people.query.filter(filter).sorted(by: \.score, .descending).offset(40).limit(20).all().count
                count += 1
            } while now() < deadline
            precondition(found >= 0)
            return count
        },
        Contender(name: "GRDB") { deadline in
            var count = 0, found = 0
            repeat {
                let age = 18 + count % 57, city = "City \(count % 100)"
                found += try pool.read { db in
                    try BenchPerson.fetchAll(db.cachedStatement(sql: sql), arguments: [age, age + 5, city]).count
                }
                count += 1
            } while now() < deadline
            precondition(found >= 0)
            return count
        },
    ]
}

/// W7: 10,000 random updates in one durable transaction.
private func w7Updates(_ store: Store, _ people: LensDB.Table<BenchPerson>, _ pool: DatabasePool) throws -> [String] {
    var lensRates: [Double] = [], grdbRates: [Double] = []
    var random = SystemRandomNumberGenerator()
    for round in 1...3 {
        let updates = (0..<10_000).map { _ in BenchPerson.make(Int64.random(in: 1...100_000, using: &random), version: 100 + round) }
        var start = now()
        try store.write { tx in try tx[people].put(updates) }
        lensRates.append(Double(updates.count) / (now() - start))
        start = now()
        try pool.write { db in for person in updates { try person.update(db) } }
        grdbRates.append(Double(updates.count) / (now() - start))
    }
    return row("W7 10k random updates, one transaction (rows/s)", lensRates, grdbRates, goal: "≥ 10×")
}

/// W6: open until every person is ready; the two alternate, 5 opens each.
func w6Open(_ lensPath: String, _ grdbPath: String, count: Int) throws -> [String] {
    let (lens, grdb) = try openTimes(lensPath, grdbPath, count: count, repetitions: 5)
    return ["W6 open 100k until every person is ready (seconds, median)", String(format: "%.3f s", median(lens)),
            String(format: "%.3f s", median(grdb)), String(format: "%.2f× faster", median(grdb) / median(lens)), "≥ 5×"]
}

/// Open times of both sides, alternating.
func openTimes(_ lensPath: String, _ grdbPath: String, count: Int, repetitions: Int) throws -> ([Double], [Double]) {
    var lens: [Double] = [], grdb: [Double] = []
    for _ in 0..<repetitions {
        var start = now()
        let (store, people) = try openLensPeople(lensPath)
        precondition(people.count == count)
        lens.append(now() - start)
        store.close()
        start = now()
        let pool = try openGRDBPeople(grdbPath, create: false)
        let all = try pool.read { try BenchPerson.fetchAll($0) }
        precondition(all.count == count)
        grdb.append(now() - start)
        try pool.close()
    }
    return (lens, grdb)
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

/// A table row from interleaved rates: LensDB is contender 0, GRDB 1.
private func row(_ name: String, _ results: RoundResults, goal: String) -> [String] {
    [name, format(results.rate(0)), format(results.rate(1)),
     String(format: "%.1f× ", results.rate(0) / results.rate(1)) + "(\(timesSpread(results.roundRatios(0) { results.roundRates[1][$0] })))", goal]
}

private func row(_ name: String, _ lens: [Double], _ grdb: [Double], goal: String) -> [String] {
    let ratios = zip(lens, grdb).map { $0 / $1 }
    return [name, format(median(lens)), format(median(grdb)), String(format: "%.1f× ", median(ratios)) + "(\(timesSpread(ratios)))", goal]
}

/// Runs `body` on `count` threads at once.
func runThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread { body(index); group.leave() }.start()
    }
    group.wait()
}
