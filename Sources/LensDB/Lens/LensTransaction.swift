/// A lens inside a transaction: `tx[lens]`. Reads see the transaction's own
/// writes; writes become part of its one record, with everything else the
/// transaction does.
///
/// ```swift
/// try store.write { tx in
///     try tx[state].set(\.protection, nil)
///     try tx[people].put(alice)
/// }                                         // one record: both, or neither
/// ```
///
/// Each method that throws leaves the transaction as it was before the call.
public struct LensTransaction<Value: Codable & Sendable> {
    let lens: Lens<Value>
    var transaction: Transaction

    /// The value as the transaction has it: stored, default or absent.
    public var value: Value { lens.focus.value(in: transaction.state) }

    /// Sets the value; see ``Lens/set(_:)``.
    /// - Throws: ``LensError/missingParent(path:)``.
    public mutating func set(_ value: Value) throws {
        try write { _ in .set(value) }
    }

    /// Sets the part of the value at `keyPath`: `tx[state].set(\.protection, nil)`.
    /// The same as `tx[lens.lens(keyPath)].set(value)`.
    /// - Throws: ``LensError/missingParent(path:)``.
    public mutating func set<V: Codable & Sendable>(_ keyPath: WritableKeyPath<Value, V> & Sendable, _ value: V) throws {
        var part = LensTransaction<V>(lens: lens.lens(keyPath), transaction: transaction)
        try part.set(value)
        transaction = part.transaction
    }

    /// Removes the value; see ``Lens/remove()``.
    /// - Throws: ``LensError/notRemovable(path:)``.
    public mutating func remove() throws {
        try write { _ in .remove }
    }

    /// Changes the value in place; see ``Lens/update(_:)``.
    /// - Throws: what `body` throws, and the errors of ``set(_:)``.
    @discardableResult
    public mutating func update<T>(_ body: (inout Value) throws -> T) throws -> T {
        var result: T?
        try write { current in
            var value = current
            result = try body(&value)
            return .set(value)
        }
        // `write` runs the block, or throws what it threw.
        return result!
    }

    private mutating func write(_ edit: (Value) throws -> LensEdit<Value>) throws {
        precondition(transaction.store == ObjectIdentifier(lens.store), "a lens of one store used in a transaction of another")
        try lens.focus.write(in: &transaction, verifying: lens.store.options.checksInvariants, edit)
    }
}

extension Transaction {
    /// The lens `lens` inside this transaction: `tx[state].set(\.x, 1)`.
    public subscript<Value>(lens: Lens<Value>) -> LensTransaction<Value> {
        get { LensTransaction(lens: lens, transaction: self) }
        _modify {
            var view = LensTransaction(lens: lens, transaction: self)
            // Leave nothing here that shares the view's storage, so its
            // changes are made in place.
            self = Transaction(base: StoreState(), store: store)
            defer { self = view.transaction }
            yield &view
        }
    }
}
