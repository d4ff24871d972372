/// What could be read from a damaged snapshot, chunk by chunk.
public struct SalvagedSnapshot: Sendable {
    public var generation: UInt64
    public var lastLSN: UInt64
    /// Items of every chunk that verifies, entries whose table declaration
    /// was lost left out.
    public var items: [SnapshotItem] = []
    /// Offsets of stretches that did not verify, with their length.
    public var droppedRanges: [(offset: Int64, length: Int64)] = []
    /// Entries left out because the chunk declaring their table was lost.
    public var orphanedEntries = 0

    /// Nothing: the state before LSN 1, of generation 0.
    public init() {
        self.init(generation: 0, lastLSN: 0)
    }

    init(generation: UInt64, lastLSN: UInt64) {
        self.generation = generation
        self.lastLSN = lastLSN
    }
}

extension SnapshotFile {
    /// Reads every chunk of a damaged snapshot that still verifies; the
    /// per-chunk checksums keep one bad sector from losing the rest.
    ///
    /// The header must verify (it says which LSN the state is as of), or
    /// verify once the version it was written with is put back in a
    /// damaged version field; the trailer need not. After a bad chunk, the
    /// next one is found by trying each offset for a chunk header whose
    /// checksum verifies. In an
    /// encrypted snapshot a chunk must also authenticate, at the index its
    /// nonce names (damage hides how many chunks came before it).
    /// - Throws: ``SnapshotError`` when the header does not verify;
    ///   ``EncryptionError`` when `cipher` does not fit it.
    public static func salvage(bytes: [UInt8], path: String, cipher: (any PayloadCipher)? = nil) throws -> SalvagedSnapshot {
        let header = try SnapshotHeader.salvaging(bytes, path: path)
        try EncryptionError.check(header.encryption, against: cipher, file: path)
        let version = header.version
        var salvaged = SalvagedSnapshot(generation: header.generation, lastLSN: header.lastLSN)
        let opening = cipher.map { ChunkOpening(cipher: $0, generation: header.generation, lastLSN: header.lastLSN, index: nil) }
        let end = bytes.count
        var offset = header.size
        var damageStart: Int?
        var tables: Set<UInt64> = []
        while offset + SnapshotFormat.chunkHeaderSize <= end {
            // A chunk that does not verify or authenticate is damage to step over.
            guard let (raw, size, _) = try? readChunk(bytes, at: offset, end: end, path: path, opening: opening) else {
                if damageStart == nil { damageStart = offset }
                offset += 1
                continue
            }
            if let start = damageStart {
                salvaged.droppedRanges.append((Int64(start), Int64(offset - start)))
                damageStart = nil
            }
            collect(raw, version: version, into: &salvaged, tables: &tables)
            offset += size
        }
        let tail = bytes.count - SnapshotFormat.trailerSize
        if let start = damageStart, start < tail { salvaged.droppedRanges.append((Int64(start), Int64(tail - start))) }
        return salvaged
    }

    /// The items of one decompressed chunk; stops at the first malformed item.
    private static func collect(_ raw: [UInt8], version: UInt32, into salvaged: inout SalvagedSnapshot, tables: inout Set<UInt64>) {
        var cursor = ByteCursor(raw)
        while !cursor.isAtEnd, let item = item(&cursor, version: version) {
            switch item {
            case let .table(id, _): tables.insert(id)
            case let .entry(table, _, _) where !tables.contains(table):
                salvaged.orphanedEntries += 1
                continue
            case let .tableEncoding(table, _, _) where !tables.contains(table):
                salvaged.orphanedEntries += 1
                continue
            case .indexOrder:
                // A hint that may no longer fit the entries salvaged: an
                // open sorts instead.
                continue
            default: break
            }
            salvaged.items.append(item)
        }
    }
}
