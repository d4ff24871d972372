/// The rows of one version of a table, by identifier: a persistent B-tree
/// keyed by the identifiers as integers while every one is an integer (as
/// `Int`, `Int64` and the other integer identifiers are, up to `Int64.max`),
/// by their ``IndexValue`` otherwise.
///
/// An integer key takes 8 bytes where an ``IndexValue`` takes 24, and
/// compares as one instruction where an ``IndexValue`` switches on both
/// cases first. A point read's descent then searches a leaf's keys in 4
/// cache lines instead of 12, and a commit that copies or frees a leaf
/// copies or drops its keys as plain bytes (its rows are retained or
/// released as before). The two orders agree: ``IndexValue`` orders
/// integers as integers.
///
/// A tree of integers becomes a tree of values, once, when an identifier
/// that is not an integer goes in (a `UInt64` above `Int64.max`); it never
/// goes back. Either way it holds the same entries in the same order, and
/// finds, replaces and removes the same ones for any identifier.
///
/// A value type over persistent trees, as ``TableStorage`` is: a copy is
/// O(1) and shares every node; a change copies the nodes it changes.
struct RowTree: Sendable {
    private enum Keys: Sendable {
        case integers(PersistentBTree<Int64, RowObject>)
        case values(PersistentBTree<IndexValue, RowObject>)
    }

    private var keys = Keys.integers(PersistentBTree())

    init() {}

    /// The tree of `count` rows, `row(place)` with the identifier
    /// `id(place)`, which ascend with `place`: built bottom-up, no descent
    /// per row. `row` is asked for each place once, in order, so it may
    /// hand each row over (``DecodedRows/moveAll(_:)``).
    init(count: Int, id: (Int) -> IndexValue, row: (Int) -> RowObject) {
        if (0..<count).allSatisfy({ Self.integer(id($0)) != nil }) {
            var built = PersistentBTree<Int64, RowObject>.Builder(capacity: count)
            for place in 0..<count { built.append(Self.integer(id(place))!, row(place)) }
            keys = .integers(built.tree())
        } else {
            var built = PersistentBTree<IndexValue, RowObject>.Builder(capacity: count)
            for place in 0..<count { built.append(id(place), row(place)) }
            keys = .values(built.tree())
        }
    }

    /// The integer an identifier is, if it is one.
    private static func integer(_ id: IndexValue) -> Int64? {
        if case let .int(value) = id { value } else { nil }
    }

    /// The key of `tree` that `id` equals as ``IndexValue`` orders them:
    /// `id` itself when an integer, else the integer it ties with (a double
    /// of integral value), as a tree of values would find it by its order.
    /// Identifiers of one table are all of one kind, so the second is for
    /// callers that pass another; it costs a descent of its own.
    private static func key(_ id: IndexValue, in tree: PersistentBTree<Int64, RowObject>) -> Int64? {
        if let key = integer(id) { return key }
        return tiedKey(id, in: tree)
    }

    /// ``key(_:in:)`` of an identifier that is not an integer. Out of line,
    /// so that its copy of the tree (the cursor it makes holds one) is not
    /// made on the way to it.
    @inline(never)
    private static func tiedKey(_ id: IndexValue, in tree: PersistentBTree<Int64, RowObject>) -> Int64? {
        guard let (key, _) = tree.entry(atRank: tree.rank(of: { IndexValue.int($0) < id })), IndexValue.int(key) == id else { return nil }
        return key
    }

    var count: Int {
        switch keys {
        case let .integers(tree): tree.count
        case let .values(tree): tree.count
        }
    }

    var isEmpty: Bool { count == 0 }

    /// The bytes the tree's nodes take on the heap, near enough.
    var allocatedBytes: Int {
        switch keys {
        case let .integers(tree): tree.allocatedBytes
        case let .values(tree): tree.allocatedBytes
        }
    }

    /// The row of the entity `id`, if any.
    func value(for id: IndexValue) -> RowObject? {
        unretainedValue(for: id)?.takeUnretainedValue()
    }

    /// ``value(for:)`` unretained, as ``PersistentBTree/unretainedValue(for:)``
    /// lends it: valid while this tree lives unchanged.
    func unretainedValue(for id: IndexValue) -> Unmanaged<RowObject>? {
        switch keys {
        case let .integers(tree):
            // An integer goes straight down: with `key(_:in:)` inlined here,
            // the tree was copied for its other path (a retain and a release
            // of the root on every read, a tenth of a point read's time).
            if let key = Self.integer(id) { return tree.unretainedValue(for: key) }
            guard let key = Self.tiedKey(id, in: tree) else { return nil }
            return tree.unretainedValue(for: key)
        case let .values(tree):
            return tree.unretainedValue(for: id)
        }
    }

    /// Inserts or replaces the row of the entity `id`; returns the row replaced.
    @discardableResult
    mutating func updateValue(_ row: RowObject, forKey id: IndexValue) -> RowObject? {
        switch keys {
        case var .integers(tree):
            guard let key = Self.key(id, in: tree) else {
                keys = .values(Self.values(of: tree))
                return updateValue(row, forKey: id)
            }
            // Out of `keys` while it changes, so that only `tree` holds its
            // nodes and a change makes them in place.
            keys = .integers(PersistentBTree())
            defer { keys = .integers(tree) }
            return tree.updateValue(row, forKey: key)
        case var .values(tree):
            keys = .values(PersistentBTree())
            defer { keys = .values(tree) }
            return tree.updateValue(row, forKey: id)
        }
    }

    /// Removes the row of the entity `id`; returns it.
    @discardableResult
    mutating func removeValue(forKey id: IndexValue) -> RowObject? {
        switch keys {
        case var .integers(tree):
            guard let key = Self.key(id, in: tree) else { return nil }
            keys = .integers(PersistentBTree())
            defer { keys = .integers(tree) }
            return tree.removeValue(forKey: key)
        case var .values(tree):
            keys = .values(PersistentBTree())
            defer { keys = .values(tree) }
            return tree.removeValue(forKey: id)
        }
    }

    /// Calls `body` with each identifier and its row, in identifier order,
    /// until it returns false. The row is lent, not retained (the tree
    /// holds it for the call): a scan then writes to no row's memory, where
    /// a retain and a release of each dirtied the cache line of every row
    /// it passed. `body` keeps a row only by copying the reference.
    func forEach(_ body: (IndexValue, RowObject) throws -> Bool) rethrows {
        switch keys {
        case let .integers(tree): try tree.forEachUnretained { key, row in try row._withUnsafeGuaranteedRef { try body(.int(key), $0) } }
        case let .values(tree): try tree.forEachUnretained { key, row in try row._withUnsafeGuaranteedRef { try body(key, $0) } }
        }
    }

    /// The tree's shape, checked: nil when sound, else what is wrong.
    func checkInvariants() -> String? {
        switch keys {
        case let .integers(tree): tree.checkInvariants()
        case let .values(tree): tree.checkInvariants()
        }
    }

    /// Whether the identifiers are held as integers: for tests.
    var holdsIntegers: Bool {
        if case .integers = keys { true } else { false }
    }

    /// The root node's identity (``PersistentBTree/rootIdentity``): for tests.
    var rootIdentity: ObjectIdentifier? {
        switch keys {
        case let .integers(tree): tree.rootIdentity
        case let .values(tree): tree.rootIdentity
        }
    }

    /// The tree of values holding the entries of `integers`.
    private static func values(of integers: PersistentBTree<Int64, RowObject>) -> PersistentBTree<IndexValue, RowObject> {
        var built = PersistentBTree<IndexValue, RowObject>.Builder(capacity: integers.count)
        integers.forEach { key, row in
            built.append(.int(key), row)
            return true
        }
        return built.tree()
    }
}
