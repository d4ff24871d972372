/// A typed table: entities of one `Codable` type, keyed by their `id`,
/// held decoded in memory with their secondary indexes.
///
/// ```swift
/// let people = try store.table(Person.self, named: "people", indexes: [.on(\.city), .unique(\.email)])
/// try people.put(alice)                       // one durable transaction
/// let found = people[42]                      // the latest committed version
/// let adults = try people.query.filter(\.age >= 18).all()
/// ```
///
/// Thread-safety: a `Table` may be used from any thread; reads see the
/// latest committed version and never wait for writers (promise 8), and
/// every write is a transaction serialized with all others.
///
/// Durability: a write returns when it is as durable as the store's
/// ``StoreOptions/durability`` says.
public final class Table<T: Entity>: Sendable {
    /// The table's name in the store.
    public let name: String
    /// The indexes it was opened with.
    public let indexes: [Index<T>]
    @usableFromInline let store: Store
    /// The ways queries of this handle were planned, by shape.
    let plans = PlanCache()

    init(store: Store, name: String, indexes: [Index<T>]) {
        self.store = store
        self.name = name
        self.indexes = indexes
    }

    /// The table's storage in `state`: empty when it holds none (a version
    /// from before the table was opened).
    @usableFromInline func storage(in state: StoreState) -> TableStorage {
        if let storage = state.typed[name], storage.schema.entityType == ObjectIdentifier(T.self) { return storage }
        return TableStorage(name: name, schema: .of(T.self), indexes: indexes.map(\.erased))
    }

    /// The entity a row of this table holds.
    @inlinable @inline(__always)
    static func entity(_ row: RowObject) -> T { unsafeDowncast(row, to: RowBox<T>.self).value }

    /// The identifier of the entity a row of this table holds, read in
    /// place: the rest of the entity is not copied.
    static func identifier(_ row: RowObject) -> T.ID { unsafeDowncast(row, to: RowBox<T>.self).value.id }

    /// The entity `id` in the latest committed version. O(log n); no decode.
    @inlinable
    public subscript(id: T.ID) -> T? {
        snapshot()[id]
    }

    /// How many entities the latest committed version holds (quarantined
    /// entries not counted).
    @inlinable public var count: Int { snapshot().count }

    /// Every entity of the latest committed version, in identifier order.
    @inlinable public func all() -> [T] { snapshot().all() }

    /// The latest committed version of the table, to read consistently:
    /// every read of the snapshot sees that one version, and a run of point
    /// reads pays for taking the version once. O(1).
    @inlinable
    public func snapshot() -> TableSnapshot<T> {
        let state = store.current
        return TableSnapshot(table: self, state: state, storage: storage(in: state))
    }

    /// The stored values that did not decode when the table was opened with
    /// ``UndecodablePolicy/quarantine``, with why, in key order; each stays,
    /// bytes untouched, until ``remove(_:)-(T.ID)`` removes it. Read one
    /// with ``Quarantined/document()`` to repair it.
    /// - Complexity: O(q log q) for q quarantined entries.
    public var quarantined: [Quarantined<T.ID>] {
        Self.quarantined(in: storage(in: store.current))
    }

    /// The quarantined entries of `storage`, in key order.
    static func quarantined(in storage: TableStorage) -> [Quarantined<T.ID>] {
        storage.quarantine.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map {
            Quarantined(id: identifier(fromKeyBytes: $0.key, storage.schema), key: $0.key, reason: $0.value.reason, bytes: $0.value.bytes)
        }
    }

    /// The identifier stored as `key`.
    static func identifier(fromKeyBytes key: [UInt8], _ schema: TableSchema) -> T.ID? {
        switch schema.identifier(fromKeyBytes: key) {
        case let .int(value)?: (value as? T.ID) ?? (Int(exactly: value) as? T.ID) ?? (UInt64(exactly: value) as? T.ID)
        case let .uint(value)?: value as? T.ID
        case let .string(value)?: value as? T.ID
        case let .uuid(value)?: value as? T.ID
        case let .bytes(value)?: try? ValueDecoder().decode(T.ID.self, from: value)
        default: nil
        }
    }

    /// A query over the latest committed version at the time it runs.
    public var query: Query<T> { Query(table: self, source: .latest) }

    /// Inserts or replaces `entity`, in a transaction of its own. A value
    /// whose encoding equals the stored one writes nothing.
    /// - Throws: ``TableError/uniqueViolation(index:value:)`` and the errors
    ///   of ``Store/write(durability:_:)``; on a throw nothing changed.
    public func put(_ entity: T) throws {
        try store.write { tx in try tx[self].put(entity) }
    }

    /// Inserts or replaces every entity, in one transaction: all or none.
    public func put(_ entities: some Sequence<T>) throws {
        try store.write { tx in try tx[self].put(entities) }
    }

    /// Removes the entity (or quarantined entry) `id`; nothing happens when absent.
    public func remove(_ id: T.ID) throws {
        try store.write { tx in try tx[self].remove(id) }
    }

    /// Removes every one of `ids`, in one transaction.
    public func remove(_ ids: some Sequence<T.ID>) throws {
        try store.write { tx in try tx[self].remove(ids) }
    }
}

/// One version of a typed table, read consistently: ``Table/snapshot()``.
///
/// A value: hold it as long as you like; commits made meanwhile are not in it.
public struct TableSnapshot<T: Entity>: Sendable {
    @usableFromInline let table: Table<T>
    @usableFromInline let state: StoreState
    @usableFromInline let storage: TableStorage

    @usableFromInline
    init(table: Table<T>, state: StoreState, storage: TableStorage) {
        self.table = table
        self.state = state
        self.storage = storage
    }

    /// The entity `id`. O(log n); no decode.
    @inlinable
    public subscript(id: T.ID) -> T? {
        // Only a value-format identifier can fail to encode, and no stored
        // entity has one that does.
        guard let key = try? identifierValue(id), let row = storage.unretainedRow(key) else { return nil }
        // The snapshot's storage holds the row while the entity is copied out.
        return withExtendedLifetime(storage) { row._withUnsafeGuaranteedRef(Table<T>.entity) }
    }

    /// How many entities this version holds.
    @inlinable public var count: Int { storage.entityCount }

    /// Every entity, in identifier order.
    @inlinable
    public func all() -> [T] {
        var result: [T] = []
        result.reserveCapacity(storage.entityCount)
        storage.forEachRow { row in result.append(Table<T>.entity(row)) }
        return result
    }

    /// A query over this version.
    public var query: Query<T> { Query(table: table, source: .state(state)) }
}
