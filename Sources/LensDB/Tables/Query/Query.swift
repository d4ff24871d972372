/// A query over one typed table: a value describing which entities, in
/// which order, which page. Building it does nothing; ``all()`` and the
/// other results plan it against the table's indexes and run it on exactly
/// one committed version (or the transaction's, for `tx[people].query`).
///
/// The pipeline is filter → order → `after` → offset → limit → group.
///
/// ```swift
/// let page = try people.query
///     .filter(\.city == "Paris" && \.age >= 18)
///     .sorted(by: \.score, .descending).then(by: \.name)
///     .offset(40).limit(20)
///     .all()
/// ```
///
/// Thread-safety: a `Query` is a `Sendable` value; run it from any thread.
public struct Query<T: Entity>: Sendable {
    @usableFromInline
    enum Source: Sendable {
        /// The store's latest committed version when the query runs.
        case latest
        /// One given version: a transaction's.
        case state(StoreState)
    }

    @usableFromInline let table: Table<T>
    @usableFromInline var source: Source
    @usableFromInline var filter: Filter<T>?
    @usableFromInline var order: [SortKey] = []
    @usableFromInline var identifierOrder: [T.ID]?
    @usableFromInline var offsetCount = 0
    @usableFromInline var limitCount: Int?
    @usableFromInline var afterEntity: T?
    /// The relationships ``graph()`` follows.
    var inclusions = Inclusions<T>()

    init(table: Table<T>, source: Source) {
        self.table = table
        self.source = source
    }

    /// Keeps the entities `filter` holds for, in addition to earlier filters.
    @inlinable
    public func filter(_ filter: Filter<T>) -> Query {
        var query = self
        query.filter = self.filter.map { $0 && filter } ?? filter
        return query
    }

    /// Orders by `field`, replacing any earlier order. Ties end in
    /// identifier order, so every order is total and stable.
    @inlinable
    public func sorted<V: Comparable & Sendable>(by field: KeyPath<T, V> & Sendable, _ direction: SortDirection = .ascending) -> Query {
        var query = self
        query.order = [SortKey(field, direction)]
        query.identifierOrder = nil
        return query
    }

    /// Orders by an optional field: `nil` first when ascending, last when descending.
    @inlinable
    public func sorted<V: Comparable & Sendable>(by field: KeyPath<T, V?> & Sendable, _ direction: SortDirection = .ascending) -> Query {
        var query = self
        query.order = [SortKey(field, direction)]
        query.identifierOrder = nil
        return query
    }

    /// Breaks ties of the order so far by `field`.
    @inlinable
    public func then<V: Comparable & Sendable>(by field: KeyPath<T, V> & Sendable, _ direction: SortDirection = .ascending) -> Query {
        var query = self
        query.order.append(SortKey(field, direction))
        return query
    }

    /// Breaks ties of the order so far by an optional field.
    @inlinable
    public func then<V: Comparable & Sendable>(by field: KeyPath<T, V?> & Sendable, _ direction: SortDirection = .ascending) -> Query {
        var query = self
        query.order.append(SortKey(field, direction))
        return query
    }

    /// Puts the entities with these identifiers first, in this order, then
    /// the rest by identifier. Identifiers that match nothing are ignored.
    public func sorted(byIdentifiers identifiers: [T.ID]) -> Query {
        var query = self
        query.order = []
        query.identifierOrder = identifiers
        return query
    }

    /// Skips the first `count` results.
    @inlinable
    public func offset(_ count: Int) -> Query {
        var query = self
        query.offsetCount = count
        return query
    }

    /// Returns at most `count` results.
    @inlinable
    public func limit(_ count: Int) -> Query {
        var query = self
        query.limitCount = count
        return query
    }

    /// Keyset pagination: only results strictly after `entity` in this
    /// query's order (which ends in identifier order, so "after" is exact).
    public func after(_ entity: T) -> Query {
        var query = self
        query.afterEntity = entity
        return query
    }
}

/// Which way an order runs.
public enum SortDirection: Sendable, Equatable {
    case ascending, descending
}

/// One key of a query's order.
///
/// Built `@inlinable`, so its field order is compiled in the program's
/// module for its entity and field types; it reads the field in the row's
/// box, so sorting copies no entity.
@usableFromInline
struct SortKey: Sendable {
    @usableFromInline let keyPath: AnyKeyPath & Sendable
    @usableFromInline let descending: Bool
    @usableFromInline let isOptional: Bool
    /// Reads and compares the field of rows.
    @usableFromInline let field: any FieldOrder
    /// Whether the field's `<` is its index's order, so an index on it can
    /// serve this order.
    @usableFromInline var indexOrdered: Bool { field.hasValues }

    @inlinable
    init<T: Entity, V: Comparable & Sendable>(_ field: KeyPath<T, V> & Sendable, _ direction: SortDirection) {
        keyPath = field
        descending = direction == .descending
        isOptional = false
        self.field = FieldSort<T, V, V>(field) { $0 }
    }

    @inlinable
    init<T: Entity, V: Comparable & Sendable>(_ field: KeyPath<T, V?> & Sendable, _ direction: SortDirection) {
        keyPath = field
        descending = direction == .descending
        isOptional = true
        self.field = FieldSort<T, V, V?>(field) { $0 }
    }
}

/// The order of one field of a table's entities, as a sort reads it: an
/// object for each sort key, made with the query in the program's module,
/// holding the closure that a sort calls for each row (the row's index
/// value, or for a field without one, its comparison), compiled there for
/// the entity's and the field's types.
@usableFromInline
protocol FieldOrder: AnyObject, Sendable {
    /// Whether ``value(of:)`` gives the field's order: its `<` is the
    /// index order (``IndexOrderedValue``).
    var hasValues: Bool { get }
    /// The field of the entity in `row` as indexes order it (`.null` for a
    /// nil optional); asked only when ``hasValues``.
    func value(of row: RowObject) -> IndexValue
    /// -1, 0 or 1 as `a` comes before, with, or after `b` in ascending
    /// order; a nil optional comes first.
    func compare(_ a: RowObject, _ b: RowObject) -> Int
}

/// ``FieldOrder`` for a field of type `Field`: `V` itself, or `V?`.
///
/// Its methods run in LensDB, unspecialized: there, reading a row's
/// field would look up `RowBox<T>`'s metadata, and casting it a
/// conformance, for each row a sort reads. So its initializer, compiled
/// in the program's module, makes the closures they call.
@usableFromInline
final class FieldSort<T: Entity, V: Comparable & Sendable, Field: Sendable>: FieldOrder {
    /// The field's value as indexes order it, when `V` is an
    /// ``IndexOrderedValue``.
    @usableFromInline let indexValue: (@Sendable (RowObject) -> IndexValue)?
    /// ``compare(_:_:)`` for a field whose type has no index order.
    @usableFromInline let compareRows: (@Sendable (RowObject, RowObject) -> Int)?

    /// `unwrap` gives the field's value, or nil for a nil optional.
    @inlinable
    init(_ field: KeyPath<T, Field> & Sendable, unwrap: @escaping @Sendable (Field) -> V?) {
        let read = FieldRead(field)
        indexValue = (V.self as? any IndexOrderedValue.Type).map { Self.indexValueReader(read, unwrap, $0) }
        compareRows = indexValue == nil ? Self.rowComparer(read, unwrap) : nil
    }

    @inlinable
    static func rowComparer(_ read: FieldRead<T, Field>, _ unwrap: @escaping @Sendable (Field) -> V?) -> @Sendable (RowObject, RowObject) -> Int {
        { a, b in
            switch (unwrap(read(a)), unwrap(read(b))) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case let (x?, y?): return orderedLess(x, y) ? -1 : orderedLess(y, x) ? 1 : 0
            }
        }
    }

    /// `ordered` is `V` itself, as an ``IndexOrderedValue``. Kept an
    /// existential here and opened for each row: a reader generic over
    /// the opened type would not be specialized for `T` and `V` either,
    /// since that type is known only when the program runs.
    @inlinable
    static func indexValueReader(
        _ read: FieldRead<T, Field>, _ unwrap: @escaping @Sendable (Field) -> V?, _ ordered: any IndexOrderedValue.Type
    ) -> @Sendable (RowObject) -> IndexValue {
        { row in
            guard let value = unwrap(read(row)) else { return .null }
            return orderedValue(of: value, as: ordered)
        }
    }

    /// The index value of `value`, whose type `V` is `Ordered`.
    @inlinable
    static func orderedValue<Ordered: IndexOrderedValue>(of value: V, as _: Ordered.Type) -> IndexValue {
        assert(Ordered.self == V.self, "\(Ordered.self) is not \(V.self)")
        return withUnsafePointer(to: value) { $0.withMemoryRebound(to: Ordered.self, capacity: 1) { $0.pointee.indexValue } }
    }

    @usableFromInline
    var hasValues: Bool { indexValue != nil }

    @usableFromInline
    func value(of row: RowObject) -> IndexValue {
        indexValue?(row) ?? .null
    }

    /// A field with index values compares them: their order is the
    /// field's (``IndexOrderedValue``), nil first, as the values of filters
    /// and indexes order them.
    @usableFromInline
    func compare(_ a: RowObject, _ b: RowObject) -> Int {
        if let compareRows { return compareRows(a, b) }
        return IndexValue.order(value(of: a), value(of: b))
    }
}

/// Why a query cannot run.
public enum QueryError: Error, Sendable, Equatable, CustomStringConvertible {
    case negativeOffset(Int)
    case negativeLimit(Int)

    public var description: String {
        switch self {
        case let .negativeOffset(count): "offset(\(count)): an offset cannot be negative"
        case let .negativeLimit(count): "limit(\(count)): a limit cannot be negative"
        }
    }
}
