import Foundation
import GRDB
import LensDB

/// A migration that rewrites every row of 100k people, the sides taking
/// turns on fresh copies of the same data, 5 rounds: every score doubled.
/// LensDB runs it as `changeField` logged in batches of the default
/// `maximumBatchBytes`, and again as one record (the limit raised to 64 MiB);
/// GRDB runs `UPDATE person SET score = score * 2` in a `DatabaseMigrator`
/// migration. Ratios are per round, of rows per second.
let migrationWorkload = Workload(
    name: "migration",
    summary: "a migration rewriting 100k rows: LensDB in batches and in one record vs GRDB, taking turns"
) {
    let template = BenchPath("migration-template"), grdbTemplate = BenchPath("migration-template-grdb")
    defer { template.remove(); grdbTemplate.remove() }
    do {
        let (store, people) = try openLensPeople(template.path)
        let pool = try openGRDBPeople(grdbTemplate.path, create: true)
        try fillBoth(lens: people, store: store, grdb: pool, count: 100_000)
        try store.compact()
        store.close()
        _ = try pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        try pool.close()
    }
    let sides = ["batched", "one record", "GRDB"]
    var rates: [[Double]] = [[], [], []]
    var records: [UInt64] = [0, 0]
    for round in 0..<5 {
        for step in sides.indices {
            let side = (round + step) % sides.count
            let copy = BenchPath("migration-\(side)")
            defer { copy.remove() }
            if side == 2 {
                try FileManager.default.copyItem(atPath: grdbTemplate.path, toPath: copy.path)
                let pool = try openGRDBPeople(copy.path, create: false)
                var migrator = DatabaseMigrator()
                migrator.registerMigration("double-score") { db in try db.execute(sql: "UPDATE person SET score = score * 2") }
                let start = now()
                try migrator.migrate(pool)
                rates[side].append(100_000 / (now() - start))
                try pool.close()
            } else {
                try FileManager.default.copyItem(atPath: template.path, toPath: copy.path)
                let store = try Store(at: copy.path, options: benchmarkOptions())
                var migrator = Migrator()
                if side == 1 { migrator.maximumBatchBytes = 64 << 20 }
                migrator.registerMigration("double-score") { migration in
                    try migration.changeField("score", inTable: "people") { value in
                        guard case let .double(score) = value else { return value }
                        return .double(score * 2)
                    }
                }
                let before = store.current.lsn
                let start = now()
                try migrator.migrate(store)
                rates[side].append(100_000 / (now() - start))
                records[side] = store.current.lsn - before
                store.close()
            }
        }
    }
    let ratio = { (side: Int, over: Int) in timesSpread(zip(rates[side], rates[over]).map { $0 / $1 }) }
    printTable(["workload", "batched", "one record", "GRDB", "batched / GRDB", "batched / one record", "records logged"], [[
        "rewrite 100k rows in a migration (rows/s)", format(median(rates[0])), format(median(rates[1])), format(median(rates[2])),
        ratio(0, 2), ratio(0, 1), "\(records[0]) / \(records[1])",
    ]])
}
