// Field-by-field little-endian encoding: on-disk layouts never depend on a
// Swift type's memory layout.

extension Array where Element == UInt8 {
    @inlinable mutating func appendLittleEndian(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    @inlinable mutating func appendLittleEndian(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    @inlinable mutating func appendLittleEndian(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}

extension UnsafeRawBufferPointer {
    /// Reads a little-endian integer at `offset`; the caller has checked the bounds.
    @inlinable func littleEndian<T: FixedWidthInteger>(at offset: Int, as type: T.Type = T.self) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

extension Array where Element == UInt8 {
    /// Reads a little-endian integer at `offset`; the caller has checked the bounds.
    @inlinable func littleEndian<T: FixedWidthInteger>(at offset: Int, as type: T.Type = T.self) -> T {
        withUnsafeBytes { $0.littleEndian(at: offset) }
    }
}

// LEB128 variable-length unsigned integers, for lengths and counts inside
// payloads (transaction records, snapshot items).
extension Array where Element == UInt8 {
    @inlinable public mutating func appendVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        append(UInt8(rest))
    }

    /// Appends a varint length and the bytes.
    @inlinable public mutating func appendLengthPrefixed(_ bytes: [UInt8]) {
        appendVarint(UInt64(bytes.count))
        append(contentsOf: bytes)
    }

    /// Appends a varint length and the bytes, lent in place.
    @inlinable public mutating func appendLengthPrefixed(_ bytes: UnsafeRawBufferPointer) {
        appendVarint(UInt64(bytes.count))
        append(contentsOf: bytes)
    }

    /// Appends a varint length and the string's UTF-8.
    @inlinable public mutating func appendLengthPrefixed(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            appendVarint(UInt64(utf8.count))
            append(contentsOf: utf8)
        }
    }
}

/// Reads varints and length-prefixed fields from untrusted bytes: every length
/// is checked against the bytes left before anything is allocated.
public struct ByteCursor {
    public let bytes: [UInt8]
    public private(set) var offset: Int
    private let end: Int

    /// A cursor over `bytes[start..<end]` (to the end by default). Bounds
    /// past the bytes stop at them: fields are read through a buffer whose
    /// bounds only these limits keep.
    public init(_ bytes: [UInt8], from start: Int = 0, to end: Int? = nil) {
        self.bytes = bytes
        self.end = max(0, min(end ?? bytes.count, bytes.count))
        offset = max(0, min(start, self.end))
    }

    public var isAtEnd: Bool { offset >= end }
    public var remaining: Int { end - offset }

    /// The next byte, not read past.
    public func peek() -> UInt8? { offset < end ? bytes[offset] : nil }

    public mutating func byte() -> UInt8? {
        guard offset < end else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A LEB128 varint of at most 10 bytes that fits 64 bits; nil if malformed or cut.
    public mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 70, by: 7) {
            guard let byte = byte() else { return nil }
            if shift == 63 && byte > 1 { return nil }
            value |= UInt64(byte & 0x7F) << UInt64(shift)
            if byte & 0x80 == 0 { return value }
        }
        return nil
    }

    /// A varint length, then that many bytes; nil when the length exceeds what is left.
    public mutating func lengthPrefixed() -> [UInt8]? {
        guard let length = varint(), length <= UInt64(remaining) else { return nil }
        defer { offset += Int(length) }
        // Through a buffer, not a slice: a slice would retain and release
        // the whole array for each field read.
        return bytes.withUnsafeBufferPointer { Array(UnsafeBufferPointer(rebasing: $0[offset..<(offset + Int(length))])) }
    }

    /// ``lengthPrefixed()``'s bytes as their place in ``bytes``, not copied.
    public mutating func lengthPrefixedRange() -> Range<Int>? {
        guard let length = varint(), length <= UInt64(remaining) else { return nil }
        defer { offset += Int(length) }
        return offset..<(offset + Int(length))
    }

    /// A length-prefixed UTF-8 string; nil when cut or not valid UTF-8.
    public mutating func string() -> String? {
        guard let utf8 = lengthPrefixed() else { return nil }
        return String(validating: utf8, as: UTF8.self)
    }
}
