import LensDB

/// A random migration workload for the crash oracle of migrations
/// (``MigrationCrashCheck``): rows in two tables, then migrations of one or
/// two random steps each, over every kind of step that works on documents.
public struct MigrationWorkload: Sendable {
    /// One step of a migration, as data: it names tables chosen when the
    /// workload was made, which may by then be empty (the step is then a no-op).
    public enum Step: Sendable, CustomStringConvertible {
        case addField(String, Int64, table: String)
        case removeField(String, table: String)
        case renameField(String, to: String, table: String)
        /// Integers become strings, strings integers (0 when they are not one).
        case retypeField(String, table: String)
        /// The rows whose `n` is even.
        case moveEvenRows(from: String, to: String)
        /// Each row's `s` moves into a row of its own in the target.
        case splitField(String, from: String, to: String)
        case renameTable(String, to: String)
        case dropTable(String)

        public var description: String {
            switch self {
            case let .addField(field, value, table): "add \(field)=\(value) to \(table)"
            case let .removeField(field, table): "remove \(field) from \(table)"
            case let .renameField(field, new, table): "rename \(table).\(field) to \(new)"
            case let .retypeField(field, table): "retype \(table).\(field)"
            case let .moveEvenRows(source, target): "move even rows of \(source) to \(target)"
            case let .splitField(field, source, target): "split \(source).\(field) into \(target)"
            case let .renameTable(table, new): "rename table \(table) to \(new)"
            case let .dropTable(table): "drop \(table)"
            }
        }
    }

    public let seed: UInt64
    /// Rows of the tables before any migration: table → (id, document).
    public let rows: [String: [(id: Int64, document: Document)]]
    /// The migrations, in order: each one's steps.
    public let migrations: [[Step]]
    /// The migrator's ``Migrator/maximumBatchBytes``: on half the seeds
    /// small enough that most migrations are logged in several batches.
    public let maximumBatchBytes: Int

    public init(seed: UInt64, migrations count: Int = 5, rowsPerTable: Int = 8) {
        self.seed = seed
        var random = SeededGenerator(seed: seed)
        var rows: [String: [(id: Int64, document: Document)]] = [:]
        for (table, base) in [("a", Int64(0)), ("b", 1000)] {
            rows[table] = (1...Int64(rowsPerTable)).map { id in
                let document: Document = ["n": .int(Int64.random(in: 0...9, using: &random)), "s": .string("s\(id)"), "flag": .bool(Bool.random(using: &random))]
                return (base + id, document)
            }
        }
        self.rows = rows
        var tables = ["a", "b"]
        var fresh = 0
        migrations = (0..<count).map { _ in
            (0..<Int.random(in: 1...2, using: &random)).map { _ in Self.step(&tables, &fresh, &random) }
        }
        maximumBatchBytes = Bool.random(using: &random) ? Int.random(in: 60...400, using: &random) : Migrator().maximumBatchBytes
    }

    /// A random step over `tables`, which it updates as tables appear and go.
    private static func step(_ tables: inout [String], _ fresh: inout Int, _ random: inout SeededGenerator) -> Step {
        let table = tables.randomElement(using: &random) ?? "a"
        let field = ["n", "s", "flag", "x"].randomElement(using: &random)!
        func newTable() -> String {
            fresh += 1
            tables.append("t\(fresh)")
            return "t\(fresh)"
        }
        switch Int.random(in: 0..<8, using: &random) {
        case 0: return .addField(field, Int64.random(in: 0...9, using: &random), table: table)
        case 1: return .removeField(field, table: table)
        case 2: return .renameField(field, to: ["n", "s", "y"].randomElement(using: &random)!, table: table)
        case 3: return .retypeField(field, table: table)
        case 4: return .moveEvenRows(from: table, to: newTable())
        case 5: return .splitField(field, from: table, to: newTable())
        case 6:
            tables.removeAll { $0 == table }
            return .renameTable(table, to: newTable())
        default:
            tables.removeAll { $0 == table }
            return .dropTable(table)
        }
    }

    /// The migrator of the first `count` migrations (all by default),
    /// named `m0`, `m1`, …: an earlier release when `count` is smaller.
    public func migrator(first count: Int? = nil) -> Migrator {
        var migrator = Migrator()
        migrator.maximumBatchBytes = maximumBatchBytes
        for (index, steps) in migrations.prefix(count ?? migrations.count).enumerated() {
            migrator.registerMigration("m\(index)") { migration in
                for step in steps { try Self.apply(step, to: &migration) }
            }
        }
        return migrator
    }

    static func apply(_ step: Step, to migration: inout Migration) throws {
        switch step {
        case let .addField(field, value, table): try migration.addField(field, default: value, inTable: table)
        case let .removeField(field, table): try migration.removeField(field, inTable: table)
        case let .renameField(field, new, table): try migration.renameField(field, to: new, inTable: table)
        case let .retypeField(field, table):
            try migration.changeField(field, inTable: table) { value in
                switch value {
                case let .int(number): .string("\(number)")
                case let .string(text): .int(Int64(text) ?? 0)
                default: .null
                }
            }
        case let .moveEvenRows(source, target):
            try migration.moveRows(from: source, to: target) { row in
                guard case let .int(number) = row["n"] else { return false }
                return number % 2 == 0
            }
        case let .splitField(field, source, target):
            try migration.splitRows(of: source, into: target) { row in
                row.removeValue(forKey: field).map { ["value": $0] }
            }
        case let .renameTable(table, new): try migration.renameTable(table, to: new)
        case let .dropTable(table): try migration.dropTable(table)
        }
    }

    /// Writes the rows, one transaction per table.
    public func populate(_ store: Store) throws {
        for table in rows.keys.sorted() {
            try store.write { tx in
                for row in rows[table]! {
                    tx.put(.encoded(row.document.binaryEncoded()), for: OrderedKey.int64(row.id), in: table,
                           encoding: TableEncoding(key: .int64, value: .valueFormat))
                }
            }
        }
    }
}
