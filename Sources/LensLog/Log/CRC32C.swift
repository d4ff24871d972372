import CLensCRC

/// CRC32C (Castagnoli), the checksum of every record, header and snapshot chunk.
///
/// Uses the SSE4.2 or ARMv8 CRC instruction when the CPU has one.
/// Thread-safe; O(n) in the bytes covered.
public enum CRC32C {
    /// The checksum of `bytes`, continuing from `crc` (the finished checksum of
    /// the bytes before them; 0 to start).
    @inlinable
    public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        lens_crc32c_extend(crc, bytes.baseAddress, bytes.count)
    }

    /// The checksum of `bytes`, continuing from `crc`.
    @inlinable
    public static func checksum(_ bytes: [UInt8], continuing crc: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, continuing: crc) }
    }

    /// Whether a CPU instruction computes the checksum on this machine.
    public static var usesHardware: Bool { lens_crc32c_uses_hardware() != 0 }
}
