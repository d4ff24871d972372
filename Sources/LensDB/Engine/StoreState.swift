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
    /// Tables as the snapshot this state was loaded from holds them, none
    /// changed since and none opened with its type: their entries in key
    /// order, in the snapshot's chunks, which load faster than ``tables``
    /// and give a typed open its entities in identifier order. The first
    /// change moves a table into ``tables`` (a name is in one of
    /// ``tables``, ``snapshotTables`` and ``typed``).
    var snapshotTables: TreeDictionary<String, SnapshotEntries> = [:]
    var roots: TreeDictionary<String, StoredValue> = [:]
    /// The declared encoding of each table that has one (every non-empty
    /// table written since encodings were recorded).
    var tableEncodings: TreeDictionary<String, TableEncoding> = [:]
    /// The declared encoding of each root document that has one.
    var rootEncodings: TreeDictionary<String, ValueEncoding> = [:]
    /// Tables a program opened with their type: decoded entities and their
    /// indexes, in place of the bytes in ``tables`` (a name is in one or the other).
    var typed: TreeDictionary<String, TableStorage> = [:]
    /// The index orders the snapshot this state was loaded from stored, of
    /// tables no program has opened with their type since: the open that
    /// does uses them instead of sorting (``TableLoader``), and a change to
    /// the table drops them, for they no longer describe its rows.
    var indexOrders: TreeDictionary<String, [String: [UInt32]]> = [:]
    /// Roots a program opened with a type (``Store/root(_:named:default:)``):
    /// their value is held decoded as that type, and only lenses write them.
    var lensRootTypes: TreeDictionary<String, any AnyRootType> = [:]

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

    /// The value under `key` in `table`, if any. O(1) expected; O(log n)
    /// for a table held as its snapshot stored it.
    public func value(in table: String, key: [UInt8]) -> StoredValue? {
        if let contents = typed[table] { return contents.storedValue(forKeyBytes: key) }
        if let loaded = snapshotTables[table] { return loaded.value(for: key).map(StoredValue.encoded) }
        return tables[table]?[key]
    }

    /// The root document named `name`, if set.
    public func root(named name: String) -> StoredValue? {
        roots[name]
    }

    /// Names of tables that hold at least one entry, sorted.
    public var tableNames: [String] {
        (Array(tables.keys) + Array(snapshotTables.keys) + typed.filter { $0.value.count > 0 }.map(\.key)).sorted()
    }

    /// Names of root documents, sorted.
    public var rootNames: [String] { roots.keys.sorted() }

    /// How many entries `table` holds.
    public func count(in table: String) -> Int {
        typed[table]?.count ?? snapshotTables[table]?.count ?? tables[table]?.count ?? 0
    }

    /// The entries of `table`, in no particular order.
    /// - Complexity: O(1) for a table of bytes changed since the store
    ///   opened (iterating is O(n)); O(n) for one unchanged since, held as
    ///   its snapshot stored it, and for a table opened with its type,
    ///   whose entities are encoded here.
    public func entries(in table: String) -> TreeDictionary<[UInt8], StoredValue> {
        if let loaded = snapshotTables[table] { return loaded.dictionary }
        guard let contents = typed[table] else { return tables[table] ?? [:] }
        var entries: TreeDictionary<[UInt8], StoredValue> = [:]
        // Entities in memory encode: they were encoded when they were committed.
        try? contents.forEachEncodedEntry { key, value in entries[key] = .encoded(value) }
        return entries
    }

    /// Calls `body` with every entry of `table` as bytes, lent, in key byte
    /// order: what a snapshot holds. A table held as its snapshot's chunks
    /// lends its bytes in place, not copied.
    func forEachEncodedEntry(in table: String, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        func lend(_ key: [UInt8], _ value: [UInt8]) throws {
            try key.withUnsafeBytes { key in try value.withUnsafeBytes { try body(key, $0) } }
        }
        if let contents = typed[table] { return try contents.forEachEncodedEntry(lend) }
        if let loaded = snapshotTables[table] {
            return try loaded.forEach(in: 0..<loaded.count) { _, key, value in try body(key, value) }
        }
        let entries = tables[table] ?? [:]
        for key in entries.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) { try lend(key, entries[key]!.bytes()) }
    }

    /// The orders of `table`'s indexes a snapshot stores with its entries:
    /// each index's rows as places among those entries. From its index
    /// trees when the table is open with its type, else the orders the
    /// last snapshot stored, while the table has not changed since.
    func indexOrders(in table: String) -> [(index: String, positions: [UInt32])] {
        if let contents = typed[table] { return contents.indexOrders() }
        let count = snapshotTables[table]?.count ?? tables[table]?.count ?? 0
        // Carried on only when each still names every entry once.
        return (indexOrders[table] ?? [:]).filter { Self.namesEachOnce($0.value, count: count) }
            .sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// Moves `table` from ``snapshotTables`` into ``tables``, if it is
    /// there, so that a write can change it.
    private mutating func thaw(_ table: String) {
        if let loaded = snapshotTables.removeValue(forKey: table) { tables[table] = loaded.dictionary }
    }

    /// Whether `order` is a permutation of `0..<count`.
    static func namesEachOnce<Place: BinaryInteger>(_ order: [Place], count: Int) -> Bool {
        guard order.count == count else { return false }
        var seen = [Bool](repeating: false, count: count)
        for place in order {
            guard place >= 0, place < count, !seen[Int(place)] else { return false }
            seen[Int(place)] = true
        }
        return true
    }

    /// The total number of table entries and root documents.
    public var itemCount: Int {
        tables.values.reduce(roots.count) { $0 + $1.count } + snapshotTables.values.reduce(0) { $0 + $1.count }
            + typed.values.reduce(0) { $0 + $1.count }
    }

    /// Applies a transaction's operations, all or none.
    ///
    /// Only a patch can fail, and a patch reads and changes only roots. So
    /// the root operations go first, each noting how to undo it, and the
    /// others follow once they all applied. The notes keep no root document
    /// shared while it is patched (a patch of one notes the member it
    /// replaces; of a root still in its bytes, those bytes), so each patch
    /// still costs O(depth of its path).
    /// - Throws: ``PatchFailure`` for the first patch that does not apply;
    ///   nothing changed then.
    mutating func applyAllOrNone(_ operations: [Operation]) throws(PatchFailure) {
        if operations.contains(where: \.isPatch) {
            var undo: [RootUndo] = []
            do {
                for operation in operations where operation.rootName != nil {
                    let step = undoing(operation)
                    try apply(operation)
                    undo.append(step)
                }
            } catch {
                for step in undo.reversed() { restore(step) }
                throw error
            }
            for operation in operations where operation.rootName == nil { try apply(operation) }
        } else {
            for operation in operations { try apply(operation) }
        }
    }

    /// How to take back one root operation.
    private enum RootUndo {
        /// The root's value and encoding before.
        case root(name: String, value: StoredValue?, encoding: ValueEncoding?)
        /// The root's encoding before.
        case encoding(name: String, ValueEncoding?)
        /// The member at `path` before (nil: absent).
        case member(name: String, path: [String], Document?)
    }

    private func undoing(_ operation: Operation) -> RootUndo {
        switch operation {
        case let .declareRoot(name, _): .encoding(name: name, rootEncodings[name])
        case let .patchRoot(name, path, _):
            // A root still in its bytes comes back as those bytes, exactly;
            // one already a document, by its member (the document not shared).
            if case let .decoded(document as Document)? = roots[name] {
                .member(name: name, path: path, document.member(at: path))
            } else {
                .root(name: name, value: roots[name], encoding: rootEncodings[name])
            }
        case let .setRoot(name, _), let .removeRoot(name): .root(name: name, value: roots[name], encoding: rootEncodings[name])
        case .put, .remove, .declareTable: preconditionFailure("not a root operation")
        }
    }

    private mutating func restore(_ step: RootUndo) {
        switch step {
        case let .root(name, value, encoding):
            roots[name] = value
            rootEncodings[name] = encoding
        case let .encoding(name, encoding):
            rootEncodings[name] = encoding
        case let .member(name, path, member):
            // The state is as the patch left it, so patching back applies.
            try? patchRoot(name, at: path, to: member.map { StoredValue.decoded($0) })
        }
    }

    /// Applies one operation, as replay and a transaction do.
    /// - Throws: ``PatchFailure`` for a patch that does not apply (its root
    ///   is missing, not in the value format, or has no object on the way);
    ///   nothing changed then. Every other operation applies.
    mutating func apply(_ operation: Operation) throws(PatchFailure) {
        switch operation {
        case let .put(table, key, value):
            precondition(typed[table] == nil, "table \(table) is open with its type; write it through its Table")
            if !snapshotTables.isEmpty { thaw(table) }
            tables[table, default: [:]][key] = value
            if !indexOrders.isEmpty { indexOrders[table] = nil }
        case let .remove(table, key) where typed[table] != nil:
            if let contents = typed[table]!.removing(keyBytes: key) {
                typed[table] = contents
                if contents.count == 0 { tableEncodings[table] = nil }
            }
        case let .remove(table, key):
            if !snapshotTables.isEmpty { thaw(table) }
            tables[table]?[key] = nil
            if !indexOrders.isEmpty { indexOrders[table] = nil }
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
        case let .patchRoot(name, path, value):
            try patchRoot(name, at: path, to: value)
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
    /// Sets the member at `path` inside the value-format root document
    /// `name` to `value`, or removes it when `value` is nil (log format v3):
    /// what a lens logs when it changes one part of a large document. `path`
    /// is one or more object keys from the document's top; every key but the
    /// last names an existing object.
    case patchRoot(name: String, path: [String], value: StoredValue?)

    /// The root document the operation reads or changes, if it is one of
    /// the root operations.
    var rootName: String? {
        switch self {
        case let .setRoot(name, _), let .removeRoot(name), let .declareRoot(name, _), let .patchRoot(name, _, _): name
        case .put, .remove, .declareTable: nil
        }
    }

    var isPatch: Bool {
        if case .patchRoot = self { true } else { false }
    }
}
