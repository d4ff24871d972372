import Foundation

/// The order-preserving encoding of primary keys: for every supported type,
/// comparing two keys' bytes lexicographically gives the same answer as `<`
/// on the keys. Snapshots write entries in byte order, so a typed table's
/// snapshot lists its entities in identifier order, and `logtool` decodes
/// the identifiers from ``KeyEncoding`` alone.
///
/// Identifier types without an order-preserving encoding fall back to the
/// value format (``KeyEncoding/valueFormat``); their order is kept in memory.
public enum OrderedKey {
    /// The encoding `ID` uses (``encoding(of:)``), and its bytes. Chosen
    /// by `ID`'s static type, so an `Optional` identifier is always in the
    /// value format, whatever it holds.
    public static func encode<ID: Encodable>(_ id: ID) throws -> (KeyEncoding, [UInt8]) {
        switch encoding(of: ID.self) {
        case .int64: (.int64, int64((id as? Int64) ?? Int64(id as! Int)))
        case .uint64: (.uint64, uint64(id as! UInt64))
        case .string: (.string, string(id as! String))
        case .uuid: (.uuid, uuid(id as! UUID))
        // encoding(of:) never gives .raw, the bytes of a program's own.
        case .valueFormat, .raw: (.valueFormat, try ValueEncoder().encode(id))
        }
    }

    /// The key encoding identifiers of type `ID` get, from the static type
    /// alone: `ID` is exactly one of the types named, or it is not. Inlinable,
    /// so that a caller specialized for `ID` knows it when compiled; where
    /// `ID` is not known, each test compares two metadata pointers.
    @inlinable
    public static func encoding<ID>(of type: ID.Type) -> KeyEncoding {
        if type == Int.self || type == Int64.self { return .int64 }
        if type == UInt64.self { return .uint64 }
        if type == String.self { return .string }
        if type == UUID.self { return .uuid }
        return .valueFormat
    }

    /// The ordered bytes of a signed integer (``KeyEncoding/int64``).
    public static func int64(_ value: Int64) -> [UInt8] {
        uint64(UInt64(bitPattern: value) ^ (1 << 63))
    }

    /// The signed integer whose ordered bytes (``int64(_:)``) `bytes` are,
    /// read in place; nil unless they are 8.
    static func int64(ordered bytes: UnsafeRawBufferPointer) -> Int64? {
        guard bytes.count == 8 else { return nil }
        return Int64(bitPattern: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)) ^ (1 << 63))
    }

    /// The ordered bytes of an unsigned integer (``KeyEncoding/uint64``).
    public static func uint64(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
    }

    /// The ordered bytes of a string (``KeyEncoding/string``).
    public static func string(_ value: String) -> [UInt8] {
        Array(value.precomposedStringWithCanonicalMapping.utf8)
    }

    /// The ordered bytes of a UUID (``KeyEncoding/uuid``).
    public static func uuid(_ value: UUID) -> [UInt8] {
        withUnsafeBytes(of: value.uuid) { Array($0) }
    }

    /// A key decoded from its bytes, for display: nil when the bytes do not
    /// have the shape `encoding` promises (or the encoding is raw).
    public static func decode(_ bytes: [UInt8], as encoding: KeyEncoding) -> Document? {
        switch encoding {
        case .raw: return nil
        case .valueFormat: return try? Document(decodingBinary: bytes)
        case .int64:
            return bytes.withUnsafeBytes(int64(ordered:)).map(Document.int)
        case .uint64:
            guard bytes.count == 8 else { return nil }
            let value = bigEndian(bytes)
            return value <= UInt64(Int64.max) ? .int(Int64(value)) : .uint(value)
        case .string:
            guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
            return .string(text)
        case .uuid:
            guard bytes.count == 16 else { return nil }
            let tuple = bytes.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }
            return .uuid(UUID(uuid: tuple))
        }
    }

    /// Why `bytes` break `encoding`'s promise, or nil when they keep it.
    public static func problem(with bytes: [UInt8], as encoding: KeyEncoding) -> String? {
        switch encoding {
        case .raw: return nil
        case .valueFormat:
            do { _ = try Document(decodingBinary: bytes) } catch { return "not in the value format: \(error)" }
            return nil
        case .int64, .uint64: return bytes.count == 8 ? nil : "\(bytes.count) bytes where \(encoding) takes 8"
        case .uuid: return bytes.count == 16 ? nil : "\(bytes.count) bytes where an ordered UUID takes 16"
        case .string: return String(validating: bytes, as: UTF8.self) == nil ? "not valid UTF-8" : nil
        }
    }

    private static func bigEndian(_ bytes: [UInt8]) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
