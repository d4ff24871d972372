/// The header at the start of every log file: 36 bytes up to version 3, 44
/// from version 4, which names the cipher and key of an encrypted log.
///
/// The generation salts every record checksum in the file, so a record left
/// over from another generation (a reset or reused file) never validates.
/// The header checksum covers the cipher and key id, so a flipped bit there
/// is a bad header, never a plain file read as encrypted or the reverse.
public struct LogFileHeader: Sendable, Equatable {
    /// Which log this is; strictly increasing over a store's life.
    public var generation: UInt64
    /// The LSN of the first record in the file.
    public var firstLSN: UInt64
    /// The format version the file was written with.
    public var version: UInt32
    /// The cipher and key that seal every record; nil for a plain log.
    public var encryption: FileEncryption?

    /// The header of a new log: version 4 when encrypted, else version 3
    /// (``LogFormat/plainVersion``), which every older LensDB since v3 reads.
    public init(generation: UInt64, firstLSN: UInt64, encryption: FileEncryption? = nil) {
        self.init(
            generation: generation, firstLSN: firstLSN,
            version: encryption == nil ? LogFormat.plainVersion : LogFormat.version, encryption: encryption)
    }

    /// A header of a given version, as that version lays it out (tests write old versions).
    public init(generation: UInt64, firstLSN: UInt64, version: UInt32, encryption: FileEncryption? = nil) {
        precondition(encryption == nil || version >= LogFormat.firstEncryptedVersion, "only a v4 header names a cipher")
        self.generation = generation
        self.firstLSN = firstLSN
        self.version = version
        self.encryption = encryption
    }

    /// The header's size on disk: where the first record starts.
    public var size: Int { Self.size(ofVersion: version) }

    static func size(ofVersion version: UInt32) -> Int {
        version >= LogFormat.firstEncryptedVersion ? LogFormat.encryptedFileHeaderSize : LogFormat.fileHeaderSize
    }

    /// The header's bytes, each field little-endian, ending with the CRC32C
    /// of all the bytes before it. Up to v3: magic, version, reserved zero,
    /// generation, first LSN. From v4: magic, version, cipher byte, three
    /// reserved zero bytes, generation, first LSN, key id.
    public func encoded() -> [UInt8] {
        var bytes = LogFormat.magic
        bytes.reserveCapacity(size)
        bytes.appendLittleEndian(version)
        if version >= LogFormat.firstEncryptedVersion {
            bytes += [encryption?.algorithm.rawValue ?? 0, 0, 0, 0]
            bytes.appendLittleEndian(generation)
            bytes.appendLittleEndian(firstLSN)
            bytes.appendLittleEndian(encryption?.keyID.rawValue ?? 0)
        } else {
            bytes.appendLittleEndian(UInt32(0))
            bytes.appendLittleEndian(generation)
            bytes.appendLittleEndian(firstLSN)
        }
        bytes.appendLittleEndian(CRC32C.checksum(bytes))
        return bytes
    }

    /// Validates and decodes a header in the order magic → version →
    /// length → checksum → first LSN → reserved fields → cipher, each failure
    /// its own error.
    ///
    /// - Parameters:
    ///   - bytes: the start of the file (at least the header, when the file has it).
    ///   - file: the path, for errors.
    public init(decoding bytes: UnsafeRawBufferPointer, file: String) throws(LogError) {
        let magic = LogFormat.magic
        let prefix = min(bytes.count, magic.count)
        guard bytes.prefix(prefix).elementsEqual(magic.prefix(prefix)) else { throw .badMagic(file: file) }
        guard bytes.count >= 12 else { throw .truncatedHeader(file: file, size: Int64(bytes.count)) }
        let version: UInt32 = bytes.littleEndian(at: 8)
        guard version <= LogFormat.version, version > 0 else {
            // Damage to the field is a bad header, which salvage reads past;
            // a newer LensDB's log is never read as damaged.
            let damaged = HeaderVersion.isDamaged(version, in: bytes, known: 1...LogFormat.version, size: Self.size(ofVersion:))
            throw damaged ? .badHeader(file: file) : .unsupportedVersion(file: file, version: version)
        }
        let size = Self.size(ofVersion: version)
        guard bytes.count >= size else { throw .truncatedHeader(file: file, size: Int64(bytes.count)) }
        let stored: UInt32 = bytes.littleEndian(at: size - 4)
        guard stored == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<(size - 4)])) else {
            throw .badHeader(file: file)
        }
        let generation: UInt64 = bytes.littleEndian(at: 16), firstLSN: UInt64 = bytes.littleEndian(at: 24)
        guard firstLSN > 0 else { throw .firstLSNOutOfRange(file: file, firstLSN: firstLSN) }
        guard version >= LogFormat.firstEncryptedVersion else {
            guard bytes.littleEndian(at: 12, as: UInt32.self) == 0 else { throw .badHeader(file: file) }
            self.init(generation: generation, firstLSN: firstLSN, version: version)
            return
        }
        let cipher = bytes[12], keyID: UInt64 = bytes.littleEndian(at: 32)
        guard bytes[13..<16].allSatisfy({ $0 == 0 }), cipher != 0 || keyID == 0 else { throw .badHeader(file: file) }
        guard cipher != 0 else {
            self.init(generation: generation, firstLSN: firstLSN, version: version)
            return
        }
        guard let algorithm = CipherAlgorithm(rawValue: cipher) else { throw .unsupportedCipher(file: file, cipher: cipher) }
        self.init(
            generation: generation, firstLSN: firstLSN, version: version,
            encryption: FileEncryption(algorithm: algorithm, keyID: KeyID(rawValue: keyID)))
    }
}
