import Foundation
import HashTreeCollections
import LensLog

/// One entity as table versions hold it: immutable, shared by the primary
/// tree and every index of every version that contains it, so an index
/// walk reaches the entity without a second lookup.
///
/// `@unchecked Sendable`: every stored property of this class and of its
/// only subclass, ``RowBox``, is a `let` of a `Sendable` type, so an
/// instance never changes after `init` and may be read from any thread.
@usableFromInline
class RowObject: @unchecked Sendable {
    /// The entity's identifier as tables order it (``identifierValue(_:)``).
    @usableFromInline let id: IndexValue
    /// The identifier's ``IndexValue/leadingOrderBits``, which index
    /// entries copy to order equal keys without reading rows. Held in the
    /// padding after `id`: it takes no room.
    @usableFromInline let idOrderBits: UInt32
    /// The LSN of the commit that last changed the entity (for entities
    /// loaded at open: the store's LSN then, an upper bound).
    @usableFromInline let lsn: UInt64
    /// The hash of the entity's encoding (0 when not known): a put whose
    /// encoding hashes differently is a change without encoding the stored
    /// entity again to compare. 32 bits are plenty for that, and leave room
    /// for ``encodedCount`` in the same word.
    @usableFromInline let encodingHash: Int32
    /// How many bytes the entity's encoding takes (0 when not known): what
    /// ``TableStatistics/encodedBytes`` adds up.
    @usableFromInline let encodedCount: UInt32

    @usableFromInline init(id: IndexValue, lsn: UInt64, encoding: EncodingSummary) {
        self.id = id
        idOrderBits = id.leadingOrderBits
        self.lsn = lsn
        encodingHash = encoding.hash
        encodedCount = encoding.count
    }
}

/// What a row keeps of its entity's encoding: its hash and length.
@usableFromInline
struct EncodingSummary: Sendable {
    @usableFromInline let hash: Int32
    @usableFromInline let count: UInt32

    /// Nothing known: the rows of filters and sorts, never stored.
    @usableFromInline static let unknown = EncodingSummary(hash: 0, count: 0)

    @usableFromInline init(hash: Int32, count: UInt32) {
        self.hash = hash
        self.count = count
    }

    /// The summary of `bytes`. The hash is their CRC32C, which the CPU
    /// computes in a few nanoseconds where `Hasher` takes tens: it only
    /// tells a change from a likely repeat, and a repeat is confirmed by
    /// comparing bytes, so it needs no seed against chosen collisions.
    @usableFromInline init(_ bytes: [UInt8]) {
        self.init(hash: Int32(bitPattern: CRC32C.checksum(bytes)), count: UInt32(clamping: bytes.count))
    }

    /// The summary of bytes lent in place.
    init(_ bytes: UnsafeRawBufferPointer) {
        self.init(hash: Int32(bitPattern: CRC32C.checksum(bytes)), count: UInt32(clamping: bytes.count))
    }
}

/// A ``RowObject`` holding an entity of type `T`.
@usableFromInline
final class RowBox<T: Entity>: RowObject, @unchecked Sendable {
    @usableFromInline let value: T

    /// Inlined where `T` is known, `value` moves into the box instead of
    /// being copied (a retain of each of its strings).
    @inlinable init(_ value: consuming T, id: IndexValue, lsn: UInt64, encoding: EncodingSummary = .unknown) {
        self.value = value
        super.init(id: id, lsn: lsn, encoding: encoding)
    }

    /// Decodes a stored entity of type `T` into its row. Inlined where `T`
    /// is known, it reads the identifier and allocates the box without
    /// asking the runtime for `T.ID`'s or `RowBox<T>`'s metadata.
    @inlinable static var maker: RowMaker<T> {
        RowMaker { value, state, lsn, encoding in
            let entity = try ValueDecoder().decode(T.self, from: value, in: state)
            // The identifier first, so that the entity moves into its box
            // rather than being copied (a retain of each of its strings).
            let id = try identifierValue(entity.id)
            return RowBox(entity, id: id, lsn: lsn, encoding: encoding)
        }
    }
}

/// Decodes the value-format bytes of one stored entity into its row, a
/// `RowBox<T>`, as of `lsn`, with `encoding` the summary of those bytes
/// (``RowBox/maker``). Runs on several threads at once, each with a
/// `DecodingState` of its own.
///
/// `make` gives the row as a `RowObject`: as a `RowBox<T>`, called where
/// `T` is not known, each row costs a retain and a release more.
@usableFromInline
struct RowMaker<T: Entity>: Sendable {
    @usableFromInline let make: @Sendable (
        _ value: UnsafeRawBufferPointer, _ state: DecodingState, _ lsn: UInt64, _ encoding: EncodingSummary
    ) throws -> RowObject

    @inlinable init(
        _ make: @escaping @Sendable (UnsafeRawBufferPointer, DecodingState, UInt64, EncodingSummary) throws -> RowObject
    ) {
        self.make = make
    }
}

/// What a table's storage needs to know of its entity type, as functions:
/// the storage itself is not generic, so its trees are compiled once, for
/// concrete key types, inside LensDB.
struct TableSchema: Sendable {
    let entityType: ObjectIdentifier
    let entityTypeName: String
    let keyEncoding: KeyEncoding
    /// The entity's bytes in the value format.
    let encode: @Sendable (RowObject) throws -> [UInt8]
    /// The heap one entity's box takes: an object header, the row's fields
    /// and the entity's inline bytes, in 16-byte allocation units.
    let boxBytes: Int

    static func of<T: Entity>(_ type: T.Type) -> TableSchema {
        TableSchema(
            entityType: ObjectIdentifier(T.self), entityTypeName: "\(T.self)", keyEncoding: OrderedKey.encoding(of: T.ID.self),
            encode: { try ValueEncoder().encode(unsafeDowncast($0, to: RowBox<T>.self).value) },
            boxBytes: (16 + MemoryLayout<IndexValue>.stride + 16 + MemoryLayout<T>.stride + 15) / 16 * 16)
    }

    var encoding: TableEncoding { TableEncoding(key: keyEncoding, value: .valueFormat) }

    /// The stored key of the identifier `id` (as ``identifierValue(_:)`` gives it).
    func keyBytes(of id: IndexValue) -> [UInt8] {
        switch (keyEncoding, id) {
        case let (.int64, .int(value)): OrderedKey.int64(value)
        case let (.uint64, .int(value)): OrderedKey.uint64(UInt64(value))
        case let (.uint64, .uint(value)): OrderedKey.uint64(value)
        case let (.string, .string(value)): Array(value.utf8)
        case let (.uuid, .uuid(value)): OrderedKey.uuid(value)
        case let (_, .bytes(value)): value
        default: preconditionFailure("identifier \(id) does not fit the key encoding \(keyEncoding)")
        }
    }

    /// Whether `key` is the key of `id`: `identifier(fromKeyBytes: key) == id`,
    /// read in place for an integer key, the commonest, and strings compared
    /// byte for byte. `==` holds canonically equivalent strings equal: an
    /// entity whose identifier is in another form than NFC, stored under the
    /// NFC key, would pass, and its row and index entries be ordered by
    /// bytes that are not its key's.
    func isKey(_ key: UnsafeRawBufferPointer, of id: IndexValue) -> Bool {
        if keyEncoding == .int64, case let .int(value) = id { return OrderedKey.int64(ordered: key) == value }
        guard let stored = identifier(fromKeyBytes: Array(key)) else { return false }
        if case let (.string(stored), .string(id)) = (stored, id) { return stored.utf8.elementsEqual(id.utf8) }
        return stored == id
    }

    /// The identifier stored as `key`, if the bytes are one.
    func identifier(fromKeyBytes key: [UInt8]) -> IndexValue? {
        if keyEncoding == .valueFormat { return (try? Document(decodingBinary: key)) == nil ? nil : .bytes(key) }
        switch OrderedKey.decode(key, as: keyEncoding) {
        case let .int(value)?: return .int(value)
        case let .uint(value)?: return .uint(value)
        // Only NFC: a key in another form is not one a put writes.
        case let .string(value)?: return IndexValue.isNFC(value) ? .string(value) : nil
        case let .uuid(value)?: return .uuid(value)
        default: return nil
        }
    }
}

/// An identifier as tables order and store it: its ``IndexValue`` for the
/// types with an order-preserving key encoding, and its value-format bytes
/// for the rest (whose identifier order is then the order of those bytes).
///
/// Chosen by ``OrderedKey/encoding(of:)``, from `ID`'s static type, as the
/// table's key encoding is: a dynamic cast would see through an
/// `Optional` holding an `Int64` and give an integer, which a table whose
/// keys are in the value format cannot store.
@inlinable
func identifierValue<ID: Encodable>(_ id: ID) throws -> IndexValue {
    // The encoding names `ID` exactly, so each value is reinterpreted as
    // that type rather than cast: where `ID` is not known when compiled
    // (an open decoding a table), a cast is a runtime call per identifier.
    switch OrderedKey.encoding(of: ID.self) {
    case .int64: .int(ID.self == Int64.self ? unsafeBitCast(id, to: Int64.self) : Int64(unsafeBitCast(id, to: Int.self)))
    case .uint64: unsafeBitCast(id, to: UInt64.self).indexValue
    case .string: .string(unsafeBitCast(id, to: String.self))
    case .uuid: .uuid(unsafeBitCast(id, to: UUID.self))
    // encoding(of:) never gives .raw, the bytes of a program's own.
    case .valueFormat, .raw: .bytes(try ValueEncoder().encode(id))
    }
}

/// An entry that does not decode as the table's type, kept with its bytes
/// untouched until the program removes it (``UndecodablePolicy/quarantine``).
struct QuarantinedEntry: Sendable {
    var bytes: [UInt8]
    var reason: String
}

/// One version of a typed table: its entities in identifier order, its
/// indexes, and the entries it quarantined. A value type over persistent
/// trees: taking a version is O(1), a change O(log n) per index.
@usableFromInline
struct TableStorage: Sendable {
    let name: String
    let schema: TableSchema
    var rows = RowTree()
    var indexes: [IndexStorage]
    var quarantine: TreeDictionary<[UInt8], QuarantinedEntry> = [:]
    /// The bytes of the entities' encodings, added up.
    var encodedBytes = 0
    /// How many indexes the open that decoded the table built in the order
    /// its snapshot stored, without sorting.
    var indexesInStoredOrder = 0

    init(name: String, schema: TableSchema, indexes: [IndexDefinition]) {
        self.name = name
        self.schema = schema
        self.indexes = indexes.map(IndexStorage.init)
    }

    /// Entities plus quarantined entries.
    var count: Int { rows.count + quarantine.count }
    var encoding: TableEncoding { schema.encoding }

    @usableFromInline func row(_ id: IndexValue) -> RowObject? { rows.value(for: id) }

    /// ``row(_:)`` unretained: valid while this storage (or another holding
    /// the row) lives unchanged; a remove or put on it may free the row.
    /// For a read that copies out of the row and keeps nothing, which then
    /// never writes to the row's memory.
    @usableFromInline func unretainedRow(_ id: IndexValue) -> Unmanaged<RowObject>? { rows.unretainedValue(for: id) }

    /// How many entities this version holds (quarantined entries not counted).
    @usableFromInline var entityCount: Int { rows.count }

    /// Calls `body` with every row, in identifier order. Each row is lent,
    /// not retained (``RowTree/forEach(_:)``): `body` keeps one only by
    /// copying the reference.
    @usableFromInline func forEachRow(_ body: (RowObject) -> Void) {
        rows.forEach { _, row in body(row); return true }
    }

    /// Inserts or replaces the entity `id`; returns the row it replaced.
    @discardableResult
    mutating func put(_ row: RowObject, id: IndexValue) -> RowObject? {
        let old = replaceRow(id, with: row)
        for index in indexes.indices { updateIndex(index, old: old, new: row) }
        return old
    }

    /// Inserts or replaces the entity `id` in the rows and the unique
    /// indexes now, and adds the change to `deferred` for the other indexes,
    /// which are not read until ``apply(_:)`` takes it in; returns the row
    /// it replaced. Unique indexes stay current: the next put checks them.
    @discardableResult
    mutating func put(_ row: RowObject, id: IndexValue, deferring deferred: inout [IndexChange]) -> RowObject? {
        let old = replaceRow(id, with: row)
        change(old: old, new: row, deferring: &deferred)
        return old
    }

    /// Puts `new` in place of `old` in the unique indexes, and adds the
    /// change to `deferred` for the others.
    private mutating func change(old: RowObject?, new: RowObject, deferring deferred: inout [IndexChange]) {
        for index in indexes.indices where indexes[index].definition.isUnique { updateIndex(index, old: old, new: new) }
        deferred.append(IndexChange(old: old, new: new))
    }

    /// Updates the index at `position` for the entity changing from `old`
    /// to `new`, building it again from the rows when the change missed
    /// `old`'s entry (``IndexStorage/update(old:new:)``).
    private mutating func updateIndex(_ position: Int, old: RowObject?, new: RowObject?) {
        if !indexes[position].update(old: old, new: new) { rebuildIndex(position) }
    }

    /// Builds the index at `position` again from the rows, for a change
    /// that did not find the entry of the row it replaced: that entry
    /// would go on pointing at a row the storage no longer holds. The rows
    /// must be current, as they are after each change: the row tree
    /// changes first.
    private mutating func rebuildIndex(_ position: Int) {
        var current: [RowObject] = []
        current.reserveCapacity(rows.count)
        forEachRow { current.append($0) }
        indexes[position] = IndexStorage(indexes[position].definition, rows: current)
    }

    /// ``put(_:id:deferring:)`` for a row of a load: a batch into an empty
    /// table whose identifiers ascend, so no row replaces another. The row
    /// goes into `loading` rather than the row tree, which ``load(_:)``
    /// builds from them at once; until then ``row(_:)`` finds none of them.
    mutating func append(_ row: RowObject, deferring deferred: inout [IndexChange], loading: inout [RowObject]) {
        precondition(loading.last.map { $0.id < row.id } ?? rows.isEmpty, "a load's identifiers ascend, into an empty table")
        encodedBytes += Int(row.encodedCount)
        change(old: nil, new: row, deferring: &deferred)
        loading.append(row)
    }

    /// Builds the row tree of an empty table from the rows an open decoded,
    /// whose identifiers `ids` ascend, as one tree: no descent per row.
    /// Each row moves into the tree rather than being retained by it:
    /// `rows` is left empty.
    mutating func load(ids: [IndexValue], moving rows: DecodedRows) {
        precondition(self.rows.isEmpty, "a load goes into an empty table")
        precondition(ids.count == rows.count, "a row for each identifier")
        self.rows = rows.moveAll { RowTree(count: ids.count, id: { ids[$0] }, row: $0) }
    }

    /// The row tree of an empty table from a load's rows, which hold their
    /// identifiers and ascend by them, as one tree (as ``load(ids:moving:)``).
    mutating func load(_ rows: [RowObject]) {
        precondition(self.rows.isEmpty, "a load goes into an empty table")
        self.rows = RowTree(count: rows.count, id: { rows[$0].id }, row: { rows[$0] })
    }

    /// Puts `row` in the row tree, counting its bytes; returns the row it replaced.
    private mutating func replaceRow(_ id: IndexValue, with row: RowObject) -> RowObject? {
        let old = rows.updateValue(row, forKey: id)
        encodedBytes += Int(row.encodedCount) - Int(old?.encodedCount ?? 0)
        return old
    }

    /// Brings the indexes that ``put(_:id:deferring:)`` left behind up to
    /// date with the rows.
    /// A large batch changes each index on a thread of its own: they read
    /// the same rows and share nothing else.
    mutating func apply(_ deferred: [IndexChange], changesPerThread: Int = Self.indexChangesPerThread) {
        let _: Never? = apply(deferred, alongside: nil, changesPerThread: changesPerThread)
    }

    /// ``apply(_:changesPerThread:)``, running `job` beside the indexes
    /// on threads of their own, first, as it is the longest (a
    /// transaction's record): its result, or nil when it did not run, as
    /// when the batch is too small to be worth threads, or the table has
    /// no index but unique ones (which the puts kept current) to change
    /// beside it. `job` itself is asked for only when it runs.
    mutating func apply<Result: Sendable>(
        _ deferred: [IndexChange], alongside job: @autoclosure () -> (@Sendable () -> Result?)?,
        changesPerThread: Int = Self.indexChangesPerThread
    ) -> Result? {
        let positions = indexes.indices.filter { !indexes[$0].definition.isUnique }
        let batch = positions.contains { indexes[$0].rebuilds(for: deferred) } ? IndexBatch(deferred) : nil
        let job = deferred.count >= changesPerThread && !positions.isEmpty ? job() : nil
        guard deferred.count >= changesPerThread, positions.count + (job == nil ? 0 : 1) > 1 else {
            for position in positions {
                if !indexes[position].apply(deferred, batch) { rebuildIndex(position) }
            }
            return nil
        }
        // Each thread changes a copy of its index, which shares its nodes
        // with `taken`: a node changed in place is copied once, as a node
        // shared with the committed version is.
        let taken = positions.map { indexes[$0] }
        let jobs = job == nil ? 0 : 1
        let changed = Parallel.map(jobs + positions.count) { part -> BatchPart<Result> in
            if part < jobs { return .job(job?()) }
            var index = taken[part - jobs]
            let found = index.apply(deferred, batch)
            return .index(index, found: found)
        }
        for (part, position) in positions.enumerated() {
            guard case let .index(index, found) = changed[jobs + part] else { preconditionFailure("part \(part) is an index") }
            indexes[position] = index
            if !found { rebuildIndex(position) }
        }
        guard jobs > 0, case let .job(result) = changed[0] else { return nil }
        return result
    }

    /// The fewest changes a batch needs for its indexes to change on
    /// several threads: an index takes about a microsecond per change, a
    /// thread tens to start. Tuning only.
    static var indexChangesPerThread: Int { 2_048 }

    /// Removes the entity `id`; returns its row.
    @discardableResult
    mutating func remove(_ id: IndexValue) -> RowObject? {
        guard let old = rows.removeValue(forKey: id) else { return nil }
        for index in indexes.indices { updateIndex(index, old: old, new: nil) }
        encodedBytes -= Int(old.encodedCount)
        return old
    }

    /// The stored form of the entry under `key`, if any.
    func storedValue(forKeyBytes key: [UInt8]) -> StoredValue? {
        if let quarantined = quarantine[key] { return .encoded(quarantined.bytes) }
        guard let id = schema.identifier(fromKeyBytes: key), let row = row(id) else { return nil }
        return .decoded(EncodedRow(row: row, schema: schema))
    }

    /// Calls `body` with every entry's key and value bytes, in key byte order.
    func forEachEncodedEntry(_ body: ([UInt8], [UInt8]) throws -> Void) throws {
        // Identifier order is key byte order for every ordered encoding (and
        // for value-format identifiers, which are ordered by their bytes);
        // quarantined entries are merged in.
        var quarantined = quarantine.keys.sorted { $0.lexicographicallyPrecedes($1) }[...]
        try rows.forEach { _, row in
            // The row's own identifier: a put of an equal one keeps the
            // key the tree holds.
            let key = schema.keyBytes(of: row.id)
            while let next = quarantined.first, next.lexicographicallyPrecedes(key) {
                try body(next, quarantine[next]!.bytes)
                quarantined.removeFirst()
            }
            try body(key, try schema.encode(row))
            return true
        }
        for key in quarantined { try body(key, quarantine[key]!.bytes) }
    }

    /// What ``Store/statistics`` says of this table.
    var statistics: TableStatistics {
        let boxes = schema.boxBytes * rows.count
        let quarantined = quarantine.values.reduce(0) { $0 + $1.bytes.count + MemoryLayout<QuarantinedEntry>.stride }
        return TableStatistics(
            name: name, entities: rows.count, quarantined: quarantine.count, encodedBytes: encodedBytes,
            residentBytes: boxes + rows.allocatedBytes + indexes.reduce(0) { $0 + $1.allocatedBytes } + quarantined,
            indexes: indexes.count, indexesInStoredOrder: indexesInStoredOrder)
    }

    /// The order of each index as a snapshot stores it: its rows as places
    /// among the entries ``forEachEncodedEntry(_:)`` gives. None with
    /// quarantined entries, which the next open may decode or not, so that
    /// places there would not be these.
    func indexOrders() -> [(index: String, positions: [UInt32])] {
        guard !indexes.isEmpty, quarantine.isEmpty, rows.count <= Int(UInt32.max) else { return [] }
        var places: [ObjectIdentifier: UInt32] = [:]
        places.reserveCapacity(rows.count)
        var next: UInt32 = 0
        rows.forEach { _, row in
            places[ObjectIdentifier(row)] = next
            next += 1
            return true
        }
        var written: Set<String> = []
        // Two indexes of one name index the same fields: one order serves both.
        return indexes.filter { written.insert($0.definition.name).inserted }.map { ($0.definition.name, $0.order(places: places)) }
    }

    /// A copy without the entry under `key`; nil when there is none.
    func removing(keyBytes key: [UInt8]) -> TableStorage? {
        var copy = self
        if copy.quarantine.removeValue(forKey: key) != nil { return copy }
        guard let id = schema.identifier(fromKeyBytes: key), copy.remove(id) != nil else { return nil }
        return copy
    }

    /// Checks that rows, indexes and quarantine agree. For tests.
    func checkInvariants() throws {
        func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
            if !condition { throw InvariantViolation(description: "table \(name): \(message())") }
        }
        try check(rows.checkInvariants() == nil, rows.checkInvariants() ?? "")
        var identified = true
        rows.forEach { id, row in
            identified = row.id == id
            return identified
        }
        try check(identified, "a row is filed under another identifier than its own")
        for index in indexes {
            try check(index.count == rows.count, "\(index.definition) holds \(index.count) entries for \(rows.count) rows")
            if let problem = index.checkInvariants(rows: { rows.value(for: $0) }) {
                try check(false, "\(index.definition): \(problem)")
            }
        }
    }
}

/// An entity in the engine's untyped view: encodes itself when a tool asks.
struct EncodedRow: SelfEncodingValue {
    let row: RowObject
    let schema: TableSchema
    func encodedBytes() throws -> [UInt8] { try schema.encode(row) }
}

/// What one thread of a batch's ``TableStorage/apply(_:alongside:changesPerThread:)`` gives back.
private enum BatchPart<Result: Sendable>: Sendable {
    case job(Result?)
    /// The index changed, and whether every change found its old entry.
    case index(IndexStorage, found: Bool)
}
