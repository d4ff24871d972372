#if os(Linux)
import CLZ4
#elseif canImport(Compression)
import Compression
#endif

/// LZ4 block compression for record payloads and snapshot chunks.
///
/// The stored bytes are the open LZ4 *block* format, whichever library made
/// them: liblz4 on Linux, Apple's Compression library (`COMPRESSION_LZ4_RAW`,
/// documented as the bare block format that liblz4's block API reads and
/// writes) on macOS and iOS, which have no liblz4. So a store moves between
/// platforms as it is.
public enum LZ4 {
    /// liblz4's `LZ4_MAX_INPUT_SIZE`: larger inputs are stored as they are.
    static let maxInputSize = 0x7E00_0000

    /// Compresses `input`, or returns nil when the result would not be smaller
    /// (records and chunks then store the bytes as they are).
    public static func compress(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
        compress(input, after: [])
    }

    /// `prefix` followed by `input` compressed, in one allocation, or nil
    /// when the block would not be smaller than `input`: a record's length
    /// prefix and its block are made without copying the block.
    ///
    /// The output is not zeroed first: of the room the worst case needs,
    /// only the bytes the block takes are ever written, so a large record's
    /// unused room is never made resident.
    public static func compress(_ input: UnsafeRawBufferPointer, after prefix: [UInt8]) -> [UInt8]? {
        guard input.count > 1, input.count <= maxInputSize else { return nil }
        return encode(input, after: prefix)
    }

    /// Decompresses a block that must expand to exactly `decompressedCount` bytes.
    ///
    /// The caller bounds `decompressedCount` before calling: this allocates it.
    /// Returns nil for a malformed block, a size mismatch, or a block or
    /// result of 2 GiB or more, which no LZ4 block is (liblz4 takes both
    /// sizes as 32-bit); never reads or writes outside the buffers.
    public static func decompress(_ input: UnsafeRawBufferPointer, decompressedCount: Int) -> [UInt8]? {
        guard decompressedCount > 0, decompressedCount <= Int(Int32.max), input.count > 0, input.count <= Int(Int32.max) else { return nil }
        return decode(input, count: decompressedCount)
    }

    #if os(Linux)
    private static func encode(_ input: UnsafeRawBufferPointer, after prefix: [UInt8]) -> [UInt8]? {
        let bound = Int(LZ4_compressBound(Int32(input.count)))
        var written: Int32 = 0
        let output = [UInt8](unsafeUninitializedCapacity: prefix.count + bound) { out, count in
            _ = out.initialize(fromContentsOf: prefix)
            written = LZ4_compress_default(
                input.baseAddress!.assumingMemoryBound(to: CChar.self),
                UnsafeMutableRawPointer(out.baseAddress! + prefix.count).assumingMemoryBound(to: CChar.self),
                Int32(input.count), Int32(bound))
            count = prefix.count + Int(max(0, written))
        }
        guard written > 0, Int(written) < input.count else { return nil }
        return output
    }

    /// `LZ4_decompress_safe` checks every offset and length against both
    /// buffers, and writes every byte of a block that expands to `count`.
    private static func decode(_ input: UnsafeRawBufferPointer, count: Int) -> [UInt8]? {
        var produced: Int32 = 0
        let output = [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            produced = LZ4_decompress_safe(
                input.baseAddress!.assumingMemoryBound(to: CChar.self),
                UnsafeMutableRawPointer(out.baseAddress!).assumingMemoryBound(to: CChar.self),
                Int32(input.count), Int32(count))
            // Anything short of the whole block is thrown away, unread.
            initialized = Int(produced) == count ? count : 0
        }
        return Int(produced) == count ? output : nil
    }
    #else
    /// Only a result smaller than the input is kept, so the output buffer has
    /// room for no more: the encoder returns 0 when its result does not fit.
    private static func encode(_ input: UnsafeRawBufferPointer, after prefix: [UInt8]) -> [UInt8]? {
        var written = 0
        let output = [UInt8](unsafeUninitializedCapacity: prefix.count + input.count - 1) { out, count in
            _ = out.initialize(fromContentsOf: prefix)
            written = compression_encode_buffer(
                out.baseAddress! + prefix.count, input.count - 1,
                input.baseAddress!.assumingMemoryBound(to: UInt8.self), input.count,
                nil, COMPRESSION_LZ4_RAW)
            count = prefix.count + written
        }
        guard written > 0 else { return nil }
        return output
    }

    /// A block that expands past the buffer fills it and reports its size, so
    /// one spare byte tells a block too long from one that fits exactly; a
    /// malformed block reports 0.
    private static func decode(_ input: UnsafeRawBufferPointer, count: Int) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: count + 1)
        let produced = output.withUnsafeMutableBytes { out in
            compression_decode_buffer(
                out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count,
                input.baseAddress!.assumingMemoryBound(to: UInt8.self), input.count,
                nil, COMPRESSION_LZ4_RAW)
        }
        guard produced == count else { return nil }
        output.removeLast()
        return output
    }
    #endif
}
