/// Converts any `Encodable` value to a ``Document``.
///
/// The document is exactly what ``Document/init(decodingBinary:)`` makes of
/// the value's ``ValueEncoder`` bytes: struct fields become object entries,
/// `Date`, `UUID` and `Data` keep their own cases, integers are `.int` when
/// they fit `Int64`.
public struct DocumentEncoder: Sendable {
    /// Creates an encoder.
    public init() {}

    /// Converts `value` to a document.
    ///
    /// - Throws: As ``ValueEncoder/encode(_:)``.
    /// - Complexity: O(*n*) in the value's encoded size.
    public func encode<T: Encodable>(_ value: T) throws -> Document {
        if let document = value as? Document { return document }
        return try Document(decodingBinary: ValueEncoder().encode(value))
    }
}
