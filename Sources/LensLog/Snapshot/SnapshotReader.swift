/// A snapshot file, validated whole before any item is trusted.
///
/// Validation order: size, header magic → version → checksum, trailer magic,
/// whole-file checksum; then each chunk's checksum and each item's bounds as
/// the items are read. A bad snapshot is never partly applied: callers read
/// all items into fresh state and discard it on a throw.
public struct SnapshotFile: Sendable {
    public let path: String
    /// The format version the file was written with.
    public let version: UInt32
    public let generation: UInt64
    /// The last LSN whose effects the snapshot holds.
    public let lastLSN: UInt64
    public let chunkCount: UInt64
    public let itemCount: UInt64
    public let size: Int64
    private let bytes: [UInt8]

    /// Reads and validates the file at `path`.
    /// - Throws: ``StorageError`` or ``SnapshotError``.
    public init(fileSystem: any FileSystem, path: String) throws {
        let file = try fileSystem.openFile(at: path, mode: .readOnly)
        defer { file.close() }
        try self.init(bytes: file.readAll(), path: path)
    }

    public init(bytes: [UInt8], path: String) throws(SnapshotError) {
        self.path = path
        self.bytes = bytes
        size = Int64(bytes.count)
        let header = SnapshotFormat.headerSize, trailer = SnapshotFormat.trailerSize
        let magic = SnapshotFormat.magic
        guard bytes.prefix(magic.count).elementsEqual(magic.prefix(min(bytes.count, magic.count))) else {
            throw .badMagic(file: path)
        }
        guard bytes.count >= header + trailer else { throw .truncated(file: path, size: size) }
        let version: UInt32 = bytes.littleEndian(at: 8)
        guard version >= 1, version <= SnapshotFormat.version else { throw .unsupportedVersion(file: path, version: version) }
        guard bytes.littleEndian(at: 32, as: UInt32.self) == CRC32C.checksum(Array(bytes[0..<32])),
              bytes.littleEndian(at: 12, as: UInt32.self) == 0 else { throw .badHeader(file: path) }
        let trailerStart = bytes.count - trailer
        guard bytes[trailerStart..<(trailerStart + 8)].elementsEqual(SnapshotFormat.trailerMagic) else {
            throw .badTrailer(file: path)
        }
        let crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[..<(bytes.count - 4)])) }
        guard crc == bytes.littleEndian(at: bytes.count - 4, as: UInt32.self) else { throw .checksumMismatch(file: path) }
        self.version = version
        generation = bytes.littleEndian(at: 16)
        lastLSN = bytes.littleEndian(at: 24)
        chunkCount = bytes.littleEndian(at: trailerStart + 8)
        itemCount = bytes.littleEndian(at: trailerStart + 16)
    }

    /// The last LSN a snapshot's header names, when the header verifies
    /// (magic, version, checksum): enough to know which LSNs a snapshot
    /// that is in place holds, without reading the rest of it.
    public static func lastLSN(inHeader bytes: [UInt8]) -> UInt64? {
        guard bytes.count >= SnapshotFormat.headerSize, bytes.prefix(8).elementsEqual(SnapshotFormat.magic) else { return nil }
        let version: UInt32 = bytes.littleEndian(at: 8)
        guard version >= 1, version <= SnapshotFormat.version,
              bytes.littleEndian(at: 32, as: UInt32.self) == CRC32C.checksum(Array(bytes[0..<32])),
              bytes.littleEndian(at: 12, as: UInt32.self) == 0 else { return nil }
        return bytes.littleEndian(at: 24)
    }

    /// Calls `body` with every item in order.
    /// - Throws: ``SnapshotError`` for a malformed chunk or item, or what `body` throws.
    public func forEachItem(_ body: (SnapshotItem) throws -> Void) throws {
        var offset = SnapshotFormat.headerSize
        let end = bytes.count - SnapshotFormat.trailerSize
        var chunks: UInt64 = 0, items: UInt64 = 0
        while offset < end {
            let raw = try chunk(at: offset, end: end)
            var cursor = ByteCursor(raw)
            while !cursor.isAtEnd {
                guard let item = Self.item(&cursor, version: version) else { throw SnapshotError.badChunk(file: path, offset: Int64(offset)) }
                try body(item)
                items += 1
            }
            offset += SnapshotFormat.chunkHeaderSize + Int(bytes.littleEndian(at: offset, as: UInt32.self))
            chunks += 1
        }
        guard chunks == chunkCount, items == itemCount else { throw SnapshotError.countMismatch(file: path) }
    }

    /// The decompressed bytes of the chunk at `offset`.
    private func chunk(at offset: Int, end: Int) throws(SnapshotError) -> [UInt8] {
        try Self.readChunk(bytes, at: offset, end: end, path: path).raw
    }

    /// The decompressed bytes of the chunk at `offset` and its size on disk.
    static func readChunk(_ bytes: [UInt8], at offset: Int, end: Int, path: String) throws(SnapshotError) -> (raw: [UInt8], size: Int) {
        let bad = SnapshotError.badChunk(file: path, offset: Int64(offset))
        guard end - offset >= SnapshotFormat.chunkHeaderSize else { throw bad }
        let stored = Int(bytes.littleEndian(at: offset, as: UInt32.self))
        let raw = Int(bytes.littleEndian(at: offset + 4, as: UInt32.self))
        let flags = ChunkFlags(rawValue: bytes[offset + 8])
        let start = offset + SnapshotFormat.chunkHeaderSize
        guard stored <= end - start, raw <= SnapshotFormat.maxChunkSize,
              flags.isSubset(of: .lz4), bytes[(offset + 9)..<(offset + 12)].allSatisfy({ $0 == 0 }) else { throw bad }
        let crc = bytes.withUnsafeBytes { all in
            CRC32C.checksum(UnsafeRawBufferPointer(rebasing: all[start..<(start + stored)]),
                            continuing: CRC32C.checksum(UnsafeRawBufferPointer(rebasing: all[offset..<(offset + 12)])))
        }
        guard crc == bytes.littleEndian(at: offset + 12, as: UInt32.self) else { throw bad }
        let size = SnapshotFormat.chunkHeaderSize + stored
        guard flags.contains(.lz4) else {
            guard raw == stored else { throw bad }
            return (Array(bytes[start..<(start + stored)]), size)
        }
        guard raw <= stored * LogFormat.maxCompressionRatio + 16,
              let decompressed = bytes.withUnsafeBytes({
                  LZ4.decompress(UnsafeRawBufferPointer(rebasing: $0[start..<(start + stored)]), decompressedCount: raw)
              })
        else { throw bad }
        return (decompressed, size)
    }

    /// The next item; nil when malformed, or of a kind `version` does not have.
    static func item(_ cursor: inout ByteCursor, version: UInt32) -> SnapshotItem? {
        switch cursor.byte().flatMap(SnapshotItemKind.init(rawValue:)) {
        case .tableEncoding? where version >= 2:
            guard let table = cursor.varint(), let key = cursor.byte(), let value = cursor.byte() else { return nil }
            return .tableEncoding(table: table, key: key, value: value)
        case .rootEncoding? where version >= 2:
            guard let name = cursor.string(), let value = cursor.byte() else { return nil }
            return .rootEncoding(name: name, value: value)
        case .tableEncoding?, .rootEncoding?:
            return nil
        case .table?:
            guard let id = cursor.varint(), let name = cursor.string() else { return nil }
            return .table(id: id, name: name)
        case .entry?:
            guard let table = cursor.varint(), let key = cursor.lengthPrefixed(), let value = cursor.lengthPrefixed() else { return nil }
            return .entry(table: table, key: key, value: value)
        case .root?:
            guard let name = cursor.string(), let value = cursor.lengthPrefixed() else { return nil }
            return .root(name: name, value: value)
        case nil:
            return nil
        }
    }
}
