/// Named, ordered schema migrations, each run once per store.
///
/// Register every migration the app has ever shipped, in order, under a
/// name that never changes; then migrate the store right after opening it
/// and before opening its tables (or open it with ``Store/init(at:options:migrator:)``,
/// which does both):
///
/// ```swift
/// var migrator = Migrator()
/// migrator.registerMigration("add-nickname") { migration in
///     try migration.addField("nickname", default: "", inTable: "people")
/// }
/// migrator.registerMigration("rename-people") { migration in
///     try migration.renameTable("people", to: "contacts")
/// }
/// try migrator.migrate(store)
/// ```
///
/// Each migration that the store's history does not name runs in one
/// transaction of its own, committed with `.full` durability together with
/// the history entry that says it ran: a power cut at any moment leaves the
/// store either before the migration, with no entry (and the next
/// ``migrate(_:progress:)`` runs it again), or after it, with the entry.
/// Never a mix. A store whose history names a migration this app does not
/// register was written by a newer release: ``migrate(_:progress:)`` throws
/// ``MigrationError/unknownMigrations(store:names:)`` and writes nothing.
///
/// Migrations change stored rows as ``Document``s, so they need neither the
/// old nor the new Swift type; ``Migration/convertRows(inTable:from:to:onUndecodable:_:)``
/// is the typed escape hatch. See <doc:Migrations>.
///
/// A value: register on one thread, then migrate from any (it is `Sendable`).
public struct Migrator: Sendable {
    /// One registered migration.
    struct Registered: Sendable {
        let name: String
        let body: @Sendable (inout Migration) throws -> Void
    }

    private(set) var registered: [Registered] = []

    /// How many rows a step changes between two progress reports.
    /// Defaults to 1,000.
    public var progressInterval = 1_000

    /// The most bytes of changed rows, old and new, that one batch of a
    /// migration logs. Defaults to 8 MiB; at most 32 MiB is used.
    ///
    /// A migration that changes more is still all or nothing: it runs whole
    /// in memory, then is logged batch by batch, each after a record of
    /// what undoes it, in one hold of the store's writers' lock. A cut
    /// between them is undone by the next open, and the migration runs
    /// again. Smaller batches keep each record and its sync short. A
    /// migration that changes a row of more than 32 MiB, or rows of a table
    /// written before encodings were recorded, is logged as one record, so
    /// at most 64 MiB.
    public var maximumBatchBytes = 8 << 20

    /// An empty migrator.
    public init() {}

    /// The names of the registered migrations, in the order they run.
    public var migrationNames: [String] { registered.map(\.name) }

    /// Registers the migration `name`, run after every migration registered before it.
    ///
    /// `body` makes the migration's changes through the ``Migration`` it is
    /// given; if it throws, the migration changes nothing and
    /// ``migrate(_:progress:)`` rethrows. It runs inside the store's write
    /// lock: it must not call the store itself.
    ///
    /// - Precondition: no migration of that name is registered yet.
    public mutating func registerMigration(_ name: String, _ body: @escaping @Sendable (inout Migration) throws -> Void) {
        precondition(!registered.contains { $0.name == name }, "migration \"\(name)\" is registered twice")
        registered.append(Registered(name: name, body: body))
    }

    /// The registered migrations that `store`'s history does not name yet, in order.
    /// - Throws: ``MigrationError/unreadableHistory(store:reason:)``.
    public func pendingMigrations(in store: Store) throws -> [String] {
        let history = try MigrationHistory(store.current, store: store.displayPath)
        let applied = Set(history.applied.map(\.name))
        return registered.map(\.name).filter { !applied.contains($0) }
    }

    /// Runs, in order, every registered migration that `store` has not run
    /// yet, each in a `.full`-durable transaction of its own that also
    /// records it in the store's ``MigrationHistory``.
    ///
    /// Call it before opening the tables a migration changes: a migration
    /// works on stored rows, and a table already open with its type throws
    /// ``MigrationError/tableIsOpen(store:migration:table:)``.
    ///
    /// Thread-safety: any thread; each migration is serialized with every
    /// other writer, and two calls at once run each migration once.
    /// `progress` is called on the calling thread, inside the store's write
    /// lock: it must not call the store.
    ///
    /// - Parameters:
    ///   - store: the store, opened and with none of the tables the
    ///     migrations change opened yet.
    ///   - progress: called as each step works through a table's rows.
    /// - Returns: the names of the migrations that ran now.
    /// - Throws: ``MigrationError/unknownMigrations(store:names:)`` before
    ///   writing anything when the store was migrated by a newer release;
    ///   ``MigrationError`` for a step that cannot apply; what a migration's
    ///   body throws; the errors of ``Store/write(durability:_:)``. The
    ///   migration that threw changed nothing; the ones before it are
    ///   committed and recorded.
    @discardableResult
    public func migrate(_ store: Store, progress: (@Sendable (MigrationProgress) -> Void)? = nil) throws -> [String] {
        let history = try MigrationHistory(store.current, store: store.displayPath)
        let known = Set(registered.map(\.name))
        let unknown = history.applied.map(\.name).filter { !known.contains($0) }
        guard unknown.isEmpty else { throw MigrationError.unknownMigrations(store: store.displayPath, names: unknown) }
        var ran: [String] = []
        for migration in registered where !history.contains(migration.name) {
            let didRun = try store.write(durability: .full) { tx -> (Bool, [[Operation]]?) in
                try run(migration, in: &tx, store: store.displayPath, inMemory: store.path == nil, progress: progress)
            }
            if didRun { ran.append(migration.name) }
        }
        return ran
    }

    /// Runs `migration` on `tx` and records it, unless another migrate
    /// recorded it first (the history is read again under the write lock).
    /// Returns whether it ran, and the records to log it as when it is too
    /// large for one (``MigrationJournal``).
    private func run(
        _ migration: Registered, in tx: inout Transaction, store: String, inMemory: Bool,
        progress: (@Sendable (MigrationProgress) -> Void)?
    ) throws -> (Bool, [[Operation]]?) {
        var history = try MigrationHistory(tx.state, store: store)
        guard !history.contains(migration.name) else { return (false, nil) }
        let base = tx.state
        var context = Migration(
            name: migration.name, store: store, transaction: tx, versions: history.schemaVersions,
            progressInterval: max(1, progressInterval), progress: progress)
        try migration.body(&context)
        tx = context.transaction
        let changes = tx.operations
        // An in-memory store logs nothing: one batch, whatever its size.
        let limit = inMemory ? .max : max(1, maximumBatchBytes)
        let batches = MigrationJournal.batches(of: changes, base: base, limit: limit)
        let running = history
        let records = MigrationJournal.recordCount(batches: batches.count)
        try Store.checkLSNs(records, after: base.lsn, log: store)
        history.record(AppliedMigration(name: migration.name, lsn: base.lsn + UInt64(records), tables: context.touched.sorted()),
                       versions: context.versions)
        history.write(to: &tx)
        guard batches.count > 1 else { return (true, nil) }
        let logged = try MigrationJournal.records(
            changes, batches: batches, base: base, final: Array(tx.operations[changes.count...])
        ) { begun in
            var marked = running
            marked.running = RunningMigration(name: migration.name, batches: begun)
            return marked.document
        }
        return (true, logged)
    }
}

extension Store {
    /// Opens the store at `path` as ``init(at:options:)`` does, then runs
    /// `migrator`'s pending migrations (``Migrator/migrate(_:progress:)``)
    /// before anything else can read or write it.
    ///
    /// - Throws: the errors of ``init(at:options:)`` and of
    ///   ``Migrator/migrate(_:progress:)``. When a migration throws, the
    ///   store is closed and the error rethrown; the migrations before it
    ///   stay committed, and the one that threw changed nothing.
    public convenience init(at path: String, options: StoreOptions = StoreOptions(), migrator: Migrator) throws {
        try self.init(at: path, options: options)
        do {
            try migrator.migrate(self)
        } catch {
            close()
            throw error
        }
    }

    /// The store's migration history as of the latest committed version.
    /// - Throws: ``MigrationError/unreadableHistory(store:reason:)``.
    public func migrationHistory() throws -> MigrationHistory {
        try MigrationHistory(current, store: displayPath)
    }

    /// The path errors name: `:memory:` for an in-memory store.
    var displayPath: String { path ?? ":memory:" }
}
