/// The changes of one migration: what a ``Migrator/registerMigration(_:_:)``
/// body is given.
///
/// Every step works on the rows as stored, each seen as a ``Document`` (the
/// self-describing form of LensDB's value format), so a migration needs
/// neither the entity type that wrote the rows nor the one that will read
/// them. Rows keep their keys: a step never changes an identifier.
///
/// Rows that a table opened with ``UndecodablePolicy/quarantine`` set aside
/// are stored rows like the others: every step reaches them too, so a
/// migration is their chance to become decodable again.
///
/// All steps of one migration are one transaction: nothing is visible or
/// written until the body returns, and a throw from any step or from the
/// body itself discards them all.
public struct Migration {
    /// The name the migration was registered under.
    public let name: String
    let store: String
    var transaction: Transaction
    /// Schema versions as this migration leaves them.
    var versions: [String: Int]
    /// Tables this migration changed (each one's version is raised once).
    private(set) var touched: Set<String> = []
    let progressInterval: Int
    let progress: (@Sendable (MigrationProgress) -> Void)?

    init(
        name: String, store: String, transaction: Transaction, versions: [String: Int], progressInterval: Int,
        progress: (@Sendable (MigrationProgress) -> Void)?
    ) {
        self.name = name
        self.store = store
        self.transaction = transaction
        self.versions = versions
        self.progressInterval = progressInterval
        self.progress = progress
    }

    /// How many rows `table` holds as this migration has it so far
    /// (0 for a table that does not exist).
    public func rowCount(inTable table: String) -> Int { transaction.state.count(in: table) }

    /// Raises `table`'s schema version, once per migration.
    mutating func touch(_ table: String) {
        guard touched.insert(table).inserted else { return }
        versions[table, default: 0] += 1
    }

    /// Records that `table` is gone: its version is forgotten.
    mutating func forget(_ table: String) {
        touched.insert(table)
        versions[table] = nil
    }

    /// Lists `table` among the ones this migration changed, its version as set.
    mutating func markTouched(_ table: String) {
        touched.insert(table)
    }

    /// Reports that `done` of `total` rows of `table` are through.
    func report(_ table: String, done: Int, total: Int) {
        guard let progress, done == total || done % progressInterval == 0 else { return }
        progress(MigrationProgress(migration: name, table: table, completedRows: done, totalRows: total))
    }
}

/// How far a migration step has worked through a table: what
/// ``Migrator/migrate(_:progress:)`` reports, every
/// ``Migrator/progressInterval`` rows and at the end of each step.
public struct MigrationProgress: Sendable, Equatable {
    /// The migration running.
    public let migration: String
    /// The table the step works through.
    public let table: String
    /// Rows done so far.
    public let completedRows: Int
    /// Rows the step works through in all.
    public let totalRows: Int
}
