/// How a migration too large for one log record is written, and how a cut
/// between its records is undone.
///
/// A migration runs whole in memory first: every step and every check, so
/// that a throw still changes nothing. Its operations are then logged in
/// batches of at most ``Migrator/maximumBatchBytes``, each a record of its
/// own, all while the writers' lock is held: no reader or writer of this
/// process sees a batch before the last one is logged and published.
///
/// Every batch but the last is preceded by a record of what undoes it:
/// - the root `lensdb.migrations.undo.<i>` (raw bytes), a transaction
///   payload in the log's own operation format that holds, for each row
///   batch `i` changes, the row as it was before the migration (a put), or
///   its absence (a remove); batch 0's also holds the history root as it was;
/// - the history, naming the migration as running with `i + 1` batches
///   logged (``MigrationHistory`` layout 2).
///
/// The last batch removes the undo roots and writes the history as the
/// migration leaves it. A batch holds at most ``largestBatch`` bytes of
/// rows old and new, so each record stays within the log's limit. So the log holds either all batches, and replay
/// gives the migration's state exactly, or a prefix, and replay gives a
/// state with a running migration: every open undoes it first
/// (``Store/undoInterruptedMigration()``, in memory for a read-only open),
/// and the next ``Migrator/migrate(_:progress:)`` runs it again from the start.
enum MigrationJournal {
    /// The root that holds the undo of batch `batch`.
    static func undoRoot(_ batch: Int) -> String { "\(MigrationHistory.rootName).undo.\(batch)" }

    /// The most bytes, rows old and new, of one batch: each of its two
    /// records (the undo, then the rows) stays within the log's limit.
    static let largestBatch = LogFormat.maxPayloadSize / 2

    /// The ranges of `operations` (a migration's changes to tables) that
    /// make batches of at most `limit` bytes, counting each change and the
    /// row it replaces; one range when they fit in one.
    ///
    /// A batch never ends right after a declaration, so a table's declared
    /// encoding always travels with its first row, and no batch passes
    /// ``largestBatch``. A
    /// migration that changes a row the journal cannot undo (in a table
    /// written before encodings were recorded) or a row too large to share
    /// a record with its undo is one range: one record, as large as it is.
    static func batches(of operations: [Operation], base: StoreState, limit: Int) -> [Range<Int>] {
        let limit = min(limit, largestBatch)
        var ranges: [Range<Int>] = []
        var start = 0
        var bytes = 0
        var index = 0
        while index < operations.count {
            // A declaration and the operations up to the first that is not
            // one are a unit: a batch never ends between them.
            var end = index + 1
            while end < operations.count, isDeclaration(operations[end - 1]) { end += 1 }
            var size = 0
            for operation in operations[index..<end] {
                guard isUndoable(operation, base: base) else { return [0..<operations.count] }
                size += cost(of: operation, base: base)
            }
            guard size <= largestBatch else { return [0..<operations.count] }
            if bytes > 0, bytes + size > limit {
                ranges.append(start..<index)
                start = index
                bytes = 0
            }
            bytes += size
            index = end
        }
        ranges.append(start..<operations.count)
        return ranges
    }

    /// How many records a migration cut into `batches` batches is logged as.
    static func recordCount(batches: Int) -> Int { 2 * batches - 1 }

    /// The records to log for a migration cut into `batches`. Before each
    /// batch but the last, a record of its undo root and of the history
    /// marked running (built by `running` from the batches begun); then the
    /// batch's operations. The last batch's record also removes the undo
    /// roots and holds `final`, the operations that record the migration.
    ///
    /// An undo logged before its batch undoes that batch whether or not a
    /// cut let the batch follow: it puts back rows as they were before the
    /// migration, which a batch not logged left as they were.
    static func records(
        _ operations: [Operation], batches: [Range<Int>], base: StoreState, final: [Operation],
        running: (Int) -> Document
    ) throws -> [[Operation]] {
        let history = MigrationHistory.rootName
        var records: [[Operation]] = []
        for (index, range) in batches.enumerated() {
            if index == batches.count - 1 {
                records.append(Array(operations[range]) + (0..<index).map { .removeRoot(name: undoRoot($0)) } + final)
                break
            }
            var undo = try undoOperations(of: operations[range], base: base)
            var journal: [Operation] = []
            if index == 0 {
                undo.append(try base.root(named: history).map { .setRoot(name: history, value: .encoded(try $0.bytes())) }
                    ?? .removeRoot(name: history))
                if base.encoding(ofRoot: history) != .valueFormat { journal.append(.declareRoot(name: history, encoding: .valueFormat)) }
            }
            journal.append(.declareRoot(name: undoRoot(index), encoding: .raw))
            journal.append(.setRoot(name: undoRoot(index), value: .encoded(try TransactionFormat.encode(undo))))
            journal.append(.setRoot(name: history, value: .encoded(running(index + 1).binaryEncoded())))
            records.append(journal)
            records.append(Array(operations[range]))
        }
        return records
    }

    /// Whether the journal can undo `operation`: its table's rows, if any,
    /// have a recorded encoding to put them back with.
    private static func isUndoable(_ operation: Operation, base: StoreState) -> Bool {
        switch operation {
        case let .put(table, _, _), let .remove(table, _):
            base.count(in: table) == 0 || base.encoding(ofTable: table) != nil
        default:
            true
        }
    }

    /// For each row `operations` change, the row as `base` holds it:
    /// its table's encoding and the row, or a remove when there is none.
    private static func undoOperations(of operations: ArraySlice<Operation>, base: StoreState) throws -> [Operation] {
        var undo: [Operation] = []
        var seen: Set<RowAddress> = []
        for operation in operations {
            let table: String, key: [UInt8]
            switch operation {
            case let .put(name, bytes, _), let .remove(name, bytes): (table, key) = (name, bytes)
            default: continue
            }
            guard seen.insert(RowAddress(table: table, key: key)).inserted else { continue }
            if let before = base.value(in: table, key: key), let encoding = base.encoding(ofTable: table) {
                undo.append(.declareTable(table: table, encoding: encoding))
                undo.append(.put(table: table, key: key, value: .encoded(try before.bytes())))
            } else {
                undo.append(.remove(table: table, key: key))
            }
        }
        return undo
    }

    /// Whether `undo` is what ``records(_:batches:base:final:running:)``
    /// writes: each put right after its table's declaration, and no other
    /// operations than those, removes and the history root's.
    private static func isWellFormed(_ undo: [Operation]) -> Bool {
        var declared: String?
        for operation in undo {
            switch operation {
            case let .declareTable(table, _): declared = table
            case let .put(table, _, _):
                guard declared == table else { return false }
                declared = nil
            case .remove: declared = nil
            case let .setRoot(name, _), let .removeRoot(name):
                guard name == MigrationHistory.rootName else { return false }
            default: return false
            }
        }
        return true
    }

    /// Bytes `operation` adds to a batch: itself, and the row it replaces
    /// (which the undo root holds).
    private static func cost(of operation: Operation, base: StoreState) -> Int {
        switch operation {
        case let .put(table, key, value):
            let size: Int
            if case let .encoded(bytes) = value { size = bytes.count } else { size = 64 }
            return 16 + table.utf8.count * 2 + key.count * 2 + size + before(table, key, base)
        case let .remove(table, key):
            return 16 + table.utf8.count * 2 + key.count * 2 + before(table, key, base)
        default:
            return 16
        }
    }

    private static func before(_ table: String, _ key: [UInt8], _ base: StoreState) -> Int {
        guard case let .encoded(bytes)? = base.value(in: table, key: key) else { return 0 }
        return bytes.count
    }

    private static func isDeclaration(_ operation: Operation) -> Bool {
        switch operation {
        case .declareTable, .declareRoot: true
        default: false
        }
    }

    private struct RowAddress: Hashable {
        let table: String
        let key: [UInt8]
    }
}

extension MigrationJournal {
    /// The records that undo the running migration of `state`, in order:
    /// first every row its logged batches changed is removed, then batch by
    /// batch, last first, the rows as they were are put back, the batch's
    /// undo root removed and the running count lowered, until the history
    /// is as it was. Each record is at most one batch's undo; each leaves
    /// a state that this same procedure undoes, so a cut during an undo is
    /// undone by the next open. Nil when no migration is running.
    /// A history that does not read is left to ``Migrator/migrate(_:progress:)``
    /// to report: it names no running migration here.
    /// - Throws: ``MigrationError/unreadableHistory(store:reason:)`` when an
    ///   undo root does not read.
    static func undo(_ state: StoreState, store: String) throws -> [(inout Transaction) throws -> Void]? {
        guard var history = try? MigrationHistory(state, store: store), let running = history.running else { return nil }
        func unreadable(_ reason: String) -> MigrationError {
            .unreadableHistory(store: store, reason: "migration \(running.name) was cut while running, and \(reason)")
        }
        var undos: [[Operation]] = []
        for batch in 0..<running.batches {
            guard let stored = state.root(named: undoRoot(batch)), let undo = TransactionFormat.decode(try stored.bytes()),
                  isWellFormed(undo) else {
                throw unreadable("the undo of its batch \(batch) (root \(undoRoot(batch))) is missing or does not read, "
                                 + "so the batches logged cannot be undone; restore the store from a backup")
            }
            undos.append(undo)
        }
        var steps: [(inout Transaction) throws -> Void] = undos.map { undo in
            { tx in
                for case let .remove(table, key) in undo { tx.remove(key, from: table) }
                for case let .put(table, key, _) in undo { tx.remove(key, from: table) }
            }
        }
        for batch in (0..<running.batches).reversed() {
            let undo = undos[batch]
            history.running = batch == 0 ? nil : RunningMigration(name: running.name, batches: batch)
            let lowered = history
            steps.append { tx in
                var encoding: TableEncoding?
                for operation in undo {
                    switch operation {
                    case let .declareTable(_, declared): encoding = declared
                    case let .put(table, key, value):
                        // Every row the batches changed is gone, so a table
                        // holds only rows they left alone, in its encoding.
                        guard let encoding, (tx.state.encoding(ofTable: table) ?? encoding) == encoding else {
                            throw unreadable("its undo would put rows of another encoding into table \(table)")
                        }
                        tx.put(value, for: key, in: table, encoding: encoding)
                    case let .setRoot(name, value): tx.setRoot(value, named: name, encoding: .valueFormat)
                    case let .removeRoot(name): tx.removeRoot(named: name)
                    default: break
                    }
                }
                tx.removeRoot(named: undoRoot(batch))
                if lowered.running != nil { lowered.write(to: &tx) }
            }
        }
        return steps
    }
}

extension Store {
    /// Undoes a migration that a cut left between its batches
    /// (``MigrationJournal``), durably, before the store is handed out.
    /// Called by every open that writes; a read-only open undoes it in
    /// memory instead.
    func undoInterruptedMigration() throws {
        guard let steps = try MigrationJournal.undo(current, store: displayPath) else { return }
        for (index, step) in steps.enumerated() {
            try write(durability: index == steps.count - 1 ? .full : .none) { tx in try step(&tx) }
        }
    }

    /// `state` with a migration that a cut left between its batches undone,
    /// for an open that does not write.
    static func undoingInterruptedMigration(_ state: StoreState, store: String) throws -> StoreState {
        guard let steps = try MigrationJournal.undo(state, store: store) else { return state }
        var tx = Transaction(base: state)
        for step in steps { try step(&tx) }
        return tx.state
    }
}
