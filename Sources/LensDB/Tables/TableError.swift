/// Errors of typed tables. Each says which table and what to do.
public enum TableError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A put would give two entities the same key in a `.unique` index; the
    /// transaction changes nothing.
    case uniqueViolation(index: String, value: String)
    /// Stored values no longer decode as the type (a field added without a
    /// default, a type changed): the table did not open. `id`, `codingPath`
    /// and `reason` describe the first; `count` how many there are. Nothing
    /// on disk changed.
    case undecodable(table: String, id: String, codingPath: String, reason: String, count: Int)
    /// The table is already open with another entity type in this store.
    case typeMismatch(table: String, openedAs: String, requested: String)
    /// The table was written with another encoding (for example through the
    /// byte-level API), so its entries are not entities of this type.
    case encodingMismatch(table: String, stored: TableEncoding, expected: TableEncoding)
    /// The table is already open with other index definitions.
    case indexMismatch(table: String, opened: [String], requested: [String])
    /// A `String` identifier that is not in Unicode NFC.
    case identifierNotNormalized(table: String, id: String)
    /// A put of an identifier whose stored value is quarantined.
    case quarantined(table: String, id: String)

    public var description: String {
        switch self {
        case let .uniqueViolation(index, value):
            "another entity already has \(value) in unique index \(index); nothing was written"
        case let .undecodable(table, id, codingPath, reason, count):
            "table \(table): \(count) stored value(s) no longer decode as the type; the first is \(id) at \(codingPath.isEmpty ? "the top level" : codingPath): \(reason). Give the new field a default (or make it optional), or open the table with onUndecodable: .quarantine"
        case let .typeMismatch(table, openedAs, requested):
            "table \(table) is open as \(openedAs) in this store, not as \(requested); use one entity type per table"
        case let .encodingMismatch(table, stored, expected):
            "table \(table) holds entries with \(stored), not entities (\(expected)); it was written through the byte-level API, so open another table name"
        case let .indexMismatch(table, opened, requested):
            "table \(table) is open with indexes [\(opened.joined(separator: ", "))], not [\(requested.joined(separator: ", "))]; open it once with one set of indexes"
        case let .identifierNotNormalized(table, id):
            "table \(table): the identifier \(id) is not in Unicode NFC; normalize it with precomposedStringWithCanonicalMapping"
        case let .quarantined(table, id):
            "table \(table): the stored value of \(id) is quarantined; remove it first, then put the new one"
        }
    }
}

/// What opening a table does with stored values that no longer decode as its type.
public enum UndecodablePolicy: Sendable, Equatable {
    /// Throw ``TableError/undecodable(table:id:codingPath:reason:count:)``; nothing opens.
    case fail
    /// Open without them: each keeps its bytes, untouched and durable, and
    /// is listed in ``Table/quarantined`` until removed.
    case quarantine
}

/// A stored value that did not decode, kept as it was.
public struct Quarantined<ID: Sendable>: Sendable {
    /// The identifier, when the key bytes decode as one.
    public let id: ID?
    /// The key as stored.
    public let key: [UInt8]
    /// Why the value did not decode, with its coding path.
    public let reason: String
}
