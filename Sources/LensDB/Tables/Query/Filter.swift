import Foundation

/// A condition on entities, built from key paths and combined with `&&`,
/// `||` and `!`:
///
/// ```swift
/// people.query.filter(\.age >= 18 && \.city == "Paris" || \.name ~= /^A/)
/// people.query.filter(.in(\.city, ["Paris", "Lyon"]))
/// people.query.filter(.where { $0.age % 2 == 0 })
/// ```
///
/// Semantics (the article "Tables and queries" lists them with examples):
/// - `==` and `!=` use the field's `==`; on an optional field `nil == nil`.
/// - `<`, `<=`, `>`, `>=` use the field's `<` (strings compare as their NFC
///   forms); a `nil` field fails every one of them.
/// - `.in(path, values)` holds when the field equals one of the values; an
///   empty set matches nothing.
/// - `path ~= regex` holds when the regex matches anywhere in the string,
///   unless the pattern anchors itself (`^`, `$`); a `nil` field fails.
/// - `.where { … }` runs the closure on every candidate: no index serves it.
///
/// A filter is a value: `Sendable`, and evaluated only when a query runs.
public struct Filter<T: Entity>: Sendable {
    /// The condition, on rows of `T`: comparisons and closures the builders
    /// compiled in the program's module, so the node itself needs no type parameter and
    /// planning and running a query never look up `T`'s metadata.
    @usableFromInline let node: FilterNode

    @usableFromInline init(node: FilterNode) { self.node = node }

    /// Whether `entity` satisfies the filter.
    public func matches(_ entity: T) -> Bool {
        // The conditions read rows, so the entity goes in a box of its own;
        // its identifier is not read by any condition.
        node.compiledForRows()(RowBox(entity, id: .null, lsn: 0))
    }

    /// A filter that runs `predicate` on every candidate: the fallback for
    /// what key paths cannot say. No index serves it, so it always scans the
    /// candidates the other filters leave.
    @inlinable
    public static func `where`(_ predicate: @escaping @Sendable (T) -> Bool) -> Filter {
        Filter(node: .closure(Predicate(text: { "where { … }" }) { predicate(unsafeDowncast($0, to: RowBox<T>.self).value) }))
    }

    /// Holds when the field equals one of `values`; an empty set matches nothing.
    @inlinable
    public static func `in`<V: Hashable & Sendable>(_ field: KeyPath<T, V> & Sendable, _ values: some Sequence<V>) -> Filter {
        let set = Set(values)
        let indexed = set.compactMap { ($0 as? any IndexableValue)?.indexValue }
        let read = fieldReader(field)
        return Filter(node: .membership(Membership(
            keyPath: field, values: indexed.count == set.count ? indexed : nil, text: { "\(field) in \(set.count) values" },
            evaluateRow: { set.contains(read($0)) })))
    }
}

/// A filter's condition without its entity type: leaves the planner can
/// read (comparisons, memberships) or cannot (predicates), combined.
///
/// Only the nodes that hold nodes are boxed: a leaf is stored in its
/// parent, not in an allocation of its own.
@usableFromInline
enum FilterNode: Sendable {
    case comparison(Comparison)
    case membership(Membership)
    case closure(Predicate)
    indirect case and(FilterNode, FilterNode)
    indirect case or(FilterNode, FilterNode)
    indirect case not(FilterNode)
}

/// A condition the planner cannot see into (`.where`, `~=`), with its text
/// for plans.
@usableFromInline
struct Predicate: Sendable {
    /// Its text for plans, made only when one is printed: describing a key
    /// path costs more than running most queries.
    @usableFromInline let describe: @Sendable () -> String
    @usableFromInline let evaluateRow: @Sendable (RowObject) -> Bool

    @inlinable
    init(text: @escaping @Sendable () -> String, _ evaluateRow: @escaping @Sendable (RowObject) -> Bool) {
        describe = text
        self.evaluateRow = evaluateRow
    }
}

/// How a comparison compares its field with its value.
@usableFromInline
enum ComparisonOperator: String, Sendable {
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
}

/// `field <op> value`, with the value as indexes order it when it has one.
///
/// Built by `@inlinable` operators, so its check is compiled in the
/// program's module for its entity and field types: it reads the field in
/// the row's box, with no copy of the entity and no key path applied.
@usableFromInline
struct Comparison: Sendable {
    @usableFromInline let keyPath: AnyKeyPath & Sendable
    @usableFromInline let op: ComparisonOperator
    /// The value in index order; nil for types indexes cannot take.
    @usableFromInline let value: IndexValue?
    /// The check itself, with the field and the value it was built from.
    @usableFromInline let check: any FieldComparison

    @inlinable
    init(keyPath: AnyKeyPath & Sendable, op: ComparisonOperator, value: IndexValue?, check: any FieldComparison) {
        self.keyPath = keyPath
        self.op = op
        self.value = value
        self.check = check
    }

    /// Its text for plans, made only when one is printed.
    func describe() -> String { check.text }

    /// Whether a row's entity holds.
    var evaluateRow: @Sendable (RowObject) -> Bool {
        let check = check
        return { check.holds(for: $0) }
    }

    /// For `==` on an indexable field: the field's value as indexes order
    /// it, so live queries can be found by the value a commit changed.
    var fieldValue: (@Sendable (RowObject) -> IndexValue)? {
        guard op == .equal, value != nil else { return nil }
        let check = check
        return { check.indexValue(of: $0) }
    }
}

/// A comparison of one field of a table's entities with a value: one
/// object, compiled in the program's module for the entity's and the
/// field's types, where closures for its check, its text and its field
/// would each be an allocation of their own, made for every query.
@usableFromInline
protocol FieldComparison: AnyObject, Sendable {
    /// Whether the entity in `row` holds.
    func holds(for row: RowObject) -> Bool
    /// The field of the entity in `row` as indexes order it; only asked of
    /// an `==` whose value indexes can take, so the field's type can too.
    func indexValue(of row: RowObject) -> IndexValue
    /// The comparison as the program wrote it.
    var text: String { get }
}

/// `==` and `!=`, by the field's own `==`.
@usableFromInline
final class EqualityComparison<T: Entity, V: Equatable & Sendable>: FieldComparison {
    @usableFromInline let read: FieldRead<T, V>
    @usableFromInline let equal: Bool
    @usableFromInline let value: V

    @inlinable
    init(_ field: KeyPath<T, V> & Sendable, equal: Bool, _ value: V) {
        read = FieldRead(field)
        self.equal = equal
        self.value = value
    }

    @inlinable
    func holds(for row: RowObject) -> Bool { (read(row) == value) == equal }

    @inlinable
    func indexValue(of row: RowObject) -> IndexValue { (read(row) as! any IndexableValue).indexValue }

    @usableFromInline
    var text: String { "\(read.path) \(equal ? "==" : "!=") \(value)" }
}

/// `<`, `<=`, `>` and `>=`, as indexes order values (``orderedLess(_:_:)``);
/// on an optional field, `nil` fails every one.
@usableFromInline
final class OrderComparison<T: Entity, V: Comparable & Sendable, Field: Sendable>: FieldComparison {
    @usableFromInline let read: FieldRead<T, Field>
    @usableFromInline let op: ComparisonOperator
    @usableFromInline let value: V
    /// The field's value, or nil for a nil optional.
    @usableFromInline let unwrap: @Sendable (Field) -> V?

    @inlinable
    init(_ field: KeyPath<T, Field> & Sendable, _ op: ComparisonOperator, _ value: V, unwrap: @escaping @Sendable (Field) -> V?) {
        read = FieldRead(field)
        self.op = op
        self.value = value
        self.unwrap = unwrap
    }

    @inlinable
    func holds(for row: RowObject) -> Bool {
        guard let field = unwrap(read(row)) else { return false }
        switch op {
        case .less: return orderedLess(field, value)
        case .lessOrEqual: return !orderedLess(value, field)
        case .greater: return orderedLess(value, field)
        case .greaterOrEqual: return !orderedLess(field, value)
        case .equal, .notEqual: preconditionFailure("an order comparison is never \(op.rawValue)")
        }
    }

    @inlinable
    func indexValue(of row: RowObject) -> IndexValue { preconditionFailure("only an == is filed by its field's value") }

    @usableFromInline
    var text: String { "\(read.path) \(op.rawValue) \(value)" }
}

/// `field in values`.
@usableFromInline
struct Membership: Sendable {
    @usableFromInline let keyPath: AnyKeyPath & Sendable
    @usableFromInline let values: [IndexValue]?
    @usableFromInline let describe: @Sendable () -> String
    @usableFromInline let evaluateRow: @Sendable (RowObject) -> Bool

    @inlinable
    init(
        keyPath: AnyKeyPath & Sendable, values: [IndexValue]?, text: @escaping @Sendable () -> String,
        evaluateRow: @escaping @Sendable (RowObject) -> Bool
    ) {
        self.keyPath = keyPath
        self.values = values
        describe = text
        self.evaluateRow = evaluateRow
    }
}

extension FilterNode {
    /// The filter as one closure over rows, built from the comparisons and
    /// closures the program's module compiled.
    func compiledForRows() -> @Sendable (RowObject) -> Bool {
        switch self {
        case let .comparison(comparison): return comparison.evaluateRow
        case let .membership(membership): return membership.evaluateRow
        case let .closure(predicate): return predicate.evaluateRow
        case let .and(a, b):
            let (x, y) = (a.compiledForRows(), b.compiledForRows())
            return { x($0) && y($0) }
        case let .or(a, b):
            let (x, y) = (a.compiledForRows(), b.compiledForRows())
            return { x($0) || y($0) }
        case let .not(a):
            let x = a.compiledForRows()
            return { !x($0) }
        }
    }

    /// The conditions that must all hold: this node split at its `&&`s.
    var conjuncts: [FilterNode] {
        var found: [FilterNode] = []
        found.reserveCapacity(Self.conjunctsReserved)
        appendConjuncts(to: &found)
        return found
    }

    /// Room made at once for a filter's terms: a query has a few, which
    /// appended to an empty array would grow it at each. Tuning only.
    private static var conjunctsReserved: Int { 8 }

    /// Appends the conjuncts to `found`, left to right.
    private func appendConjuncts(to found: inout [FilterNode]) {
        guard case let .and(a, b) = self else { return found.append(self) }
        a.appendConjuncts(to: &found)
        b.appendConjuncts(to: &found)
    }

    var text: String {
        switch self {
        case let .comparison(comparison): comparison.describe()
        case let .membership(membership): membership.describe()
        case let .closure(predicate): predicate.describe()
        case let .and(a, b): "(\(a.text) && \(b.text))"
        case let .or(a, b): "(\(a.text) || \(b.text))"
        case let .not(a): "!\(a.text)"
        }
    }
}

// MARK: - Building filters from key paths

// The builders are `@inlinable`: each is compiled in the program's module for
// its entity and field types, so the conditions it makes read their field
// directly instead of through generic code.

/// The value as an index can use it for `op`: any indexable value for
/// equality, only values whose `<` is the index's order for the rest.
@inlinable
func indexValue<V>(of value: V, for op: ComparisonOperator) -> IndexValue? {
    guard let indexable = value as? any IndexableValue else { return nil }
    if op == .equal || op == .notEqual { return indexable.indexValue }
    return value is any IndexOrderedValue ? indexable.indexValue : nil
}

/// `a < b` as filters and indexes order values: strings as their NFC forms
/// (Swift's `<` is not a strict order across normalization forms), and a
/// double, float or date that is not a number after every other (their own
/// `<` never holds for one), so that a range answers alike whether an index
/// serves it or every row is read.
@inlinable
func orderedLess<V: Comparable>(_ a: V, _ b: V) -> Bool {
    if let x = a as? String, let y = b as? String { return IndexValue.normalized(x) < IndexValue.normalized(y) }
    if let x = a as? Double, let y = b as? Double { return !x.isNaN && (y.isNaN || x < y) }
    if let x = a as? Float, let y = b as? Float { return !x.isNaN && (y.isNaN || x < y) }
    if let x = a as? Date, let y = b as? Date {
        let (p, q) = (x.timeIntervalSinceReferenceDate, y.timeIntervalSinceReferenceDate)
        return !p.isNaN && (q.isNaN || p < q)
    }
    return a < b
}

@inlinable
public func == <T: Entity, V: Equatable & Sendable>(field: KeyPath<T, V> & Sendable, value: V) -> Filter<T> {
    Filter(node: .comparison(Comparison(
        keyPath: field, op: .equal, value: indexValue(of: value, for: .equal), check: EqualityComparison(field, equal: true, value))))
}

@inlinable
public func != <T: Entity, V: Equatable & Sendable>(field: KeyPath<T, V> & Sendable, value: V) -> Filter<T> {
    Filter(node: .comparison(Comparison(
        keyPath: field, op: .notEqual, value: indexValue(of: value, for: .notEqual), check: EqualityComparison(field, equal: false, value))))
}

/// `field <op> value` on a field that is never nil.
@inlinable
func orderComparison<T: Entity, V: Comparable & Sendable>(
    _ field: KeyPath<T, V> & Sendable, _ op: ComparisonOperator, _ value: V
) -> Filter<T> {
    Filter(node: .comparison(Comparison(
        keyPath: field, op: op, value: indexValue(of: value, for: op), check: OrderComparison(field, op, value) { $0 })))
}

@inlinable
public func < <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V> & Sendable, value: V) -> Filter<T> {
    orderComparison(field, .less, value)
}

@inlinable
public func <= <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V> & Sendable, value: V) -> Filter<T> {
    orderComparison(field, .lessOrEqual, value)
}

@inlinable
public func > <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V> & Sendable, value: V) -> Filter<T> {
    orderComparison(field, .greater, value)
}

@inlinable
public func >= <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V> & Sendable, value: V) -> Filter<T> {
    orderComparison(field, .greaterOrEqual, value)
}

// Optional fields: nil fails every ordering comparison.

@inlinable
func optionalComparison<T: Entity, V: Comparable & Sendable>(
    _ field: KeyPath<T, V?> & Sendable, _ op: ComparisonOperator, _ value: V
) -> Filter<T> {
    Filter(node: .comparison(Comparison(
        keyPath: field, op: op, value: indexValue(of: value, for: op), check: OrderComparison(field, op, value) { $0 })))
}

@inlinable
public func < <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V?> & Sendable, value: V) -> Filter<T> {
    optionalComparison(field, .less, value)
}

@inlinable
public func <= <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V?> & Sendable, value: V) -> Filter<T> {
    optionalComparison(field, .lessOrEqual, value)
}

@inlinable
public func > <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V?> & Sendable, value: V) -> Filter<T> {
    optionalComparison(field, .greater, value)
}

@inlinable
public func >= <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V?> & Sendable, value: V) -> Filter<T> {
    optionalComparison(field, .greaterOrEqual, value)
}

@inlinable
public func && <T: Entity>(a: Filter<T>, b: Filter<T>) -> Filter<T> { Filter(node: .and(a.node, b.node)) }
@inlinable
public func || <T: Entity>(a: Filter<T>, b: Filter<T>) -> Filter<T> { Filter(node: .or(a.node, b.node)) }
@inlinable
public prefix func ! <T: Entity>(a: Filter<T>) -> Filter<T> { Filter(node: .not(a.node)) }

// MARK: - Regular expressions

/// A compiled regular expression shared by the copies of a filter.
///
/// `@unchecked Sendable`: `Regex` is an immutable value; its compiled
/// program is built once, in `init`, by a first match, and matching only
/// reads it (each match keeps its own state), so concurrent queries never
/// write shared memory through it.
struct SharedRegex: @unchecked Sendable {
    let regex: Regex<AnyRegexOutput>

    init<Output>(_ regex: Regex<Output>) {
        self.regex = Regex(regex)
        _ = "".firstMatch(of: self.regex)
    }

    func matchesAnywhere(_ text: String) -> Bool { text.firstMatch(of: regex) != nil }
}

/// Holds when `regex` matches anywhere in the field, unless the pattern anchors.
public func ~= <T: Entity, Output>(field: KeyPath<T, String> & Sendable, regex: Regex<Output>) -> Filter<T> {
    let shared = SharedRegex(regex)
    let read = fieldReader(field)
    return Filter(node: .closure(Predicate(text: { "\(field) ~= /…/" }) { shared.matchesAnywhere(read($0)) }))
}

/// Holds when `regex` matches anywhere in the field; a `nil` field fails.
public func ~= <T: Entity, Output>(field: KeyPath<T, String?> & Sendable, regex: Regex<Output>) -> Filter<T> {
    let shared = SharedRegex(regex)
    let read = fieldReader(field)
    return Filter(node: .closure(Predicate(text: { "\(field) ~= /…/" }) { read($0).map(shared.matchesAnywhere) ?? false }))
}
