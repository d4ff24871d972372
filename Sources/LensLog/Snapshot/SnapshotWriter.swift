/// Writes one snapshot file as a stream of items packed into checksummed,
/// LZ4-compressed chunks, so a snapshot of any size is written in bounded memory.
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

    /// Creates (or replaces) the file at `path` and writes the header.
    /// - Throws: ``StorageError``.
    public init(fileSystem: any FileSystem, path: String, generation: UInt64, lastLSN: UInt64, compression: Bool = true) throws {
        self.path = path
        self.compression = compression
        if fileSystem.fileExists(at: path) { try fileSystem.removeFile(at: path) }
        file = try fileSystem.openFile(at: path, mode: .createNew)
        var header = SnapshotFormat.magic
        header.appendLittleEndian(SnapshotFormat.version)
        header.appendLittleEndian(UInt32(0))
        header.appendLittleEndian(generation)
        header.appendLittleEndian(lastLSN)
        header.appendLittleEndian(CRC32C.checksum(header))
        try emit(header)
    }

    deinit { file.close() }

    public func addTable(id: UInt64, name: String) throws {
        chunk.append(SnapshotItemKind.table.rawValue)
        chunk.appendVarint(id)
        chunk.appendLengthPrefixed(name)
        try itemAdded()
    }

    public func addEntry(table: UInt64, key: [UInt8], value: [UInt8]) throws {
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
        try flushChunk()
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
    private func flushChunk() throws {
        guard !chunk.isEmpty else { return }
        let compressed = compression ? chunk.withUnsafeBytes { LZ4.compress($0) } : nil
        let stored = compressed ?? chunk
        var frame: [UInt8] = []
        frame.reserveCapacity(SnapshotFormat.chunkHeaderSize + stored.count)
        frame.appendLittleEndian(UInt32(stored.count))
        frame.appendLittleEndian(UInt32(chunk.count))
        frame.append(compressed == nil ? 0 : ChunkFlags.lz4.rawValue)
        frame += [0, 0, 0]
        frame.appendLittleEndian(CRC32C.checksum(stored, continuing: CRC32C.checksum(frame)))
        frame += stored
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
