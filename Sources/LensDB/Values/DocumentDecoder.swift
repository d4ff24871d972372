import Foundation

/// Converts a ``Document`` to any `Decodable` type.
///
/// Numbers convert where exact (`.int(3)` decodes as `Double`), and strings
/// stand in for the types JSON cannot carry: a UUID's canonical string for
/// `UUID`, base64 for `Data`. So a document parsed from JSON decodes as well.
public struct DocumentDecoder: Sendable {
    /// Creates a decoder.
    public init() {}

    /// Decodes a value of `type` from `document`.
    ///
    /// - Throws: As `ValueDecoder.decode(_:from:)`: `typeMismatch`,
    ///   `keyNotFound`, `valueNotFound` with the coding path.
    /// - Complexity: O(*n*) in the document's encoded size.
    public func decode<T: Decodable>(_ type: T.Type, from document: Document) throws -> T {
        if T.self == Document.self { return unsafeBitCast(document, to: T.self) }
        return try ValueDecoder().decode(type, from: document.binaryEncoded())
    }
}
