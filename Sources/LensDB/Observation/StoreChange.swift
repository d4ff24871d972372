/// What one commit changed anywhere in the store, without the program's
/// types: each table entry and root document it touched, before and after,
/// as ``Document``s.
public struct StoreCommit: Sendable {
    public let lsn: UInt64
    public let changes: [EntryChange]
}

/// One table entry or root document a commit changed. Keys and values are
/// shown as their table's recorded encoding says (raw bytes as
/// ``Document/bytes(_:)``); `old` is nil for an insert, `new` for a removal.
public struct EntryChange: Sendable {
    /// The table, for an entry; nil for a root document.
    public let table: String?
    /// The root document's name, for a root; nil for an entry.
    public let root: String?
    public let key: Document?
    public let old: Document?
    public let new: Document?
}

/// One element of ``Store/changes``.
public enum StoreChange: Sendable {
    case commit(StoreCommit)
    /// The consumer fell more than the bound behind (see ``Table/changes(bound:)``).
    case resyncNeeded(lastDelivered: UInt64)
}

extension Store {
    /// Every commit, with what it changed in every table and root, from the
    /// one after the version current when iteration starts: once each, in
    /// commit order; a consumer more than `bound` commits behind gets
    /// ``StoreChange/resyncNeeded(lastDelivered:)`` instead of a backlog.
    /// Closing the store finishes the stream.
    public func changes(bound: Int = 1024) -> AsyncStream<StoreChange> {
        commitStream(bound: bound, resync: StoreChange.resyncNeeded) { transaction in
            .commit(StoreCommit(lsn: transaction.lsn, changes: transaction.entryChanges()))
        }
    }

    /// ``changes(bound:)`` with the default bound.
    public var changes: AsyncStream<StoreChange> { changes() }
}

extension CommittedTransaction {
    /// Each entry and root this commit changed, once, as documents.
    func entryChanges() -> [EntryChange] {
        var seen = Set<String>()
        var changes: [EntryChange] = []
        for operation in operations {
            switch operation {
            case let .put(table, key, _), let .remove(table, key):
                guard seen.insert("t\(table)\u{0}\(key)").inserted else { continue }
                let encoding = after.encoding(ofTable: table) ?? before.encoding(ofTable: table)
                changes.append(EntryChange(
                    table: table, root: nil, key: Self.document(key: key, encoding?.key),
                    old: Self.document(before.value(in: table, key: key), encoding?.value),
                    new: Self.document(after.value(in: table, key: key), encoding?.value)))
            case let .setRoot(name, _), let .removeRoot(name), let .patchRoot(name, _, _):
                guard seen.insert("r\(name)").inserted else { continue }
                changes.append(EntryChange(
                    table: nil, root: name, key: nil,
                    old: Self.document(before.root(named: name), before.encoding(ofRoot: name)),
                    new: Self.document(after.root(named: name), after.encoding(ofRoot: name))))
            case .declareTable, .declareRoot:
                continue
            }
        }
        return changes
    }

    static func document(key: [UInt8], _ encoding: KeyEncoding?) -> Document {
        encoding.flatMap { OrderedKey.decode(key, as: $0) } ?? .bytes(key)
    }

    static func document(_ value: StoredValue?, _ encoding: ValueEncoding?) -> Document? {
        // A value in memory encodes: it was encoded when it was committed.
        guard let value, let bytes = try? value.bytes() else { return nil }
        // Bytes that break their encoding are shown as bytes (verify reports them).
        guard encoding == .valueFormat, let document = try? Document(decodingBinary: bytes) else { return .bytes(bytes) }
        return document
    }
}
