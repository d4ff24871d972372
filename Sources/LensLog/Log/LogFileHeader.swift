/// The 36-byte header at the start of every log file.
///
/// The generation salts every record checksum in the file, so a record left
/// over from another generation (a reset or reused file) never validates.
public struct LogFileHeader: Sendable, Equatable {
    /// Which log this is; strictly increasing over a store's life.
    public var generation: UInt64
    /// The LSN of the first record in the file.
    public var firstLSN: UInt64
    /// The format version the file was written with.
    public var version: UInt32

    public init(generation: UInt64, firstLSN: UInt64, version: UInt32 = LogFormat.version) {
        self.generation = generation
        self.firstLSN = firstLSN
        self.version = version
    }

    /// The header's bytes: magic, version, reserved zero, generation, first LSN, CRC32C of the 32 before it.
    public func encoded() -> [UInt8] {
        var bytes = LogFormat.magic
        bytes.reserveCapacity(LogFormat.fileHeaderSize)
        bytes.appendLittleEndian(version)
        bytes.appendLittleEndian(UInt32(0))
        bytes.appendLittleEndian(generation)
        bytes.appendLittleEndian(firstLSN)
        bytes.appendLittleEndian(CRC32C.checksum(bytes))
        return bytes
    }

    /// Validates and decodes a header in the order magic → version → checksum,
    /// each failure its own error.
    ///
    /// - Parameters:
    ///   - bytes: the start of the file (at least the header, when the file has it).
    ///   - file: the path, for errors.
    public init(decoding bytes: UnsafeRawBufferPointer, file: String) throws(LogError) {
        let magic = LogFormat.magic
        let prefix = min(bytes.count, magic.count)
        guard bytes.prefix(prefix).elementsEqual(magic.prefix(prefix)) else { throw .badMagic(file: file) }
        guard bytes.count >= LogFormat.fileHeaderSize else {
            throw .truncatedHeader(file: file, size: Int64(bytes.count))
        }
        let version: UInt32 = bytes.littleEndian(at: 8)
        guard version <= LogFormat.version, version > 0 else { throw .unsupportedVersion(file: file, version: version) }
        let stored: UInt32 = bytes.littleEndian(at: 32)
        let reserved: UInt32 = bytes.littleEndian(at: 12)
        guard stored == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<32])), reserved == 0 else {
            throw .badHeader(file: file)
        }
        self.init(generation: bytes.littleEndian(at: 16), firstLSN: bytes.littleEndian(at: 24), version: version)
    }
}
