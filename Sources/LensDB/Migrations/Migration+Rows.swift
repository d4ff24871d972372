#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Migration {
    /// Adds `field` with `value` to every row of `table` that lacks it (a
    /// row that has the field, even as null, keeps its value).
    ///
    /// ```swift
    /// try migration.addField("nickname", default: "", inTable: "people")
    /// ```
    /// - Throws: ``MigrationError``; an `EncodingError` when `value` does not encode.
    /// - Complexity: O(n) in the table's stored size.
    public mutating func addField(_ field: String, default value: some Encodable, inTable table: String) throws {
        let filler = try DocumentEncoder().encode(value)
        try updateRows(inTable: table) { row in
            guard case let .object(entries) = row, entries[field] == nil else { return }
            row[field] = filler
        }
    }

    /// Removes `field` from every row of `table` that has it.
    public mutating func removeField(_ field: String, inTable table: String) throws {
        try updateRows(inTable: table) { row in row.removeValue(forKey: field) }
    }

    /// Renames `field` to `newName` in every row of `table` that has it,
    /// replacing a value already under `newName`.
    public mutating func renameField(_ field: String, to newName: String, inTable table: String) throws {
        try updateRows(inTable: table) { row in
            guard let value = row.removeValue(forKey: field) else { return }
            row[newName] = value
        }
    }

    /// Replaces the value of `field` with what `transform` makes of it, in
    /// every row of `table` that has the field: a change of the field's type.
    ///
    /// ```swift
    /// try migration.changeField("age", inTable: "people") { old in
    ///     guard case let .string(text) = old, let age = Int64(text) else { return .null }
    ///     return .int(age)
    /// }
    /// ```
    /// - Throws: ``MigrationError``, or what `transform` throws.
    public mutating func changeField(_ field: String, inTable table: String, _ transform: (Document) throws -> Document) throws {
        try updateRows(inTable: table) { row in
            guard case let .object(entries) = row, let value = entries[field] else { return }
            row[field] = try transform(value)
        }
    }

    /// ``changeField(_:inTable:_:)`` through Swift types: each value of
    /// `field` is decoded as `Old`, converted, and stored as `New`.
    /// - Throws: ``MigrationError/undecodable(store:migration:table:key:reason:)``
    ///   when a value is not an `Old`; what `convert` throws.
    public mutating func changeField<Old: Decodable, New: Encodable>(
        _ field: String, inTable table: String, from old: Old.Type, to new: New.Type, _ convert: (Old) throws -> New
    ) throws {
        try changeField(field, inTable: table) { value in
            try DocumentEncoder().encode(convert(try DocumentDecoder().decode(Old.self, from: value)))
        }
    }

    /// Calls `body` with every row of `table`, as a document it may change.
    /// A row `body` leaves equal is not written.
    /// - Throws: ``MigrationError/tableIsOpen(store:migration:table:)``,
    ///   ``MigrationError/notDocuments(store:migration:table:encoding:)``,
    ///   ``MigrationError/undecodable(store:migration:table:key:reason:)``
    ///   for a row that is not a document; what `body` throws.
    /// - Complexity: O(n log n) for n rows, plus `body`.
    public mutating func updateRows(inTable table: String, _ body: (inout Document) throws -> Void) throws {
        let encoding = try documentEncoding(of: table)
        let reader = rowReader
        try rewriteRows(of: table) { key, bytes in
            let before = try reader.document(bytes, key: key, table: table, encoding: encoding)
            var after = before
            try body(&after)
            return after == before ? nil : try ValueEncoder().encode(after)
        }
    }

    /// Re-encodes every row of `table` from `Old` to `New` with `convert`:
    /// the typed escape hatch, for a change that documents do not express well.
    ///
    /// Each row keeps its key, so `convert` must keep the identifier: an
    /// ``Entity`` whose `id` no longer matches the key throws
    /// ``MigrationError/identifierChanged(store:migration:table:key:newIdentifier:)``.
    /// A row that does not decode as `Old` stops the migration
    /// (``UndecodablePolicy/fail``), or is left as it is
    /// (``UndecodablePolicy/quarantine``), for a table opened with quarantine to set aside.
    /// - Throws: ``MigrationError``; what `convert` throws; an `EncodingError`.
    public mutating func convertRows<Old: Decodable, New: Encodable>(
        inTable table: String, from old: Old.Type, to new: New.Type, onUndecodable policy: UndecodablePolicy = .fail,
        _ convert: (Old) throws -> New
    ) throws {
        let encoding = try documentEncoding(of: table)
        let reader = rowReader
        try rewriteRows(of: table) { key, bytes in
            let value: Old
            do {
                value = try ValueDecoder().decode(Old.self, from: bytes)
            } catch {
                if policy == .quarantine { return nil }
                throw reader.undecodable(key, table: table, encoding: encoding, DecodingFailure.reason(error))
            }
            let converted = try convert(value)
            if let entity = converted as? any Entity, let moved = try reader.changedIdentifier(of: entity, key: key, encoding: encoding) {
                throw MigrationError.identifierChanged(store: reader.store, migration: reader.migration, table: table,
                                                       key: reader.keyText(key, encoding), newIdentifier: moved)
            }
            let encoded = try ValueEncoder().encode(converted)
            return encoded == bytes ? nil : encoded
        }
    }

    /// Runs `rewrite` on every row of `table` in key order and stores what
    /// it returns (nil: leave the row), reporting progress.
    mutating func rewriteRows(of table: String, _ rewrite: ([UInt8], [UInt8]) throws -> [UInt8]?) throws {
        let entries = try storedRows(of: table)
        touch(table)
        let encoding = transaction.state.encoding(ofTable: table)
        for (done, (key, bytes)) in entries.enumerated() {
            if let replacement = try rewrite(key, bytes), let encoding {
                transaction.put(.encoded(replacement), for: key, in: table, encoding: encoding)
            }
            report(table, done: done + 1, total: entries.count)
        }
    }

    /// The rows of `table` as stored, in key order.
    /// - Throws: ``MigrationError/tableIsOpen(store:migration:table:)``.
    func storedRows(of table: String) throws -> [(key: [UInt8], bytes: [UInt8])] {
        guard transaction.state.typed[table] == nil else {
            throw MigrationError.tableIsOpen(store: store, migration: name, table: table)
        }
        if let loaded = transaction.state.snapshotTables[table] {
            var rows: [(key: [UInt8], bytes: [UInt8])] = []
            rows.reserveCapacity(loaded.count)
            loaded.forEach { rows.append(($0, $1)) }
            return rows
        }
        let entries = transaction.state.tables[table] ?? [:]
        // Key order, so that progress and the first row an error names are
        // the same in every run (a hash map's order is not).
        let rows = Array(entries)
        // Positions are sorted by the keys alone: a comparison that read a
        // whole row would copy its value with the key, retaining both.
        let keys = rows.map(\.key)
        let order = keys.withUnsafeBufferPointer { keys in
            Array(keys.indices).sorted { precedes(keys[$0], keys[$1]) }
        }
        // Rows of a table no program opened are held as bytes: `.decoded`
        // does not occur here, and bytes() of `.encoded` does not throw.
        return try order.map { (rows[$0].key, try rows[$0].value.bytes()) }
    }

    /// The encoding of `table`, whose values must be documents; the
    /// value-format encoding a table gets when it is empty.
    func documentEncoding(of table: String) throws -> TableEncoding? {
        guard transaction.state.typed[table] == nil else {
            throw MigrationError.tableIsOpen(store: store, migration: name, table: table)
        }
        let encoding = transaction.state.encoding(ofTable: table)
        guard transaction.state.count(in: table) > 0 else { return encoding }
        guard let encoding, encoding.value == .valueFormat else {
            throw MigrationError.notDocuments(store: store, migration: name, table: table, encoding: encoding.map { "\($0.value)" } ?? "unknown")
        }
        return encoding
    }

    /// Reads rows and words errors for this migration, without holding it:
    /// the closures of ``rewriteRows(of:_:)`` need both while it changes.
    var rowReader: RowReader { RowReader(store: store, migration: name) }
}

/// Reads a migration's stored rows as documents and names the ones that
/// do not read.
struct RowReader {
    let store: String
    let migration: String

    /// The row `bytes` as a document.
    func document(_ bytes: [UInt8], key: [UInt8], table: String, encoding: TableEncoding?) throws -> Document {
        do { return try Document(decodingBinary: bytes) } catch {
            throw undecodable(key, table: table, encoding: encoding, DecodingFailure.reason(error))
        }
    }

    func undecodable(_ key: [UInt8], table: String, encoding: TableEncoding?, _ reason: String) -> MigrationError {
        .undecodable(store: store, migration: migration, table: table, key: keyText(key, encoding), reason: reason)
    }

    func keyText(_ key: [UInt8], _ encoding: TableEncoding?) -> String {
        RenderedValue(key: key, encoding: encoding?.key).text
    }

    /// The identifier of `entity`, when it is not the one stored as `key`.
    func changedIdentifier<E: Entity>(of entity: E, key: [UInt8], encoding: TableEncoding?) throws -> String? {
        let schema = TableSchema.of(E.self)
        // A table whose keys another identifier type wrote cannot hold this entity's key.
        guard encoding?.key == nil || encoding?.key == schema.keyEncoding else { return "\(entity.id)" }
        return schema.keyBytes(of: try identifierValue(entity.id)) == key ? nil : "\(entity.id)"
    }
}

/// Whether key `a` comes before key `b` in byte order: what
/// `lexicographicallyPrecedes` says, a `memcmp` at a time.
func precedes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    a.withUnsafeBytes { a in b.withUnsafeBytes { b in precedes(a, b) } }
}

/// ``precedes(_:_:)-([UInt8],[UInt8])`` for keys lent in place.
func precedes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    let common = min(a.count, b.count)
    let order = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
    return order != 0 ? order < 0 : a.count < b.count
}
