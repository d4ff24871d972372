// The numbers of snapshot format v4. The article "Snapshot format"
// (Sources/LensDB/LensDB.docc/SnapshotFormat.md) is the spec. Everything here
// is stored on disk — never renumber.

/// Constants of the snapshot file format, version 4.
///
/// Versions: 1, the first; 2 adds items 4 and 5 (table and root encodings)
/// and changes nothing else. A v2 reader reads v1 files, whose tables have
/// no recorded encoding; items 4 and 5 are malformed in a v1 file.
/// Version 3 adds item 6 (an index's order) and changes nothing else; a
/// v3 reader reads v1 and v2 files, and item 6 is malformed in them.
/// Version 4 adds encryption, as
/// an envelope around chunks that leaves the item stream as it is: a longer
/// header naming the cipher and key id, and the chunk flags
/// ``ChunkFlags/sealed`` and ``ChunkFlags/final``, with every item kind of
/// version 3. A plain snapshot is written at ``plainVersion``; only an
/// encrypted one is v4.
public enum SnapshotFormat {
    /// "LENSSNAP": the first 8 bytes of every snapshot.
    public static let magic: [UInt8] = Array("LENSSNAP".utf8)
    /// "SNAPEND" and a zero byte: the first 8 bytes of the trailer.
    public static let trailerMagic: [UInt8] = [0x53, 0x4E, 0x41, 0x50, 0x45, 0x4E, 0x44, 0x00]
    /// The newest version this code reads, and the one it writes for an
    /// encrypted snapshot.
    public static let version: UInt32 = 4
    /// The version a plain snapshot is written with.
    public static let plainVersion: UInt32 = 3
    /// The first version with item 6, an index's order.
    public static let firstIndexOrderVersion: UInt32 = 3
    /// The most positions one index-order item holds: a longer order is
    /// split into items that continue one another, so no item outgrows a chunk.
    public static let maxIndexOrderPositions = 16 << 10
    /// The first version whose header carries a cipher and key id.
    public static let firstEncryptedVersion: UInt32 = 4

    /// Header of versions 1–3: magic(8) version(4) reserved(4) generation(8) lastLSN(8) crc(4).
    public static let headerSize = 36
    /// Header of version 4: magic(8) version(4) cipher(1) reserved(3)
    /// generation(8) lastLSN(8) keyID(8) crc(4).
    public static let encryptedHeaderSize = 44
    /// The longest header of any version.
    public static let maxHeaderSize = encryptedHeaderSize
    /// storedLength(4) rawLength(4) flags(1) reserved(3) crc(4).
    public static let chunkHeaderSize = 16
    /// magic(8) chunkCount(8) itemCount(8) fileCRC(4).
    public static let trailerSize = 28

    /// Items are packed into chunks of about this many bytes before compression.
    public static let targetChunkSize = 64 << 10
    /// The largest chunk, stored or decompressed: one item of the largest record.
    public static let maxChunkSize = LogFormat.maxPayloadSize + (1 << 16)
}

/// The kind of an item in a snapshot's item stream. Stored on disk — never renumber.
public enum SnapshotItemKind: UInt8, Sendable {
    /// `id(varint) name(string)`: declares a table; its entries follow.
    case table = 1
    /// `tableID(varint) key(bytes) value(bytes)`.
    case entry = 2
    /// `name(string) value(bytes)`: a root document.
    case root = 3
    /// Since v2: `tableID(varint) keyEncoding(u8) valueEncoding(u8)`, after its table's declaration.
    case tableEncoding = 4
    /// Since v2: `name(string) valueEncoding(u8)`, before its root document.
    case rootEncoding = 5
    /// Since v3: `tableID(varint) index(string) start(varint) count(varint)
    /// position(varint) × count`, after its table's entries: positions
    /// `start..<start+count` of the order of one of the table's indexes,
    /// each the place of a row among the table's entries as the snapshot
    /// stores them. A hint an open may use instead of sorting, never data:
    /// LensDB checks it against the rows and sorts when it does not hold.
    case indexOrder = 6
}

/// Per-chunk flags. Stored on disk — never renumber.
public struct ChunkFlags: OptionSet, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// The stored bytes are one LZ4 block expanding to `rawLength` (with
    /// ``sealed``: the envelope holds that block; compression comes first).
    public static let lz4 = ChunkFlags(rawValue: 1)
    /// Since v4: the stored bytes are an envelope, `keyID nonce ciphertext
    /// tag` (``EncryptionFormat``). Set on every chunk of an encrypted
    /// snapshot and on none of a plain one.
    public static let sealed = ChunkFlags(rawValue: 1 << 1)
    /// Since v4, encrypted snapshots only: the last chunk. Authenticated
    /// with the chunk, so a snapshot cut at a chunk boundary, its trailer
    /// and checksum rewritten, does not read as whole.
    public static let final = ChunkFlags(rawValue: 1 << 2)
}

/// A table entry as ``SnapshotFile/forEachItem(entriesInPlace:_:)`` gives
/// it: its key and value are byte ranges of the expanded chunk that holds
/// it, which the chunk's entries share, so nothing is copied per entry.
public struct SnapshotEntryBytes: Sendable {
    /// The table's identifier, as its ``SnapshotItem/table(id:name:)`` declared it.
    public let table: UInt64
    /// The expanded bytes of the chunk that holds the entry.
    public let chunk: [UInt8]
    /// The chunk's place among the snapshot's chunks, from 0: entries with
    /// the same one share ``chunk``.
    public let chunkIndex: UInt64
    /// Where the key lies in ``chunk``.
    public let key: Range<Int>
    /// Where the value lies in ``chunk``.
    public let value: Range<Int>

    /// Made only by ``SnapshotFile``, whose parse checked that both ranges
    /// lie in `chunk`: readers slice it by them without checking again.
    init(table: UInt64, chunk: [UInt8], chunkIndex: UInt64, key: Range<Int>, value: Range<Int>) {
        self.table = table
        self.chunk = chunk
        self.chunkIndex = chunkIndex
        self.key = key
        self.value = value
    }
}

/// One item of a snapshot.
public enum SnapshotItem: Sendable, Equatable {
    case table(id: UInt64, name: String)
    case entry(table: UInt64, key: [UInt8], value: [UInt8])
    case root(name: String, value: [UInt8])
    /// The encoding bytes of a table's keys and values (see LensDB's `TableEncoding`).
    case tableEncoding(table: UInt64, key: UInt8, value: UInt8)
    /// The encoding byte of a root document's value.
    case rootEncoding(name: String, value: UInt8)
    /// Positions `start..<start + positions.count` of the order of the
    /// index named `index` of table `table` (see ``SnapshotItemKind/indexOrder``).
    case indexOrder(table: UInt64, index: String, start: UInt64, positions: [UInt32])
}

/// Why a snapshot cannot be used. Each case names the file; recovery sets a
/// bad snapshot aside and falls back to an older one when the logs allow.
public enum SnapshotError: Error, Sendable, Equatable, CustomStringConvertible {
    case truncated(file: String, size: Int64)
    case badMagic(file: String)
    /// A newer LensDB wrote the snapshot: recovery never sets it aside or
    /// reads past it. A version field that damage changed is
    /// ``badHeader(file:)`` instead: 0, above 255, or a value that a
    /// version read here, put back, makes verify.
    case unsupportedVersion(file: String, version: UInt32)
    case badHeader(file: String)
    /// The header verifies but says the snapshot holds records through an
    /// LSN past ``LogFormat/maxLSN``, which no record carries: it is damaged.
    case lastLSNOutOfRange(file: String, lastLSN: UInt64)
    case badTrailer(file: String)
    /// The whole-file checksum does not match: some byte changed.
    case checksumMismatch(file: String)
    /// A chunk or item is malformed at `offset` (a chunk's file offset).
    case badChunk(file: String, offset: Int64)
    /// A chunk of an encrypted snapshot verifies its checksum but not its
    /// tag: it was changed, moved, or the snapshot cut (`offset`: the
    /// chunk's file offset). The store's key was right: a wrong key is an
    /// ``EncryptionError``, found from the header before any chunk is read.
    case authenticationFailed(file: String, offset: Int64)
    /// The header names a cipher this version does not know: a newer LensDB wrote it.
    case unsupportedCipher(file: String, cipher: UInt8)
    /// The trailer's counts disagree with the body.
    case countMismatch(file: String)
    /// An item verifies but makes no sense: an entry of a table never
    /// declared, or an encoding this version does not know.
    case malformedItem(file: String, reason: String)

    /// Whether a newer LensDB wrote the file: its version or its cipher is
    /// one this reader does not know. Never damage.
    public var isNewer: Bool {
        switch self {
        case .unsupportedVersion, .unsupportedCipher: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case let .truncated(file, size): "\(file): snapshot cut short at \(size) bytes"
        case let .badMagic(file): "\(file): not a LensDB snapshot (bad magic)"
        case let .unsupportedVersion(file, version):
            "\(file): snapshot format version \(version) is newer than this LensDB reads (\(SnapshotFormat.version)); use a newer LensDB. If no newer LensDB has written to this store, the header is damaged past what repair reads: restore the store from a backup"
        case let .badHeader(file): "\(file): the snapshot header fails its checksum"
        case let .lastLSNOutOfRange(file, lastLSN):
            "\(file): the snapshot header says it holds every record through LSN \(lastLSN), past the last LSN a record can carry (\(LogFormat.maxLSN)); the header is damaged. An open uses an older snapshot, or the logs from LSN 1, when they hold its history; when neither does, restore the store from a backup"
        case let .badTrailer(file): "\(file): the snapshot trailer is missing or damaged"
        case let .checksumMismatch(file): "\(file): the snapshot fails its whole-file checksum"
        case let .badChunk(file, offset): "\(file): malformed snapshot chunk at offset \(offset)"
        case let .authenticationFailed(file, offset):
            "\(file): the snapshot chunk at offset \(offset) does not authenticate under the store's key: it was changed or moved, so the snapshot is damaged"
        case let .unsupportedCipher(file, cipher):
            "\(file): encrypted with cipher \(cipher), which this LensDB does not know; use a newer LensDB"
        case let .countMismatch(file): "\(file): the snapshot's item counts disagree with its trailer"
        case let .malformedItem(file, reason): "\(file): a snapshot item makes no sense (\(reason)), so the snapshot is damaged"
        }
    }
}
