/// A closure that reads one field of the entity in a row's box, for the
/// filters, sort keys and index keys that key paths name.
///
/// A stored property (or a chain of them) is read at its offset in the
/// entity, found once from the key path: no key path is applied per row
/// (the runtime's projection instantiates metadata on every call, which
/// cost more than the rest of a query's work per entry). Any other key
/// path, computed or through a class, is applied as it is.
///
/// `@inlinable`, so the closure is compiled in the program's module for
/// its entity and field types.
@inlinable
func fieldReader<T: Entity, V>(_ field: KeyPath<T, V> & Sendable) -> @Sendable (RowObject) -> V {
    if let offset = MemoryLayout<T>.offset(of: field) {
        return { unsafeDowncast($0, to: RowBox<T>.self).field(atOffset: offset, as: V.self) }
    }
    return { unsafeDowncast($0, to: RowBox<T>.self).value[keyPath: field] }
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
