/// The header at the start of every snapshot: 36 bytes up to version 3, 44
/// from version 4, which names the cipher and key of an encrypted snapshot.
/// Its checksum covers every field, the cipher and key id included.
public struct SnapshotHeader: Sendable, Equatable {
    /// The format version the file was written with.
    public var version: UInt32
    /// The generation of the log that continues the snapshot.
    public var generation: UInt64
    /// The last LSN whose effects the snapshot holds.
    public var lastLSN: UInt64
    /// The cipher and key that seal every chunk; nil for a plain snapshot.
    public var encryption: FileEncryption?

    /// The header of a new snapshot: v4 when encrypted, else ``SnapshotFormat/plainVersion``.
    public init(generation: UInt64, lastLSN: UInt64, encryption: FileEncryption?) {
        version = encryption == nil ? SnapshotFormat.plainVersion : SnapshotFormat.version
        self.generation = generation
        self.lastLSN = lastLSN
        self.encryption = encryption
    }

    /// The header's size on disk: where the first chunk starts.
    public var size: Int { Self.size(ofVersion: version) }

    static func size(ofVersion version: UInt32) -> Int {
        version >= SnapshotFormat.firstEncryptedVersion ? SnapshotFormat.encryptedHeaderSize : SnapshotFormat.headerSize
    }

    /// The header's bytes, little-endian field by field, ending with the
    /// CRC32C of the bytes before it.
    public func encoded() -> [UInt8] {
        var bytes = SnapshotFormat.magic
        bytes.appendLittleEndian(version)
        if version >= SnapshotFormat.firstEncryptedVersion {
            bytes += [encryption?.algorithm.rawValue ?? 0, 0, 0, 0]
            bytes.appendLittleEndian(generation)
            bytes.appendLittleEndian(lastLSN)
            bytes.appendLittleEndian(encryption?.keyID.rawValue ?? 0)
        } else {
            bytes.appendLittleEndian(UInt32(0))
            bytes.appendLittleEndian(generation)
            bytes.appendLittleEndian(lastLSN)
        }
        bytes.appendLittleEndian(CRC32C.checksum(bytes))
        return bytes
    }

    /// Validates and decodes a header in the order magic → version →
    /// length → checksum → last LSN → reserved fields → cipher, each failure
    /// its own error. Needs no key.
    /// - Parameters:
    ///   - bytes: the start of the file (at least the header, when the file has it).
    ///   - path: the file's path, for errors.
    /// - Throws: ``SnapshotError``.
    public init(decoding bytes: [UInt8], path: String) throws(SnapshotError) {
        let magic = SnapshotFormat.magic
        guard bytes.prefix(magic.count).elementsEqual(magic.prefix(min(bytes.count, magic.count))) else {
            throw .badMagic(file: path)
        }
        guard bytes.count >= 12 else { throw .truncated(file: path, size: Int64(bytes.count)) }
        let version: UInt32 = bytes.littleEndian(at: 8)
        guard version >= 1, version <= SnapshotFormat.version else {
            // Damage to the field is a bad header; a newer LensDB's snapshot
            // is never read as damaged.
            let damaged = bytes.withUnsafeBytes {
                HeaderVersion.isDamaged(version, in: $0, known: 1...SnapshotFormat.version, size: Self.size(ofVersion:))
            }
            throw damaged ? .badHeader(file: path) : .unsupportedVersion(file: path, version: version)
        }
        let size = Self.size(ofVersion: version)
        guard bytes.count >= size else { throw .truncated(file: path, size: Int64(bytes.count)) }
        guard bytes.littleEndian(at: size - 4, as: UInt32.self) == CRC32C.checksum(Array(bytes[0..<(size - 4)])) else {
            throw .badHeader(file: path)
        }
        self.version = version
        generation = bytes.littleEndian(at: 16)
        lastLSN = bytes.littleEndian(at: 24)
        guard lastLSN <= LogFormat.maxLSN else { throw .lastLSNOutOfRange(file: path, lastLSN: lastLSN) }
        encryption = nil
        guard version >= SnapshotFormat.firstEncryptedVersion else {
            guard bytes.littleEndian(at: 12, as: UInt32.self) == 0 else { throw .badHeader(file: path) }
            return
        }
        let cipher = bytes[12], keyID: UInt64 = bytes.littleEndian(at: 32)
        guard bytes[13..<16].allSatisfy({ $0 == 0 }), cipher != 0 || keyID == 0 else { throw .badHeader(file: path) }
        guard cipher != 0 else { return }
        guard let algorithm = CipherAlgorithm(rawValue: cipher) else { throw .unsupportedCipher(file: path, cipher: cipher) }
        encryption = FileEncryption(algorithm: algorithm, keyID: KeyID(rawValue: keyID))
    }

    /// The header of a damaged snapshot, for salvage: as
    /// ``init(decoding:path:)``, except that a header whose version field
    /// alone is damaged is read as the version that, put back, makes it
    /// verify (``HeaderVersion``).
    /// - Throws: ``SnapshotError``, as ``init(decoding:path:)``.
    static func salvaging(_ bytes: [UInt8], path: String) throws(SnapshotError) -> SnapshotHeader {
        do {
            return try SnapshotHeader(decoding: bytes, path: path)
        } catch .badHeader {
            var head = Array(bytes.prefix(SnapshotFormat.maxHeaderSize))
            let restored = head.withUnsafeBytes {
                HeaderVersion.restored(in: $0, known: 1...SnapshotFormat.version, size: Self.size(ofVersion:))
            }
            // A header that verifies as it is failed on a reserved field.
            guard let restored, restored != head.littleEndian(at: HeaderVersion.offset, as: UInt32.self) else {
                throw .badHeader(file: path)
            }
            head.withUnsafeMutableBytes { $0.storeBytes(of: restored.littleEndian, toByteOffset: HeaderVersion.offset, as: UInt32.self) }
            return try SnapshotHeader(decoding: head, path: path)
        }
    }
}
