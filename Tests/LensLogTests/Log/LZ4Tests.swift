#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
@testable import LensLog

/// LZ4 blocks are the open block format on every platform, whichever
/// library made them (liblz4 on Linux, Apple's Compression on Darwin).
@Suite struct LZ4Tests {
    static let text = Array("LensDB LensDB LensDB: durable application state, durable application state, durable application state.".utf8)
    /// `LZ4_compress_default` (liblz4 1.9) of ``text``.
    static let liblz4Block: [UInt8] = [
        0x79, 0x4c, 0x65, 0x6e, 0x73, 0x44, 0x42, 0x20, 0x07, 0x00, 0xff, 0x0d, 0x3a, 0x20, 0x64, 0x75, 0x72,
        0x61, 0x62, 0x6c, 0x65, 0x20, 0x61, 0x70, 0x70, 0x6c, 0x69, 0x63, 0x61, 0x74, 0x69, 0x6f, 0x6e, 0x20,
        0x73, 0x74, 0x61, 0x74, 0x65, 0x2c, 0x1b, 0x00, 0x1e, 0x50, 0x74, 0x61, 0x74, 0x65, 0x2e,
    ]

    func decompress(_ block: [UInt8], _ count: Int) -> [UInt8]? {
        block.withUnsafeBytes { LZ4.decompress($0, decompressedCount: count) }
    }

    @Test func aBlockWrittenByLiblz4DecodesOnEveryPlatform() {
        #expect(decompress(Self.liblz4Block, Self.text.count) == Self.text)
    }

    @Test func aBlockThatDoesNotExpandToExactlyTheStoredSizeIsRejected() {
        #expect(decompress(Self.liblz4Block, Self.text.count - 1) == nil)
        #expect(decompress(Self.liblz4Block, Self.text.count + 1) == nil)
        #expect(decompress(Array(Self.liblz4Block.dropLast(3)), Self.text.count) == nil)
    }

    /// A stored length of 2 GiB or more (a damaged chunk or record header
    /// with valid checksums) is a malformed block, not a 32-bit conversion
    /// that traps. The block is mapped, not allocated: untouched pages of
    /// an anonymous mapping take no memory.
    @Test func aBlockOf2GiBOrMoreIsRejectedWithoutReadingIt() throws {
        let count = Int(Int32.max) + 1
        let mapped = try #require(mmap(nil, count, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0))
        try #require(mapped != MAP_FAILED)
        defer { munmap(mapped, count) }
        #expect(LZ4.decompress(UnsafeRawBufferPointer(start: mapped, count: count), decompressedCount: Self.text.count) == nil)
        #expect(Self.liblz4Block.withUnsafeBytes { LZ4.decompress($0, decompressedCount: count) } == nil)
    }

    @Test func compressionKeepsOnlyASmallerResultAndRoundTrips() {
        let block = Self.text.withUnsafeBytes { LZ4.compress($0) }
        #expect(block.map { $0.count < Self.text.count } == true)
        #expect(block.flatMap { decompress($0, Self.text.count) } == Self.text)
        var random = SystemRandomNumberGenerator()
        let noise = (0..<200).map { _ in UInt8.random(in: 0...255, using: &random) }
        #expect(noise.withUnsafeBytes { LZ4.compress($0) } == nil, "incompressible bytes are stored as they are")
    }

    /// A block made after a prefix is the same block, the prefix before it:
    /// how a record's length prefix and its block share one allocation.
    @Test func aBlockAfterAPrefixIsTheSameBlock() throws {
        let block = try #require(Self.text.withUnsafeBytes { LZ4.compress($0) })
        for prefix in [[], [0xAB], [1, 2, 3, 4]] as [[UInt8]] {
            #expect(Self.text.withUnsafeBytes { LZ4.compress($0, after: prefix) } == prefix + block)
        }
        let noise = (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 0x9E37_79B9 >> 7) }
        #expect(noise.withUnsafeBytes { LZ4.compress($0, after: [9, 9, 9, 9]) } == nil)
    }
}
