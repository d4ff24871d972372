/// Writes one snapshot file as a stream of items packed into checksummed,
/// LZ4-compressed chunks, so a snapshot of any size is written in bounded memory.
///
/// With a cipher, every chunk is compressed, then sealed in an envelope
/// (``EncryptionFormat``) under a nonce salt of this writer's own, its
/// counter the chunk's index; the last chunk carries ``ChunkFlags/final``.
///
/// The file is written where asked (a temporary name); publishing it — sync,
/// rename, directory sync — is the caller's step, because that order is what
/// makes compaction atomic. Not thread-safe: one writer, one thread.
///
/// The file goes to the disk in bounded pieces while it is written: writeback
/// starts after every ``writebackInterval`` bytes and the file is synced after
/// every ``syncInterval``, so the sync in ``finish()`` has little left to
/// flush. One sync of a whole snapshot would flush tens of megabytes at once,
/// and the log's commit syncs, queued behind it on the same disk, would wait
/// for all of it. The early syncs make nothing visible: the file has its
/// temporary name until the caller renames it.
public final class SnapshotWriter {
    public let path: String
    private let file: any StoredFile
    private let compression: Bool
    private let header: SnapshotHeader
    private let cipher: (any PayloadCipher)?
    private var nonces = NonceSequence()
    private var chunk: [UInt8] = []
    private var offset: Int64 = 0
    private var fileCRC: UInt32 = 0
    private var chunkCount: UInt64 = 0
    private var itemCount: UInt64 = 0
    /// Where the bytes not yet handed to writeback start.
    private var writebackStart: Int64 = 0
    /// Where the bytes not yet synced start.
    private var syncStart: Int64 = 0

    /// Bytes written between two starts of writeback.
    public static let writebackInterval: Int64 = 256 << 10
    /// Bytes written between two syncs.
    public static let syncInterval: Int64 = 1 << 20

    /// Creates (or replaces) the file at `path` and writes the header: a
    /// v4 header naming the cipher with `cipher`, else a plain one.
    /// - Throws: ``StorageError``.
    public init(
        fileSystem: any FileSystem, path: String, generation: UInt64, lastLSN: UInt64, compression: Bool = true,
        cipher: (any PayloadCipher)? = nil
    ) throws {
        self.path = path
        self.compression = compression
        self.cipher = cipher
        header = SnapshotHeader(generation: generation, lastLSN: lastLSN, encryption: cipher?.encryption)
        if fileSystem.fileExists(at: path) { try fileSystem.removeFile(at: path) }
        file = try fileSystem.openFile(at: path, mode: .createNew)
        try emit(header.encoded())
    }

    /// Chooses the nonce salt: for the format's worked examples only.
    @_spi(Testing)
    public func useNonces(_ nonces: NonceSequence) {
        self.nonces = nonces
    }

    deinit { file.close() }

    public func addTable(id: UInt64, name: String) throws {
        chunk.append(SnapshotItemKind.table.rawValue)
        chunk.appendVarint(id)
        chunk.appendLengthPrefixed(name)
        try itemAdded()
    }

    public func addEntry(table: UInt64, key: [UInt8], value: [UInt8]) throws {
        try key.withUnsafeBytes { key in try value.withUnsafeBytes { try addEntry(table: table, key: key, value: $0) } }
    }

    /// Records an entry whose key and value are lent in place: what a compaction writes of a table it holds as its
    /// last snapshot's chunks.
    public func addEntry(table: UInt64, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws {
        chunk.append(SnapshotItemKind.entry.rawValue)
        chunk.appendVarint(table)
        chunk.appendLengthPrefixed(key)
        chunk.appendLengthPrefixed(value)
        try itemAdded()
    }

    /// Records a table's encoding bytes; follows the table's declaration.
    public func addTableEncoding(table: UInt64, key: UInt8, value: UInt8) throws {
        chunk.append(SnapshotItemKind.tableEncoding.rawValue)
        chunk.appendVarint(table)
        chunk.append(key)
        chunk.append(value)
        try itemAdded()
    }

    /// Records a root document's encoding byte; precedes the root.
    public func addRootEncoding(name: String, value: UInt8) throws {
        chunk.append(SnapshotItemKind.rootEncoding.rawValue)
        chunk.appendLengthPrefixed(name)
        chunk.append(value)
        try itemAdded()
    }

    /// Records the order of one of a table's indexes, after the table's
    /// entries: `positions[i]` is the place, among those entries as they were
    /// added, of the row that comes i-th in the index. Split into items of
    /// at most ``SnapshotFormat/maxIndexOrderPositions`` positions.
    public func addIndexOrder(table: UInt64, index: String, positions: [UInt32]) throws {
        var start = 0
        repeat {
            let end = min(positions.count, start + SnapshotFormat.maxIndexOrderPositions)
            chunk.append(SnapshotItemKind.indexOrder.rawValue)
            chunk.appendVarint(table)
            chunk.appendLengthPrefixed(index)
            chunk.appendVarint(UInt64(start))
            chunk.appendVarint(UInt64(end - start))
            for position in positions[start..<end] { chunk.appendVarint(UInt64(position)) }
            try itemAdded()
            start = end
        } while start < positions.count
    }

    public func addRoot(name: String, value: [UInt8]) throws {
        chunk.append(SnapshotItemKind.root.rawValue)
        chunk.appendLengthPrefixed(name)
        chunk.appendLengthPrefixed(value)
        try itemAdded()
    }

    /// Writes the last chunk and the trailer, syncs the file and closes it.
    /// Returns the file's size. On a throw the file is incomplete and must
    /// not be published.
    @discardableResult
    public func finish() throws -> Int64 {
        // An encrypted snapshot always ends with a chunk marked final, if
        // need be an empty one: its tag is what says nothing was cut after it.
        try flushChunk(final: true)
        var trailer = SnapshotFormat.trailerMagic
        trailer.appendLittleEndian(chunkCount)
        trailer.appendLittleEndian(itemCount)
        fileCRC = CRC32C.checksum(trailer, continuing: fileCRC)
        trailer.appendLittleEndian(fileCRC)
        try file.write(trailer, at: offset)
        try file.sync(.durable)
        file.close()
        return offset + Int64(trailer.count)
    }

    private func itemAdded() throws {
        itemCount += 1
        if chunk.count >= SnapshotFormat.targetChunkSize { try flushChunk() }
    }

    /// Chunks end at item boundaries, so each decodes alone and damage stays local.
    private func flushChunk(final: Bool = false) throws {
        guard !chunk.isEmpty || (final && cipher != nil) else { return }
        let compressed = compression && !chunk.isEmpty ? chunk.withUnsafeBytes { LZ4.compress($0) } : nil
        let stored = compressed ?? chunk
        var flags: ChunkFlags = compressed == nil ? [] : .lz4
        if cipher != nil { flags.formUnion(final ? [.sealed, .final] : .sealed) }
        var frame: [UInt8] = []
        frame.reserveCapacity(SnapshotFormat.chunkHeaderSize + stored.count + EncryptionFormat.envelopeOverhead)
        let length = stored.count + (cipher == nil ? 0 : EncryptionFormat.envelopeOverhead)
        frame.appendLittleEndian(UInt32(length))
        frame.appendLittleEndian(UInt32(chunk.count))
        frame.append(flags.rawValue)
        frame += [0, 0, 0, 0, 0, 0, 0]
        if let cipher {
            let nonce = nonces.next()
            precondition(UInt64(nonce.counter) == chunkCount, "a snapshot's nonce counter is its chunk index")
            let associatedData = frame.withUnsafeBytes {
                Envelope.chunkAssociatedData(generation: header.generation, lastLSN: header.lastLSN, index: chunkCount, chunkHeader: $0)
            }
            stored.withUnsafeBytes {
                Envelope.seal($0, cipher: cipher, nonce: nonce, associatedData: associatedData, appendingTo: &frame)
            }
        } else {
            frame += stored
        }
        let crc = frame.withUnsafeBytes { raw in
            CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[SnapshotFormat.chunkHeaderSize...]),
                            continuing: CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<12])))
        }
        for index in 0..<4 { frame[12 + index] = UInt8(truncatingIfNeeded: crc >> UInt32(8 * index)) }
        try emit(frame)
        chunkCount += 1
        chunk.removeAll(keepingCapacity: true)
    }

    private func emit(_ bytes: [UInt8]) throws {
        try file.write(bytes, at: offset)
        fileCRC = CRC32C.checksum(bytes, continuing: fileCRC)
        offset += Int64(bytes.count)
        try flushInPieces()
    }

    /// Hands each full piece to the disk as it is written.
    private func flushInPieces() throws {
        if offset - syncStart >= Self.syncInterval {
            try file.sync(.durable)
            syncStart = offset
            writebackStart = offset
        } else if offset - writebackStart >= Self.writebackInterval {
            try file.startWriteback(at: writebackStart, length: offset - writebackStart)
            writebackStart = offset
        }
    }
}
