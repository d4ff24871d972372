/// Errors of migrations. Each names the store and says what to do; a
/// migration that throws one changed nothing.
public enum MigrationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The store's history names migrations this app does not register: a
    /// newer release of the app migrated it. Nothing was written.
    case unknownMigrations(store: String, names: [String])
    /// The history root (``MigrationHistory/rootName``) is not a history
    /// this release reads. Nothing was written.
    case unreadableHistory(store: String, reason: String)
    /// A step names a table that is already open with its type in this
    /// store; migrations change stored rows, so they run before the tables
    /// are opened.
    case tableIsOpen(store: String, migration: String, table: String)
    /// A step that works on documents names a table whose values are not in
    /// the value format (raw bytes written through the byte-level API, or a
    /// table written before encodings were recorded).
    case notDocuments(store: String, migration: String, table: String, encoding: String)
    /// A step would put a row into `table` under a key it already holds.
    case keyConflict(store: String, migration: String, table: String, key: String)
    /// ``Migration/renameTable(_:to:)`` names a new name that a table
    /// with rows already has.
    case tableExists(store: String, migration: String, table: String)
    /// A step would move rows between tables whose keys are encoded differently.
    case encodingMismatch(store: String, migration: String, source: String, target: String)
    /// ``Migration/convertRows(inTable:from:to:onUndecodable:_:)`` made an
    /// entity whose identifier is not the row's key: rows keep their keys.
    case identifierChanged(store: String, migration: String, table: String, key: String, newIdentifier: String)
    /// A stored row did not decode as a step needs it (as a document, or as
    /// the old type of ``Migration/convertRows(inTable:from:to:onUndecodable:_:)``).
    case undecodable(store: String, migration: String, table: String, key: String, reason: String)

    public var description: String {
        switch self {
        case let .unknownMigrations(store, names):
            "\(store) was migrated by a newer release of this app (its history names \(names.joined(separator: ", ")), which this release does not register); nothing was changed: open it with the newer release, or register those migrations"
        case let .unreadableHistory(store, reason):
            "\(store): the migration history (root \(MigrationHistory.rootName)) cannot be read because \(reason); nothing was changed: open the store with the newer release that wrote it, or, if the app itself keeps a root document of that name, rename it"
        case let .tableIsOpen(store, migration, table):
            "\(store): migration \(migration) changes table \(table), which is already open with its type; run the migrator right after opening the store, before opening its tables (Store(at:options:migrator:) does)"
        case let .notDocuments(store, migration, table, encoding):
            "\(store): migration \(migration) works on documents, and table \(table) holds \(encoding) values; change that table's rows through the byte-level Transaction API instead"
        case let .keyConflict(store, migration, table, key):
            "\(store): migration \(migration) would put a second row under key \(key) into table \(table); nothing was changed: give the rows distinct identifiers before moving them"
        case let .tableExists(store, migration, table):
            "\(store): migration \(migration) would rename a table to \(table), which already holds rows; nothing was changed: drop it or move its rows first, or rename to another name"
        case let .encodingMismatch(store, migration, source, target):
            "\(store): migration \(migration) would move rows from table \(source) into table \(target), whose keys are encoded differently; move rows only between tables of the same identifier type"
        case let .identifierChanged(store, migration, table, key, newIdentifier):
            "\(store): migration \(migration) turned the row \(key) of table \(table) into an entity whose identifier is \(newIdentifier); rows keep their keys, so nothing was changed: keep the identifier in the conversion (no migration step gives a row a new key)"
        case let .undecodable(store, migration, table, key, reason):
            "\(store): migration \(migration) cannot read the row \(key) of table \(table): \(reason); nothing was changed: make the step read such rows (a typed changeField or convertRows can take the Document form instead), remove or rewrite a row that is no document at all through the byte-level Transaction API, or, in convertRows, pass onUndecodable: .quarantine to leave such rows as they are"
        }
    }
}
