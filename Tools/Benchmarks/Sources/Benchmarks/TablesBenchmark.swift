import Dispatch
import Foundation
import GRDB
import LensDB
import LensLog

/// W1–W7 of the tables issue: LensDB's typed tables, LensDB's byte-level
/// core (the same people encoded with the value format, put by key: the
/// floor the typed layer is measured against) and GRDB (SQLite, WAL,
/// synchronous=FULL) on the same people, the same indexes, taking turns
/// within one run. Every ratio is per round, median (min–max).
let tablesWorkload = Workload(
    name: "tables",
    summary: "LensDB tables and its byte-level core vs GRDB on 100k people: W1–W7 and disk, contenders taking turns"
) {
    var rows: [[String]] = []
    rows.append(try w1Inserts())
    let lensPath = BenchPath("tables-lens"), corePath = BenchPath("tables-core"), grdbPath = BenchPath("tables-grdb")
    defer { lensPath.remove(); corePath.remove(); grdbPath.remove() }
    let (store, people) = try openLensPeople(lensPath.path)
    let core = try CorePeople(corePath.path)
    let pool = try openGRDBPeople(grdbPath.path, create: true)
    try fillBoth(lens: people, store: store, grdb: pool, count: 100_000)
    try core.fill(count: 100_000)
    let changes = ChangedPeople()
    rows.append(contentsOf: try w2SingleCommits(people, core, pool, changes))
    rows.append(contentsOf: try w3ConcurrentCommits(people, core, pool))
    rows.append(try commitCPU(store, people, core, changes))
    rows.append(try w4PointReads(people, core, pool, count: 100_000))
    rows.append(try w5Query(people, pool, count: 100_000))
    rows.append(contentsOf: try w7Updates(store, people, core, pool))
    // Disk and open: after a compaction and a checkpoint, as a program that
    // has run for a while leaves them.
    try store.compact()
    store.close()
    core.store.close()
    _ = try pool.writeWithoutTransaction { try $0.checkpoint(.truncate) }
    try pool.close()
    let lensBytes = Double(diskBytes(lensPath.path))
    let grdbBytes = Double(["", "-wal", "-shm"].reduce(Int64(0)) { $0 + diskBytes(grdbPath.path + $1) })
    rows.append(contentsOf: try w6Open(lensPath.path, grdbPath.path, count: 100_000))
    rows.append(try w1PeakResident())
    rows.append(["disk after compaction / checkpoint", "\(Int(lensBytes)) bytes", "—", "\(Int(grdbBytes)) bytes",
                 String(format: "%.2f× the bytes", lensBytes / grdbBytes), "", "", "≤ 0.5×"])
    printTable(["workload", "typed", "core", "GRDB", "typed / GRDB", "core / GRDB", "typed / core", "goal"], rows)
}

/// The byte-level core's side: each person encoded with the value format
/// and put under its ordered key, no secondary index, read back by key and
/// decoded. What a program gets from LensDB without typed tables.
struct CorePeople {
    let store: Store
    static let table = "people-bytes"

    init(_ path: String) throws { store = try Store(at: path, options: benchmarkOptions()) }

    func put(_ person: BenchPerson, in tx: inout Transaction) throws {
        tx.put(try ValueEncoder().encode(person), for: OrderedKey.int64(person.id), in: Self.table)
    }

    func put(_ people: [BenchPerson]) throws {
        try store.write { tx in for person in people { try put(person, in: &tx) } }
    }

    func fill(count: Int) throws {
        for batch in stride(from: 1, through: count, by: 10_000) {
            let people = (Int64(batch)...Int64(min(batch + 9_999, count))).map { BenchPerson.make($0) }
            try store.write(durability: .buffered) { tx in for person in people { try put(person, in: &tx) } }
        }
        try store.flush()
    }

    func read(_ id: Int64, in state: StoreState) throws -> BenchPerson {
        try ValueDecoder().decode(BenchPerson.self, from: state.value(in: Self.table, key: OrderedKey.int64(id))!.bytes())
    }
}

/// W1: 100,000 inserts in one durable transaction, each side into a new store.
private func w1Inserts() throws -> [String] {
    let people = (1...100_000).map { BenchPerson.make(Int64($0)) }
    var rates: [[Double]] = [[], [], []]
    for round in 0..<3 {
        for step in 0..<3 {
            let side = (round + step) % 3
            let path = BenchPath("w1-\(side)")
            defer { path.remove() }
            switch side {
            case 0:
                let (store, table) = try openLensPeople(path.path)
                let start = now()
                try table.put(people)
                rates[0].append(Double(people.count) / (now() - start))
                store.close()
            case 1:
                let core = try CorePeople(path.path)
                let start = now()
                try core.put(people)
                rates[1].append(Double(people.count) / (now() - start))
                core.store.close()
            default:
                let pool = try openGRDBPeople(path.path, create: true)
                let start = now()
                try pool.write { db in for person in people { try person.insert(db) } }
                rates[2].append(Double(people.count) / (now() - start))
                try pool.close()
            }
        }
    }
    return row("W1 100k inserts, one durable transaction (rows/s)", rates, goal: "≥ 10×")
}

/// Peak resident memory through W1, each side in a child process of its
/// own: the typed table, the core, GRDB (the process's peak, MiB, with
/// the 100k people to insert, which each side holds alike).
func w1PeakResident() throws -> [String] {
    let peaks = try ["typed", "core", "grdb"].map { try childNumbers(["w1-peak-probe", $0]).first ?? .nan }
    return ["peak RSS through W1 (MiB)", mebi(peaks[0]), mebi(peaks[1]), mebi(peaks[2]),
            String(format: "%.2f× GRDB's", peaks[0] / peaks[2]), String(format: "%.2f×", peaks[1] / peaks[2]), "", "≤ 1.5× GRDB's"]
}

/// The child's side of ``w1PeakResident()``: W1 on `side`, then the peak.
func w1PeakProbe(_ side: String) throws {
    let people = (1...100_000).map { BenchPerson.make(Int64($0)) }
    let path = BenchPath("w1-peak-\(side)")
    defer { path.remove() }
    switch side {
    case "typed":
        let (store, table) = try openLensPeople(path.path)
        try table.put(people)
        store.close()
    case "core":
        let core = try CorePeople(path.path)
        try core.put(people)
        core.store.close()
    default:
        let pool = try openGRDBPeople(path.path, create: true)
        try pool.write { db in for person in people { try person.insert(db) } }
        try pool.close()
    }
    print(peakResidentBytes())
}

/// People for commits of one changed entity each, W2's and the commit
/// CPU row's, one stream for both: every put changes the person it names.
/// A typed put of an entity equal to the stored one changes nothing, which
/// would measure a skipped put against a core put.
final class ChangedPeople {
    private var count = 0

    func next() -> BenchPerson {
        count += 1
        // Each pass over the 100k people gives them a version of its own,
        // from 500: no other workload writes those, and the score (which
        // steps by 17 × version, modulo 1000) differs from every other's.
        return BenchPerson.make(Int64(count % 100_000 + 1), version: 500 + count / 100_000)
    }
}

/// W2: one entity per durable commit, one writer, on the 100k table; and
/// beside it, in the same turns, the sync floor: what a commit costs that
/// does nothing but write 200 bytes (about one person's record) and sync
/// them, into a region written before (``RawLog``). Its rate over GRDB's
/// is the most any design that syncs each commit reaches on this
/// machine's disk.
func w2SingleCommits(_ people: LensDB.Table<BenchPerson>, _ core: CorePeople, _ pool: DatabasePool, _ changes: ChangedPeople) throws -> [[String]] {
    let next = changes.next
    let floorPath = BenchPath("sync-floor")
    defer { floorPath.remove() }
    let floor = try RawLog(path: floorPath.path, region: .written)
    let results = try interleave([
        Contender(name: "typed") { deadline in
            var count = 0
            while now() < deadline {
                try people.put(next())
                count += 1
            }
            return count
        },
        Contender(name: "core") { deadline in
            var count = 0
            while now() < deadline {
                let person = next()
                try core.store.write { tx in try core.put(person, in: &tx) }
                count += 1
            }
            return count
        },
        Contender(name: "sync floor") { try floor.run(200, until: $0) },
        Contender(name: "GRDB") { deadline in
            var count = 0
            while now() < deadline {
                let person = next()
                try pool.write { db in try person.update(db) }
                count += 1
            }
            return count
        },
    ], rounds: 6, window: 0.4)
    let grdb = results.operations.count - 1
    let floorOverGRDB = timesSpread(results.roundRatios(2) { results.roundRates[grdb][$0] })
    return [row("W2 single-entity durable commits, 1 writer (commits/s)", results, goal: "≥ 2× (≥ 95% of the core)"),
            ["W2's sync floor: 200 bytes written and synced, nothing else (syncs/s)", format(results.rate(2)), "—",
             format(results.rate(grdb)), floorOverGRDB, "", "", "the most W2 can reach"]]
}

/// Commit CPU: one entity per commit with no sync (`Durability.none`),
/// typed against the core, which encodes the same person and puts its
/// bytes: what a typed put costs beyond the core's, with every index
/// updated. GRDB has no commit without a sync; it is left out.
func commitCPU(_ store: Store, _ people: LensDB.Table<BenchPerson>, _ core: CorePeople, _ changes: ChangedPeople) throws -> [String] {
    let next = changes.next
    let results = try interleave([
        Contender(name: "typed") { deadline in
            var count = 0
            while now() < deadline {
                let person = next()
                try store.write(durability: Durability.none) { tx in try tx[people].put(person) }
                count += 1
            }
            return count
        },
        Contender(name: "core") { deadline in
            var count = 0
            while now() < deadline {
                let person = next()
                try core.store.write(durability: Durability.none) { tx in try core.put(person, in: &tx) }
                count += 1
            }
            return count
        },
    ], rounds: 6, window: 0.3)
    let typed = results.rate(0), bytes = results.rate(1)
    let ratios = results.roundRatios(1) { results.roundRates[0][$0] }
    return ["commit CPU: one put per commit, no sync (commits/s)", format(typed), format(bytes), "—", "", "",
            String(format: "typed costs %.2f× the core; per round ", bytes / typed) + timesSpread(ratios), "≤ 2×"]
}

/// W3: 8 threads × 250 durable commits; the rate of the whole. Beside it,
/// in the same turns, W3's sync floor: 250 syncs of 8 records at once
/// (``RawLog`` writing 1,600 bytes a sync). Each of the 8 threads waits
/// for its commit to be durable before it makes the next, so at most 8
/// commits are in flight, and each waits at least one sync: by Little's
/// law no design that syncs each commit passes 8 commits a sync time,
/// this row's rate, unless syncs that overlap each finish sooner than one
/// alone (on this machine's disk they take longer). Four rounds, so that
/// each contender takes each place in the turns once.
private func w3ConcurrentCommits(_ people: LensDB.Table<BenchPerson>, _ core: CorePeople, _ pool: DatabasePool) throws -> [[String]] {
    let floorPath = BenchPath("sync-floor-w3")
    defer { floorPath.remove() }
    let floor = try RawLog(path: floorPath.path, region: .written)
    // typed, core, GRDB, then the floor.
    var rates: [[Double]] = [[], [], [], []]
    let failures = Locked(0)
    for round in 0..<4 {
        for step in 0..<4 {
            let side = (round + step) % 4
            let start = now()
            if side == 3 {
                for _ in 0..<250 { try floor.commit(8 * 200) }
                rates[side].append(2000 / (now() - start))
                continue
            }
            runThreads(8) { thread in
                for commit in 0..<250 {
                    let person = BenchPerson.make(Int64(thread * 1000 + commit + 1), version: round * 10 + side + 1)
                    do {
                        switch side {
                        case 0: try people.put(person)
                        case 1: try core.store.write { tx in try core.put(person, in: &tx) }
                        default: try pool.write { db in try person.update(db) }
                        }
                    } catch {
                        failures.withLock { $0 += 1 }
                    }
                }
            }
            rates[side].append(2000 / (now() - start))
        }
    }
    precondition(failures.withLock { $0 } == 0, "W3: commits failed")
    return [row("W3 8 threads × 250 durable commits (commits/s)", Array(rates[0..<3]), goal: "≥ 10×"),
            ["W3's sync floor: 8 commits a sync, 1,600 bytes written and synced, nothing else (commits/s)",
             format(median(rates[3])), "—", format(median(rates[2])),
             timesSpread(zip(rates[3], rates[2]).map { $0 / $1 }), "", "", "the most W3 can reach"]]
}

/// W4: 100,000 random point reads by id returning a person.
private func w4PointReads(_ people: LensDB.Table<BenchPerson>, _ core: CorePeople, _ pool: DatabasePool, count: Int) throws -> [String] {
    var random = SystemRandomNumberGenerator()
    let ids = (0..<100_000).map { _ in Int64.random(in: 1...Int64(count), using: &random) }
    var contenders = pointReadContenders(people, pool, ids)
    contenders.insert(Contender(name: "core") { deadline in
        var count = 0, ages = 0
        repeat {
            let state = core.store.current
            for id in ids { ages &+= try core.read(id, in: state).age }
            count += ids.count
        } while now() < deadline
        precondition(ages != 0)
        return count
    }, at: 1)
    let results = try interleave(contenders, rounds: 6, window: 0.4)
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
    return row("W5 age range && city, by score desc, offset 40 limit 20 (queries/s)", results, core: nil, goal: "≥ 100×")
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

/// W7: 10,000 random updates in one durable transaction. Each turn starts
/// once the process is quiet (``settle(limit:)``): a LensDB commit this
/// large frees the version it replaced on a utility thread after it
/// returns, and that work would otherwise run on one of the 2 cores inside
/// the next contender's turn. The second row is that background work, the
/// CPU used from the commit's return until the process is quiet again.
private func w7Updates(_ store: Store, _ people: LensDB.Table<BenchPerson>, _ core: CorePeople, _ pool: DatabasePool) throws -> [[String]] {
    var rates: [[Double]] = [[], [], []]
    var after: [[Double]] = [[], [], []]
    var random = SystemRandomNumberGenerator()
    // Quiet before the first turn; each turn ends quiet for the next.
    settle()
    for round in 1...3 {
        let updates = (0..<10_000).map { _ in BenchPerson.make(Int64.random(in: 1...100_000, using: &random), version: 100 + round) }
        for step in 0..<3 {
            let side = (round + step) % 3
            let start = now()
            switch side {
            case 0: try store.write { tx in try tx[people].put(updates) }
            case 1: try core.put(updates)
            default: try pool.write { db in for person in updates { try person.update(db) } }
            }
            rates[side].append(Double(updates.count) / (now() - start))
            after[side].append(settle())
        }
    }
    let milliseconds = { (side: Int) in String(format: "%.1f ms", median(after[side]) * 1000) }
    return [row("W7 10k random updates, one transaction, each turn started with the process quiet (rows/s)", rates, goal: "≥ 10×"),
            ["W7's background work: CPU used from the commit's return until the process is quiet (median)",
             milliseconds(0), milliseconds(1), milliseconds(2), "", "", "", ""]]
}

/// W6: open until every person is ready; the two alternate, 5 opens each.
/// Beside them, in the same turns, W6's decode floor: the people decoded
/// from their value-format bytes with the public `ValueDecoder`, a run per
/// core, and nothing else. An open decodes every row (a table opened with
/// `.fail` opens only when every row decodes, and each entity's
/// `init(from:)` is its own code), so GRDB's time over the floor's is the
/// most W6 can reach.
func w6Open(_ lensPath: String, _ grdbPath: String, count: Int) throws -> [[String]] {
    let encoded = try (1...count).map { try ValueEncoder().encode(BenchPerson.make(Int64($0))) }
    var floor: [Double] = []
    let (lens, grdb) = try openTimes(lensPath, grdbPath, count: count, repetitions: 5) {
        let start = now()
        let decoded = decodeOnEveryCore(encoded)
        floor.append(now() - start)
        precondition(decoded.reduce(0) { $0 + $1.count } == count, "W6's floor: people lost")
    }
    return [["W6 open 100k until every person is ready (seconds, median)", String(format: "%.3f s", median(lens)), "—",
             String(format: "%.3f s", median(grdb)), timesSpread(zip(grdb, lens).map { $0 / $1 }), "", "", "≥ 5×"],
            ["W6's decode floor: the 100k people decoded from their bytes on every core, nothing else (seconds, median)",
             String(format: "%.3f s", median(floor)), "—", String(format: "%.3f s", median(grdb)),
             timesSpread(zip(grdb, floor).map { $0 / $1 }), "", "", "the most W6 can reach"]]
}

/// Decodes `encoded`, people in the value format, cut into runs and spread
/// over the cores as an open cuts and spreads a table's entries
/// (`Parallel`); returns the runs' people, which the caller frees after it
/// stops its clock, as an open keeps its rows.
private func decodeOnEveryCore(_ encoded: [[UInt8]]) -> [[BenchPerson]] {
    let runs = Parallel.runs(of: encoded.count, smallest: Parallel.itemsPerThread)
    return Parallel.map(runs.count) { run in
        let decoder = ValueDecoder()
        return runs[run].map { try! decoder.decode(BenchPerson.self, from: encoded[$0]) }
    }
}

/// Open times of both sides, alternating, with `between` run after each
/// pair of opens.
func openTimes(
    _ lensPath: String, _ grdbPath: String, count: Int, repetitions: Int, between: () throws -> Void = {}
) throws -> ([Double], [Double]) {
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
        try between()
    }
    return (lens, grdb)
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

/// A table row from interleaved rates: typed is contender 0, then the core
/// (when there is one), then GRDB.
private func row(_ name: String, _ results: RoundResults, core: Int? = 1, goal: String) -> [String] {
    let grdb = results.operations.count - 1
    let perRound = { (index: Int, over: Int) in timesSpread(results.roundRatios(index) { results.roundRates[over][$0] }) }
    return [name, format(results.rate(0)), core.map { format(results.rate($0)) } ?? "—", format(results.rate(grdb)),
            perRound(0, grdb), core.map { perRound($0, grdb) } ?? "—", core.map { perRound(0, $0) } ?? "—", goal]
}

/// A table row from per-round rates of typed, core and GRDB.
private func row(_ name: String, _ rates: [[Double]], goal: String) -> [String] {
    let ratios = { (a: Int, b: Int) in timesSpread(zip(rates[a], rates[b]).map { $0 / $1 }) }
    return [name, format(median(rates[0])), format(median(rates[1])), format(median(rates[2])),
            ratios(0, 2), ratios(1, 2), ratios(0, 1), goal]
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
