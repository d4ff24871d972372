import LensLog

/// The changes of one write block, applied all or nothing.
///
/// Reads inside the block see the transaction's own writes. Nothing is
/// visible to other readers, or written anywhere, until the block returns.
public struct Transaction: Sendable {
    /// The state as the transaction has made it so far.
    public internal(set) var state: StoreState
    private(set) var operations: [Operation] = []
    /// The bytes ``operations`` take in a record, less their count's:
    /// summed as each is added, while its key and value are in the cache,
    /// so a record is made at its size without a pass over them first.
    private(set) var operationBytes = 0
    /// The store whose write block runs this transaction: a view (a lens)
    /// belonging to another store must not write into it.
    let store: ObjectIdentifier?
    /// The log's compression, when this transaction's record may be made
    /// before its commit (``recordAhead()``); nil when it may not: the
    /// transaction of a store without a log, or of a view.
    let recordCompression: Bool?
    /// The record of the first ``RecordAhead/count`` operations, made
    /// while a batch put kept the other cores busy with its indexes. The
    /// operations are only ever appended to, so it stays theirs until the
    /// commit takes them.
    private(set) var recordMadeAhead: RecordAhead?

    init(base: StoreState, store: ObjectIdentifier? = nil, recordCompression: Bool? = nil) {
        state = base
        self.store = store
        self.recordCompression = recordCompression
    }

    /// Inserts or replaces the value under `key` in `table`, whose keys and
    /// values are encoded as `encoding` says (declared with the first put
    /// into the table, and recorded in the log).
    ///
    /// - Precondition: a non-empty table keeps the encoding it was declared
    ///   with: putting bytes of another encoding into it is a programmer
    ///   error (a typed table and the byte-level API on one table name).
    public mutating func put(_ value: StoredValue, for key: [UInt8], in table: String, encoding: TableEncoding) {
        declare(encoding, forTable: table)
        record(.put(table: table, key: key, value: value))
    }

    /// Inserts or replaces bytes of the program's own under `key` in
    /// `table`: the table's keys and values are raw bytes, which `logtool`
    /// shows as they are and never judges.
    public mutating func put(_ bytes: [UInt8], for key: [UInt8], in table: String) {
        put(.encoded(bytes), for: key, in: table, encoding: .raw)
    }

    /// Removes `key` from `table`; nothing happens when it is absent.
    public mutating func remove(_ key: [UInt8], from table: String) {
        guard state.value(in: table, key: key) != nil else { return }
        record(.remove(table: table, key: key))
    }

    /// Sets the root document `name`, encoded as `encoding` says.
    ///
    /// - Precondition: the root is not open with a type
    ///   (``Store/root(_:named:default:)``): such a root is written through
    ///   its lenses, which keep it decoded.
    public mutating func setRoot(_ value: StoredValue, named name: String, encoding: ValueEncoding) {
        precondition(state.lensRootTypes[name] == nil, "root \(name) is open with a type; write it through its lens")
        if state.encoding(ofRoot: name) != encoding { record(.declareRoot(name: name, encoding: encoding)) }
        record(.setRoot(name: name, value: value))
    }

    /// Sets the root document `name` to bytes of the program's own.
    public mutating func setRoot(_ bytes: [UInt8], named name: String) {
        setRoot(.encoded(bytes), named: name, encoding: .raw)
    }

    /// Removes the root document `name`; nothing happens when it is absent.
    public mutating func removeRoot(named name: String) {
        guard state.root(named: name) != nil else { return }
        record(.removeRoot(name: name))
    }

    /// How many operations the transaction holds so far.
    var operationCount: Int { operations.count }

    /// The operations, moved out: the transaction holds none after, so the
    /// caller holds the only reference to each value (its record then frees
    /// them as it is made). Only for a transaction about to be committed.
    mutating func takeOperations() -> [Operation] {
        defer { (operations, operationBytes, recordMadeAhead) = ([], 0, nil) }
        return operations
    }

    /// The making of the record of the operations so far, as a job for
    /// another thread: a batch put runs it beside its index work, and hands
    /// what it returns to ``keep(_:)``. Nil when it may not be made ahead,
    /// or when the bytes its operations are known to take already exceed
    /// what the log takes (the commit then refuses it, as it would have;
    /// one that turns out too large only once made is refused there too).
    /// The job returns nil when an operation does not encode: the commit
    /// encodes again and throws that error.
    func recordAhead() -> (@Sendable () -> RecordAhead?)? {
        guard let compress = recordCompression, operations.count > (recordMadeAhead?.count ?? 0),
              operationBytes < LogFormat.maxPayloadSize else { return nil }
        let operations = operations, earlier = recordMadeAhead, operationBytes = operationBytes
        return {
            let payload = try? TransactionFormat.encode(operations, continuing: earlier?.payload, operationBytes: operationBytes)
            return payload.map { RecordAhead(count: operations.count, record: PreparedRecord($0, compress: compress)) }
        }
    }

    /// Keeps a record made by a job of ``recordAhead()``, when it made one.
    mutating func keep(_ record: RecordAhead?) {
        guard let record else { return }
        precondition(record.count <= operations.count, "a record ahead of \(record.count) operations for \(operations.count)")
        recordMadeAhead = record
    }

    /// The record of every operation, when one was made ahead: that one, or
    /// one continuing it with the operations added since. Nil when none was.
    /// The bytes are those ``TransactionFormat/encode(_:continuing:operationBytes:)``
    /// makes of ``operations``.
    func recordOfEveryOperation() throws -> PreparedRecord? {
        guard let made = recordMadeAhead, let compress = recordCompression else { return nil }
        if made.count == operations.count { return made.record }
        return PreparedRecord(
            try TransactionFormat.encode(operations, continuing: made.payload, operationBytes: operationBytes), compress: compress)
    }

    /// Whether the transaction changes anything.
    public var isEmpty: Bool { operations.isEmpty }

    mutating func declare(_ encoding: TableEncoding, forTable table: String) {
        let declared = state.encoding(ofTable: table)
        guard declared != encoding else { return }
        precondition(declared == nil, "table \(table) holds \(declared!); a put of \(encoding) cannot go into it")
        record(.declareTable(table: table, encoding: encoding))
    }

    /// Appends an operation whose effect the caller has already made on
    /// ``state`` (typed tables change their own contents).
    mutating func append(_ operation: Operation) {
        operationBytes += TransactionFormat.encodedSize(of: operation)
        operations.append(operation)
    }

    /// Appends the put of encoded `value` under `key` in `table`, as
    /// ``append(_:)`` does: its size taken from its parts, which is what
    /// a typed put pays per entity rather than copying the operation.
    mutating func appendPut(table: String, key: [UInt8], value: [UInt8]) {
        operationBytes += TransactionFormat.putSize(table: table, key: key.count) + TransactionFormat.lengthPrefixedSize(value.count)
        operations.append(.put(table: table, key: key, value: .encoded(value)))
    }

    /// Makes room for `count` more operations, as a batch about to append
    /// them does: a large batch then grows the list once, to its size, not
    /// by doubling past it. Many small batches still grow it geometrically.
    mutating func reserve(_ count: Int) {
        let needed = operations.count + count
        if needed > operations.capacity { operations.reserveCapacity(max(needed, operations.capacity * 2)) }
    }

    /// Declares the root `name` a document in the value format, unless it
    /// is: what a patch of it needs before it (operation 6, then 7).
    mutating func declareValueFormat(root name: String) {
        guard state.encoding(ofRoot: name) != .valueFormat else { return }
        state.rootEncodings[name] = .valueFormat
        append(.declareRoot(name: name, encoding: .valueFormat))
    }

    /// Drops a table's declared encoding once it holds nothing, as replay
    /// of the remove that emptied it does.
    mutating func forgetEncoding(ofTable table: String) {
        state.tableEncodings[table] = nil
    }

    /// Sets the member at `path` of the value-format root document `name`
    /// to the value-format bytes `value`, or removes it when `value` is nil,
    /// logging only the member (operation 7). The byte-level form of a
    /// ``Lens`` write, for the crash fuzzer's workloads.
    ///
    /// - Precondition: the root exists in the value format, every key of
    ///   `path` but the last names an object member, and `value` decodes.
    @_spi(CrashTesting)
    public mutating func patchRoot(named name: String, at path: [String], to value: [UInt8]?) {
        precondition(state.lensRootTypes[name] == nil, "root \(name) is open with a type; write it through its lens")
        record(.patchRoot(name: name, path: path, value: value.map(StoredValue.encoded)))
    }

    private mutating func record(_ operation: Operation) {
        do {
            try state.apply(operation)
        } catch {
            preconditionFailure("\(error): a transaction records only patches that apply")
        }
        append(operation)
    }
}

/// A transaction's record made before its commit: the payload of its first
/// `count` operations, in the form the log stores it.
struct RecordAhead: Sendable {
    let count: Int
    let record: PreparedRecord

    /// What ``TransactionFormat/encode(_:continuing:operationBytes:)`` continues.
    var payload: (count: Int, payload: [UInt8]) { (count, record.payload) }
}
