// How a table's keys and values, and a root document's value, are encoded:
// recorded in the log (operations 5 and 6 of log format v2) and carried by
// snapshots (items 4 and 5 of snapshot format v2), so that tools show every
// store without guessing (promise 10). Stored on disk — never renumber.

/// How the keys of a table are encoded. Stored on disk — never renumber.
public enum KeyEncoding: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    // 0 is never written.
    /// Bytes the program chose, shown as they are and never judged.
    case raw = 1
    /// The value encoding (<doc:ValueFormatSpecification>): the fallback for identifier
    /// types without an order-preserving encoding. Byte order is not `<`.
    case valueFormat = 2
    /// A signed 64-bit integer (`Int`, `Int64`): 8 bytes big-endian with the
    /// sign bit flipped, so byte order is numeric order.
    case int64 = 3
    /// An unsigned 64-bit integer (`UInt64`): 8 bytes big-endian.
    case uint64 = 4
    /// A `String`: the UTF-8 bytes of its NFC form. Canonically equal
    /// strings (which `==` calls equal) are one key, and byte order is the
    /// order of `<` for strings in NFC. (For other strings Swift's `<` is
    /// not a strict order; the NFC byte order is the one kept.)
    case string = 5
    /// A `UUID`: its 16 bytes in RFC 4122 order, which is the order of `<`.
    case uuid = 6

    /// The encoding's name in `logtool --json` output; stable.
    public var name: String {
        switch self {
        case .raw: "raw"
        case .valueFormat: "valueFormat"
        case .int64: "int64"
        case .uint64: "uint64"
        case .string: "string"
        case .uuid: "uuid"
        }
    }

    public var description: String {
        switch self {
        case .raw: "raw bytes"
        case .valueFormat: "value format"
        case .int64: "ordered Int64"
        case .uint64: "ordered UInt64"
        case .string: "ordered String"
        case .uuid: "ordered UUID"
        }
    }
}

/// How values (of a table, or a root document) are encoded. Stored on disk — never renumber.
public enum ValueEncoding: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    // 0 is never written.
    /// Bytes the program chose, shown as they are and never judged.
    case raw = 1
    /// The value encoding (<doc:ValueFormatSpecification>): shown as JSON, and a value
    /// that does not decode is a problem `logtool verify` reports.
    case valueFormat = 2

    /// The encoding's name in `logtool --json` output; stable.
    public var name: String {
        switch self {
        case .raw: "raw"
        case .valueFormat: "valueFormat"
        }
    }

    public var description: String {
        switch self {
        case .raw: "raw bytes"
        case .valueFormat: "value format"
        }
    }
}

/// The encoding a table promises for every key and value it holds.
///
/// A table's encoding is declared by the transaction that first puts into
/// it, and forgotten when it becomes empty. A table of a store written
/// before encodings were recorded has none: its bytes are "unknown",
/// shown as bytes and never judged.
public struct TableEncoding: Sendable, Hashable, CustomStringConvertible {
    public var key: KeyEncoding
    public var value: ValueEncoding

    public init(key: KeyEncoding, value: ValueEncoding) {
        self.key = key
        self.value = value
    }

    /// What the byte-level API writes: the program's own bytes.
    public static let raw = TableEncoding(key: .raw, value: .raw)

    public var description: String { "keys: \(key), values: \(value)" }
}
