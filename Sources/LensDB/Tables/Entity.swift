/// A value a typed table holds: `Codable` for the log, `Identifiable` for its
/// primary key, `Sendable` for versions shared across threads.
///
/// Identifiers of type `Int`, `Int64`, `UInt64`, `String` and `UUID` are
/// stored with an order-preserving encoding (``KeyEncoding``); other
/// `Codable` identifiers in the value format. `String` identifiers must be in
/// Unicode NFC (almost all text is): Swift's `<` is not a strict order
/// across normalization forms, and the table refuses an identifier that is
/// not (``TableError/identifierNotNormalized(table:id:)``).
///
/// ```swift
/// struct Person: Entity {
///     var id: Int64
///     var name: String
///     var city: String
///     var age: Int
/// }
/// ```
public protocol Entity: Codable, Identifiable, Sendable where ID: Codable & Hashable & Comparable & Sendable {}

/// One entity as a version of a table holds it, with the LSN of the commit
/// that last changed it (for entities loaded at open: the store's LSN then,
/// an upper bound).
struct Row<T: Entity>: Sendable {
    var value: T
    var lsn: UInt64
}
