// The numbers of the LensDB value encoding. The article "Value format" in the
// LensDB documentation catalog (Sources/LensDB/LensDB.docc/ValueFormatSpecification.md) is the
// spec: every tag, how each length is encoded, a worked example in hex and the
// limits. Every entity and root document is stored with these bytes.

/// The type tag that starts every encoded value.
///
/// Stored on disk — never renumber. A retired tag stays here as a comment so
/// that its byte is never reused.
public enum ValueTag: UInt8, Sendable, CaseIterable {
    /// No value. No payload.
    case null = 0x00
    /// `false`. No payload.
    case `false` = 0x01
    /// `true`. No payload.
    case `true` = 0x02
    /// A signed integer that fits `Int64`: zigzag LEB128 varint, 1–10 bytes.
    case int = 0x03
    /// An unsigned integer above `Int64.max`: LEB128 varint, 10 bytes.
    /// Writers use `int` for every value that fits it, so each number has one encoding.
    case uint = 0x04
    /// An IEEE 754 binary64, 8 bytes little-endian. `Float` widens to it.
    case double = 0x05
    /// UTF-8 text: varint byte length, then the bytes.
    case string = 0x06
    /// Raw bytes (`Data`, `[UInt8]` inside a `Document`): varint length, then the bytes.
    case bytes = 0x07
    /// A sequence: varint element count, then each element.
    case array = 0x08
    /// A keyed map: varint entry count, then per entry a varint key length,
    /// the key's UTF-8 bytes (no tag) and the value.
    case map = 0x09
    /// A `Date`: seconds since 2001-01-01T00:00:00Z as a binary64, 8 bytes little-endian.
    case date = 0x0A
    /// A `UUID`: its 16 bytes in RFC 4122 order.
    case uuid = 0x0B
}

/// Limits of the value encoding, enforced by every writer and reader.
public enum ValueFormat {
    /// The deepest nesting of arrays and maps a value may have. Encoding a
    /// deeper value throws; decoding one throws `DecodingError.dataCorrupted`,
    /// so that untrusted bytes cannot exhaust the stack.
    public static let maxDepth = 256

    /// A varint never has more bytes than this (64 bits, 7 a byte).
    static let maxVarintBytes = 10
}
