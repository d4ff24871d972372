#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Store {
    /// Opens the typed table `name`, whose entries are entities of type `T`,
    /// with these secondary indexes.
    ///
    /// The first open in a process decodes each stored value once; from then
    /// on the table's entities live decoded in memory (never bytes and value
    /// both), with their indexes rebuilt from them. It writes nothing. Opening
    /// it again with the same type returns an equal table.
    ///
    /// ```swift
    /// let people = try store.table(Person.self, named: "people",
    ///                              indexes: [.on(\.city), .on(\.age), .on(\.city, \.age), .unique(\.email)])
    /// ```
    ///
    /// Thread-safety: any thread; serialized with writers while it decodes.
    /// - Throws: ``TableError/undecodable(table:id:codingPath:missingField:reason:count:)``
    ///   when stored values no longer decode as `T` (unless `onUndecodable`
    ///   is ``UndecodablePolicy/quarantine``); ``TableError/typeMismatch(table:openedAs:requested:)``,
    ///   ``TableError/indexMismatch(table:opened:requested:)``,
    ///   ``TableError/encodingMismatch(table:stored:expected:)``,
    ///   ``TableError/uniqueViolation(index:value:)`` when stored entities
    ///   break a unique index. A throw changes nothing.
    /// - Complexity: O(n log n) for the first open (decode and index), O(1)
    ///   after. An index whose order the store's snapshot holds, the table
    ///   unchanged since, is built in O(n) instead of sorted
    ///   (``TableStatistics/indexesInStoredOrder`` counts them). When the
    ///   snapshot holds orders for this table but not for an index of
    ///   `indexes` (one added or changed since), the open sorts that index
    ///   and starts a compaction in the background, so that the next open
    ///   finds its order stored: an index change is sorted once, not at
    ///   every open (for tables of 10,000 entities or more, in a store that
    ///   compacts on its own).
    public func table<T: Entity>(
        _ type: T.Type, named name: String, indexes: [Index<T>] = [], onUndecodable: UndecodablePolicy = .fail
    ) throws -> Table<T> {
        var storesNewOrders = false
        defer { if storesNewOrders { compactInBackground() } }
        return try writer.withLock { side throws -> Table<T> in
            if let opened = side.head.typed[name] {
                guard opened.schema.entityType == ObjectIdentifier(T.self) else {
                    throw TableError.typeMismatch(table: name, openedAs: opened.schema.entityTypeName, requested: "\(T.self)")
                }
                let definitions = opened.indexes.map(\.definition)
                guard definitions.count == indexes.count, zip(definitions, indexes).allSatisfy({ $0.sameDefinition(as: $1.erased) }) else {
                    throw TableError.indexMismatch(table: name, opened: definitions.map(\.description), requested: indexes.map(\.description))
                }
                register(table: name, for: T.self)
                return Table(store: self, name: name, indexes: indexes)
            }
            try waitForInFlightCommits(side)
            let storedOrders = side.head.indexOrders[name]?.count ?? 0
            let storage = try TableLoader<T>(name: name, indexes: indexes, policy: onUndecodable).load(from: side.head)
            storesNewOrders = Self.storesNewIndexOrders(storage, storedOrders: storedOrders)
            side.head.typed[name] = storage
            side.head.tables[name] = nil
            side.head.snapshotTables[name] = nil
            side.head.indexOrders[name] = nil
            // The same state, held decoded: readers cannot tell the difference.
            var replaced = side.head
            published.withLock { swap(&$0, &replaced) }
            // The bytes the table held are freed on the reclaimer's thread,
            // while the program goes on with its table.
            Self.reclaim(&replaced)
            register(table: name, for: T.self)
            return Table(store: self, name: name, indexes: indexes)
        }
    }

    /// Waits, holding the writers' lock, until every commit already queued
    /// is published, so that the version readers see and the head are one
    /// and both can take the decoded table.
    func waitForInFlightCommits(_ side: WriterSide) throws {
        while current.lsn < side.head.lsn {
            if let failure = side.log?.failure { throw StoreError.failed(path: path ?? ":memory:", cause: "\(failure)") }
            var pause = timespec(tv_sec: 0, tv_nsec: 100_000)
            nanosleep(&pause, nil)
        }
    }
}

/// Decodes a table's stored entries into entities and builds its indexes.
struct TableLoader<T: Entity> {
    let name: String
    let indexes: [Index<T>]
    let policy: UndecodablePolicy

    func load(from state: StoreState) throws -> TableStorage {
        var storage = TableStorage(name: name, schema: .of(T.self), indexes: indexes.map(\.erased))
        let count = state.count(in: name)
        if let declared = state.encoding(ofTable: name), declared != storage.encoding, count > 0 {
            throw TableError.encodingMismatch(table: name, stored: declared, expected: storage.encoding)
        }
        let decoder = ValueDecoder()
        var failures: [(key: [UInt8], error: Error)] = []
        var rows: [(key: IndexValue, value: RowObject)] = []
        rows.reserveCapacity(count)
        // Rows come in identifier order from a table as its snapshot holds
        // it, whose keys ascend; a table changed since is a hash map.
        var ascending = state.snapshotTables[name] != nil
        func decode(_ key: [UInt8], _ bytes: [UInt8]) {
            do {
                let entity = try decoder.decode(T.self, from: bytes)
                let id = try identifierValue(entity.id)
                guard storage.schema.identifier(fromKeyBytes: key) == id else {
                    throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "stored under a key that is not its identifier \(entity.id)"))
                }
                if ascending, let last = rows.last, !(last.key < id) { ascending = false }
                rows.append((id, RowBox(entity, id: id, lsn: state.lsn, encoding: EncodingSummary(bytes))))
            } catch {
                failures.append((key, error))
                if policy == .quarantine { storage.quarantine[key] = QuarantinedEntry(bytes: bytes, reason: Self.reason(error)) }
            }
        }
        if let loaded = state.snapshotTables[name] {
            for (key, bytes) in zip(loaded.keys, loaded.values) { decode(key, bytes) }
        } else {
            // Stored values are bytes until a table decodes them; `.decoded`
            // cannot occur in a table no program has opened.
            for (key, value) in state.tables[name] ?? [:] { decode(key, (try? value.bytes()) ?? []) }
        }
        if policy == .fail, let first = failures.min(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let id = Table<T>.identifier(fromKeyBytes: first.key, storage.schema).map { "\($0)" }
                ?? RenderedValue(key: first.key, encoding: storage.schema.keyEncoding).text
            throw TableError.undecodable(table: name, id: id, codingPath: Self.codingPath(first.error),
                                         missingField: DecodingFailure.missingField(first.error),
                                         reason: Self.reason(first.error), count: failures.count)
        }
        if !ascending { rows = sortedPermutation(rows.map(\.key)).map { rows[$0] } }
        storage.rows = PersistentBTree(sorted: rows)
        storage.encodedBytes = rows.reduce(0) { $0 + Int($1.value.encodedCount) }
        // The snapshot's orders place rows among its entries; with an entry
        // that did not decode, the places are not the rows' any more.
        try buildIndexes(&storage, rows, orders: failures.isEmpty ? state.indexOrders[name] ?? [:] : [:])
        return storage
    }

    /// Fills every index from the rows, checking unique ones: in the order
    /// the snapshot stored when it is the index's order, else sorted.
    private func buildIndexes(
        _ storage: inout TableStorage, _ rows: [(key: IndexValue, value: RowObject)], orders: [String: [UInt32]]
    ) throws {
        let rows = rows.map(\.value)
        for position in storage.indexes.indices {
            let definition = storage.indexes[position].definition
            let index = IndexStorage(definition, rows: rows, storedOrder: orders[definition.name])
            if index.builtInStoredOrder { storage.indexesInStoredOrder += 1 }
            if definition.isUnique, let key = index.repeatedKey() {
                throw TableError.uniqueViolation(index: "\(name).\(definition.name)", value: key.description)
            }
            storage.indexes[position] = index
        }
    }

    static func codingPath(_ error: Error) -> String { DecodingFailure.codingPath(error) }

    static func reason(_ error: Error) -> String { DecodingFailure.reason(error) }
}

/// The positions of `keys` in ascending order. Sorting positions, with the
/// keys read in place, moves integers instead of keys whose copies would
/// retain and release their strings at every step of the sort.
func sortedPermutation<Key: Comparable>(_ keys: [Key]) -> [Int] {
    keys.withUnsafeBufferPointer(sortedPermutation)
}

/// The positions of `keys` in ascending order.
func sortedPermutation<Key: Comparable>(_ keys: UnsafeBufferPointer<Key>) -> [Int] {
    var order = Array(keys.indices)
    order.sort { keys[$0] < keys[$1] }
    return order
}

extension Store {
    /// The entities from which a table open that had to sort an index the
    /// snapshot lacks has its order stored by a compaction: below, sorting
    /// at each open costs less than writing a snapshot.
    static let indexOrdersStoredFrom = 10_000

    /// Whether the open that made `storage` sorted an index while the
    /// snapshot held orders for others of its table: the table is unchanged
    /// since that snapshot, so the sorted index is new or changed, and a
    /// snapshot now would spare every later open the sort.
    static func storesNewIndexOrders(_ storage: TableStorage, storedOrders: Int) -> Bool {
        // With quarantined entries the stored places do not fit the rows,
        // and would not after a compaction either.
        storedOrders > 0 && storage.quarantine.isEmpty && storage.indexesInStoredOrder < storage.indexes.count
            && storage.count >= indexOrdersStoredFrom
    }
}
