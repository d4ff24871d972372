/// Which migrations a store has run, and each table's schema version.
///
/// Stored as an ordinary root document, ``rootName``, in the value format:
/// ```json
/// {"format": 1,
///  "applied": [{"name": "add-nickname", "lsn": 12, "tables": ["people"]}],
///  "versions": {"people": 1}}
/// ```
/// A migration's transaction writes it together with the migration's own
/// changes, so it never names a migration whose changes are not in the
/// store, nor misses one whose changes are. `logtool info` shows it.
///
/// A table's schema version is how many migrations changed it: 0 for a
/// table no migration touched. Renaming a table carries its version to the
/// new name; dropping it forgets it.
///
/// While a migration too large for one log record is being written in
/// batches, the history also names it as running (layout 2, which earlier
/// releases refuse rather than read a half-migrated store):
/// ```json
/// {"format": 2, "applied": [], "versions": {},
///  "running": {"name": "add-nickname", "batches": 3}}
/// ```
/// Only a cut can leave it on disk, and every open undoes such a migration
/// before anything reads the store (see <doc:Migrations>).
public struct MigrationHistory: Sendable, Equatable {
    /// The root document the history is stored in. Reserved: a program's
    /// own root of that name would be taken for a history.
    public static let rootName = "lensdb.migrations"
    /// The layout of the history document: 1, or 2 while a migration is
    /// running. A newer layout is refused
    /// (``MigrationError/unreadableHistory(store:reason:)``) rather than guessed.
    static let format: Int64 = 1
    static let runningFormat: Int64 = 2

    /// The migrations the store has run, in the order they ran.
    public private(set) var applied: [AppliedMigration] = []
    /// The schema version of each table a migration touched.
    public private(set) var schemaVersions: [String: Int] = [:]
    /// The migration whose batches are being written, and how many are
    /// logged: set only between the batches of one write.
    var running: RunningMigration?

    /// An empty history: a store no migration has run on.
    public init() {}

    /// The history `state` holds.
    /// - Throws: ``MigrationError/unreadableHistory(store:reason:)`` when
    ///   the root exists and is not a history of a layout this release reads.
    init(_ state: StoreState, store: String) throws {
        guard let stored = state.root(named: Self.rootName) else { return }
        func unreadable(_ reason: String) -> MigrationError { .unreadableHistory(store: store, reason: reason) }
        let document: Document
        do { document = try StoreState.document(of: stored) } catch { throw unreadable("it is not a document: \(error)") }
        guard case let .int(format) = document["format"] else { throw unreadable("it has no format number") }
        guard format <= Self.runningFormat else {
            throw unreadable("its layout is version \(format), newer than version \(Self.runningFormat) that this release reads")
        }
        guard case let .array(entries) = document["applied"], case let .object(versions) = document["versions"] else {
            throw unreadable("it lacks the applied list or the versions")
        }
        applied = try entries.map { entry in
            guard let migration = AppliedMigration(entry) else { throw unreadable("an applied migration lacks its name, LSN or tables") }
            return migration
        }
        for (table, version) in versions {
            guard case let .int(number) = version else { throw unreadable("the version of table \(table) is not a number") }
            schemaVersions[table] = Int(clamping: number)
        }
        if format == Self.runningFormat {
            guard case let .string(name) = document["running"]["name"], case let .int(batches) = document["running"]["batches"], batches > 0 else {
                throw unreadable("it is layout 2 and does not name the running migration and its batches")
            }
            running = RunningMigration(name: name, batches: Int(clamping: batches))
        }
    }

    /// The schema version of `table`: how many migrations changed it.
    public func schemaVersion(ofTable table: String) -> Int { schemaVersions[table] ?? 0 }

    /// Whether the migration `name` has run.
    public func contains(_ name: String) -> Bool { applied.contains { $0.name == name } }

    /// Adds `migration`, with the versions the tables have after it.
    mutating func record(_ migration: AppliedMigration, versions: [String: Int]) {
        applied.append(migration)
        schemaVersions = versions
    }

    /// The history as the document stored under ``rootName``.
    var document: Document {
        let entries = applied.map { migration -> Document in
            ["name": .string(migration.name), "lsn": .int(Int64(clamping: migration.lsn)), "tables": .array(migration.tables.map(Document.string))]
        }
        var document: Document = [
            "format": .int(running == nil ? Self.format : Self.runningFormat), "applied": .array(entries),
            "versions": .object(schemaVersions.mapValues { .int(Int64($0)) }),
        ]
        if let running {
            document["running"] = ["name": .string(running.name), "batches": .int(Int64(running.batches))]
        }
        return document
    }

    /// Sets the history root in `tx`: an ordinary root document in the value
    /// format, so recording a migration needs no new log operation.
    func write(to tx: inout Transaction) {
        tx.setRoot(.encoded(document.binaryEncoded()), named: Self.rootName, encoding: .valueFormat)
    }
}

/// A migration whose batches are being written: the `running` member of a
/// layout-2 history.
struct RunningMigration: Sendable, Equatable {
    let name: String
    /// How many of its batches the log holds, each with its undo root.
    var batches: Int
}

/// One migration a store has run: an entry of ``MigrationHistory/applied``.
public struct AppliedMigration: Sendable, Equatable, Codable {
    /// The name it was registered under.
    public let name: String
    /// The LSN of the transaction that ran it.
    public let lsn: UInt64
    /// The tables it changed, renamed (old and new name) or dropped, sorted.
    public let tables: [String]

    init(name: String, lsn: UInt64, tables: [String]) {
        self.name = name
        self.lsn = lsn
        self.tables = tables
    }

    /// The entry as the history document holds it; nil when a member is missing.
    init?(_ entry: Document) {
        guard case let .string(name) = entry["name"], case let .int(lsn) = entry["lsn"], case let .array(tables) = entry["tables"] else {
            return nil
        }
        self.init(name: name, lsn: UInt64(clamping: lsn), tables: tables.compactMap {
            if case let .string(table) = $0 { return table }
            return nil
        })
    }
}
