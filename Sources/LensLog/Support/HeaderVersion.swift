/// What a log or snapshot header's version field says when this reader
/// does not know its value.
///
/// Both headers start with an 8-byte magic and a 4-byte version and end
/// with the CRC32C of every byte before the checksum, so the version is
/// covered. A value past the newest version read here means a newer LensDB
/// wrote the file, unless damage changed the field: then putting back the
/// version it was written with makes the header verify again. CRC32C
/// detects every change confined to 32 bits, so a header that verifies
/// with a known version in place cannot also have verified with the value
/// on disk at the same length: the field alone was damaged. (A newer
/// format of another header length verifies there only by a 1-in-2^32
/// chance.)
enum HeaderVersion {
    /// Where the version field lies in both headers.
    static let offset = 8

    /// The largest version any LensDB writes, frozen by the format
    /// articles: versions grow by one a format change, so a larger value
    /// is damage, whatever else the header holds.
    static let largest: UInt32 = 255

    /// The known version that, written over the version field of `bytes`,
    /// makes the header of `size(version)` bytes verify; nil when none does.
    /// - Parameters:
    ///   - bytes: the start of the file.
    ///   - known: the versions this reader reads.
    ///   - size: a version's header length, its checksum in the last 4 bytes.
    static func restored(in bytes: UnsafeRawBufferPointer, known: ClosedRange<UInt32>, size: (UInt32) -> Int) -> UInt32? {
        known.first { version in
            let length = size(version)
            guard bytes.count >= length else { return false }
            var header = Array(bytes[0..<length])
            header.withUnsafeMutableBytes { $0.storeBytes(of: version.littleEndian, toByteOffset: offset, as: UInt32.self) }
            return header.littleEndian(at: length - 4, as: UInt32.self) == CRC32C.checksum(Array(header[0..<(length - 4)]))
        }
    }

    /// Whether the version field of `bytes`, which this reader does not
    /// read, is damage rather than a newer LensDB's: 0 or above
    /// ``largest``, which no LensDB writes, or a value that a known version
    /// put back in its place makes verify. Any other value may be a newer
    /// format's, which is never read as damage, even when damage beyond
    /// the field is what made it.
    static func isDamaged(
        _ version: UInt32, in bytes: UnsafeRawBufferPointer, known: ClosedRange<UInt32>, size: (UInt32) -> Int
    ) -> Bool {
        version == 0 || version > largest || restored(in: bytes, known: known, size: size) != nil
    }
}
