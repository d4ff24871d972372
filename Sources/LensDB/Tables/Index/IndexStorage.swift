import CLensPrefetch

/// One entry of an index: the key's fields and the row they were read
/// from, whose identifier breaks ties, so entries with equal keys are in
/// identifier order and every entry is distinct.
///
/// An entry does not own its row: `row` is unretained. Every entry of an
/// index of one version points at a row that version's row tree holds, and
/// an index is only ever read through the ``TableStorage`` that holds both
/// (an older version shares index nodes only with rows it holds too). So a
/// walk passes rows on without retaining or releasing any, copying a node
/// on a commit retains nothing, and an entry takes no reference count.
protocol IndexEntry: BTreeKey, FieldedKey, WholeEntryKey {
    /// The entry of `key`, which holds as many fields as the index, for
    /// `row`, whose ``RowObject/idOrderBits`` are `idBits`. Takes the key's
    /// values over: a key moved in is not copied and then destroyed.
    init(key: consuming IndexedKey, row: Unmanaged<RowObject>, idBits: UInt32)
    var key: IndexedKey { get }
    var row: Unmanaged<RowObject> { get }
    /// The row identifier's ``IndexValue/leadingOrderBits``.
    var idBits: UInt32 { get }
}

extension IndexEntry {
    /// The entry of `key` for `row`, reading the row's identifier bits.
    init(key: consuming IndexedKey, row: Unmanaged<RowObject>) {
        self.init(key: key, row: row, idBits: row._withUnsafeGuaranteedRef(\.idOrderBits))
    }

    /// The identifier of the entry's row, read without retaining it.
    var id: IndexValue { row._withUnsafeGuaranteedRef { $0.id } }

    /// Orders two entries whose key fields are equal: by the identifiers'
    /// leading bits, held in the entries, and only on a tie by the
    /// identifiers, read from the rows.
    static func identifierOrder(_ a: Self, _ b: Self) -> Bool {
        a.idBits != b.idBits ? a.idBits < b.idBits : a.id < b.id
    }
}

extension IndexValue {
    /// The leading 32 bits of ``orderPrefix``: where two differ, the values
    /// are in their order. A row keeps its identifier's, and each index
    /// entry a copy, in bytes their layouts leave as padding, so that
    /// comparing entries with equal keys (every descent of an index with
    /// few distinct values) reads neither row on most ties: for integer
    /// identifiers the bits tell apart every value below 2^18, and larger
    /// ones that differ by more than one part in 2^17. Like ``orderPrefix``
    /// it agrees with `<` only for strings in NFC, as ``IndexValue`` holds
    /// them: a table refuses an identifier that is not (a put throws
    /// ``TableError/identifierNotNormalized(table:id:)``; an open treats its
    /// entry as undecodable).
    @usableFromInline var leadingOrderBits: UInt32 { UInt32(truncatingIfNeeded: orderPrefix >> 32) }
}

/// The ranks of an index's entries within a range, and the keys of the
/// first and last of them when known (``IndexStorage/ends(of:)``).
struct RangeEnds {
    var ranks: Range<Int>
    var first: IndexedKey? = nil
    var last: IndexedKey? = nil
}

/// What an index tree maps its entries to: nothing; the entry is the key.
/// A nominal empty type, not `Void`, so the tree's code is specialized for it.
struct EntryMark: Sendable {}

/// An entry of a one-field index: 32 bytes.
struct OneFieldEntry: IndexEntry {
    let value: IndexValue
    /// The identifier's ``IndexValue/leadingOrderBits``, in the value's padding.
    let idBits: UInt32
    let row: Unmanaged<RowObject>

    init(key: consuming IndexedKey, row: Unmanaged<RowObject>, idBits: UInt32) {
        guard case let .one(value) = consume key else { preconditionFailure("a key of more fields for an index on one") }
        self.value = value
        self.idBits = idBits
        self.row = row
    }

    var key: IndexedKey { .one(value) }
    var fieldCount: Int { 1 }

    func field(_ position: Int) -> IndexValue {
        assert(position == 0, "field \(position) of a one-field key")
        return value
    }

    static func fieldsPrecede(_ a: Self, _ b: Self) -> Bool { a.value < b.value }

    static func < (a: Self, b: Self) -> Bool {
        let order = IndexValue.order(a.value, b.value)
        return order != 0 ? order < 0 : identifierOrder(a, b)
    }

    static func == (a: Self, b: Self) -> Bool { a.value == b.value && a.idBits == b.idBits && a.id == b.id }
}

/// An entry of a two-field index.
struct TwoFieldEntry: IndexEntry {
    let first: IndexValue
    let second: IndexValue
    /// The identifier's ``IndexValue/leadingOrderBits``, in the values' padding.
    let idBits: UInt32
    let row: Unmanaged<RowObject>

    init(key: consuming IndexedKey, row: Unmanaged<RowObject>, idBits: UInt32) {
        guard case let .two(first, second) = consume key else { preconditionFailure("a key of other fields for an index on two") }
        (self.first, self.second) = (first, second)
        self.idBits = idBits
        self.row = row
    }

    var key: IndexedKey { .two(first, second) }
    var fieldCount: Int { 2 }

    func field(_ position: Int) -> IndexValue {
        assert(position < 2, "field \(position) of a two-field key")
        return position == 0 ? first : second
    }

    static func fieldsPrecede(_ a: Self, _ b: Self) -> Bool {
        let first = IndexValue.order(a.first, b.first)
        return first != 0 ? first < 0 : a.second < b.second
    }

    static func < (a: Self, b: Self) -> Bool {
        var order = IndexValue.order(a.first, b.first)
        if order == 0 { order = IndexValue.order(a.second, b.second) }
        return order != 0 ? order < 0 : identifierOrder(a, b)
    }

    static func == (a: Self, b: Self) -> Bool { a.first == b.first && a.second == b.second && a.idBits == b.idBits && a.id == b.id }
}

/// An entry of a three-field index.
struct ThreeFieldEntry: IndexEntry {
    let first: IndexValue
    let second: IndexValue
    let third: IndexValue
    /// The identifier's ``IndexValue/leadingOrderBits``, in the values' padding.
    let idBits: UInt32
    let row: Unmanaged<RowObject>

    init(key: consuming IndexedKey, row: Unmanaged<RowObject>, idBits: UInt32) {
        guard case let .three(first, second, third) = consume key else { preconditionFailure("a key of fewer fields for an index on three") }
        (self.first, self.second, self.third) = (first, second, third)
        self.idBits = idBits
        self.row = row
    }

    var key: IndexedKey { .three(first, second, third) }
    var fieldCount: Int { 3 }

    func field(_ position: Int) -> IndexValue {
        assert(position < 3, "field \(position) of a three-field key")
        return position == 0 ? first : (position == 1 ? second : third)
    }

    static func fieldsPrecede(_ a: Self, _ b: Self) -> Bool {
        var order = IndexValue.order(a.first, b.first)
        if order == 0 { order = IndexValue.order(a.second, b.second) }
        return order != 0 ? order < 0 : a.third < b.third
    }

    static func < (a: Self, b: Self) -> Bool {
        var order = IndexValue.order(a.first, b.first)
        if order == 0 { order = IndexValue.order(a.second, b.second) }
        if order == 0 { order = IndexValue.order(a.third, b.third) }
        return order != 0 ? order < 0 : identifierOrder(a, b)
    }

    static func == (a: Self, b: Self) -> Bool {
        a.first == b.first && a.second == b.second && a.third == b.third && a.idBits == b.idBits && a.id == b.id
    }
}

/// An entity's row `old` (nil: it was absent) replaced by `new`, kept
/// until the indexes take the change in: a put of many entities defers
/// its index changes to its end (``IndexStorage/apply(_:)``).
///
/// `old` is held: the change may have taken it out of the row tree, the
/// only other place that held it. `new` is not, so a batch neither retains
/// nor releases each of its rows once more: the row tree holds it (a load's
/// list of rows, until that becomes the tree), or, once a later change of
/// the batch replaces it there, that change's `old` does.
struct IndexChange {
    let old: RowObject?
    let new: Unmanaged<RowObject>

    init(old: RowObject?, new: RowObject) {
        self.old = old
        self.new = .passUnretained(new)
    }
}

/// What a batch of changes takes out of a table's indexes and puts in,
/// found once for every index that rebuilds for it (``IndexStorage/apply(_:_:)``):
/// the rows that leave, and the rows that arrive and stay, in identifier order.
struct IndexBatch {
    /// Every replaced row.
    let leaving: RowIdentities
    /// Every new row not replaced within the batch: one per identifier,
    /// in identifier order, so an index's equal keys stay in it when its
    /// keys are sorted with ties by position. Unretained, as the changes'.
    let arriving: [Unmanaged<RowObject>]

    init(_ changes: [IndexChange]) {
        // A load replaces nothing: its set stays empty, with no table made.
        let replacing = changes.reduce(0) { $0 + ($1.old == nil ? 0 : 1) }
        var leaving = RowIdentities(minimumCapacity: replacing)
        for change in changes { if let old = change.old { leaving.insert(old) } }
        // A row replaced within the batch is both: it leaves, and was never in.
        var arriving = leaving.isEmpty ? changes.map(\.new) : changes.compactMap { leaving.contains($0.new) ? nil : $0.new }
        // A bulk load comes in identifier order already; updates need not.
        let id = { (row: Unmanaged<RowObject>) in row._withUnsafeGuaranteedRef(\.id) }
        if !arriving.indices.dropFirst().allSatisfy({ id(arriving[$0 - 1]) < id(arriving[$0]) }) {
            arriving = sortedPermutation(arriving.map(id)).map { arriving[$0] }
        }
        self.leaving = leaving
        self.arriving = arriving
    }
}

/// A set of rows by identity, holding none of them: a batch's leaving rows,
/// which the batch's changes keep alive. A rebuild asks it once for each
/// entry of an index, so it hashes an address with one multiplication
/// (Fibonacci hashing) where `Set<ObjectIdentifier>` runs SipHash, looks
/// at a bit filter first, and probes a flat table of addresses, one cache
/// line for most lookups, only when its bit is set.
struct RowIdentities {
    /// Addresses, 0 where empty, at most half full: a power of two long.
    private var slots: [UInt]
    /// How far the product of an address and the multiplier is shifted
    /// down to give a slot: its top bits, the best mixed.
    private let shift: UInt
    /// A bit for each of four times as many places as there are slots, set
    /// for every address held (the product's top bits name it): most
    /// lookups of an address not held find their bit clear and end there.
    /// A rebuild asks about every entry of an index: for 10k rows the slots
    /// take 256 KiB, most lookups a cache miss, where these bits take 16 KiB.
    private var filter: [UInt64]
    private(set) var count = 0

    init(minimumCapacity: Int) {
        var bits = 1
        while 1 << bits < 2 * minimumCapacity { bits += 1 }
        slots = Array(repeating: 0, count: 1 << bits)
        shift = UInt(64 - bits)
        filter = Array(repeating: 0, count: max(1, (4 << bits) / 64))
    }

    var isEmpty: Bool { count == 0 }

    /// Adds `row`, unless it is in already.
    mutating func insert(_ row: RowObject) {
        let address = Self.address(of: .passUnretained(row))
        var slot = self.slot(of: address)
        while slots[slot] != 0 {
            if slots[slot] == address { return }
            slot = (slot + 1) & (slots.count - 1)
        }
        precondition(2 * (count + 1) <= slots.count, "more rows than the set was made for")
        slots[slot] = address
        let (word, bit) = filterBit(of: address)
        filter[word] |= bit
        count += 1
    }

    func contains(_ row: RowObject) -> Bool { contains(.passUnretained(row)) }

    /// Whether `row`, held unretained (an index entry's), is in the set.
    func contains(_ row: Unmanaged<RowObject>) -> Bool {
        let address = Self.address(of: row)
        let (word, bit) = filterBit(of: address)
        guard filter[word] & bit != 0 else { return false }
        var slot = self.slot(of: address)
        while true {
            let held = slots[slot]
            if held == address { return true }
            if held == 0 { return false }
            slot = (slot + 1) & (slots.count - 1)
        }
    }

    private static func address(of row: Unmanaged<RowObject>) -> UInt { UInt(bitPattern: row.toOpaque()) }

    private func slot(of address: UInt) -> Int {
        Int(truncatingIfNeeded: Self.mixed(address) >> shift)
    }

    /// The word of ``filter`` and the bit within it for `address`: the
    /// product's top bits, two more than a slot takes.
    private func filterBit(of address: UInt) -> (word: Int, bit: UInt64) {
        let place = Int(truncatingIfNeeded: Self.mixed(address) >> (shift - 2))
        return (place >> 6, 1 << UInt64(place & 63))
    }

    private static func mixed(_ address: UInt) -> UInt { address &* 0x9E37_79B9_7F4A_7C15 }
}

/// One index of one version of a table: its definition and its entries,
/// in a tree whose entry type fits the number of fields.
struct IndexStorage: Sendable {
    let definition: IndexDefinition
    var entries: Entries
    /// Whether it was built in the order a snapshot stored, without a sort.
    private(set) var builtInStoredOrder = false

    enum Entries: Sendable {
        case one(PersistentBTree<OneFieldEntry, EntryMark>)
        case two(PersistentBTree<TwoFieldEntry, EntryMark>)
        case three(PersistentBTree<ThreeFieldEntry, EntryMark>)
    }

    init(_ definition: IndexDefinition) {
        self.definition = definition
        switch definition.keyPaths.count {
        case 1: entries = .one(PersistentBTree())
        case 2: entries = .two(PersistentBTree())
        default: entries = .three(PersistentBTree())
        }
    }

    /// An index of `rows`, which must be in identifier order: built bottom-up
    /// from the entries sorted once, or in `storedOrder` (places in `rows`,
    /// as a snapshot stores them) when that is their order.
    init(_ definition: IndexDefinition, rows: [RowObject], storedOrder: [UInt32]? = nil) {
        self = rows.withUnsafeBufferPointer { IndexStorage(definition, rows: $0, storedOrder: storedOrder) }
    }

    /// The same index, of rows read in place (an open's ``DecodedRows``).
    init(_ definition: IndexDefinition, rows: UnsafeBufferPointer<RowObject>, storedOrder: [UInt32]?) {
        self.definition = definition
        var inStoredOrder = false
        switch definition.keyPaths.count {
        case 1: entries = .one(Self.tree(definition, rows, storedOrder, &inStoredOrder))
        case 2: entries = .two(Self.tree(definition, rows, storedOrder, &inStoredOrder))
        default: entries = .three(Self.tree(definition, rows, storedOrder, &inStoredOrder))
        }
        builtInStoredOrder = inStoredOrder
    }

    private static func tree<Entry: IndexEntry>(
        _ definition: IndexDefinition, _ rows: UnsafeBufferPointer<RowObject>, _ storedOrder: [UInt32]?, _ inStoredOrder: inout Bool
    ) -> PersistentBTree<Entry, EntryMark> {
        let entries: UnsafeMutableBufferPointer<Entry> = Self.entries(definition, count: rows.count) { .passUnretained(rows[$0]) }
        defer { entries.deallocate() }
        if let storedOrder, Self.isOrder(storedOrder, of: UnsafeBufferPointer(entries)) {
            inStoredOrder = true
            return Self.tree(moving: entries, in: storedOrder.lazy.map(Int.init))
        }
        // Rows come in identifier order, and `sortedPermutation`
        // breaks ties by position, so equal keys stay in it.
        return Self.tree(moving: entries, in: sortedPermutation(UnsafeBufferPointer(entries)))
    }

    /// The entries of the `count` rows `row` gives, in their order, in a
    /// buffer the caller deallocates once it has moved each entry out.
    ///
    /// Keys are read in the rows' order. At an open that is the order they
    /// were allocated in; a batch's arrivals come in identifier order, and
    /// were allocated in the order the program put them, so each row is
    /// loaded ``gatherAhead`` places before its key is read. A sort then
    /// visits this dense column, not the rows.
    /// An entry is the smallest form of its key (a key of one field takes
    /// 32 bytes as an entry, 72 as an ``IndexedKey``), and moves into the
    /// tree as it is. A row is read without a retain, which would write to
    /// it: the indexes of a table are built side by side from the same rows.
    private static func entries<Entry: IndexEntry>(
        _ definition: IndexDefinition, count: Int, row: (Int) -> Unmanaged<RowObject>
    ) -> UnsafeMutableBufferPointer<Entry> {
        let entries = UnsafeMutableBufferPointer<Entry>.allocate(capacity: count)
        for place in 0..<count {
            if place + gatherAhead < count { lens_prefetch_object(row(place + gatherAhead).toOpaque()) }
            let row = row(place)
            let entry = row._withUnsafeGuaranteedRef { Entry(key: definition.key($0), row: row, idBits: $0.idOrderBits) }
            (entries.baseAddress! + place).initialize(to: entry)
        }
        return entries
    }

    /// Whether `order` (places among `entries`) is the index's order of
    /// the entries of rows in identifier order: each of the
    /// `entries.count` places named once, keys that ascend, and places
    /// that ascend among equal keys (so identifiers do). Only the keys'
    /// fields are compared, never the rows. A stored order that no longer
    /// fits (the index's fields or their comparison changed, the file was
    /// written wrong) costs a sort, never a wrong index.
    ///
    /// That each place is named once is checked as such, not left to the
    /// comparisons, which refuse a place named twice only while the keys
    /// compare as a strict weak order: each place's entry is moved out
    /// once, and one comparison that broke that order must not free a key
    /// twice.
    private static func isOrder<Entry: IndexEntry>(_ order: [UInt32], of entries: UnsafeBufferPointer<Entry>) -> Bool {
        guard StoreState.namesEachOnce(order, count: entries.count) else { return false }
        return order.indices.dropFirst().allSatisfy { next in
            if next + gatherAhead < order.count { lens_prefetch_object(entries.baseAddress! + Int(order[next + gatherAhead])) }
            let previous = Int(order[next - 1]), place = Int(order[next])
            if Entry.fieldsPrecede(entries[place], entries[previous]) { return false }
            return previous < place || Entry.fieldsPrecede(entries[previous], entries[place])
        }
    }

    /// The tree of `entries` taken in `order` (places among them), which
    /// must be the index's order and name each place once: each entry is
    /// moved out, and the buffer left to deallocate.
    private static func tree<Entry: IndexEntry>(
        moving entries: UnsafeMutableBufferPointer<Entry>, in order: some RandomAccessCollection<Int>
    ) -> PersistentBTree<Entry, EntryMark> {
        var builder = PersistentBTree<Entry, EntryMark>.Builder(capacity: entries.count)
        append(moving: entries, in: order, to: &builder)
        return builder.tree()
    }

    /// Appends the entries at `order` (places among `entries`) to `builder`,
    /// moving each out.
    private static func append<Entry: IndexEntry>(
        moving entries: UnsafeMutableBufferPointer<Entry>, in order: some RandomAccessCollection<Int>,
        to builder: inout PersistentBTree<Entry, EntryMark>.Builder
    ) {
        guard let base = entries.baseAddress else { return }
        var ahead = order.index(order.startIndex, offsetBy: gatherAhead, limitedBy: order.endIndex) ?? order.endIndex
        for place in order {
            if ahead != order.endIndex {
                lens_prefetch_object(base + order[ahead])
                order.formIndex(after: &ahead)
            }
            builder.append((base + place).move(), EntryMark())
        }
    }

    /// How many places ahead a pass over entries or rows in an order (not
    /// where they lie) starts loading the one it will reach: the entries
    /// of a large table are megabytes, and each read in the index's order
    /// would otherwise wait on a miss. With it, the two passes of an open's
    /// index build (the check of the stored order, then the build) took an
    /// open of 100k people from 0.081–0.083 s to 0.077–0.078 s; reading a
    /// batch's arrivals' keys this far ahead took a tenth off a rebuild's
    /// CPU in 10k updates of 100k people. Tuning only.
    private static var gatherAhead: Int { 16 }

    /// The places of the index's rows, in its order, among rows numbered by
    /// `place`: what a snapshot stores.
    func order(places place: [ObjectIdentifier: UInt32]) -> [UInt32] {
        var order: [UInt32] = []
        order.reserveCapacity(count)
        switch entries {
        case let .one(tree): tree.forEachPlace { order.append(place[ObjectIdentifier($0.pointee.row.takeUnretainedValue())]!); return true }
        case let .two(tree): tree.forEachPlace { order.append(place[ObjectIdentifier($0.pointee.row.takeUnretainedValue())]!); return true }
        case let .three(tree): tree.forEachPlace { order.append(place[ObjectIdentifier($0.pointee.row.takeUnretainedValue())]!); return true }
        }
        return order
    }

    /// The bytes its tree takes on the heap, near enough (entries hold no row).
    var allocatedBytes: Int {
        switch entries {
        case let .one(tree): tree.allocatedBytes
        case let .two(tree): tree.allocatedBytes
        case let .three(tree): tree.allocatedBytes
        }
    }

    /// How many entries it holds.
    var count: Int {
        switch entries {
        case let .one(tree): tree.count
        case let .two(tree): tree.count
        case let .three(tree): tree.count
        }
    }

    /// Updates the entries for an entity changing from the row `old` to the
    /// row `new` (nil: absent). Returns false when `old`'s entry was not
    /// where `old`'s key, read again now, puts it: the key was another when
    /// the entry was made (an indexed field that is not a function of the
    /// entity's stored fields alone, as a computed property reading the
    /// clock), or the values break the index's order (a program's own
    /// ``IndexableValue`` against its rules). The entry is then left
    /// pointing at `old`, which an entry does not keep alive: the caller
    /// builds the index again from its rows (``TableStorage``).
    mutating func update(old: RowObject?, new: RowObject?) -> Bool {
        switch entries {
        case var .one(tree):
            entries = .one(PersistentBTree())
            defer { entries = .one(tree) }
            return Self.update(&tree, definition, old: old, new: new)
        case var .two(tree):
            entries = .two(PersistentBTree())
            defer { entries = .two(tree) }
            return Self.update(&tree, definition, old: old, new: new)
        case var .three(tree):
            entries = .three(PersistentBTree())
            defer { entries = .three(tree) }
            return Self.update(&tree, definition, old: old, new: new)
        }
    }

    private static func update<Entry: IndexEntry>(
        _ tree: inout PersistentBTree<Entry, EntryMark>, _ definition: IndexDefinition, old: RowObject?, new: RowObject?
    ) -> Bool {
        let oldKey = old.map(definition.key), newKey = new.map(definition.key)
        // The same key (the indexed fields did not change): one descent
        // points the entry at the new row, which an equal entry replaces in place.
        if old != nil, let new, oldKey == newKey {
            return tree.updateValue(EntryMark(), forKey: Entry(key: newKey!, row: .passUnretained(new))) != nil
        }
        let found = old.map { tree.removeValue(forPresentKey: Entry(key: oldKey!, row: .passUnretained($0))) != nil } ?? true
        if let new { tree.updateValue(EntryMark(), forKey: Entry(key: newKey!, row: .passUnretained(new))) }
        return found
    }

    /// Applies `changes`, made in that order, at once: what a put of many
    /// entities defers to its end. Few beside the entries go in one at a
    /// time; many rebuild the tree from the entries that stay, merged with
    /// the new ones sorted once: O(n + k log k) against k descents whose
    /// key comparisons dominate a bulk insert. `batch` is `changes` as a
    /// rebuild reads them, made once for all the table's indexes (made
    /// here when nil and needed).
    ///
    /// Entries are matched to changes by row identity, so every row named
    /// by `changes` must still be alive: each change holds its old row, and
    /// the row tree (or a later change's old row) its new one.
    ///
    /// Returns false when a change made one at a time missed its old
    /// entry, as ``update(old:new:)`` does; a rebuild matches by row, and
    /// misses none.
    mutating func apply(_ changes: [IndexChange], _ batch: IndexBatch?) -> Bool {
        guard !changes.isEmpty else { return true }
        guard rebuilds(for: changes) else {
            var found = true
            for change in changes { found = update(old: change.old, new: change.new.takeUnretainedValue()) && found }
            return found
        }
        let batch = batch ?? IndexBatch(changes)
        switch entries {
        case let .one(tree): entries = .one(Self.rebuilt(tree, definition, batch))
        case let .two(tree): entries = .two(Self.rebuilt(tree, definition, batch))
        case let .three(tree): entries = .three(Self.rebuilt(tree, definition, batch))
        }
        return true
    }

    /// Whether ``apply(_:_:)`` rebuilds the tree for `changes`: when there is
    /// at least one change per 16 entries. By then a change in place copies
    /// nearly every leaf anyway (a leaf holds 24 to 32 entries), one descent
    /// at a time. Tuning only: 10k updates of 100k people took the same
    /// time with 1 change per 16 to 64 entries, and 20% more with 1 per 4.
    func rebuilds(for changes: [IndexChange]) -> Bool { changes.count * 16 >= count }

    private static func rebuilt<Entry: IndexEntry>(
        _ tree: PersistentBTree<Entry, EntryMark>, _ definition: IndexDefinition, _ batch: IndexBatch
    ) -> PersistentBTree<Entry, EntryMark> {
        let leaving = batch.leaving
        return batch.arriving.withUnsafeBufferPointer { rows in
            // Made and sorted as an index build does. Equal keys go in
            // identifier order, which the rows come in. The merge reads
            // the arrivals in turn, and moves each into the tree.
            let arrivals: UnsafeMutableBufferPointer<Entry> = Self.entries(definition, count: rows.count) { rows[$0] }
            defer { arrivals.deallocate() }
            let order = sortedPermutation(UnsafeBufferPointer(arrivals))
            var merged = PersistentBTree<Entry, EntryMark>.Builder(capacity: max(0, tree.count + rows.count - leaving.count))
            var next = order.startIndex
            // Each entry that stays is read where it lies and copied once,
            // into its slot in the new tree.
            tree.forEachPlace { place in
                guard leaving.isEmpty || !leaving.contains(place.pointee.row) else { return true }
                while next < order.endIndex, arrivals[order[next]] < place.pointee {
                    merged.append((arrivals.baseAddress! + order[next]).move(), EntryMark())
                    next += 1
                }
                merged.append(copying: place, EntryMark())
                return true
            }
            Self.append(moving: arrivals, in: order[next...], to: &merged)
            return merged.tree()
        }
    }

    /// The key shared with another entity, when this is a unique index and
    /// `row` would share one.
    func conflict(with row: RowObject) -> IndexedKey? {
        guard definition.isUnique else { return nil }
        let key = definition.key(row)
        guard key.first != .null else { return nil }
        var found = false
        forEachRow(in: KeyRange(prefix: key.values)) { other in
            found = other.id != row.id
            return !found
        }
        return found ? key : nil
    }

    /// A key two entries share, other than nil (which a unique index does
    /// not compare), if any.
    func repeatedKey() -> IndexedKey? {
        var previous: IndexedKey?
        var repeated: IndexedKey?
        forEach(in: .everything) { key, _ in
            if key == previous, key.first != .null { repeated = key }
            previous = key
            return repeated == nil
        }
        return repeated
    }

    /// How many entries lie in `range`. O(log n).
    func count(in range: KeyRange) -> Int {
        ranks(of: range).count
    }

    /// The ranks of the entries in `range` (0 is the index's first). O(log n).
    func ranks(of range: KeyRange) -> Range<Int> {
        switch entries {
        case let .one(tree): Self.ranks(tree, of: range)
        case let .two(tree): Self.ranks(tree, of: range)
        case let .three(tree): Self.ranks(tree, of: range)
        }
    }

    private static func ranks<Entry: IndexEntry>(_ tree: PersistentBTree<Entry, EntryMark>, of range: KeyRange) -> Range<Int> {
        let lower = tree.rank(ofPlace: { range.isBelow($0) })
        return lower..<max(lower, tree.rank(ofPlace: { !range.isAbove($0) }))
    }

    /// ``ranks(of:)``, with the keys of the range's first and last entries
    /// when the two descents that find its ends reach them (nil otherwise,
    /// and when the range is empty).
    func ends(of range: KeyRange) -> RangeEnds {
        switch entries {
        case let .one(tree): Self.ends(tree, of: range)
        case let .two(tree): Self.ends(tree, of: range)
        case let .three(tree): Self.ends(tree, of: range)
        }
    }

    private static func ends<Entry: IndexEntry>(_ tree: PersistentBTree<Entry, EntryMark>, of range: KeyRange) -> RangeEnds {
        let lower = tree.rankAndNeighbor(ofPlace: { range.isBelow($0) }, before: false)
        let upper = tree.rankAndNeighbor(ofPlace: { !range.isAbove($0) }, before: true)
        guard lower.rank < upper.rank else { return RangeEnds(ranks: lower.rank..<lower.rank) }
        return RangeEnds(ranks: lower.rank..<upper.rank, first: lower.key?.key, last: upper.key?.key)
    }

    /// The key of the entry at `rank`, if there is one. O(log n).
    func key(atRank rank: Int) -> IndexedKey? {
        switch entries {
        case let .one(tree): tree.entry(atRank: rank)?.key.key
        case let .two(tree): tree.entry(atRank: rank)?.key.key
        case let .three(tree): tree.entry(atRank: rank)?.key.key
        }
    }

    /// Calls `body` with the row of each entry whose rank lies in `ranks`,
    /// in ascending order, until it returns false: a walk that starts a
    /// given number of entries into a range without reading them (one
    /// descent by the subtree counts). Rows are lent, as
    /// ``forEach(in:descending:startingAt:readsRows:_:)`` lends them.
    func forEachRow(ranks: Range<Int>, _ body: (RowObject) throws -> Bool) rethrows {
        switch entries {
        case let .one(tree): try Self.forEachRow(tree, ranks: ranks, body)
        case let .two(tree): try Self.forEachRow(tree, ranks: ranks, body)
        case let .three(tree): try Self.forEachRow(tree, ranks: ranks, body)
        }
    }

    private static func forEachRow<Entry: IndexEntry>(
        _ tree: PersistentBTree<Entry, EntryMark>, ranks: Range<Int>, _ body: (RowObject) throws -> Bool
    ) rethrows {
        try withExtendedLifetime(tree) {
            var cursor = PersistentBTree.Cursor(tree, atRank: ranks.lowerBound)
            // Rows lie elsewhere in memory, in no order: loading a few
            // ahead overlaps their cache misses, as a walk does.
            let rowsAhead = PersistentBTree<Entry, EntryMark>.lookahead
            var ahead = cursor
            for _ in 0..<Swift.min(rowsAhead, ranks.count) {
                ahead.withPlace { lens_prefetch_object($0.pointee.row.toOpaque()) }
                ahead.advance()
            }
            for rank in ranks {
                guard let row = cursor.withPlace({ $0.pointee.row }), try row._withUnsafeGuaranteedRef(body) else { return }
                cursor.advance()
                if rank + rowsAhead < ranks.upperBound {
                    ahead.withPlace { lens_prefetch_object($0.pointee.row.toOpaque()) }
                    ahead.advance()
                }
            }
        }
    }

    /// Finds the entries around rank `rank`, within `bounds`, whose field
    /// `field` equals the one at `rank`, by stepping from one descent by
    /// rank, never by descents by value, and calls `found` with their ranks
    /// and their rows in index order. When `found` returns true, the walk
    /// goes on downwards from the group's lower end, passing each entry of
    /// `bounds` below it (its value of `field` and its row) to `below`
    /// until that returns false, with no descent of its own. Returns
    /// false, having called neither, when the group holds more than
    /// `limit` entries from `rank` up (it included) or more than `limit`
    /// below it, where descents cost less. Rows are lent, as
    /// ``forEachRow(ranks:_:)`` lends them.
    func group(
        atRank rank: Int, within bounds: Range<Int>, field: Int, limit: Int,
        found: (Range<Int>, [Unmanaged<RowObject>]) -> Bool, below: (IndexValue, RowObject) -> Bool
    ) -> Bool {
        switch entries {
        case let .one(tree): Self.group(tree, atRank: rank, within: bounds, field: field, limit: limit, found: found, below: below)
        case let .two(tree): Self.group(tree, atRank: rank, within: bounds, field: field, limit: limit, found: found, below: below)
        case let .three(tree): Self.group(tree, atRank: rank, within: bounds, field: field, limit: limit, found: found, below: below)
        }
    }

    private static func group<Entry: IndexEntry>(
        _ tree: PersistentBTree<Entry, EntryMark>, atRank rank: Int, within bounds: Range<Int>, field: Int, limit: Int,
        found: (Range<Int>, [Unmanaged<RowObject>]) -> Bool, below: (IndexValue, RowObject) -> Bool
    ) -> Bool {
        guard bounds.contains(rank) else { return false }
        return withExtendedLifetime(tree) {
            var up = PersistentBTree.Cursor(tree, atRank: rank)
            guard let value = up.withPlace({ $0.pointee.field(field) }) else { return false }
            var down = up.turned()
            // The rows of the group's entries from `rank` up, then those
            // below it, nearest first, into one array: each cursor stops at
            // the group's end or the bounds'. False past `limit` either way.
            var group: [Unmanaged<RowObject>] = []
            let upward = bounds.upperBound - rank, downward = rank - bounds.lowerBound
            group.reserveCapacity(Swift.min(upward, limit) + Swift.min(downward, limit))
            func gather(_ cursor: inout PersistentBTree<Entry, EntryMark>.Cursor, count: Int, into group: inout [Unmanaged<RowObject>]) -> Bool {
                let start = group.count
                while group.count - start < count, let row = cursor.withPlace({ $0.pointee.field(field) == value ? $0.pointee.row : nil }), let row {
                    guard group.count - start < limit else { return false }
                    group.append(row)
                    cursor.advance()
                }
                return true
            }
            guard gather(&up, count: upward, into: &group) else { return false }
            let above = group.count
            down.advance()
            guard gather(&down, count: downward, into: &group) else { return false }
            let lower = rank - (group.count - above)
            // Above, then below nearest first: reversed whole, then the
            // part from above reversed back, that is index order.
            group.reverse()
            group[(group.count - above)...].reverse()
            guard found(lower..<rank + above, group) else { return true }
            // `down` stands at the entry just below the group, if any.
            for _ in bounds.lowerBound..<lower {
                guard down.withPlace({ entry in
                    entry.pointee.row._withUnsafeGuaranteedRef { below(entry.pointee.field(field), $0) }
                }) == true else { break }
                down.advance()
            }
            return true
        }
    }

    /// Calls `body` with the key and row of each entry in `range`, in index
    /// order (descending when asked), until it returns false. With `start`,
    /// the walk begins at the first entry whose leading fields (as many as
    /// `start` has) reach it in walking order: the entries before are not
    /// read. The row is lent, not retained: `body` keeps it only by copying
    /// the reference.
    ///
    /// `readsRows` false says `body` reads few of the rows it is lent, so
    /// they are not loaded ahead.
    func forEach(
        in range: KeyRange, descending: Bool = false, startingAt start: [IndexValue]? = nil, readsRows: Bool = true,
        _ body: (IndexedKey, RowObject) throws -> Bool
    ) rethrows {
        switch entries {
        case let .one(tree): try Self.forEach(tree, range, descending, start, readsRows) { try body($0.pointee.key, $1) }
        case let .two(tree): try Self.forEach(tree, range, descending, start, readsRows) { try body($0.pointee.key, $1) }
        case let .three(tree): try Self.forEach(tree, range, descending, start, readsRows) { try body($0.pointee.key, $1) }
        }
    }

    /// ``forEach(in:descending:startingAt:readsRows:_:)`` lending the value
    /// of the key's field `field` alone: a walk that groups by one field
    /// gets no other (the range's checks still read the fields they bound).
    func forEach(
        in range: KeyRange, field: Int, descending: Bool = false, startingAt start: [IndexValue]? = nil, readsRows: Bool = true,
        _ body: (IndexValue, RowObject) throws -> Bool
    ) rethrows {
        switch entries {
        case let .one(tree): try Self.forEach(tree, range, descending, start, readsRows) { try body($0.pointee.field(field), $1) }
        case let .two(tree): try Self.forEach(tree, range, descending, start, readsRows) { try body($0.pointee.field(field), $1) }
        case let .three(tree): try Self.forEach(tree, range, descending, start, readsRows) { try body($0.pointee.field(field), $1) }
        }
    }

    /// ``forEach(in:descending:startingAt:readsRows:_:)`` lending the rows
    /// alone, in ascending order: a query's candidates read none of the key.
    func forEachRow(in range: KeyRange, _ body: (RowObject) throws -> Bool) rethrows {
        switch entries {
        case let .one(tree): try Self.forEach(tree, range, false, nil, true) { try body($1) }
        case let .two(tree): try Self.forEach(tree, range, false, nil, true) { try body($1) }
        case let .three(tree): try Self.forEach(tree, range, false, nil, true) { try body($1) }
        }
    }

    /// The walk behind the three: `body` reads each entry where it lies.
    /// Passed by value, every entry was copied (each field, its strings
    /// retained), its key made, and both destroyed, whatever `body` read.
    private static func forEach<Entry: IndexEntry>(
        _ tree: PersistentBTree<Entry, EntryMark>, _ range: KeyRange, _ descending: Bool, _ start: [IndexValue]?,
        _ ahead: Bool, _ body: (UnsafePointer<Entry>, RowObject) throws -> Bool
    ) rethrows {
        let prefetch: ((UnsafePointer<Entry>) -> Void)? = ahead ? { prefetchRow($0) } : nil
        let isBefore = { (entry: UnsafePointer<Entry>) in comesBefore(range, start, entry, descending: descending) }
        try tree.forEachPlace(descending: descending, from: isBefore, ahead: prefetch) { entry in
            guard !(descending ? range.isBelow(entry) : range.isAbove(entry)) else { return false }
            return try entry.pointee.row._withUnsafeGuaranteedRef { try body(entry, $0) }
        }
    }

    /// Whether a walk of `range` in the direction asked, beginning at
    /// `start` (leading values, as ``forEach(in:descending:startingAt:readsRows:_:)``
    /// takes them), reaches `key` before it begins: what its descent skips.
    private static func comesBefore<Key: FieldedKey>(
        _ range: KeyRange, _ start: [IndexValue]?, _ key: UnsafePointer<Key>, descending: Bool
    ) -> Bool {
        if descending { return range.isAbove(key) || start.map { Key.compareLeading(key, $0) > 0 } == true }
        return range.isBelow(key) || start.map { Key.compareLeading(key, $0) < 0 } == true
    }

    /// Calls `body` with the value of field `field` and the row of each
    /// entry in `runs`, merged in the order of that field alone (descending
    /// when asked), until it returns false. Each run is a range that fixes
    /// every field before `field`, so its own entries come in that order;
    /// entries with equal values of `field` come in no set order, so a
    /// caller that needs one sorts each group of them. With `starts` (one
    /// per run), each run begins as
    /// ``forEach(in:descending:startingAt:readsRows:_:)`` begins. Reads
    /// O(k log n) to start k runs, then O(log k) per entry: a query ordered
    /// by `field` stops after offset + limit entries, however many the runs
    /// hold. Rows are lent, as that walk lends them.
    func forEachMerged(
        runs: [KeyRange], field: Int, descending: Bool, startingAt starts: [[IndexValue]]? = nil,
        _ body: (IndexValue, RowObject) throws -> Bool
    ) rethrows {
        switch entries {
        case let .one(tree): try Self.forEachMerged(tree, runs, field, descending, starts, body)
        case let .two(tree): try Self.forEachMerged(tree, runs, field, descending, starts, body)
        case let .three(tree): try Self.forEachMerged(tree, runs, field, descending, starts, body)
        }
    }

    private static func forEachMerged<Entry: IndexEntry>(
        _ tree: PersistentBTree<Entry, EntryMark>, _ runs: [KeyRange], _ field: Int, _ descending: Bool,
        _ starts: [[IndexValue]]?, _ body: (IndexValue, RowObject) throws -> Bool
    ) rethrows {
        // Each live run's cursor, its entry, and that entry's value of `field`.
        var cursors: [PersistentBTree<Entry, EntryMark>.Cursor] = []
        var heads: [(entry: Entry, value: IndexValue, range: KeyRange)] = []
        func head(_ cursor: PersistentBTree<Entry, EntryMark>.Cursor, _ range: KeyRange) -> (Entry, IndexValue, KeyRange)? {
            guard let (entry, _) = cursor.entry else { return nil }
            guard !(descending ? range.isBelow(entry) : range.isAbove(entry)) else { return nil }
            lens_prefetch_object(entry.row.toOpaque())
            return (entry, entry.field(field), range)
        }
        try withExtendedLifetime(tree) {
            for (run, range) in runs.enumerated() {
                let start = starts?[run]
                let cursor = PersistentBTree.Cursor(tree, descending: descending) { entry in
                    withUnsafePointer(to: entry) { comesBefore(range, start, $0, descending: descending) }
                }
                guard let first = head(cursor, range) else { continue }
                cursors.append(cursor)
                heads.append(first)
            }
            // A binary heap of runs, the one whose entry comes next on top.
            func comesFirst(_ a: Int, _ b: Int) -> Bool {
                descending ? heads[b].value < heads[a].value : heads[a].value < heads[b].value
            }
            var heap = Array(heads.indices)
            func siftDown(_ start: Int) { heapSiftDown(&heap, from: start, above: comesFirst) }
            for position in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(position) }
            while let run = heap.first {
                guard try heads[run].entry.row._withUnsafeGuaranteedRef({ try body(heads[run].value, $0) }) else { return }
                cursors[run].advance()
                if let next = head(cursors[run], heads[run].range) {
                    heads[run] = next
                } else {
                    heap[0] = heap[heap.count - 1]
                    heap.removeLast()
                }
                siftDown(0)
            }
        }
    }

    /// The distinct values of field `field` among the entries at
    /// `ends.ranks`, a range fixing the fields before it to `prefix`, in
    /// ascending order, each with the ranks of its entries: a skip scan, one
    /// descent past each value's last entry, which most often ends in the
    /// leaf holding the next value's first (else one descent by the subtree
    /// counts finds it), never a walk of the entries between. A range
    /// whose first and last entries are known and hold one value is one
    /// run, found with no descent. Nil once there are more than `limit`.
    func distinctRuns(within ends: RangeEnds, prefix: [IndexValue], field: Int, limit: Int) -> [(value: IndexValue, ranks: Range<Int>)]? {
        let ranks = ends.ranks
        // Values ascend through the range: first and last equal, it is one run.
        if limit > 0, let first = ends.first?[field], first == ends.last?[field] { return [(first, ranks)] }
        var runs: [(value: IndexValue, ranks: Range<Int>)] = []
        var start = ranks.lowerBound
        // The key at `start`, when the descent that found `start` reached it.
        var known = ends.first
        while start < ranks.upperBound, let key = known ?? key(atRank: start) {
            guard runs.count < limit else { return nil }
            let value = key[field]
            let (past, next) = firstPast(KeyRange(prefix: prefix.appending(value)))
            // The entry at `start` is in its own value's run.
            let end = Swift.min(ranks.upperBound, Swift.max(start + 1, past))
            runs.append((value, start..<end))
            start = end
            known = end == past ? next : nil
        }
        return runs
    }

    /// The rank of the first entry after `range`, with that entry's key when
    /// the descent reaches it. O(log n).
    private func firstPast(_ range: KeyRange) -> (rank: Int, key: IndexedKey?) {
        switch entries {
        case let .one(tree): Self.firstPast(tree, range)
        case let .two(tree): Self.firstPast(tree, range)
        case let .three(tree): Self.firstPast(tree, range)
        }
    }

    private static func firstPast<Entry: IndexEntry>(_ tree: PersistentBTree<Entry, EntryMark>, _ range: KeyRange) -> (rank: Int, key: IndexedKey?) {
        let found = tree.rankAndNeighbor(ofPlace: { !range.isAbove($0) }, before: false)
        return (found.rank, found.key?.key)
    }

    /// Starts loading the row of an entry a walk will soon pass on. An
    /// index orders rows by key, not by where they lie in memory, so a walk
    /// would otherwise wait on a cache miss per row; with it, a query on
    /// 1M people that reads ~950 rows runs about a quarter faster. Walks of
    /// the row tree do without: their rows mostly lie in the order they
    /// were made, which the CPU follows on its own, and there the hint cost
    /// more than it saved.
    private static func prefetchRow<Entry: IndexEntry>(_ entry: UnsafePointer<Entry>) {
        lens_prefetch_object(entry.pointee.row.toOpaque())
    }

    /// Checks the tree's shape and that each entry's key is its row's.
    func checkInvariants(rows: (IndexValue) -> RowObject?) -> String? {
        switch entries {
        case let .one(tree): Self.check(tree, definition, rows)
        case let .two(tree): Self.check(tree, definition, rows)
        case let .three(tree): Self.check(tree, definition, rows)
        }
    }

    private static func check<Entry: IndexEntry>(
        _ tree: PersistentBTree<Entry, EntryMark>, _ definition: IndexDefinition, _ rows: (IndexValue) -> RowObject?
    ) -> String? {
        // A separator pointing at a row the version no longer holds would
        // read freed memory when a descent compares identifiers.
        let identical = { (a: Entry, b: Entry) in a == b && a.row.toOpaque() == b.row.toOpaque() }
        if let problem = tree.checkInvariants(identical: identical) { return problem }
        var problem: String?
        tree.forEach { entry, _ in
            let row = entry.row.takeUnretainedValue()
            if rows(row.id) !== row { problem = "an entry points at a row the table does not hold" }
            if definition.key(row) != entry.key { problem = "an entry's key is not its row's" }
            return problem == nil
        }
        return problem
    }
}
