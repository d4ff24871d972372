import HashTreeCollections

/// One committed version of a store's whole state: named tables of
/// (key bytes → value) and named root documents.
///
/// A value type over structurally shared maps: taking a version is O(1),
/// a commit copies only the paths it changes, and a reader may hold a version
/// for as long as it likes without blocking anyone (promise 8).
public struct StoreState: Sendable {
    /// The LSN of the last transaction this version contains (0: none).
    public internal(set) var lsn: UInt64 = 0
    var tables: TreeDictionary<String, TreeDictionary<[UInt8], StoredValue>> = [:]
    var roots: TreeDictionary<String, StoredValue> = [:]
    /// The declared encoding of each table that has one (every non-empty
    /// table written since encodings were recorded).
    var tableEncodings: TreeDictionary<String, TableEncoding> = [:]
    /// The declared encoding of each root document that has one.
    var rootEncodings: TreeDictionary<String, ValueEncoding> = [:]

    public init() {}

    /// How `table`'s keys and values are encoded; nil when unknown (a table
    /// written before encodings were recorded, or an empty one).
    public func encoding(ofTable table: String) -> TableEncoding? {
        tableEncodings[table]
    }

    /// How the root document `name` is encoded; nil when unknown.
    public func encoding(ofRoot name: String) -> ValueEncoding? {
        rootEncodings[name]
    }

    /// The value under `key` in `table`, if any. O(1) expected.
    public func value(in table: String, key: [UInt8]) -> StoredValue? {
        tables[table]?[key]
    }

    /// The root document named `name`, if set.
    public func root(named name: String) -> StoredValue? {
        roots[name]
    }

    /// Names of tables that hold at least one entry, sorted.
    public var tableNames: [String] { tables.keys.sorted() }

    /// Names of root documents, sorted.
    public var rootNames: [String] { roots.keys.sorted() }

    /// How many entries `table` holds.
    public func count(in table: String) -> Int { tables[table]?.count ?? 0 }

    /// The entries of `table`, in no particular order.
    /// - Complexity: O(1); iterating is O(n).
    public func entries(in table: String) -> TreeDictionary<[UInt8], StoredValue> {
        tables[table] ?? [:]
    }

    /// The total number of table entries and root documents.
    public var itemCount: Int { tables.values.reduce(roots.count) { $0 + $1.count } }

    mutating func apply(_ operation: Operation) {
        switch operation {
        case let .put(table, key, value):
            tables[table, default: [:]][key] = value
        case let .remove(table, key):
            tables[table]?[key] = nil
            if tables[table]?.isEmpty == true {
                tables[table] = nil
                tableEncodings[table] = nil
            }
        case let .setRoot(name, value):
            roots[name] = value
        case let .removeRoot(name):
            roots[name] = nil
            rootEncodings[name] = nil
        case let .declareTable(table, encoding):
            tableEncodings[table] = encoding
        case let .declareRoot(name, encoding):
            rootEncodings[name] = encoding
        }
    }
}

/// One change inside a transaction.
public enum Operation: Sendable {
    case put(table: String, key: [UInt8], value: StoredValue)
    case remove(table: String, key: [UInt8])
    case setRoot(name: String, value: StoredValue)
    case removeRoot(name: String)
    /// Records how `table`'s keys and values are encoded; precedes the
    /// first put into the table, in the same transaction.
    case declareTable(table: String, encoding: TableEncoding)
    /// Records how the root document `name` is encoded; precedes a set that
    /// changes it, in the same transaction.
    case declareRoot(name: String, encoding: ValueEncoding)
}
