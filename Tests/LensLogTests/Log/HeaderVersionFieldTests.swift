import Testing
@testable import LensLog

/// The version field of log and snapshot headers: damage to it is a bad
/// header, a newer LensDB's version is not.
@Suite struct HeaderVersionFieldTests {
    static let encryption = FileEncryption(algorithm: .aes256GCM, keyID: KeyID(rawValue: 0x1234_5678))

    /// Each header this LensDB writes: a plain one (v3) and an encrypted one (v4).
    static let logHeaders = [
        LogFileHeader(generation: 7, firstLSN: 90),
        LogFileHeader(generation: 7, firstLSN: 90, encryption: encryption),
    ]
    static let snapshotHeaders = [
        SnapshotHeader(generation: 7, lastLSN: 89, encryption: nil),
        SnapshotHeader(generation: 7, lastLSN: 89, encryption: encryption),
    ]

    func logHeader(_ bytes: [UInt8]) throws -> LogFileHeader {
        try bytes.withUnsafeBytes { try LogFileHeader(decoding: $0, file: "l") }
    }

    /// `bytes` with `version` in the version field; with `checksum`, the
    /// checksum of a header of `length` made again for it.
    func with(_ version: UInt32, in bytes: [UInt8], checksumOver length: Int? = nil) -> [UInt8] {
        var bytes = bytes
        bytes.replaceSubrange(8..<12, with: withUnsafeBytes(of: version.littleEndian, Array.init))
        if let length {
            bytes.replaceSubrange((length - 4)..<length, with: withUnsafeBytes(of: CRC32C.checksum(Array(bytes[0..<(length - 4)])).littleEndian, Array.init))
        }
        return bytes
    }

    @Test func everyBitFlippedInTheVersionFieldIsABadHeader() throws {
        for header in Self.logHeaders {
            let bytes = header.encoded()
            for bit in 0..<32 {
                var damaged = bytes
                damaged[8 + bit / 8] ^= 1 << (bit % 8)
                #expect(throws: LogError.badHeader(file: "l"), "v\(header.version), bit \(bit)") { try logHeader(damaged) }
            }
            #expect(throws: LogError.badHeader(file: "l"), "v\(header.version) as 0") { try logHeader(with(0, in: bytes)) }
            #expect(throws: LogError.badHeader(file: "l"), "v\(header.version) as 0xFFFFFFFF") { try logHeader(with(.max, in: bytes)) }
        }
        for header in Self.snapshotHeaders {
            let bytes = header.encoded()
            for bit in 0..<32 {
                var damaged = bytes
                damaged[8 + bit / 8] ^= 1 << (bit % 8)
                #expect(throws: SnapshotError.badHeader(file: "s"), "v\(header.version), bit \(bit)") { try SnapshotHeader(decoding: damaged, path: "s") }
                // Salvage reads it as the version it was written with.
                #expect(try SnapshotHeader.salvaging(damaged, path: "s") == header, "v\(header.version), bit \(bit)")
            }
            #expect(throws: SnapshotError.badHeader(file: "s")) { try SnapshotHeader(decoding: with(0, in: bytes), path: "s") }
            #expect(try SnapshotHeader.salvaging(with(0, in: bytes), path: "s") == header)
        }
    }

    @Test func aNewerVersionStaysNewerWhateverElseItsHeaderHolds() throws {
        for header in Self.logHeaders {
            let bytes = header.encoded(), newer = LogFormat.version + 1
            let error = LogError.unsupportedVersion(file: "l", version: newer)
            // Its own checksum made over a header of either known length.
            let longer = Array(bytes[0..<32]) + [UInt8](repeating: 0xab, count: 12)
            #expect(throws: error) { try logHeader(with(newer, in: bytes, checksumOver: bytes.count)) }
            #expect(throws: error) { try logHeader(with(newer, in: longer, checksumOver: 44)) }
            // A header of another layout, or damage beyond the field that
            // leaves a version a newer LensDB could write: no known version
            // makes it verify, and the two cannot be told apart.
            var other = with(newer, in: bytes)
            other[20] ^= 1
            #expect(throws: error) { try logHeader(other) }
            #expect(throws: LogError.unsupportedVersion(file: "l", version: 255)) { try logHeader(with(255, in: other)) }
            // Above 255, no LensDB writes: damage, whatever else it hit.
            for version: UInt32 in [256, 0x4003, 0x8000_0003, .max] {
                #expect(throws: LogError.badHeader(file: "l"), "\(version)") { try logHeader(with(version, in: other)) }
            }
        }
        for header in Self.snapshotHeaders {
            let bytes = header.encoded(), newer = SnapshotFormat.version + 1
            let error = SnapshotError.unsupportedVersion(file: "s", version: newer)
            #expect(throws: error) { try SnapshotHeader(decoding: with(newer, in: bytes, checksumOver: bytes.count), path: "s") }
            #expect(throws: error) { try SnapshotHeader.salvaging(with(newer, in: bytes, checksumOver: bytes.count), path: "s") }
        }
    }

    @Test func salvageStillRefusesAHeaderDamagedBeyondItsVersion() {
        for header in Self.snapshotHeaders {
            var bytes = header.encoded()
            bytes[9] ^= 0x40
            bytes[17] ^= 1
            #expect(throws: SnapshotError.badHeader(file: "s")) { try SnapshotHeader.salvaging(bytes, path: "s") }
            // A reserved byte set, the checksum made for it: no version put back changes that.
            var reserved = header.encoded()
            reserved[13] = 1
            reserved = with(header.version, in: reserved, checksumOver: reserved.count)
            #expect(throws: SnapshotError.badHeader(file: "s")) { try SnapshotHeader.salvaging(reserved, path: "s") }
        }
    }
}
