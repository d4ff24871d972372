import Foundation

/// A typed table inside a transaction: `tx[people]`. Reads see the
/// transaction's own writes; writes become part of its one record.
///
/// ```swift
/// try store.write { tx in
///     try tx[people].put(alice)
///     try tx[orders].remove(7)
/// }
/// ```
public struct TableTransaction<T: Entity> {
    let table: Table<T>
    var transaction: Transaction

    var storage: TableStorage { table.storage(in: transaction.state) }
    var snapshot: TableSnapshot<T> { TableSnapshot(table: table, state: transaction.state, storage: storage) }

    /// The entity `id` as the transaction has it.
    public subscript(id: T.ID) -> T? { snapshot[id] }

    /// How many entities the transaction's version holds.
    public var count: Int { storage.rows.count }

    /// Every entity, in identifier order.
    public func all() -> [T] { snapshot.all() }

    /// The table's quarantined entries as the transaction has them, in key
    /// order: ``Table/quarantined`` less the ones this transaction removed.
    /// Replacing one is a remove of its identifier followed by a put, both
    /// here; the commit then holds the new entity and not the old bytes, or
    /// (when the block throws) neither change.
    /// - Complexity: O(q log q) for q quarantined entries.
    public var quarantined: [Quarantined<T.ID>] { Table<T>.quarantined(in: storage) }

    /// A query over the transaction's version, its own writes included.
    public var query: Query<T> { Query(table: table, source: .state(transaction.state)) }

    /// Inserts or replaces `entity`. A value whose encoding equals the stored
    /// one changes nothing. A quarantined entry is not replaced by a put:
    /// remove it first, in this transaction (see ``quarantined``).
    /// - Throws: ``TableError/uniqueViolation(index:value:)``,
    ///   ``TableError/quarantined(table:id:)``,
    ///   ``TableError/identifierNotNormalized(table:id:)``,
    ///   ``TableError/storeMismatch(table:)``, or an `EncodingError`; the
    ///   transaction is then as it was before the call.
    public mutating func put(_ entity: T) throws {
        var storage = try takeStorage()
        defer { transaction.state.typed[table.name] = storage }
        guard let (row, key, bytes) = try staged(entity, id: identifier(of: entity.id), in: storage) else { return }
        transaction.declare(storage.encoding, forTable: table.name)
        storage.put(row, id: row.id)
        transaction.appendPut(table: table.name, key: key, value: bytes)
    }

    /// Inserts or replaces every entity. A throw leaves the ones before it
    /// in the transaction; ``Store/write(durability:_:)`` then commits none.
    /// Indexes other than unique ones take the whole batch in at its end,
    /// which for a batch large beside the table is a rebuild, not a descent
    /// per entity. A large batch is encoded on another thread while its
    /// entities are put, in order, on this one, which encodes some of them
    /// too when it gets ahead.
    /// - Throws: what a put of one entity throws, for the first that fails.
    public mutating func put(_ entities: some Sequence<T>) throws {
        try put(Array(entities), encodingAheadFrom: Parallel.itemsPerThread)
    }

    /// ``put(_:)``, encoding the entities ahead on another thread when two
    /// threads would each have at least `smallest` of them (tests encode
    /// small batches ahead).
    mutating func put(_ entities: [T], encodingAheadFrom smallest: Int) throws {
        var storage = try takeStorage()
        let loads = storage.rows.isEmpty && storage.quarantine.isEmpty
        let encodings = Self.encodings(of: entities, smallest: smallest, rows: loads ? nil : (storage.schema, transaction.state.lsn + 1))
        var deferred: [IndexChange] = []
        deferred.reserveCapacity(entities.count)
        transaction.reserve(entities.count + 1)
        // A load: a batch into an empty table, its identifiers ascending, as
        // an import makes. No entity replaces another, so its rows wait in
        // a list, which becomes the row tree at once instead of a descent
        // per entity. The first identifier out of order ends the load: the
        // rows so far become the tree, and the rest are put into it.
        var loading: [RowObject]? = loads ? [] : nil
        var completed = false
        defer {
            // What a throw leaves unstaged need not be encoded.
            encodings?.stop()
            if let loading { storage.load(loading) }
            // The record's bytes and compression are made beside the
            // indexes, on a core they would leave idle; the commit then
            // has the record ready. Not after a throw, which most write
            // blocks do not catch: the transaction is then dropped.
            transaction.keep(storage.apply(deferred, alongside: completed ? transaction.recordAhead() : nil))
            transaction.state.typed[table.name] = storage
        }
        var declared = false
        // By place: `enumerated()` would copy each entity, retaining its fields.
        for place in entities.indices {
            let id = try identifier(of: entities[place].id)
            if let last = loading?.last, !(last.id < id) { storage.load(loading.take()!) }
            // Each encoding is moved out: the slots freed at the batch's end
            // then hold none to release, a cache miss each.
            guard let (row, key, bytes) = try staged(entities[place], id: id, encoded: encodings?.take(place), in: storage) else { continue }
            if !declared {
                transaction.declare(storage.encoding, forTable: table.name)
                declared = true
            }
            if loading != nil {
                storage.append(row, deferring: &deferred, loading: &loading!)
            } else {
                storage.put(row, id: row.id, deferring: &deferred)
            }
            transaction.appendPut(table: table.name, key: key, value: bytes)
        }
        completed = true
    }

    /// An entity's encoding and its summary, with the row and key a put of
    /// it stages when they were made ahead, or what encoding it threw.
    private typealias Encoded = Result<
        (bytes: [UInt8], summary: EncodingSummary, made: (row: RowObject, key: [UInt8])?), any Error
    >

    /// The encodings of `entities`, made ahead on another thread while the
    /// put stages them in order, each taken out as it is staged; nil for a
    /// batch too small to be worth a thread, which is encoded one entity at
    /// a time as it is put. Encoding reads an entity and nothing else.
    ///
    /// Staging and encoding overlap: staging finds the row each entity
    /// replaces (a miss) and copies the rows' leaves, while the other
    /// thread encodes those after it. When staging is the quicker (a load
    /// into an empty table), the put encodes chunks no thread has begun
    /// rather than wait, so both threads encode.
    ///
    /// The other thread makes each entity's row (its box, stamped `lsn`)
    /// and key bytes (by `schema`) too, which depend on the entity alone:
    /// staging, the slower of the two in a batch of updates, then only
    /// finds and replaces. The put checks each identifier itself, in order,
    /// before it takes the row made for it; a put that changes nothing, or
    /// throws, drops that row.
    private static func encodings(
        of entities: [T], smallest: Int, rows: (schema: TableSchema, lsn: UInt64)?
    ) -> MadeInOrder<Encoded>? {
        // Worth the other thread when each of two would have `smallest`.
        guard Parallel.threads > 1, entities.count / 2 >= max(1, smallest) else { return nil }
        return MadeInOrder(count: entities.count, chunk: min(smallest, Self.encodedTogether)) { place in
            Result {
                let bytes = try ValueEncoder().encode(entities[place])
                let summary = EncodingSummary(bytes)
                let made = rows.flatMap { rows in
                    (try? identifierValue(entities[place].id)).map { id -> (row: RowObject, key: [UInt8]) in
                        (RowBox(entities[place], id: id, lsn: rows.lsn, encoding: summary), rows.schema.keyBytes(of: id))
                    }
                }
                return (bytes: bytes, summary: summary, made: made)
            }
        }
    }

    /// How many encodings the other thread makes before the put may take
    /// them: a handover per chunk, not per entity. Tuning only.
    private static var encodedTogether: Int { 64 }

    /// The row, key and encoding a put of `entity` writes; nil when the
    /// stored entity encodes the same, so the put changes nothing. `id` is
    /// its identifier as stored (``identifier(of:)``); `encoded` is its
    /// encoding when that was made ahead, with its row and key when those were.
    private func staged(
        _ entity: T, id: IndexValue, encoded: Encoded? = nil, in storage: TableStorage
    ) throws -> (row: RowObject, key: [UInt8], bytes: [UInt8])? {
        let ahead = try? encoded?.get()
        let made = ahead?.made
        let key = made?.key ?? storage.schema.keyBytes(of: id)
        // Most tables quarantine nothing: then the key is not hashed.
        if !storage.quarantine.isEmpty, storage.quarantine[key] != nil {
            throw TableError.quarantined(table: table.name, id: "\(entity.id)")
        }
        let encoder = ValueEncoder()
        let (bytes, encoding): ([UInt8], EncodingSummary)
        if let ahead {
            (bytes, encoding) = (ahead.bytes, ahead.summary)
        } else {
            // What encoding ahead threw, thrown after the checks before it.
            _ = try encoded?.get()
            bytes = try encoder.encode(entity)
            encoding = EncodingSummary(bytes)
        }
        // Only an equal hash needs the stored entity encoded again to be sure.
        if let old = storage.row(id), old.encodingHash == encoding.hash, try encoder.encode(Table<T>.entity(old)) == bytes { return nil }
        let row = made?.row ?? RowBox(entity, id: id, lsn: transaction.state.lsn + 1, encoding: encoding)
        for index in storage.indexes {
            if let key = index.conflict(with: row) {
                throw TableError.uniqueViolation(index: "\(table.name).\(index.definition.name)", value: key.description)
            }
        }
        return (row, key, bytes)
    }

    /// Removes the entity (or quarantined entry) `id`; nothing happens when absent.
    /// - Throws: ``TableError/identifierNotNormalized(table:id:)`` or
    ///   ``TableError/storeMismatch(table:)``; the transaction is then as it was.
    public mutating func remove(_ id: T.ID) throws {
        var storage = try takeStorage()
        defer { transaction.state.typed[table.name] = storage }
        let value = try identifier(of: id)
        let key = storage.schema.keyBytes(of: value)
        if storage.quarantine.removeValue(forKey: key) == nil {
            guard storage.remove(value) != nil else { return }
        }
        if storage.count == 0 { transaction.forgetEncoding(ofTable: table.name) }
        transaction.append(.remove(table: table.name, key: key))
    }

    /// Removes every one of `ids`.
    public mutating func remove(_ ids: some Sequence<T.ID>) throws {
        for id in ids { try remove(id) }
    }

    /// The storage, out of the state for the length of a change, so the
    /// change mutates its trees in place instead of copying them: the
    /// state's copy would otherwise share every node. Refuses a handle of
    /// another store, whose storage is not this transaction's.
    private mutating func takeStorage() throws(TableError) -> TableStorage {
        guard transaction.store.map({ $0 == ObjectIdentifier(table.store) }) ?? true else { throw .storeMismatch(table: table.name) }
        let storage = table.storage(in: transaction.state)
        transaction.state.typed[table.name] = nil
        return storage
    }

    private func identifier(of id: T.ID) throws -> IndexValue {
        // Checked on what is stored: a string identifier, however it was given.
        let value = try identifierValue(id)
        if case let .string(text) = value, !IndexValue.isNFC(text) {
            throw TableError.identifierNotNormalized(table: table.name, id: text)
        }
        return value
    }
}

extension Transaction {
    /// The typed table `table` inside this transaction.
    public subscript<T: Entity>(table: Table<T>) -> TableTransaction<T> {
        get { TableTransaction(table: table, transaction: self) }
        _modify {
            var view = TableTransaction(table: table, transaction: self)
            // Leave nothing here that shares the view's storage, so its
            // changes are made in place.
            self = Transaction(base: StoreState())
            defer { self = view.transaction }
            yield &view
        }
    }
}
