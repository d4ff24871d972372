/// A secondary index of a typed table, as code declares it:
/// `.on(\.city)`, `.on(\.city, \.age)`, `.unique(\.email)`.
///
/// Index definitions live in code, not on disk: opening a table rebuilds
/// its indexes from the entities, so adding or dropping one needs no
/// migration.
public struct Index<T: Entity>: Sendable, CustomStringConvertible {
    /// The indexed fields, in order.
    public let keyPaths: [PartialKeyPath<T> & Sendable]
    /// Whether two entities may not share a key.
    public let isUnique: Bool
    /// The key of one row. Built `@inlinable`, so it is compiled in the
    /// program's module and reads the fields in the row's box directly.
    @usableFromInline let rowKey: @Sendable (RowObject) -> IndexedKey

    @usableFromInline
    init(keyPaths: [PartialKeyPath<T> & Sendable], isUnique: Bool, rowKey: @escaping @Sendable (RowObject) -> IndexedKey) {
        self.keyPaths = keyPaths
        self.isUnique = isUnique
        self.rowKey = rowKey
    }

    /// A name for plans and errors: `city`, `city+age`.
    public var name: String {
        keyPaths.map { path in
            let text = "\(path)"
            return text.split(separator: ".", maxSplits: 1).last.map(String.init) ?? text
        }.joined(separator: "+")
    }

    public var description: String { (isUnique ? "unique " : "") + "index \(name)" }

    /// An index on one field.
    @inlinable
    public static func on<V: IndexableValue>(_ field: KeyPath<T, V> & Sendable) -> Index {
        Index(keyPaths: [field], isUnique: false) { .one(unsafeDowncast($0, to: RowBox<T>.self).value[keyPath: field].indexValue) }
    }

    /// An index on two fields, ordered by the first, then the second: serves
    /// equality on the first with any condition on the second.
    @inlinable
    public static func on<A: IndexableValue, B: IndexableValue>(
        _ first: KeyPath<T, A> & Sendable, _ second: KeyPath<T, B> & Sendable
    ) -> Index {
        Index(keyPaths: [first, second], isUnique: false) {
            let entity = unsafeDowncast($0, to: RowBox<T>.self)
            return .many([entity.value[keyPath: first].indexValue, entity.value[keyPath: second].indexValue])
        }
    }

    /// An index on one field whose values no two entities may share: a put
    /// that would break it throws ``TableError/uniqueViolation(index:value:)``.
    /// `nil` values are not compared (any number of entities may have none).
    @inlinable
    public static func unique<V: IndexableValue>(_ field: KeyPath<T, V> & Sendable) -> Index {
        Index(keyPaths: [field], isUnique: true) { .one(unsafeDowncast($0, to: RowBox<T>.self).value[keyPath: field].indexValue) }
    }

    /// The definition as a table's storage holds it, without `T`.
    var erased: IndexDefinition {
        IndexDefinition(name: name, isUnique: isUnique, keyPaths: keyPaths, description: description, key: rowKey)
    }
}

/// An index definition without its entity type.
struct IndexDefinition: Sendable, CustomStringConvertible {
    let name: String
    let isUnique: Bool
    let keyPaths: [AnyKeyPath & Sendable]
    let description: String
    /// The key of one row.
    let key: @Sendable (RowObject) -> IndexedKey

    /// Whether two definitions index the same fields the same way.
    func sameDefinition(as other: IndexDefinition) -> Bool {
        isUnique == other.isUnique && keyPaths.map { $0 as AnyKeyPath } == other.keyPaths.map { $0 as AnyKeyPath }
    }
}

/// An index key: one value, or several for a multi-field index (compared
/// field by field).
@usableFromInline
enum IndexedKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    case one(IndexValue)
    case many([IndexValue])

    var values: [IndexValue] {
        switch self {
        case let .one(value): [value]
        case let .many(values): values
        }
    }

    var first: IndexValue {
        switch self {
        case let .one(value): value
        case let .many(values): values[0]
        }
    }

    @usableFromInline
    static func < (a: IndexedKey, b: IndexedKey) -> Bool {
        switch (a, b) {
        case let (.one(x), .one(y)): x < y
        default: a.values.lexicographicallyPrecedes(b.values)
        }
    }

    @usableFromInline
    var description: String {
        switch self {
        case let .one(value): "\(value)"
        case let .many(values): "(" + values.map(\.description).joined(separator: ", ") + ")"
        }
    }
}

/// One entry of an index: the key, then the entity's identifier, so entries
/// with equal keys are in identifier order and every entry is distinct.
struct IndexEntry: Sendable, Comparable {
    var key: IndexedKey
    var id: IndexValue

    static func < (a: IndexEntry, b: IndexEntry) -> Bool {
        a.key < b.key || (a.key == b.key && a.id < b.id)
    }

    static func == (a: IndexEntry, b: IndexEntry) -> Bool { a.key == b.key && a.id == b.id }
}

/// One index of one version of a table: its definition, and its entries,
/// each pointing at its row.
struct IndexStorage: Sendable {
    let definition: IndexDefinition
    var entries = PersistentBTree<IndexEntry, RowObject>()

    init(_ definition: IndexDefinition) { self.definition = definition }

    /// Updates the entries for the entity `id` changing from `old` to `new`.
    mutating func update(id: IndexValue, old: RowObject?, new: RowObject?) {
        let oldKey = old.map(definition.key), newKey = new.map(definition.key)
        if oldKey != nil, oldKey == newKey, let new {
            entries.updateValue(new, forKey: IndexEntry(key: newKey!, id: id))
            return
        }
        if let oldKey { entries.removeValue(forKey: IndexEntry(key: oldKey, id: id)) }
        if let newKey, let new { entries.updateValue(new, forKey: IndexEntry(key: newKey, id: id)) }
    }

    /// The key shared with another entity, when this is a unique index and
    /// `row` (the entity `id`) would share one.
    func conflict(with row: RowObject, id: IndexValue) -> IndexedKey? {
        guard definition.isUnique else { return nil }
        let key = definition.key(row)
        guard key.first != .null else { return nil }
        var found = false
        entries.forEach(from: { $0.key < key }) { entry, _ in
            guard entry.key == key else { return false }
            found = entry.id != id
            return !found
        }
        return found ? key : nil
    }

    /// How many entries lie in `range`. O(log n).
    func count(in range: KeyRange) -> Int {
        entries.rank(of: { !range.isAbove($0.key) }) - entries.rank(of: { range.isBelow($0.key) })
    }

    /// Calls `body` with the entries in `range`, in index order (descending
    /// when asked), until it returns false. With `start`, the walk begins at
    /// the first entry whose leading fields (as many as `start` has) reach
    /// it in walking order: the entries before are not read.
    func forEach(
        in range: KeyRange, descending: Bool = false, startingAt start: [IndexValue]? = nil,
        _ body: (IndexEntry, RowObject) throws -> Bool
    ) rethrows {
        let leading = { (key: IndexedKey, start: [IndexValue]) in key.values.prefix(start.count) }
        if descending {
            try entries.forEachReversed(from: { entry in
                range.isAbove(entry.key) || start.map { $0.lexicographicallyPrecedes(leading(entry.key, $0)) } == true
            }) { entry, row in
                guard !range.isBelow(entry.key) else { return false }
                return try body(entry, row)
            }
        } else {
            try entries.forEach(from: { entry in
                range.isBelow(entry.key) || start.map { leading(entry.key, $0).lexicographicallyPrecedes($0) } == true
            }) { entry, row in
                guard !range.isAbove(entry.key) else { return false }
                return try body(entry, row)
            }
        }
    }
}

/// A contiguous stretch of an index: keys equal to `prefix` on their first
/// fields and, on the field after, within the bounds. Every filter an index
/// serves (equality, ranges, equality then a range on a two-field index)
/// is one, and so is the whole index.
struct KeyRange: Sendable, Equatable, CustomStringConvertible {
    struct Bound: Sendable, Equatable {
        var value: IndexValue
        var inclusive: Bool
    }
    var prefix: [IndexValue] = []
    var lower: Bound?
    var upper: Bound?

    static let everything = KeyRange()

    /// Whether `key` comes before the range.
    func isBelow(_ key: IndexedKey) -> Bool {
        let values = key.values
        for (index, value) in prefix.enumerated() {
            if values[index] < value { return true }
            if value < values[index] { return false }
        }
        guard let lower, prefix.count < values.count else { return false }
        let value = values[prefix.count]
        return value < lower.value || (!lower.inclusive && value == lower.value)
    }

    /// Whether `key` comes after the range.
    func isAbove(_ key: IndexedKey) -> Bool {
        let values = key.values
        for (index, value) in prefix.enumerated() {
            if value < values[index] { return true }
            if values[index] < value { return false }
        }
        guard let upper, prefix.count < values.count else { return false }
        let value = values[prefix.count]
        return upper.value < value || (!upper.inclusive && value == upper.value)
    }

    /// Whether no key can lie in the range: its lower bound is above its upper.
    var isEmpty: Bool {
        guard let lower, let upper else { return false }
        return upper.value < lower.value || (upper.value == lower.value && !(lower.inclusive && upper.inclusive))
    }

    var description: String {
        var parts = prefix.map { "= \($0)" }
        if let lower { parts.append((lower.inclusive ? ">= " : "> ") + "\(lower.value)") }
        if let upper { parts.append((upper.inclusive ? "<= " : "< ") + "\(upper.value)") }
        return parts.isEmpty ? "all" : parts.joined(separator: ", ")
    }
}
