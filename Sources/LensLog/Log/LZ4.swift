import CLZ4

/// LZ4 block compression for record payloads and snapshot chunks.
public enum LZ4 {
    /// Compresses `input`, or returns nil when the result would not be smaller
    /// (records and chunks then store the bytes as they are).
    public static func compress(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
        guard input.count > 0, input.count <= Int(LZ4_MAX_INPUT_SIZE) else { return nil }
        let bound = Int(LZ4_compressBound(Int32(input.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let written = output.withUnsafeMutableBytes { out in
            LZ4_compress_default(
                input.baseAddress!.assumingMemoryBound(to: CChar.self),
                out.baseAddress!.assumingMemoryBound(to: CChar.self),
                Int32(input.count), Int32(bound))
        }
        guard written > 0, Int(written) < input.count else { return nil }
        output.removeLast(bound - Int(written))
        return output
    }

    /// Decompresses a block that must expand to exactly `decompressedCount` bytes.
    ///
    /// The caller bounds `decompressedCount` before calling: this allocates it.
    /// Returns nil for a malformed block or a size mismatch; never reads or
    /// writes outside the buffers (`LZ4_decompress_safe`).
    public static func decompress(_ input: UnsafeRawBufferPointer, decompressedCount: Int) -> [UInt8]? {
        guard decompressedCount > 0, input.count > 0, decompressedCount <= Int(Int32.max) else { return nil }
        var output = [UInt8](repeating: 0, count: decompressedCount)
        let produced = output.withUnsafeMutableBytes { out in
            LZ4_decompress_safe(
                input.baseAddress!.assumingMemoryBound(to: CChar.self),
                out.baseAddress!.assumingMemoryBound(to: CChar.self),
                Int32(input.count), Int32(decompressedCount))
        }
        return Int(produced) == decompressedCount ? output : nil
    }
}
