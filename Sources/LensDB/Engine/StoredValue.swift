/// A value that encodes itself: what typed tables keep in memory, decoded, so
/// a point read never decodes. Snapshots call ``encodedBytes()``.
public protocol SelfEncodingValue: Sendable {
    /// The value's bytes in the store's value encoding. Deterministic.
    func encodedBytes() throws -> [UInt8]
}

/// The slot of one value in the in-memory state: the encoded bytes (a table
/// no program has opened with its type, e.g. under `logtool`) or a decoded
/// value that can encode itself. Memory holds one of the two, never both.
public enum StoredValue: Sendable {
    case encoded([UInt8])
    case decoded(any SelfEncodingValue)

    /// The value's bytes: as stored, or encoded now.
    public func bytes() throws -> [UInt8] {
        switch self {
        case .encoded(let bytes): bytes
        case .decoded(let value): try value.encodedBytes()
        }
    }
}

extension Document: SelfEncodingValue {
    /// The document in the value format, object keys sorted by their UTF-8
    /// bytes: how a root document that patches changed is kept in memory
    /// and written to snapshots.
    /// - Throws: `EncodingError.invalidValue` when it nests deeper than
    ///   ``ValueFormat/maxDepth``.
    public func encodedBytes() throws -> [UInt8] {
        try ValueEncoder().encode(self)
    }
}
