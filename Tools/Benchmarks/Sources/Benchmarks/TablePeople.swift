import Foundation
import GRDB
import LensDB

/// The person both sides store: same fields, same data, same indexes.
struct BenchPerson: Entity, Equatable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "person"
    var id: Int64
    var name: String
    var email: String
    var city: String
    var age: Int
    var score: Double

    /// Person `id` of a deterministic population: 100 cities, ages 18…80.
    static func make(_ id: Int64, version: Int = 0) -> BenchPerson {
        BenchPerson(id: id, name: "Person \(id)", email: "person\(id)@example.com", city: "City \(id % 100)",
                    age: 18 + Int((id &* 7) % 63), score: Double((id &* 31 &+ Int64(version) &* 17) % 1000) / 10)
    }
}

/// Both sides index the same fields: each one alone, city then age then
/// score (W5's filter, then its order within each age), and city then
/// score (an order within a city).
let lensIndexes: [LensDB.Index<BenchPerson>] = [.on(\.city), .on(\.age), .on(\.score), .on(\.city, \.age, \.score), .on(\.city, \.score)]
let grdbIndexes: [[String]] = [["city"], ["age"], ["score"], ["city", "age", "score"], ["city", "score"]]

/// A fresh LensDB store with the people table, `.full` durability.
func openLensPeople(_ path: String) throws -> (Store, LensDB.Table<BenchPerson>) {
    let store = try Store(at: path, options: benchmarkOptions())
    return (store, try store.table(BenchPerson.self, named: "people", indexes: lensIndexes))
}

/// A fresh GRDB pool: WAL (DatabasePool's mode) and `synchronous=FULL`.
func openGRDBPeople(_ path: String, create: Bool) throws -> DatabasePool {
    var configuration = Configuration()
    configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
    let pool = try DatabasePool(path: path, configuration: configuration)
    if create {
        try pool.write { db in
            try db.create(table: "person") { table in
                table.primaryKey("id", .integer)
                table.column("name", .text).notNull()
                table.column("email", .text).notNull()
                table.column("city", .text).notNull()
                table.column("age", .integer).notNull()
                table.column("score", .double).notNull()
            }
            for columns in grdbIndexes {
                try db.create(index: "person_" + columns.joined(separator: "_"), on: "person", columns: columns)
            }
        }
    }
    return pool
}

/// `count` people on both sides, written in batches.
func fillBoth(lens: LensDB.Table<BenchPerson>, store: Store, grdb: DatabasePool, count: Int) throws {
    for batch in stride(from: 1, through: count, by: 10_000) {
        let people = (Int64(batch)...Int64(min(batch + 9_999, count))).map { BenchPerson.make($0) }
        try store.write(durability: .buffered) { tx in try tx[lens].put(people) }
        try grdb.write { db in for person in people { try person.insert(db) } }
    }
    try store.flush()
}

/// A temporary path that is removed (with GRDB's -wal and -shm) on `remove()`.
struct BenchPath {
    let path: String
    init(_ label: String) { path = NSTemporaryDirectory() + "lensdb-bench-\(label)-\(getpid())-\(UUID().uuidString.prefix(8))" }
    func remove() {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

/// Bytes of a file or of everything under a directory.
func diskBytes(_ path: String) -> Int64 {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return 0 }
    guard isDirectory.boolValue else { return ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0 }
    return ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).reduce(0) { $0 + diskBytes(path + "/" + $1) }
}

/// "a× (b–c×)" of per-round ratios.
func ratioCell(_ ratios: [Double]) -> String { timesSpread(ratios) }
