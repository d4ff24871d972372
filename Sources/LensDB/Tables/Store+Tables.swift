import CLensPrefetch
import HashTreeCollections

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
    /// `T`'s `init(from:)` runs on the calling thread and, for a large
    /// table, on threads of the store's own, all while the open holds the
    /// writers' lock: it must not call back into this store (read its
    /// ``statistics``, watch it, open a table or root, write), which would
    /// wait for the open forever or stop the process.
    /// - Throws: ``TableError/undecodable(table:id:codingPath:missingField:reason:count:)``
    ///   when stored values no longer decode as `T` (unless `onUndecodable`
    ///   is ``UndecodablePolicy/quarantine``); ``TableError/typeMismatch(table:openedAs:requested:)``,
    ///   ``TableError/indexMismatch(table:opened:requested:)``,
    ///   ``TableError/encodingMismatch(table:stored:expected:)``,
    ///   ``TableError/uniqueViolation(index:value:)`` when stored entities
    ///   break a unique index; ``StoreError/reentrantWrite(path:)`` from
    ///   inside a write block of this store, whose writers' lock the open
    ///   needs. A throw changes nothing.
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
    @inlinable
    public func table<T: Entity>(
        _ type: T.Type, named name: String, indexes: [Index<T>] = [], onUndecodable: UndecodablePolicy = .fail
    ) throws -> Table<T> {
        // The rows are made by code compiled here, for `T`.
        try table(type, named: name, indexes: indexes, onUndecodable: onUndecodable, makingRows: RowBox<T>.maker)
    }

    /// ``table(_:named:indexes:onUndecodable:)``, its rows decoded by `makeRow`.
    @usableFromInline
    func table<T: Entity>(
        _ type: T.Type, named name: String, indexes: [Index<T>], onUndecodable: UndecodablePolicy, makingRows makeRow: RowMaker<T>
    ) throws -> Table<T> {
        var storesNewOrders = false
        defer { if storesNewOrders { compactInBackground() } }
        // The state before the table's first open, with the bytes it held.
        var replaced: StoreState?
        defer {
            // Freed on the reclaimer's thread while the program goes on
            // with its table, or here, outside the writers' lock, when that
            // thread is behind.
            if replaced != nil { Self.reclaim(&replaced, leaving: nil) }
        }
        return try writer.withLock(reentry: StoreError.reentrantWrite(path: path ?? ":memory:") as any Error) { side throws -> Table<T> in
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
            let loader = TableLoader<T>(name: name, indexes: indexes, policy: onUndecodable, makeRow: makeRow)
            let storage = try loader.load(from: side.head)
            storesNewOrders = Self.storesNewIndexOrders(storage, storedOrders: storedOrders)
            side.head.typed[name] = storage
            side.head.tables[name] = nil
            side.head.snapshotTables[name] = nil
            side.head.indexOrders[name] = nil
            // The same state, held decoded: readers cannot tell the difference.
            var before = side.head
            published.withLock { swap(&$0, &before) }
            replaced = before
            register(table: name, for: T.self)
            return Table(store: self, name: name, indexes: indexes)
        }
    }

    /// Waits, holding the writers' lock, until every commit already queued
    /// is published, so that the version readers see and the head are one
    /// and both can take the decoded table.
    func waitForInFlightCommits(_ side: WriterSide) throws {
        // The store's own failure cannot change while this holds the lock
        // `fail` takes: a commit's failure shows in its log's, the one a
        // compaction swapped out while that commit waited included.
        let failure = { side.log?.failure ?? side.drainingLog?.failure }
        if waitForPublication(through: side.head.lsn, unless: { failure() != nil }) { return }
        if let failure = failure() { throw StoreError.failed(path: path ?? ":memory:", cause: "\(failure)") }
    }

    /// Waits, 100 µs at a time, until readers see the version through
    /// `lsn`: a commit publishes after its log wait, outside the writers'
    /// lock. Stops when `failed` says a commit will not publish, or after
    /// `pauses` pauses; returns whether the version was published.
    func waitForPublication(through lsn: UInt64, pauses: Int = .max, unless failed: () -> Bool) -> Bool {
        var paused = 0
        while current.lsn < lsn {
            if failed() || paused >= pauses { return false }
            var pause = timespec(tv_sec: 0, tv_nsec: 100_000)
            nanosleep(&pause, nil)
            paused += 1
        }
        return true
    }
}

/// Decodes a table's stored entries into entities and builds its indexes.
struct TableLoader<T: Entity> {
    let name: String
    let indexes: [Index<T>]
    let policy: UndecodablePolicy
    /// Decodes an entity into its row. The store passes ``RowBox/maker``
    /// as compiled in the program's module for `T` (in an optimized build):
    /// code generic over `T` here would ask the runtime for `RowBox<T>`'s
    /// metadata and `T.ID`'s at every row. The default, compiled here, is
    /// for tests.
    var makeRow: RowMaker<T> = RowBox<T>.maker
    /// The fewest entries worth a thread of their own: a table this large
    /// decodes on several threads, and builds its indexes on several.
    var entriesPerThread = Parallel.itemsPerThread

    func load(from state: StoreState) throws -> TableStorage {
        var storage = TableStorage(name: name, schema: .of(T.self), indexes: indexes.map(\.erased))
        let count = state.count(in: name)
        if let declared = state.encoding(ofTable: name), declared != storage.encoding, count > 0 {
            throw TableError.encodingMismatch(table: name, stored: declared, expected: storage.encoding)
        }
        let entries = state.snapshotTables[name].map(StoredEntries.snapshot) ?? Self.entries(state.tables[name] ?? [:])
        // Large tables decode on every core, each thread a run of entries.
        let ranges = Parallel.runs(of: entries.count, smallest: entriesPerThread)
        let schema = storage.schema, lsn = state.lsn
        var runs = Parallel.map(ranges.count) { run in decode(entries, ranges[run], schema: schema, lsn: lsn) }
        // The first run's identifiers are taken whole, and the others' appended.
        var ids: [IndexValue] = []
        if !runs.isEmpty { swap(&ids, &runs[0].ids) }
        ids.reserveCapacity(ids.count + runs.dropFirst().reduce(0) { $0 + $1.ids.count })
        // Rows come in identifier order from a table as its snapshot holds
        // it, whose keys ascend; a table changed since is a hash map.
        var ascending = state.snapshotTables[name] != nil && runs.allSatisfy(\.ascending)
        for run in runs.dropFirst() {
            if let last = ids.last, let next = run.ids.first, !(last < next) { ascending = false }
            ids.append(contentsOf: run.ids)
        }
        var rows = DecodedRows(joining: runs.map(\.rows))
        let failures = runs.flatMap(\.failures).map { (key: entries.key(at: $0.position), bytes: entries.value(at: $0.position), error: $0.error) }
        if policy == .quarantine {
            for failure in failures { storage.quarantine[failure.key] = QuarantinedEntry(bytes: failure.bytes, reason: Self.reason(failure.error)) }
        }
        if policy == .fail, let first = failures.min(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let id = Table<T>.identifier(fromKeyBytes: first.key, storage.schema).map { "\($0)" }
                ?? RenderedValue(key: first.key, encoding: storage.schema.keyEncoding).text
            throw TableError.undecodable(table: name, id: id, codingPath: Self.codingPath(first.error),
                                         missingField: DecodingFailure.missingField(first.error),
                                         reason: Self.reason(first.error), count: failures.count)
        }
        if !ascending {
            let order = sortedPermutation(ids)
            ids = order.map { ids[$0] }
            rows = rows.permuted(order)
        }
        storage.encodedBytes = runs.reduce(0) { $0 + $1.encodedBytes }
        // The snapshot's orders place rows among its entries; with an entry
        // that did not decode, the places are not the rows' any more.
        try buildIndexes(&storage, rows, orders: failures.isEmpty ? state.indexOrders[name] ?? [:] : [:])
        // Last, as the index builds read the rows where they are.
        storage.load(ids: ids, moving: rows)
        return storage
    }

    /// The keys and values of a table held as a hash map, in no particular
    /// order. Its values are bytes: `.decoded` occurs only in a table a
    /// program has opened with its type.
    private static func entries(_ table: TreeDictionary<[UInt8], StoredValue>) -> StoredEntries {
        var keys: [[UInt8]] = [], values: [[UInt8]] = []
        keys.reserveCapacity(table.count)
        values.reserveCapacity(table.count)
        for (key, value) in table {
            keys.append(key)
            values.append((try? value.bytes()) ?? [])
        }
        return .arrays(keys: keys, values: values)
    }

    /// A table's stored entries, as a load reads them: in the snapshot's
    /// chunks, or (a table changed since) in arrays of their own.
    enum StoredEntries: Sendable {
        case snapshot(SnapshotEntries)
        case arrays(keys: [[UInt8]], values: [[UInt8]])

        var count: Int {
            switch self {
            case let .snapshot(entries): entries.count
            case let .arrays(keys, _): keys.count
            }
        }

        func key(at index: Int) -> [UInt8] {
            switch self {
            case let .snapshot(entries): entries.key(at: index)
            case let .arrays(keys, _): keys[index]
            }
        }

        func value(at index: Int) -> [UInt8] {
            switch self {
            case let .snapshot(entries): entries.value(at: index)
            case let .arrays(_, values): values[index]
            }
        }

        /// Calls `body` with the place, key and value of each entry in
        /// `range`, in order, the bytes lent.
        func forEach(in range: Range<Int>, _ body: (Int, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Void) {
            switch self {
            case let .snapshot(entries):
                entries.forEach(in: range, body)
            case let .arrays(keys, values):
                for position in range {
                    // Each key and value is an allocation of its own, seldom
                    // in the cache: the ones a few entries on start loading now.
                    if position + TableLoader.loadedAhead < range.upperBound {
                        TableLoader.prefetchStorage(of: keys, at: position + TableLoader.loadedAhead)
                        TableLoader.prefetchStorage(of: values, at: position + TableLoader.loadedAhead)
                    }
                    keys[position].withUnsafeBytes { key in values[position].withUnsafeBytes { body(position, key, $0) } }
                }
            }
        }
    }

    /// What decoding a run of entries gives: its rows and their
    /// identifiers, whether those ascend, and the entries that did not
    /// decode (by position).
    private struct DecodedRun {
        var ids: [IndexValue] = []
        var rows: DecodedRows
        var ascending = true
        var failures: [(position: Int, error: any Error)] = []
        /// The bytes of the rows' encodings, together.
        var encodedBytes = 0
    }

    /// Decodes the entries at `range`. Safe on several threads at once:
    /// it reads its arguments and writes only what it returns.
    private func decode(_ entries: StoredEntries, _ range: Range<Int>, schema: TableSchema, lsn: UInt64) -> DecodedRun {
        let state = DecodingState(), make = makeRow.make
        var run = DecodedRun(rows: DecodedRows(capacity: range.count))
        run.ids.reserveCapacity(range.count)
        entries.forEach(in: range) { position, key, value in
            do {
                let encoding = EncodingSummary(value)
                let row = try make(value, state, lsn, encoding)
                let id = row.id
                guard schema.isKey(key, of: id) else {
                    // A RowMaker<T> makes a RowBox<T>.
                    let entity = unsafeDowncast(row, to: RowBox<T>.self).value
                    throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "stored under a key that is not its identifier \(entity.id)"))
                }
                if run.ascending, let last = run.ids.last, !(last < id) { run.ascending = false }
                run.ids.append(id)
                run.rows.append(row)
                run.encodedBytes += Int(encoding.count)
            } catch {
                run.failures.append((position, error))
            }
        }
        return run
    }

    /// How many entries ahead a decode starts loading the key and value of
    /// an entry held in arrays (``StoredEntries/forEach(in:_:)``). Tuning only.
    fileprivate static var loadedAhead: Int { 8 }

    /// Starts loading the storage of `arrays[place]`, which must be a place
    /// of `arrays`: its header and first 96 bytes. An array is one
    /// reference to its storage, read here as bits, without the retain a
    /// copy of the array would make (a write to the line this is to load).
    /// Were the layout ever otherwise, the prefetch would only load the
    /// wrong line: a prefetch never faults.
    @inline(__always) fileprivate static func prefetchStorage(of arrays: [[UInt8]], at place: Int) {
        arrays.withUnsafeBufferPointer { arrays in
            if let storage = UnsafeRawPointer(arrays.baseAddress! + place).load(as: UnsafeRawPointer?.self) {
                lens_prefetch_object(storage)
            }
        }
    }

    /// Fills every index from the rows, checking unique ones: in the order
    /// the snapshot stored when it is the index's order, else sorted.
    private func buildIndexes(
        _ storage: inout TableStorage, _ rows: DecodedRows, orders: [String: [UInt32]]
    ) throws {
        let definitions = storage.indexes.map(\.definition)
        // Each index on a thread of its own, when the table is large enough.
        let parallel = rows.count >= entriesPerThread
        let built = parallel
            ? Parallel.map(definitions.count) { IndexStorage(definitions[$0], rows: rows.rows, storedOrder: orders[definitions[$0].name]) }
            : definitions.map { IndexStorage($0, rows: rows.rows, storedOrder: orders[$0.name]) }
        for (position, index) in built.enumerated() {
            let definition = definitions[position]
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

/// Rows an open decoded, held until they move into the table's row tree.
/// Moving them there, rather than copying an array of them, spares a
/// retain and a release of each row, a cache miss each on a table's worth
/// of rows (4.6 ms of CPU on one thread in an open of 100k).
///
/// `@unchecked Sendable`: nothing here is synchronized, and it is safe as
/// ``TableLoader`` uses it. A decode run fills its own on one thread and
/// hands it over when `Parallel.map` returns, which orders its writes
/// before the joining thread's reads; index builds then read the rows on
/// several threads, and nothing changes them until they are done.
final class DecodedRows: @unchecked Sendable {
    private let base: UnsafeMutablePointer<RowObject>
    private let capacity: Int
    /// How many rows, from the first place on, this holds.
    private(set) var count = 0

    /// Room for `capacity` rows.
    init(capacity: Int) {
        base = .allocate(capacity: capacity)
        self.capacity = capacity
    }

    /// The rows of `parts` in turn, moved out of them.
    convenience init(joining parts: [DecodedRows]) {
        self.init(capacity: parts.reduce(0) { $0 + $1.count })
        for part in parts {
            (base + count).moveInitialize(from: part.base, count: part.count)
            count += part.count
            part.count = 0
        }
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    /// Adds `row` after the others.
    func append(_ row: consuming RowObject) {
        precondition(count < capacity, "room for every row was made")
        (base + count).initialize(to: row)
        count += 1
    }

    /// The rows, read in place; valid while this holds them.
    var rows: UnsafeBufferPointer<RowObject> { UnsafeBufferPointer(start: base, count: count) }

    /// The rows in `order`, a permutation of their places, moved out of this.
    func permuted(_ order: [Int]) -> DecodedRows {
        // A place named twice would be moved out twice.
        precondition(StoreState.namesEachOnce(order, count: count), "an order names each row once")
        let permuted = DecodedRows(capacity: count)
        for place in order { permuted.append((base + place).move()) }
        count = 0
        return permuted
    }

    /// What `body` makes of a function that moves each row out, asked for
    /// each place once, in order from the first; `body` takes every row.
    func moveAll<Result>(_ body: ((Int) -> RowObject) -> Result) -> Result {
        var next = 0
        let result = body { place in
            precondition(place == next, "rows are taken in order, each once")
            next += 1
            return (base + place).move()
        }
        precondition(next == count, "every row is taken")
        count = 0
        return result
    }
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

/// A key made of ``IndexValue`` fields, sorted field by field by
/// `sortedPermutation(_:)`: an index key, or an index entry, whose fields
/// are its key's.
protocol FieldedKey: Comparable {
    /// How many fields the key has.
    var fieldCount: Int { get }
    /// The value of field `position`.
    func field(_ position: Int) -> IndexValue
    /// Whether `a`'s fields come before `b`'s, compared field by field:
    /// the order of keys alone, which an entry's `<` extends by identifier.
    static func fieldsPrecede(_ a: Self, _ b: Self) -> Bool
}

extension FieldedKey {
    /// -1, 0 or 1 as the first fields of the key at `place` (as many as
    /// `values` has) come before, equal or after `values`, compared field
    /// by field. By place: a method of the key called on `place.pointee`
    /// copied the whole key first, every field of an index entry.
    static func compareLeading(_ place: UnsafePointer<Self>, _ values: [IndexValue]) -> Int {
        for position in 0..<Swift.min(place.pointee.fieldCount, values.count) {
            let order = IndexValue.order(place.pointee.field(position), values[position])
            if order != 0 { return order }
        }
        return 0
    }
}

extension IndexedKey: FieldedKey {
    var fieldCount: Int { count }
    func field(_ position: Int) -> IndexValue { self[position] }
    static func fieldsPrecede(_ a: Self, _ b: Self) -> Bool { a < b }
}

/// A value as a key of one field: identifiers sort as such, 24 bytes each
/// where an ``IndexedKey`` takes 72.
extension IndexValue: FieldedKey {
    var fieldCount: Int { 1 }

    func field(_ position: Int) -> IndexValue {
        assert(position == 0, "field \(position) of a one-field key")
        return self
    }

    static func fieldsPrecede(_ a: Self, _ b: Self) -> Bool { a < b }
}

/// The positions of index keys in ascending order, equal keys by position,
/// as an index is built: ties stay in the order the rows came in.
func sortedPermutation<Key: FieldedKey>(_ keys: [Key]) -> [Int] {
    keys.withUnsafeBufferPointer(sortedPermutation)
}

/// The same, for keys read in place.
///
/// Sorts field by field by each value's ``IndexValue/orderPrefix``, as
/// integers: first all the keys by their first field's prefix, then each
/// run of equal prefixes whose first fields are all equal by the next
/// field's, and so on. Where a field takes few values, as most indexed
/// fields do, nearly every comparison is then of two integers. A run whose
/// prefixes tie and whose values do not (long strings that share their
/// first 7 bytes) is sorted by the keys themselves.
func sortedPermutation<Key: FieldedKey>(_ keys: UnsafeBufferPointer<Key>) -> [Int] {
    var order = Array(keys.indices)
    guard let fields = keys.first?.fieldCount else { return order }
    /// Sorts `range` of `order`, whose keys agree on the fields before `field`
    /// and are in ascending position.
    func sort(_ range: Range<Int>, from field: Int) {
        guard field < fields, range.count > 1 else { return }  // All equal: by position.
        var prefixed = order[range].map { (prefix: keys[$0].field(field).orderPrefix, place: $0) }
        sortByPrefix(&prefixed)
        for (offset, entry) in prefixed.enumerated() { order[range.lowerBound + offset] = entry.place }
        var start = 0
        while start < prefixed.count {
            var end = start + 1
            while end < prefixed.count, prefixed[end].prefix == prefixed[start].prefix { end += 1 }
            let run = range.lowerBound + start..<range.lowerBound + end
            // Equal as the index orders them: neither comes before the other.
            let first = keys[order[run.lowerBound]].field(field)
            if order[run].allSatisfy({ !(keys[$0].field(field) < first) && !(first < keys[$0].field(field)) }) {
                sort(run, from: field + 1)
            } else {
                order[run].sort { Key.fieldsPrecede(keys[$0], keys[$1]) || (!Key.fieldsPrecede(keys[$1], keys[$0]) && $0 < $1) }
            }
            start = end
        }
    }
    sort(order.indices, from: 0)
    return order
}

/// Sorts `items`, whose places ascend, by prefix and then place: a radix
/// sort a byte at a time from the lowest, skipping the bytes every prefix
/// shares, as an indexed field's few values leave most of them. Each pass
/// keeps the order of equal bytes, so it sorts by its byte, then by the
/// bytes below it, then by place. A short run is sorted by comparisons:
/// there a pass's 257 counters would cost more than they save.
func sortByPrefix(_ items: inout [(prefix: UInt64, place: Int)]) {
    guard items.count > 256 else {
        items.sort { $0.prefix != $1.prefix ? $0.prefix < $1.prefix : $0.place < $1.place }
        return
    }
    let first = items[0].prefix
    let varying = items.reduce(UInt64(0)) { $0 | ($1.prefix ^ first) }
    var other = items
    var starts = [Int](repeating: 0, count: 257)
    for shift in stride(from: UInt64(0), to: 64, by: 8) where (varying >> shift) & 0xFF != 0 {
        items.withUnsafeBufferPointer { from in
            other.withUnsafeMutableBufferPointer { to in
                starts.withUnsafeMutableBufferPointer { next in
                    // Where each byte's items go next: counted, then summed.
                    next.update(repeating: 0)
                    for item in from { next[(Int(truncatingIfNeeded: item.prefix >> shift) & 0xFF) + 1] += 1 }
                    for byte in 0..<256 { next[byte + 1] += next[byte] }
                    for item in from {
                        let byte = Int(truncatingIfNeeded: item.prefix >> shift) & 0xFF
                        to[next[byte]] = item
                        next[byte] += 1
                    }
                }
            }
        }
        swap(&items, &other)
    }
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
