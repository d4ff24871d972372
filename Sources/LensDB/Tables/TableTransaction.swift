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

    var contents: TableContents<T> { table.contents(in: transaction.state) }

    /// The entity `id` as the transaction has it.
    public subscript(id: T.ID) -> T? { contents.row(id)?.value }

    /// How many entities the transaction's version holds.
    public var count: Int { contents.rows.count }

    /// Every entity, in identifier order.
    public func all() -> [T] {
        var result: [T] = []
        contents.rows.forEach { _, row in result.append(row.value); return true }
        return result
    }

    /// A query over the transaction's version, its own writes included.
    public var query: Query<T> { Query(table: table, source: .state(transaction.state)) }

    /// Inserts or replaces `entity`. A value whose encoding equals the stored
    /// one changes nothing.
    /// - Throws: ``TableError/uniqueViolation(index:value:)``,
    ///   ``TableError/quarantined(table:id:)``,
    ///   ``TableError/identifierNotNormalized(table:id:)``, or an
    ///   `EncodingError`; the transaction is then as it was before the call.
    public mutating func put(_ entity: T) throws {
        var contents = takeContents()
        defer { transaction.state.typed[table.name] = contents }
        let key = try keyBytes(of: entity.id, in: contents)
        if contents.quarantine[key] != nil { throw TableError.quarantined(table: table.name, id: "\(entity.id)") }
        let encoder = ValueEncoder()
        let bytes = try encoder.encode(entity)
        let old = contents.row(entity.id)
        if let old, try encoder.encode(old.value) == bytes { return }
        for index in contents.indexes {
            if let conflict = index.conflict(with: entity) {
                throw TableError.uniqueViolation(index: "\(table.name).\(index.definition.name)", value: conflict.key.description)
            }
        }
        transaction.declare(contents.encoding, forTable: table.name)
        contents.put(entity, lsn: transaction.state.lsn + 1)
        transaction.append(.put(table: table.name, key: key, value: .encoded(bytes)))
    }

    /// Inserts or replaces every entity. A throw leaves the ones before it
    /// in the transaction; ``Store/write(durability:_:)`` then commits none.
    public mutating func put(_ entities: some Sequence<T>) throws {
        for entity in entities { try put(entity) }
    }

    /// Removes the entity (or quarantined entry) `id`; nothing happens when absent.
    public mutating func remove(_ id: T.ID) throws {
        var contents = takeContents()
        defer { transaction.state.typed[table.name] = contents }
        let key = try keyBytes(of: id, in: contents)
        if contents.quarantine.removeValue(forKey: key) == nil {
            guard contents.remove(id) != nil else { return }
        }
        if contents.count == 0 { transaction.forgetEncoding(ofTable: table.name) }
        transaction.append(.remove(table: table.name, key: key))
    }

    /// Removes every one of `ids`.
    public mutating func remove(_ ids: some Sequence<T.ID>) throws {
        for id in ids { try remove(id) }
    }

    /// The contents, out of the state for the length of a change, so the
    /// change mutates its trees in place instead of copying them: the
    /// state's copy would otherwise share every node.
    private mutating func takeContents() -> TableContents<T> {
        let contents = table.contents(in: transaction.state)
        transaction.state.typed[table.name] = nil
        return contents
    }

    private func keyBytes(of id: T.ID, in contents: TableContents<T>) throws -> [UInt8] {
        if let text = id as? String, !text.utf8.allSatisfy({ $0 < 0x80 }),
           !text.unicodeScalars.elementsEqual(text.precomposedStringWithCanonicalMapping.unicodeScalars) {
            throw TableError.identifierNotNormalized(table: table.name, id: text)
        }
        return try contents.keyBytes(of: id)
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
