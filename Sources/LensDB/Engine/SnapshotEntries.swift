import HashTreeCollections
import LensLog

/// A table's entries as the snapshot a store opened from holds them, in
/// key byte order: each key and value is a place in one of the snapshot's
/// expanded chunks, which the entries keep.
///
/// Loading a table this way keeps each chunk whole and notes where each
/// entry lies in it, where a hash map would hash every key and allocate
/// its nodes, and arrays of keys and values would allocate two arrays an
/// entry; reading one entry is a binary search. A typed open decodes the
/// entries in place, in order, already sorted by identifier. The first
/// write to the table turns it into the hash map (``StoreState/tables``)
/// that writes change in place.
///
/// Immutable once built, so `Sendable`: versions of a store share it.
final class SnapshotEntries: Sendable {
    /// The bytes the entries lie in: expanded chunks, or an entry's own key
    /// and value together (one given as arrays). A chunk that also holds
    /// another table's entries is kept by both tables until each is opened
    /// or changed.
    private let chunks: [[UInt8]]
    /// Where each entry lies, in key order: its keys strictly ascend.
    private let places: [Place]

    /// An entry's key and value, as ranges of one of ``chunks``. 32 bits
    /// hold any offset: a chunk expands to at most
    /// `SnapshotFormat.maxChunkSize` (64 MiB and a little), and an entry
    /// given whole (salvage reads its items out of such chunks) is its own chunk.
    struct Place {
        var chunk: UInt32
        var key: UInt32
        var keyCount: UInt32
        var value: UInt32
        var valueCount: UInt32

        /// Where the key lies in its chunk.
        var keyBytes: Range<Int> { Int(key)..<Int(key + keyCount) }
        /// Where the value lies in its chunk.
        var valueBytes: Range<Int> { Int(value)..<Int(value + valueCount) }
    }

    private init(chunks: [[UInt8]], places: [Place]) {
        self.chunks = chunks
        self.places = places
    }

    var count: Int { places.count }

    /// The key of entry `index`, copied out.
    func key(at index: Int) -> [UInt8] { withKey(at: index) { Array($0) } }

    /// The value of entry `index`, copied out.
    func value(at index: Int) -> [UInt8] { withValue(at: index) { Array($0) } }

    /// Calls `body` with the key of entry `index`, lent: valid inside `body`.
    func withKey<Result>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        let place = places[index]
        return try Self.bytes(of: chunks[Int(place.chunk)], in: place.keyBytes, body)
    }

    /// Calls `body` with the value of entry `index`, lent: valid inside `body`.
    func withValue<Result>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        let place = places[index]
        return try Self.bytes(of: chunks[Int(place.chunk)], in: place.valueBytes, body)
    }

    @inline(__always) private static func bytes<Result>(
        of chunk: [UInt8], in range: Range<Int>, _ body: (UnsafeRawBufferPointer) throws -> Result
    ) rethrows -> Result {
        try chunk.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// Calls `body` with the place, key and value of each entry in `range`,
    /// in order, the bytes lent: each chunk is opened once for the entries
    /// in a row that lie in it, not twice for each entry.
    func forEach(
        in range: Range<Int>, _ body: (Int, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void
    ) rethrows {
        try places.withUnsafeBufferPointer { places in
            var position = range.lowerBound
            while position < range.upperBound {
                let chunk = places[position].chunk
                try chunks[Int(chunk)].withUnsafeBytes { bytes in
                    while position < range.upperBound, places[position].chunk == chunk {
                        let place = places[position]
                        try body(position, UnsafeRawBufferPointer(rebasing: bytes[place.keyBytes]),
                                 UnsafeRawBufferPointer(rebasing: bytes[place.valueBytes]))
                        position += 1
                    }
                }
            }
        }
    }

    /// The value stored under `key`, if any. O(log n).
    func value(for key: [UInt8]) -> [UInt8]? {
        key.withUnsafeBytes { key in
            let low = places.indices.partitionIndex { index in !withKey(at: index) { precedes($0, key) } }
            guard low < places.count, withKey(at: low, { $0.elementsEqual(key) }) else { return nil }
            return value(at: low)
        }
    }

    /// Whether each key comes after the one before it, as ``Builder/build()`` leaves them.
    var keysAscend: Bool {
        places.indices.dropFirst().allSatisfy { index in withKey(at: index - 1) { before in withKey(at: index) { precedes(before, $0) } } }
    }

    /// Calls `body` with each entry's key and value, copied out, in key order.
    func forEach(_ body: ([UInt8], [UInt8]) throws -> Void) rethrows {
        try forEach(in: places.indices) { _, key, value in try body(Array(key), Array(value)) }
    }

    /// The entries as the hash map a table that changes is held in. O(n).
    var dictionary: TreeDictionary<[UInt8], StoredValue> {
        var entries: TreeDictionary<[UInt8], StoredValue> = [:]
        forEach { key, value in entries[key] = .encoded(value) }
        return entries
    }

    /// The bytes of the chunks the entries keep: theirs, and what else
    /// those chunks hold.
    var chunkBytes: Int { chunks.reduce(0) { $0 + $1.count } }

    /// Collects one table's entries in the order a snapshot gives them.
    struct Builder {
        private var chunks: [[UInt8]] = []
        /// The snapshot's number for the last of ``chunks``, when it is one
        /// of the snapshot's chunks.
        private var lastChunk: UInt64?
        private var places: [Place] = []
        /// Whether every key so far came after the one before it, as the
        /// snapshots LensDB writes give them.
        private var ascending = true

        /// Adds an entry given in place in its chunk.
        mutating func append(_ entry: SnapshotEntryBytes) {
            if lastChunk != entry.chunkIndex {
                chunks.append(entry.chunk)
                lastChunk = entry.chunkIndex
            }
            append(Place(chunk: UInt32(chunks.count - 1), key: UInt32(entry.key.lowerBound), keyCount: UInt32(entry.key.count),
                         value: UInt32(entry.value.lowerBound), valueCount: UInt32(entry.value.count)))
        }

        /// Adds an entry given as arrays: its key and value become a chunk
        /// of their own.
        mutating func append(key: [UInt8], value: [UInt8]) {
            chunks.append(key + value)
            lastChunk = nil
            append(Place(chunk: UInt32(chunks.count - 1), key: 0, keyCount: UInt32(key.count),
                         value: UInt32(key.count), valueCount: UInt32(value.count)))
        }

        private mutating func append(_ place: Place) {
            if ascending, let last = places.last, !Self.precedes(last, place, in: chunks) { ascending = false }
            places.append(place)
        }

        /// Replaces each chunk the entries use less than a quarter of with
        /// a copy of just their keys and values. A chunk ends only once it
        /// reaches its size, after whatever item it is in: the first
        /// chunk of a large root, or of another table's large entry, may
        /// also hold the last few entries of a table, which would keep it
        /// alive for as long as they stay.
        private static func keepOnlyWhatIsUsed(of chunks: inout [[UInt8]], places: inout [Place]) {
            var used = [Int](repeating: 0, count: chunks.count)
            for place in places { used[Int(place.chunk)] += place.keyBytes.count + place.valueBytes.count }
            let sparse = chunks.indices.map { 4 * used[$0] < chunks[$0].count }
            guard sparse.contains(true) else { return }
            var copies = [[UInt8]](repeating: [], count: chunks.count)
            for index in places.indices where sparse[Int(places[index].chunk)] {
                let place = places[index], chunk = Int(place.chunk)
                if copies[chunk].isEmpty { copies[chunk].reserveCapacity(used[chunk]) }
                places[index].key = UInt32(copies[chunk].count)
                copies[chunk].append(contentsOf: chunks[chunk][place.keyBytes])
                places[index].value = UInt32(copies[chunk].count)
                copies[chunk].append(contentsOf: chunks[chunk][place.valueBytes])
            }
            for chunk in chunks.indices where sparse[chunk] { chunks[chunk] = copies[chunk] }
        }

        /// Whether the key at `a` comes before the key at `b`.
        private static func precedes(_ a: Place, _ b: Place, in chunks: [[UInt8]]) -> Bool {
            chunks[Int(a.chunk)].withUnsafeBytes { first in
                chunks[Int(b.chunk)].withUnsafeBytes { second in
                    LensDB.precedes(UnsafeRawBufferPointer(rebasing: first[a.keyBytes]), UnsafeRawBufferPointer(rebasing: second[b.keyBytes]))
                }
            }
        }

        private static func equal(_ a: Place, _ b: Place, in chunks: [[UInt8]]) -> Bool {
            !precedes(a, b, in: chunks) && !precedes(b, a, in: chunks)
        }

        /// The entries, in key order. A snapshot LensDB did not write may
        /// hold its entries in another order, or one key twice: the entries
        /// are then sorted, and the last value given for a key is its value,
        /// as it would be in a hash map filled in the same order.
        func build() -> SnapshotEntries {
            var chunks = chunks, places = places
            Self.keepOnlyWhatIsUsed(of: &chunks, places: &places)
            if ascending { return SnapshotEntries(chunks: chunks, places: places) }
            // Stable: of equal keys, the last given stays last.
            let order = Array(places.indices).sorted { a, b in
                Self.precedes(places[a], places[b], in: chunks) || (!Self.precedes(places[b], places[a], in: chunks) && a < b)
            }
            var sorted: [Place] = []
            sorted.reserveCapacity(order.count)
            for position in order {
                if let last = sorted.last, Self.equal(last, places[position], in: chunks) {
                    sorted[sorted.count - 1] = places[position]
                } else {
                    sorted.append(places[position])
                }
            }
            return SnapshotEntries(chunks: chunks, places: sorted)
        }
    }
}
