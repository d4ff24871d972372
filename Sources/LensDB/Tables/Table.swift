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
    let store: Store

    init(store: Store, name: String, indexes: [Index<T>]) {
        self.store = store
        self.name = name
        self.indexes = indexes
    }

    /// The table's contents in `state`: empty when it holds none.
    func contents(in state: StoreState) -> TableContents<T> {
        (state.typed[name] as? TableContents<T>) ?? TableContents(name: name, indexes: indexes)
    }

    /// The entity `id` in the latest committed version. O(log n); no decode.
    public subscript(id: T.ID) -> T? {
        contents(in: store.current).row(id)?.value
    }

    /// How many entities the latest committed version holds (quarantined
    /// entries not counted).
    public var count: Int { contents(in: store.current).rows.count }

    /// Every entity, in identifier order.
    public func all() -> [T] {
        var result: [T] = []
        let rows = contents(in: store.current).rows
        result.reserveCapacity(rows.count)
        rows.forEach { _, row in result.append(row.value); return true }
        return result
    }

    /// The stored values that did not decode when the table was opened with
    /// ``UndecodablePolicy/quarantine``, with why; each stays, bytes untouched,
    /// until ``remove(_:)-(T.ID)`` removes it.
    public var quarantined: [Quarantined<T.ID>] {
        let contents = contents(in: store.current)
        return contents.quarantine.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map {
            Quarantined(id: contents.id(fromKeyBytes: $0.key), key: $0.key, reason: $0.value.reason)
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
