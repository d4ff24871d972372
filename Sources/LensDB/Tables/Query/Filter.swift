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
    @usableFromInline
    indirect enum Node: Sendable {
        case comparison(Comparison<T>)
        case membership(Membership<T>)
        case closure(Predicate<T>)
        case and(Node, Node)
        case or(Node, Node)
        case not(Node)
    }

    @usableFromInline let node: Node

    @usableFromInline init(node: Node) { self.node = node }

    /// Whether `entity` satisfies the filter.
    public func matches(_ entity: T) -> Bool { node.matches(entity) }

    /// A filter that runs `predicate` on every candidate: the fallback for
    /// what key paths cannot say. No index serves it, so it always scans the
    /// candidates the other filters leave.
    @inlinable
    public static func `where`(_ predicate: @escaping @Sendable (T) -> Bool) -> Filter {
        Filter(node: .closure(Predicate(text: { "where { … }" }, predicate)))
    }

    /// Holds when the field equals one of `values`; an empty set matches nothing.
    @inlinable
    public static func `in`<V: Hashable & Sendable>(_ field: KeyPath<T, V> & Sendable, _ values: some Sequence<V>) -> Filter {
        let set = Set(values)
        let indexed = set.compactMap { ($0 as? any IndexableValue)?.indexValue }
        let read = fieldReader(field)
        return Filter(node: .membership(Membership(
            keyPath: field, values: indexed.count == set.count ? indexed : nil, text: { "\(field) in \(set.count) values" },
            evaluate: { set.contains($0[keyPath: field]) },
            evaluateRow: { set.contains(read($0)) })))
    }
}

/// A condition the planner cannot see into (`.where`, `~=`), with its text
/// for plans, on entities and on rows.
@usableFromInline
struct Predicate<T: Entity>: Sendable {
    /// Its text for plans, made only when one is printed: describing a key
    /// path costs more than running most queries.
    @usableFromInline let describe: @Sendable () -> String
    @usableFromInline let evaluate: @Sendable (T) -> Bool
    @usableFromInline let evaluateRow: @Sendable (RowObject) -> Bool

    var text: String { describe() }

    @inlinable
    init(text: @escaping @Sendable () -> String, _ evaluate: @escaping @Sendable (T) -> Bool) {
        describe = text
        self.evaluate = evaluate
        evaluateRow = { evaluate(unsafeDowncast($0, to: RowBox<T>.self).value) }
    }
}

/// How a comparison compares its field with its value.
@usableFromInline
enum ComparisonOperator: String, Sendable {
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
}

/// `field <op> value`, with the value as indexes order it when it has one.
///
/// Built by `@inlinable` operators, so its closures are compiled in the
/// program's module for its entity type: `evaluateRow` reads the field in
/// the row's box, with no copy of the entity and no generic key path lookup.
@usableFromInline
struct Comparison<T: Entity>: Sendable {
    @usableFromInline typealias Operator = ComparisonOperator
    @usableFromInline let keyPath: AnyKeyPath & Sendable
    @usableFromInline let op: Operator
    /// The value in index order; nil for types indexes cannot take.
    @usableFromInline let value: IndexValue?
    /// Its text for plans, made only when one is printed.
    @usableFromInline let describe: @Sendable () -> String
    @usableFromInline let evaluate: @Sendable (T) -> Bool
    @usableFromInline let evaluateRow: @Sendable (RowObject) -> Bool
    /// For `==` on an indexable field: the field's value as indexes order
    /// it, so live queries can be found by the value a commit changed.
    @usableFromInline var fieldValue: (@Sendable (T) -> IndexValue)? = nil

    @inlinable
    init(
        keyPath: AnyKeyPath & Sendable, op: Operator, value: IndexValue?, text: @escaping @Sendable () -> String,
        evaluate: @escaping @Sendable (T) -> Bool, evaluateRow: @escaping @Sendable (RowObject) -> Bool
    ) {
        self.keyPath = keyPath
        self.op = op
        self.value = value
        describe = text
        self.evaluate = evaluate
        self.evaluateRow = evaluateRow
    }
}

/// `field in values`.
@usableFromInline
struct Membership<T: Entity>: Sendable {
    @usableFromInline let keyPath: AnyKeyPath & Sendable
    @usableFromInline let values: [IndexValue]?
    @usableFromInline let describe: @Sendable () -> String
    @usableFromInline let evaluate: @Sendable (T) -> Bool
    @usableFromInline let evaluateRow: @Sendable (RowObject) -> Bool

    @inlinable
    init(
        keyPath: AnyKeyPath & Sendable, values: [IndexValue]?, text: @escaping @Sendable () -> String,
        evaluate: @escaping @Sendable (T) -> Bool, evaluateRow: @escaping @Sendable (RowObject) -> Bool
    ) {
        self.keyPath = keyPath
        self.values = values
        describe = text
        self.evaluate = evaluate
        self.evaluateRow = evaluateRow
    }
}

extension Filter.Node {
    func matches(_ entity: T) -> Bool {
        switch self {
        case let .comparison(comparison): comparison.evaluate(entity)
        case let .membership(membership): membership.evaluate(entity)
        case let .closure(predicate): predicate.evaluate(entity)
        case let .and(a, b): a.matches(entity) && b.matches(entity)
        case let .or(a, b): a.matches(entity) || b.matches(entity)
        case let .not(a): !a.matches(entity)
        }
    }

    /// The filter as one closure: evaluating it walks no enum, which in
    /// generic code would look up type metadata at every step.
    func compiled() -> @Sendable (T) -> Bool {
        switch self {
        case let .comparison(comparison): return comparison.evaluate
        case let .membership(membership): return membership.evaluate
        case let .closure(predicate): return predicate.evaluate
        case let .and(a, b):
            let (x, y) = (a.compiled(), b.compiled())
            return { x($0) && y($0) }
        case let .or(a, b):
            let (x, y) = (a.compiled(), b.compiled())
            return { x($0) || y($0) }
        case let .not(a):
            let x = a.compiled()
            return { !x($0) }
        }
    }

    /// The filter as one closure over rows, built from the closures the
    /// program's module compiled: evaluating it needs no metadata of `T`.
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
    var conjuncts: [Filter.Node] {
        if case let .and(a, b) = self { return a.conjuncts + b.conjuncts }
        return [self]
    }

    var text: String {
        switch self {
        case let .comparison(comparison): comparison.describe()
        case let .membership(membership): membership.describe()
        case let .closure(predicate): predicate.text
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

@inlinable
func comparison<T: Entity, V: Sendable>(
    _ field: KeyPath<T, V> & Sendable, _ op: Comparison<T>.Operator, _ value: V, _ evaluate: @escaping @Sendable (V) -> Bool
) -> Filter<T> {
    let read = fieldReader(field)
    var comparison = Comparison<T>(
        keyPath: field, op: op, value: indexValue(of: value, for: op), text: { "\(field) \(op.rawValue) \(value)" },
        evaluate: { evaluate($0[keyPath: field]) },
        evaluateRow: { evaluate(read($0)) })
    if op == .equal, comparison.value != nil {
        // The value is indexable, so the field's type is.
        comparison.fieldValue = { ($0[keyPath: field] as! any IndexableValue).indexValue }
    }
    return Filter(node: .comparison(comparison))
}

/// The value as an index can use it for `op`: any indexable value for
/// equality, only values whose `<` is the index's order for the rest.
@inlinable
func indexValue<V>(of value: V, for op: ComparisonOperator) -> IndexValue? {
    guard let indexable = value as? any IndexableValue else { return nil }
    if op == .equal || op == .notEqual { return indexable.indexValue }
    return value is any IndexOrderedValue ? indexable.indexValue : nil
}

/// `a < b` as filters and indexes order values: strings as their NFC forms
/// (Swift's `<` is not a strict order across normalization forms).
@inlinable
func orderedLess<V: Comparable>(_ a: V, _ b: V) -> Bool {
    if let x = a as? String, let y = b as? String { return IndexValue.normalized(x) < IndexValue.normalized(y) }
    return a < b
}

@inlinable
public func == <T: Entity, V: Equatable & Sendable>(field: KeyPath<T, V> & Sendable, value: V) -> Filter<T> {
    comparison(field, .equal, value) { $0 == value }
}

@inlinable
public func != <T: Entity, V: Equatable & Sendable>(field: KeyPath<T, V> & Sendable, value: V) -> Filter<T> {
    comparison(field, .notEqual, value) { $0 != value }
}

@inlinable
public func < <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V> & Sendable, value: V) -> Filter<T> {
    comparison(field, .less, value) { orderedLess($0, value) }
}

@inlinable
public func <= <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V> & Sendable, value: V) -> Filter<T> {
    comparison(field, .lessOrEqual, value) { !orderedLess(value, $0) }
}

@inlinable
public func > <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V> & Sendable, value: V) -> Filter<T> {
    comparison(field, .greater, value) { orderedLess(value, $0) }
}

@inlinable
public func >= <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V> & Sendable, value: V) -> Filter<T> {
    comparison(field, .greaterOrEqual, value) { !orderedLess($0, value) }
}

// Optional fields: nil fails every ordering comparison.

@inlinable
func optionalComparison<T: Entity, V: Comparable & Sendable>(
    _ field: KeyPath<T, V?> & Sendable, _ op: Comparison<T>.Operator, _ value: V, _ evaluate: @escaping @Sendable (V) -> Bool
) -> Filter<T> {
    let read = fieldReader(field)
    return Filter(node: .comparison(Comparison(
        keyPath: field, op: op, value: indexValue(of: value, for: op), text: { "\(field) \(op.rawValue) \(value)" },
        evaluate: { $0[keyPath: field].map(evaluate) ?? false },
        evaluateRow: { read($0).map(evaluate) ?? false })))
}

@inlinable
public func < <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V?> & Sendable, value: V) -> Filter<T> {
    optionalComparison(field, .less, value) { orderedLess($0, value) }
}

@inlinable
public func <= <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V?> & Sendable, value: V) -> Filter<T> {
    optionalComparison(field, .lessOrEqual, value) { !orderedLess(value, $0) }
}

@inlinable
public func > <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V?> & Sendable, value: V) -> Filter<T> {
    optionalComparison(field, .greater, value) { orderedLess(value, $0) }
}

@inlinable
public func >= <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V?> & Sendable, value: V) -> Filter<T> {
    optionalComparison(field, .greaterOrEqual, value) { !orderedLess($0, value) }
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
    return Filter(node: .closure(Predicate(text: { "\(field) ~= /…/" }) { shared.matchesAnywhere($0[keyPath: field]) }))
}

/// Holds when `regex` matches anywhere in the field; a `nil` field fails.
public func ~= <T: Entity, Output>(field: KeyPath<T, String?> & Sendable, regex: Regex<Output>) -> Filter<T> {
    let shared = SharedRegex(regex)
    return Filter(node: .closure(Predicate(text: { "\(field) ~= /…/" }) { $0[keyPath: field].map(shared.matchesAnywhere) ?? false }))
}
