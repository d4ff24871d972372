/// A secondary index of a typed table, as code declares it:
/// `.on(\.city)`, `.on(\.city, \.age)`, `.on(\.city, \.age, \.score)`,
/// `.unique(\.email)`.
///
/// Index definitions live in code, not on disk: opening a table builds
/// its indexes from the entities, so adding or dropping one needs no
/// migration. A snapshot stores each index's order, which an open uses
/// instead of sorting while it is still the index's order.
///
/// An indexed field should be a function of the entity's stored fields.
/// The index does not follow a key that changes while the entity does not
/// (a computed property reading the clock or other state): queries find
/// the entity under the key its entry was made with, and the first change
/// of it that misses that entry builds the whole index again from the
/// table's rows, in O(n log n).
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
        let read = fieldReader(field)
        return Index(keyPaths: [field], isUnique: false) { .one(read($0).indexValue) }
    }

    /// An index on two fields, ordered by the first, then the second: serves
    /// equality on the first with any condition on the second.
    @inlinable
    public static func on<A: IndexableValue, B: IndexableValue>(
        _ first: KeyPath<T, A> & Sendable, _ second: KeyPath<T, B> & Sendable
    ) -> Index {
        let (readFirst, readSecond) = (fieldReader(first), fieldReader(second))
        return Index(keyPaths: [first, second], isUnique: false) { .two(readFirst($0).indexValue, readSecond($0).indexValue) }
    }

    /// An index on three fields, ordered by each in turn. Serves what the
    /// two-field index on its first two serves, and an order by its third
    /// field within equality on the first and equality, `in` or a range on
    /// the second: `city == c && age in a...b`, by score, walks one run of
    /// scores per age and merges them, stopping at offset + limit.
    @inlinable
    public static func on<A: IndexableValue, B: IndexableValue, C: IndexableValue>(
        _ first: KeyPath<T, A> & Sendable, _ second: KeyPath<T, B> & Sendable, _ third: KeyPath<T, C> & Sendable
    ) -> Index {
        let (readFirst, readSecond, readThird) = (fieldReader(first), fieldReader(second), fieldReader(third))
        return Index(keyPaths: [first, second, third], isUnique: false) {
            .three(readFirst($0).indexValue, readSecond($0).indexValue, readThird($0).indexValue)
        }
    }

    /// An index on one field whose values no two entities may share: a put
    /// that would break it throws ``TableError/uniqueViolation(index:value:)``.
    /// `nil` values are not compared (any number of entities may have none).
    @inlinable
    public static func unique<V: IndexableValue>(_ field: KeyPath<T, V> & Sendable) -> Index {
        let read = fieldReader(field)
        return Index(keyPaths: [field], isUnique: true) { .one(read($0).indexValue) }
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
    /// ``keyPaths`` as plain key paths, which compare with `==`: made once
    /// here, where the planner would make them for every query.
    /// `nonisolated(unsafe)` is sound: these are the objects of `keyPaths`,
    /// which are `Sendable`, typed without it (key paths never change).
    nonisolated(unsafe) let paths: [AnyKeyPath]
    let description: String
    /// The key of one row.
    let key: @Sendable (RowObject) -> IndexedKey

    init(name: String, isUnique: Bool, keyPaths: [AnyKeyPath & Sendable], description: String,
         key: @escaping @Sendable (RowObject) -> IndexedKey) {
        self.name = name
        self.isUnique = isUnique
        self.keyPaths = keyPaths
        paths = keyPaths.map { $0 as AnyKeyPath }
        self.description = description
        self.key = key
    }

    /// Whether two definitions index the same fields the same way.
    func sameDefinition(as other: IndexDefinition) -> Bool {
        isUnique == other.isUnique && paths == other.paths
    }
}

/// An index key: one value, or two or three for an index on as many
/// fields (compared field by field). Fixed in size, so making one
/// allocates nothing.
@usableFromInline
enum IndexedKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    case one(IndexValue)
    case two(IndexValue, IndexValue)
    case three(IndexValue, IndexValue, IndexValue)

    var values: [IndexValue] {
        switch self {
        case let .one(value): [value]
        case let .two(first, second): [first, second]
        case let .three(first, second, third): [first, second, third]
        }
    }

    /// How many fields the key has.
    var count: Int {
        switch self {
        case .one: 1
        case .two: 2
        case .three: 3
        }
    }

    /// The value of field `position`.
    subscript(position: Int) -> IndexValue {
        switch self {
        case let .one(value): value
        case let .two(first, second): position == 0 ? first : second
        case let .three(first, second, third): position == 0 ? first : (position == 1 ? second : third)
        }
    }

    var first: IndexValue { self[0] }

    @usableFromInline
    static func < (a: IndexedKey, b: IndexedKey) -> Bool {
        if case let .one(x) = a, case let .one(y) = b { return x < y }
        for position in 0..<Swift.min(a.count, b.count) {
            let order = IndexValue.order(a[position], b[position])
            if order != 0 { return order < 0 }
        }
        return a.count < b.count
    }

    @usableFromInline
    var description: String {
        switch self {
        case let .one(value): "\(value)"
        case let .two(first, second): "(\(first), \(second))"
        case let .three(first, second, third): "(\(first), \(second), \(third))"
        }
    }
}

/// A contiguous stretch of an index: keys equal to `prefix` on their first
/// fields and, on the field after, within the bounds. Every filter an index
/// serves (equality, ranges, equalities then a range on a composite index)
/// is one, and so is the whole index.
struct KeyRange: Sendable, Hashable, CustomStringConvertible {
    struct Bound: Sendable, Hashable {
        var value: IndexValue
        var inclusive: Bool
    }
    var prefix: [IndexValue] = []
    var lower: Bound?
    var upper: Bound?

    static let everything = KeyRange()

    /// Whether `key` comes before the range. Generic over the key's form,
    /// so that a descent asks of each index entry it passes in place,
    /// reading only the fields it compares, without making a key of it.
    func isBelow<Key: FieldedKey>(_ key: Key) -> Bool {
        withUnsafePointer(to: key) { isBelow($0) }
    }

    /// ``isBelow(_:)`` of the key at `place`, read there: a descent asks
    /// it of the entries in their nodes, which a key passed by value would
    /// copy first (retaining what its fields hold) wherever the closure
    /// asking is not inlined.
    func isBelow<Key: FieldedKey>(_ place: UnsafePointer<Key>) -> Bool {
        // Equal fields, the most common on a descent's path, take one
        // comparison, not two.
        let order = Key.compareLeading(place, prefix)
        if order != 0 { return order < 0 }
        guard let lower, prefix.count < place.pointee.fieldCount else { return false }
        let value = place.pointee.field(prefix.count)
        return value < lower.value || (!lower.inclusive && value == lower.value)
    }

    /// Whether `key` comes after the range, asked as ``isBelow(_:)`` is.
    func isAbove<Key: FieldedKey>(_ key: Key) -> Bool {
        withUnsafePointer(to: key) { isAbove($0) }
    }

    /// ``isAbove(_:)`` of the key at `place`, read there, as
    /// ``isBelow(_:)-(UnsafePointer<Key>)`` reads it.
    func isAbove<Key: FieldedKey>(_ place: UnsafePointer<Key>) -> Bool {
        let order = Key.compareLeading(place, prefix)
        if order != 0 { return order > 0 }
        guard let upper, prefix.count < place.pointee.fieldCount else { return false }
        let value = place.pointee.field(prefix.count)
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
