extension Migration {
    /// Renames `table` to `newName`: its rows, byte for byte, its encoding
    /// and its schema version. A table that does not exist renames to
    /// nothing. Works on tables of any encoding, raw bytes included.
    ///
    /// Open it afterwards under the new name: `store.table(T.self, named: newName)`.
    /// - Throws: ``MigrationError/tableExists(store:migration:table:)``
    ///   when `newName` already holds rows; ``MigrationError/tableIsOpen(store:migration:table:)``;
    ///   ``MigrationError/notDocuments(store:migration:table:encoding:)``
    ///   for a table written before encodings were recorded.
    /// - Complexity: O(n log n) for n rows.
    public mutating func renameTable(_ table: String, to newName: String) throws {
        guard table != newName else { return }
        let rows = try storedRows(of: table)
        guard transaction.state.typed[newName] == nil else {
            throw MigrationError.tableIsOpen(store: store, migration: name, table: newName)
        }
        guard transaction.state.count(in: newName) == 0 else {
            throw MigrationError.tableExists(store: store, migration: name, table: newName)
        }
        if !rows.isEmpty {
            guard let encoding = transaction.state.encoding(ofTable: table) else {
                throw MigrationError.notDocuments(store: store, migration: name, table: table, encoding: "unknown")
            }
            for (done, row) in rows.enumerated() {
                transaction.put(.encoded(row.bytes), for: row.key, in: newName, encoding: encoding)
                transaction.remove(row.key, from: table)
                report(table, done: done + 1, total: rows.count)
            }
        }
        // The new name continues the old one's versions, raised once by this migration.
        let version = versions[table] ?? 0
        let raised = touched.contains(table)
        forget(table)
        versions[newName] = raised ? version : version + 1
        markTouched(newName)
    }

    /// Removes `table` and every row of it; its schema version is forgotten.
    /// - Throws: ``MigrationError/tableIsOpen(store:migration:table:)``.
    public mutating func dropTable(_ table: String) throws {
        let rows = try storedRows(of: table)
        for (done, row) in rows.enumerated() {
            transaction.remove(row.key, from: table)
            report(table, done: done + 1, total: rows.count)
        }
        forget(table)
    }

    /// Moves the rows of `source` for which `predicate` holds into `target`,
    /// under the same keys: splits a table by rows, or, with every row
    /// (the default), merges `source` into `target`. A `source` left empty
    /// is gone, and its schema version forgotten.
    ///
    /// ```swift
    /// try migration.moveRows(from: "people", to: "archivedPeople") { row in row["archived"] == true }
    /// ```
    /// - Throws: ``MigrationError/keyConflict(store:migration:table:key:)``
    ///   when `target` holds a key already;
    ///   ``MigrationError/encodingMismatch(store:migration:source:target:)``;
    ///   ``MigrationError/tableIsOpen(store:migration:table:)``;
    ///   ``MigrationError/notDocuments(store:migration:table:encoding:)``
    ///   when `predicate` is given rows that are not documents.
    public mutating func moveRows(from source: String, to target: String, where predicate: (Document) throws -> Bool = { _ in true }) throws {
        try splitRows(of: source, into: target) { row in
            guard try predicate(row) else { return nil }
            let moved = row
            row = .null
            return moved
        }
    }

    /// Splits each row of `source` in two: `split` may change the row, and
    /// returns the document to store under the same key in `target` (nil
    /// for none). A row `split` sets to `.null` leaves `source`. Splits a
    /// table by fields (an address moved out of a person), or by rows.
    ///
    /// ```swift
    /// try migration.splitRows(of: "people", into: "addresses") { person in
    ///     defer { person.removeValue(forKey: "address") }
    ///     return person["address"].isNull ? nil : ["street": person["address"]]
    /// }
    /// ```
    /// - Throws: as ``moveRows(from:to:where:)``; what `split` throws.
    /// - Complexity: O((n + m) log n) for n rows in `source` and m in `target`.
    public mutating func splitRows(of source: String, into target: String, _ split: (inout Document) throws -> Document?) throws {
        precondition(source != target, "rows of table \(source) cannot move into the table itself")
        let rows = try storedRows(of: source)
        guard !rows.isEmpty else { return }
        guard transaction.state.typed[target] == nil else {
            throw MigrationError.tableIsOpen(store: store, migration: name, table: target)
        }
        guard let encoding = transaction.state.encoding(ofTable: source) else {
            throw MigrationError.notDocuments(store: store, migration: name, table: source, encoding: "unknown")
        }
        if let declared = transaction.state.encoding(ofTable: target), declared != encoding {
            throw MigrationError.encodingMismatch(store: store, migration: name, source: source, target: target)
        }
        touch(source)
        touch(target)
        for (done, row) in rows.enumerated() {
            try splitRow(row, of: source, into: target, encoding: encoding, split)
            report(source, done: done + 1, total: rows.count)
        }
        if transaction.state.count(in: source) == 0 { forget(source) }
    }

    private mutating func splitRow(
        _ row: (key: [UInt8], bytes: [UInt8]), of source: String, into target: String, encoding: TableEncoding,
        _ split: (inout Document) throws -> Document?
    ) throws {
        let before = try rowReader.document(row.bytes, key: row.key, table: source, encoding: encoding)
        var kept = before
        guard let moved = try split(&kept) else {
            if kept != before { try put(kept, key: row.key, in: source, encoding: encoding) }
            return
        }
        guard transaction.state.value(in: target, key: row.key) == nil else {
            throw MigrationError.keyConflict(store: store, migration: name, table: target, key: rowReader.keyText(row.key, encoding))
        }
        try put(moved, key: row.key, in: target, encoding: encoding)
        if kept.isNull {
            transaction.remove(row.key, from: source)
        } else if kept != before {
            try put(kept, key: row.key, in: source, encoding: encoding)
        }
    }

    private mutating func put(_ document: Document, key: [UInt8], in table: String, encoding: TableEncoding) throws {
        transaction.put(.encoded(try ValueEncoder().encode(document)), for: key, in: table, encoding: encoding)
    }
}
