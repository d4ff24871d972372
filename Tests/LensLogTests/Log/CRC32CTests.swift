import CLensCRC
import Testing
@testable import LensLog

@Suite struct CRC32CTests {
    /// RFC 3720 (iSCSI), appendix B.4, plus the common "123456789" check value.
    @Test(arguments: [
        ([UInt8](repeating: 0, count: 32), UInt32(0x8A91_36AA)),
        ([UInt8](repeating: 0xFF, count: 32), UInt32(0x62A8_AB43)),
        ((0..<32).map { UInt8($0) }, UInt32(0x46DD_794E)),
        ((0..<32).reversed().map { UInt8($0) }, UInt32(0x113F_DB5C)),
        (Array("123456789".utf8), UInt32(0xE306_9283)),
    ])
    func publishedVectorsMatch(input: [UInt8], expected: UInt32) {
        #expect(CRC32C.checksum(input) == expected)
        #expect(input.withUnsafeBytes { lens_crc32c_extend_portable(0, $0.baseAddress, $0.count) } == expected)
    }

    @Test func extendingInPiecesEqualsOneCall() {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        for split in [0, 1, 7, 8, 9, 500, 999, 1000] {
            let first = CRC32C.checksum(Array(bytes[..<split]))
            #expect(CRC32C.checksum(Array(bytes[split...]), continuing: first) == CRC32C.checksum(bytes))
        }
    }

    @Test func hardwareAndPortablePathsAgreeOnEveryLengthAndAlignment() {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<300).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes.withUnsafeBytes { raw in
            for start in 0..<9 {
                for length in 0..<(raw.count - start) where length % 13 == 0 || length < 20 {
                    let slice = UnsafeRawBufferPointer(rebasing: raw[start..<(start + length)])
                    #expect(lens_crc32c_extend(5, slice.baseAddress, length)
                        == lens_crc32c_extend_portable(5, slice.baseAddress, length))
                }
            }
        }
    }
}
