/// Reads one field of the entity in a row's box, for the filters, sort
/// keys and index keys that key paths name.
///
/// A stored property (or a chain of them) is read at its offset in the
/// entity, found once from the key path: no key path is applied per row
/// (the runtime's projection instantiates metadata on every call, which
/// cost more than the rest of a query's work per entry). Any other key
/// path, computed or through a class, is applied as it is.
///
/// `@inlinable`, so it is compiled in the program's module for its entity
/// and field types. A value, not a closure: a filter's or a sort key's
/// object holds it inline, with no allocation of its own.
@usableFromInline
struct FieldRead<T: Entity, V>: Sendable {
    @usableFromInline let path: KeyPath<T, V> & Sendable
    @usableFromInline let offset: Int?

    @inlinable
    init(_ path: KeyPath<T, V> & Sendable) {
        self.path = path
        offset = MemoryLayout<T>.offset(of: path)
    }

    @inlinable
    func callAsFunction(_ row: RowObject) -> V {
        let box = unsafeDowncast(row, to: RowBox<T>.self)
        if let offset { return box.field(atOffset: offset, as: V.self) }
        return box.value[keyPath: path]
    }
}

/// ``FieldRead`` as a closure, for the index keys and the conditions
/// that keep their reader in one.
@inlinable
func fieldReader<T: Entity, V>(_ field: KeyPath<T, V> & Sendable) -> @Sendable (RowObject) -> V {
    let read = FieldRead(field)
    return { read($0) }
}

extension RowBox {
    /// The field of type `V` stored `offset` bytes into the entity
    /// (`MemoryLayout<T>.offset(of:)` of a stored property): a copy of it,
    /// read in place.
    @inlinable
    func field<V>(atOffset offset: Int, as type: V.Type) -> V {
        withUnsafePointer(to: value) { UnsafeRawPointer($0).load(fromByteOffset: offset, as: V.self) }
    }
}
