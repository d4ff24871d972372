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
