/// The changes of one write block, applied all or nothing.
///
/// Reads inside the block see the transaction's own writes. Nothing is
/// visible to other readers, or written anywhere, until the block returns.
public struct Transaction: Sendable {
    /// The state as the transaction has made it so far.
    public private(set) var state: StoreState
    private(set) var operations: [Operation] = []

    init(base: StoreState) { state = base }

    /// Inserts or replaces the value under `key` in `table`.
    public mutating func put(_ value: StoredValue, for key: [UInt8], in table: String) {
        record(.put(table: table, key: key, value: value))
    }

    /// Inserts or replaces encoded bytes under `key` in `table`.
    public mutating func put(_ bytes: [UInt8], for key: [UInt8], in table: String) {
        put(.encoded(bytes), for: key, in: table)
    }

    /// Removes `key` from `table`; nothing happens when it is absent.
    public mutating func remove(_ key: [UInt8], from table: String) {
        guard state.value(in: table, key: key) != nil else { return }
        record(.remove(table: table, key: key))
    }

    /// Sets the root document `name`.
    public mutating func setRoot(_ value: StoredValue, named name: String) {
        record(.setRoot(name: name, value: value))
    }

    /// Removes the root document `name`; nothing happens when it is absent.
    public mutating func removeRoot(named name: String) {
        guard state.root(named: name) != nil else { return }
        record(.removeRoot(name: name))
    }

    /// Whether the transaction changes anything.
    public var isEmpty: Bool { operations.isEmpty }

    private mutating func record(_ operation: Operation) {
        state.apply(operation)
        operations.append(operation)
    }
}
