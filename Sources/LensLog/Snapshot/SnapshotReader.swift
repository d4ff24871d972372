/// A snapshot file, validated whole before any item is trusted.
///
/// Validation order: size, header magic → version → checksum, trailer magic,
/// whole-file checksum; then each chunk's checksum (and, encrypted, its tag)
/// and each item's bounds as the items are read. A bad snapshot is never
/// partly applied: callers read all items into fresh state and discard it
/// on a throw.
///
/// Everything but the items can be judged without the key: an encrypted
/// snapshot validates here and says which key it needs (``encryption``);
/// ``forEachItem(_:)`` opens its chunks with the key it was given
/// (``keyed(by:)``).
public struct SnapshotFile: Sendable {
    public let path: String
    /// The format version the file was written with.
    public let version: UInt32
    public let generation: UInt64
    /// The last LSN whose effects the snapshot holds.
    public let lastLSN: UInt64
    /// The cipher and key its chunks are sealed with; nil when plain.
    public let encryption: FileEncryption?
    public let chunkCount: UInt64
    public let itemCount: UInt64
    public let size: Int64
    /// The key ``forEachItem(_:)`` opens chunks with; nil for a plain store.
    public private(set) var cipher: (any PayloadCipher)?
    private let headerSize: Int
    private let bytes: [UInt8]

    /// Reads and validates the file at `path`; `cipher` is the key its
    /// items are read with (``keyed(by:)``).
    /// - Throws: ``StorageError`` or ``SnapshotError``.
    public init(fileSystem: any FileSystem, path: String, cipher: (any PayloadCipher)? = nil) throws {
        let file = try fileSystem.openFile(at: path, mode: .readOnly)
        defer { file.close() }
        try self.init(bytes: file.readAll(), path: path, cipher: cipher)
    }

    /// Validates a snapshot held in memory; `path` names it in errors.
    public init(bytes: [UInt8], path: String, cipher: (any PayloadCipher)? = nil) throws(SnapshotError) {
        self.path = path
        self.cipher = cipher
        self.bytes = bytes
        size = Int64(bytes.count)
        let trailer = SnapshotFormat.trailerSize
        let header = try SnapshotHeader(decoding: bytes, path: path)
        guard bytes.count >= header.size + trailer else { throw .truncated(file: path, size: size) }
        let trailerStart = bytes.count - trailer
        guard bytes[trailerStart..<(trailerStart + 8)].elementsEqual(SnapshotFormat.trailerMagic) else {
            throw .badTrailer(file: path)
        }
        let crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[..<(bytes.count - 4)])) }
        guard crc == bytes.littleEndian(at: bytes.count - 4, as: UInt32.self) else { throw .checksumMismatch(file: path) }
        version = header.version
        generation = header.generation
        lastLSN = header.lastLSN
        encryption = header.encryption
        headerSize = header.size
        chunkCount = bytes.littleEndian(at: trailerStart + 8)
        itemCount = bytes.littleEndian(at: trailerStart + 16)
    }

    /// The last LSN a snapshot's header names, when the header verifies
    /// (magic, version, checksum): enough to know which LSNs a snapshot
    /// that is in place holds, without reading the rest of it or having its key.
    public static func lastLSN(inHeader bytes: [UInt8]) -> UInt64? {
        (try? SnapshotHeader(decoding: bytes, path: ""))?.lastLSN
    }

    /// The same snapshot, its items read with `cipher` (nil: as a plain
    /// snapshot). ``LogChain`` hands the snapshot it chose to its caller
    /// keyed by the chain's key.
    public func keyed(by cipher: (any PayloadCipher)?) -> SnapshotFile {
        var keyed = self
        keyed.cipher = cipher
        return keyed
    }

    /// Calls `body` with every item in order, opening each chunk with
    /// ``cipher`` when the snapshot is encrypted. Each item is handed over
    /// (`consuming`), so that `body` can keep its arrays without a retain
    /// (an open reads entries in place instead:
    /// ``forEachItem(entriesInPlace:_:)``). The chunks are read and
    /// parsed a few at a time on every core; `body` is called on the
    /// caller's thread alone, and what throws (a chunk, an item, `body`)
    /// throws where reading the items in order one by one would.
    /// - Throws: ``EncryptionError`` when ``cipher`` does not fit the
    ///   header (none for an encrypted snapshot, one for a plain one, another
    ///   key), before any chunk is read; ``SnapshotError`` for a malformed
    ///   chunk or item or a chunk that does not authenticate; or what `body` throws.
    public func forEachItem(_ body: (consuming SnapshotItem) throws -> Void) throws {
        try forEachItem(entriesInPlace: nil, body)
    }

    /// ``forEachItem(_:)``, but for table entries, which `entry` takes in
    /// place of `body`: each as its place in the expanded chunk that holds
    /// it, its key and value not copied out. An open keeps the chunks
    /// instead of an allocation for each key and each value. The same
    /// order, checks and throws.
    public func forEachItem(
        entriesInPlace entry: (SnapshotEntryBytes) throws -> Void, _ body: (consuming SnapshotItem) throws -> Void
    ) throws {
        try withoutActuallyEscaping(entry) { entry in try forEachItem(entriesInPlace: .some(entry), body) }
    }

    private func forEachItem(
        entriesInPlace entry: ((SnapshotEntryBytes) throws -> Void)?, _ body: (consuming SnapshotItem) throws -> Void
    ) throws {
        try EncryptionError.check(encryption, against: cipher, file: path)
        var offset = headerSize
        let end = bytes.count - SnapshotFormat.trailerSize
        var chunks: UInt64 = 0, items: UInt64 = 0
        while offset < end {
            // A wave of chunks is read, checked, opened, expanded and parsed
            // on every core; its items reach `body` here, in order, and a
            // chunk's failure is thrown where a reading in order would.
            let starts = chunkStarts(
                from: offset, end: end, count: Parallel.threads * Self.chunksPerThread,
                bytes: Parallel.threads * Self.chunksPerThread * SnapshotFormat.targetChunkSize)
            let first = chunks, inPlace = entry != nil
            var wave = Parallel.map(starts.count) { place in
                parsedChunk(at: starts[place], end: end, index: first + UInt64(place), entriesInPlace: inPlace)
            }
            for place in wave.indices {
                var chunk = ParsedChunk()
                swap(&chunk, &wave[place])
                let (size, flags) = try chunk.read.get()
                // Only the last chunk of an encrypted snapshot says it is the last.
                if cipher != nil, flags.contains(.final) != (offset + size == end) {
                    throw SnapshotError.authenticationFailed(file: path, offset: Int64(offset))
                }
                // Each item moves out in order, without a retain, and its
                // slot takes an item with nothing to release, so that the
                // array frees no item twice. (Reversing the array to pop
                // each item from its end cost about 1 ms in an open of 100k.)
                try chunk.items.withUnsafeMutableBufferPointer { parsed in
                    for slot in parsed.indices {
                        let item = (parsed.baseAddress! + slot).move()
                        (parsed.baseAddress! + slot).initialize(to: .whole(.tableEncoding(table: 0, key: 0, value: 0)))
                        switch consume item {
                        case let .whole(item):
                            try body(item)
                        case let .entryInPlace(table, key, value):
                            try entry?(SnapshotEntryBytes(table: table, chunk: chunk.raw, chunkIndex: chunks, key: key, value: value))
                        }
                        items += 1
                    }
                }
                if let failure = chunk.failure { throw failure }
                offset += size
                chunks += 1
            }
        }
        guard chunks == chunkCount, items == itemCount else { throw SnapshotError.countMismatch(file: path) }
    }

    /// How many chunks a wave of ``forEachItem(_:)`` gives each thread:
    /// enough that starting the threads costs little beside the chunks
    /// (about 64 KiB each), few enough that a wave's items stay small.
    /// Tuning only.
    static var chunksPerThread: Int { 8 }

    /// One chunk as a thread of ``forEachItem(_:)`` read it: its size and
    /// flags or why it did not read, and the items it holds, up to the
    /// first malformed one (`failure`).
    private struct ParsedChunk: Sendable {
        var read: Result<(size: Int, flags: ChunkFlags), SnapshotError> = .success((0, []))
        /// The expanded bytes, kept when its entries are read in place.
        var raw: [UInt8] = []
        var items: [ParsedItem] = []
        var failure: SnapshotError?
    }

    /// An item as a chunk's parse gives it: whole, or a table entry as its
    /// place in the chunk's bytes.
    private enum ParsedItem: Sendable {
        case whole(SnapshotItem)
        case entryInPlace(table: UInt64, key: Range<Int>, value: Range<Int>)
    }

    /// The offsets of up to `count` chunks from `offset` on, as their
    /// headers give their sizes, expanding to at most `bytes` together
    /// unless the first does alone: a snapshot of large items (a chunk
    /// holds a whole item) is read one chunk at a time, as before, not
    /// many at once. A chunk whose header does not fit is the last
    /// (reading it says what is wrong).
    func chunkStarts(from offset: Int, end: Int, count: Int, bytes budget: Int) -> [Int] {
        var starts: [Int] = [], offset = offset, expanded = 0
        while offset < end, starts.count < count {
            guard end - offset >= SnapshotFormat.chunkHeaderSize else {
                starts.append(offset)
                break
            }
            let raw = Int(bytes.littleEndian(at: offset + 4, as: UInt32.self))
            if !starts.isEmpty, expanded + raw > budget { break }
            starts.append(offset)
            expanded += raw
            let stored = Int(bytes.littleEndian(at: offset, as: UInt32.self))
            guard stored <= end - offset - SnapshotFormat.chunkHeaderSize else { break }
            offset += SnapshotFormat.chunkHeaderSize + stored
        }
        return starts
    }

    /// Reads chunk number `index`, at `offset`, and parses its items.
    private func parsedChunk(at offset: Int, end: Int, index: UInt64, entriesInPlace: Bool) -> ParsedChunk {
        let opening = cipher.map { ChunkOpening(cipher: $0, generation: generation, lastLSN: lastLSN, index: index) }
        var parsed = ParsedChunk()
        do {
            let (raw, size, flags) = try Self.readChunk(bytes, at: offset, end: end, path: path, opening: opening)
            parsed.read = .success((size, flags))
            var cursor = ByteCursor(raw)
            while !cursor.isAtEnd {
                let inPlace = entriesInPlace && cursor.peek() == SnapshotItemKind.entry.rawValue
                guard let item = inPlace ? Self.entryInPlace(&cursor) : Self.item(&cursor, version: version).map(ParsedItem.whole) else {
                    parsed.failure = .badChunk(file: path, offset: Int64(offset))
                    break
                }
                parsed.items.append(item)
            }
            if entriesInPlace { parsed.raw = raw }
        } catch {
            parsed.read = .failure(error)
        }
        return parsed
    }

    /// What opens the chunks of an encrypted snapshot: the cipher, the
    /// header fields the associated data binds, and the chunk's index (nil
    /// in salvage, which takes it from the chunk's nonce).
    struct ChunkOpening {
        var cipher: any PayloadCipher
        var generation: UInt64
        var lastLSN: UInt64
        var index: UInt64?
    }

    /// The decompressed (and, with `opening`, opened) bytes of the chunk at
    /// `offset`, its size on disk and its flags.
    static func readChunk(
        _ bytes: [UInt8], at offset: Int, end: Int, path: String, opening: ChunkOpening?
    ) throws(SnapshotError) -> (raw: [UInt8], size: Int, flags: ChunkFlags) {
        let bad = SnapshotError.badChunk(file: path, offset: Int64(offset))
        guard end - offset >= SnapshotFormat.chunkHeaderSize else { throw bad }
        let stored = Int(bytes.littleEndian(at: offset, as: UInt32.self))
        let raw = Int(bytes.littleEndian(at: offset + 4, as: UInt32.self))
        let flags = ChunkFlags(rawValue: bytes[offset + 8])
        let start = offset + SnapshotFormat.chunkHeaderSize
        let allowed: ChunkFlags = opening == nil ? .lz4 : [.lz4, .sealed, .final]
        guard stored <= end - start, raw <= SnapshotFormat.maxChunkSize,
              flags.isSubset(of: allowed), bytes[(offset + 9)..<(offset + 12)].allSatisfy({ $0 == 0 }) else { throw bad }
        let crc = bytes.withUnsafeBytes { all in
            CRC32C.checksum(UnsafeRawBufferPointer(rebasing: all[start..<(start + stored)]),
                            continuing: CRC32C.checksum(UnsafeRawBufferPointer(rebasing: all[offset..<(offset + 12)])))
        }
        guard crc == bytes.littleEndian(at: offset + 12, as: UInt32.self) else { throw bad }
        let size = SnapshotFormat.chunkHeaderSize + stored
        guard let opening else {
            // Expanded straight from the file's bytes, not from a copy of them.
            return (try unstored(bytes, start..<(start + stored), raw: raw, flags: flags, bad: bad), size, flags)
        }
        guard flags.contains(.sealed) else { throw .authenticationFailed(file: path, offset: Int64(offset)) }
        let opened = try open(Array(bytes[start..<(start + stored)]), chunkHeader: bytes[offset..<start], opening, path: path, offset: offset)
        return (try unstored(opened, opened.indices, raw: raw, flags: flags, bad: bad), size, flags)
    }

    /// The plaintext of a sealed chunk.
    private static func open(
        _ envelope: [UInt8], chunkHeader: ArraySlice<UInt8>, _ opening: ChunkOpening, path: String, offset: Int
    ) throws(SnapshotError) -> [UInt8] {
        let opened = envelope.withUnsafeBytes { sealed -> [UInt8]? in
            guard let index = opening.index ?? Envelope.nonceCounter(of: sealed).map(UInt64.init) else { return nil }
            let associatedData = Array(chunkHeader).withUnsafeBytes {
                Envelope.chunkAssociatedData(generation: opening.generation, lastLSN: opening.lastLSN, index: index, chunkHeader: $0)
            }
            return Envelope.open(sealed, cipher: opening.cipher, associatedData: associatedData)
        }
        guard let opened else { throw .authenticationFailed(file: path, offset: Int64(offset)) }
        return opened
    }

    /// The item bytes of what a chunk stores, `bytes[range]`: itself, or
    /// its LZ4 block expanded.
    private static func unstored(
        _ bytes: [UInt8], _ range: Range<Int>, raw: Int, flags: ChunkFlags, bad: SnapshotError
    ) throws(SnapshotError) -> [UInt8] {
        guard flags.contains(.lz4) else {
            guard raw == range.count else { throw bad }
            return range == bytes.indices ? bytes : Array(bytes[range])
        }
        guard raw <= range.count * LogFormat.maxCompressionRatio + 16,
              let decompressed = bytes.withUnsafeBytes({
                  LZ4.decompress(UnsafeRawBufferPointer(rebasing: $0[range]), decompressedCount: raw)
              })
        else { throw bad }
        return decompressed
    }

    /// The table entry next, as its key's and value's places in the
    /// cursor's bytes; nil when malformed, as ``item(_:version:)`` reads it.
    private static func entryInPlace(_ cursor: inout ByteCursor) -> ParsedItem? {
        guard cursor.byte() == SnapshotItemKind.entry.rawValue, let table = cursor.varint(),
              let key = cursor.lengthPrefixedRange(), let value = cursor.lengthPrefixedRange() else { return nil }
        return .entryInPlace(table: table, key: key, value: value)
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
        case .indexOrder? where version >= SnapshotFormat.firstIndexOrderVersion:
            guard let table = cursor.varint(), let index = cursor.string(), let start = cursor.varint(),
                  let count = cursor.varint(), count <= SnapshotFormat.maxIndexOrderPositions else { return nil }
            var positions: [UInt32] = []
            positions.reserveCapacity(Int(count))
            for _ in 0..<count {
                guard let position = cursor.varint(), position <= UInt32.max else { return nil }
                positions.append(UInt32(position))
            }
            return .indexOrder(table: table, index: index, start: start, positions: positions)
        case .tableEncoding?, .rootEncoding?, .indexOrder?:
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
