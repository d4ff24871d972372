import LensLog

/// One transaction as `logtool dump` prints it.
public struct DumpedTransaction: Codable, Sendable {
    public struct DumpedOperation: Codable, Sendable {
        /// put, remove, setRoot, removeRoot, declareTable, declareRoot, patchRoot.
        public var op: String
        public var table: String?
        public var root: String?
        /// For patchRoot: the object keys from the root document's top to the member.
        public var path: [String]?
        /// For patchRoot: `set` (``value`` is the member's new value) or `remove`.
        public var change: String?
        public var key: RenderedValue?
        public var value: RenderedValue?
        /// For declarations: the encoding declared, as text.
        public var encoding: String?
    }

    public var lsn: UInt64
    public var file: String
    public var offset: Int64
    public var size: Int
    public var operations: [DumpedOperation]
    /// Set when the record verifies but is not a valid transaction.
    public var problem: String?
}

/// One item of a snapshot as `logtool dump --snapshot` prints it.
public struct DumpedItem: Codable, Sendable {
    public var table: String?
    public var root: String?
    public var key: RenderedValue?
    public var value: RenderedValue
}

extension StoreInspector {
    /// Calls `body` with each transaction that open would replay, in LSN
    /// order, from `from` to `to` and, when `table` is set, only those
    /// touching it, with only their operations on it (a record that does not
    /// decode as a transaction is passed on too, with its problem).
    ///
    /// Follows the logs as `.salvage` recovery does: damage is skipped, a
    /// log's tail that a later log wrote again is shown once, logs the
    /// snapshot covers are left out. When no chain can be followed (no
    /// usable snapshot), every log is dumped on its own, each LSN once.
    /// Takes no lock and changes no file.
    ///
    /// On a store that a program writes meanwhile, a log that a compaction
    /// removes mid-dump makes dump follow the new chain, skipping the LSNs
    /// already shown; those the new snapshot took over are not shown again
    /// (`dumpSnapshot` shows the state).
    /// - Parameters:
    ///   - from: the first LSN to show.
    ///   - to: the last LSN to show.
    ///   - table: when set, only transactions touching this table, with only their operations on it.
    ///   - progress: bytes read of the snapshots and logs.
    ///   - body: called with each transaction, in LSN order.
    /// - Throws: ``InspectionError`` (``InspectionError/noSuchTable(path:table:tables:)``
    ///   when `table` is set and the store never held such a table), or what `body` throws.
    public func dump(
        from: UInt64 = 0, to: UInt64 = .max, table: String? = nil, progress: ProgressHandler? = nil,
        _ body: (DumpedTransaction) throws -> Void
    ) throws {
        try requireFittingKey()
        var tables = Set<String>()
        // `emit` is stored in a local, so it counts as escaping; it never outlives this call.
        try withoutActuallyEscaping(body) { body in
            var shown = Set<UInt64>()
            var catalog = EncodingCatalog()
            var reading: ReadingProgress?
            let emit = { (record: LogRecord, file: String) throws in
                reading?.read(record, in: file)
                guard record.lsn <= to, shown.insert(record.lsn).inserted else { return }
                let dumped = Self.dumped(record, file: file, catalog: &catalog)
                tables.formUnion(dumped.operations.compactMap(\.table))
                guard record.lsn >= from, let shown = dumped.only(table) else { return }
                do { try body(shown) } catch { throw CallerError(error: error) }
            }
            try readingConsistently(isClean: { true }) {
                let listing = try self.listing()
                reading = ReadingProgress(listing, fileSystem: fileSystem, handler: progress)
                do {
                    _ = try chain(policy: .salvage).recover(listing: listing, loadSnapshot: { snapshot in
                        reading?.read(snapshot: snapshot.path)
                        catalog = EncodingCatalog()
                        try snapshot.forEachItem { catalog.note($0) }
                        tables.formUnion(catalog.tableNames)
                    }, apply: emit)
                } catch is RecoveryError {
                    try dumpEachLog(listing, emit)
                }
                reading?.finish()
            }
        }
        if let table, !tables.contains(table) {
            throw InspectionError.noSuchTable(path: path, table: table, tables: tables.sorted())
        }
    }

    private func dumpEachLog(_ listing: StoreDirectory.Listing, _ emit: (LogRecord, String) throws -> Void) throws {
        for log in listing.logs {
            // A log whose header does not verify holds nothing dump can show;
            // verify reports it. One a compaction removed since the listing
            // is skipped, as when logs were read whole.
            guard let handle = try? fileSystem.openFile(at: log.path, mode: .readOnly) else { continue }
            defer { handle.close() }
            // So is one under another key (what a key change cut short leaves).
            guard var reader = try? LogReader(file: handle, path: log.path, policy: .salvage, cipher: key) else { continue }
            while let record = try reader.next() { try emit(record, log.path) }
        }
    }

    /// Calls `body` with every item of the newest valid snapshot.
    /// - Throws: ``InspectionError/noSnapshot(path:damaged:)`` when there is
    ///   no valid snapshot; ``InspectionError/noSuchTable(path:table:tables:)``
    ///   when `table` is set and the snapshot holds no such table.
    public func dumpSnapshot(table: String? = nil, _ body: (DumpedItem) throws -> Void) throws {
        try requireFittingKey()
        let snapshots = try listing().snapshots
        for candidate in snapshots.reversed() {
            // Damaged snapshots are skipped for the newest valid one; verify
            // reports them. So are snapshots under another key.
            guard let snapshot = try? SnapshotFile(bytes: read(candidate.path), path: candidate.path, cipher: key),
                  (try? EncryptionError.check(snapshot.encryption, against: key, file: candidate.path)) != nil else { continue }
            var catalog = EncodingCatalog()
            try snapshot.forEachItem { item in
                catalog.note(item)
                switch item {
                case let .entry(id, key, value) where table == nil || catalog.tableName(id) == table:
                    let name = catalog.tableName(id)
                    let encoding = name.flatMap { catalog.tables[$0] }
                    try body(DumpedItem(table: name, key: RenderedValue(key: key, encoding: encoding?.key),
                                        value: RenderedValue(value: value, encoding: encoding?.value)))
                case let .root(name, value) where table == nil:
                    try body(DumpedItem(root: name, value: RenderedValue(value: value, encoding: catalog.roots[name])))
                default: break
                }
            }
            if let table, !catalog.tableNames.contains(table) {
                throw InspectionError.noSuchTable(path: path, table: table, tables: catalog.tableNames.sorted())
            }
            return
        }
        throw InspectionError.noSnapshot(path: path, damaged: snapshots.map(\.path))
    }

    /// The record as dump shows it, each operation rendered with the
    /// encodings `catalog` knows at that point; notes its declarations.
    static func dumped(_ record: LogRecord, file: String, catalog: inout EncodingCatalog) -> DumpedTransaction {
        var dumped = DumpedTransaction(lsn: record.lsn, file: file, offset: record.offset, size: record.frameSize, operations: [])
        guard let operations = TransactionFormat.decode(record.payload) else {
            dumped.problem = "the record verifies but is not a valid transaction"
            return dumped
        }
        for operation in operations {
            catalog.note([operation])
            dumped.operations.append(Self.dumped(operation, catalog))
        }
        return dumped
    }

    private static func dumped(_ operation: Operation, _ catalog: EncodingCatalog) -> DumpedTransaction.DumpedOperation {
        // Values read from a log are encoded bytes already; nothing here can throw.
        let bytes = { (value: StoredValue) in (try? value.bytes()) ?? [] }
        let key = { (table: String, key: [UInt8]) in RenderedValue(key: key, encoding: catalog.tables[table]?.key) }
        switch operation {
        case let .put(table, k, value):
            return .init(op: "put", table: table, key: key(table, k),
                         value: RenderedValue(value: bytes(value), encoding: catalog.tables[table]?.value))
        case let .remove(table, k): return .init(op: "remove", table: table, key: key(table, k))
        case let .setRoot(name, value):
            return .init(op: "setRoot", root: name, value: RenderedValue(value: bytes(value), encoding: catalog.roots[name]))
        case let .removeRoot(name): return .init(op: "removeRoot", root: name)
        case let .declareTable(table, encoding): return .init(op: "declareTable", table: table, encoding: "\(encoding)")
        case let .declareRoot(name, encoding): return .init(op: "declareRoot", root: name, encoding: "values: \(encoding)")
        case let .patchRoot(name, path, value?):
            return .init(op: "patchRoot", root: name, path: path, change: "set",
                         value: RenderedValue(value: bytes(value), encoding: catalog.roots[name]))
        case let .patchRoot(name, path, nil): return .init(op: "patchRoot", root: name, path: path, change: "remove")
        }
    }
}

extension DumpedTransaction {
    /// The transaction with only its operations on `table` (all when nil);
    /// nil when it has none and no problem to show.
    func only(_ table: String?) -> DumpedTransaction? {
        guard let table else { return self }
        var shown = self
        shown.operations.removeAll { $0.table != table }
        return shown.operations.isEmpty && shown.problem == nil ? nil : shown
    }
}

extension DumpedTransaction.DumpedOperation {
    /// `people[1]`, `people` for a declaration, the root document's name,
    /// or for a patch the member's path: `settings.protection.enabled`.
    public var target: String {
        if let root, let path { return CodingPathText(root: root, path: path).description }
        guard let table else { return root ?? "" }
        return key.map { "\(table)[\($0.text)]" } ?? table
    }

    /// `put people[1] = {...}`, `setRoot settings = {...}`, `declareTable people (keys: …)`,
    /// `patchRoot settings.protection.enabled = true`, `patchRoot settings.flags.beta removed`.
    public var text: String {
        if let encoding { return "\(op) \(target) (\(encoding))" }
        if change == "remove" { return "\(op) \(target) removed" }
        return value.map { "\(op) \(target) = \($0.text)" } ?? "\(op) \(target)"
    }
}
