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
    indirect enum Node: Sendable {
        case comparison(Comparison<T>)
        case membership(Membership<T>)
        case closure(String, @Sendable (T) -> Bool)
        case and(Node, Node)
        case or(Node, Node)
        case not(Node)
    }

    let node: Node

    /// Whether `entity` satisfies the filter.
    public func matches(_ entity: T) -> Bool { node.matches(entity) }

    /// A filter that runs `predicate` on every candidate: the fallback for
    /// what key paths cannot say. No index serves it, so it always scans the
    /// candidates the other filters leave.
    public static func `where`(_ predicate: @escaping @Sendable (T) -> Bool) -> Filter {
        Filter(node: .closure("where { … }", predicate))
    }

    /// Holds when the field equals one of `values`; an empty set matches nothing.
    public static func `in`<V: Hashable & Sendable>(_ field: KeyPath<T, V> & Sendable, _ values: some Sequence<V>) -> Filter {
        let set = Set(values)
        let indexed = set.compactMap { ($0 as? any IndexableValue)?.indexValue }
        return Filter(node: .membership(Membership(
            keyPath: field, values: indexed.count == set.count ? indexed : nil, text: "\(field) in \(set.count) values",
            evaluate: { set.contains($0[keyPath: field]) })))
    }
}

/// `field <op> value`, with the value as indexes order it when it has one.
struct Comparison<T: Entity>: Sendable {
    enum Operator: String, Sendable {
        case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    }
    let keyPath: AnyKeyPath & Sendable
    let op: Operator
    /// The value in index order; nil for types indexes cannot take.
    let value: IndexValue?
    let text: String
    let evaluate: @Sendable (T) -> Bool
    /// For `==` on an indexable field: the field's value as indexes order
    /// it, so live queries can be found by the value a commit changed.
    var fieldValue: (@Sendable (T) -> IndexValue)? = nil
}

/// `field in values`.
struct Membership<T: Entity>: Sendable {
    let keyPath: AnyKeyPath & Sendable
    let values: [IndexValue]?
    let text: String
    let evaluate: @Sendable (T) -> Bool
}

extension Filter.Node {
    func matches(_ entity: T) -> Bool {
        switch self {
        case let .comparison(comparison): comparison.evaluate(entity)
        case let .membership(membership): membership.evaluate(entity)
        case let .closure(_, predicate): predicate(entity)
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
        case let .closure(_, predicate): return predicate
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

    /// The conditions that must all hold: this node split at its `&&`s.
    var conjuncts: [Filter.Node] {
        if case let .and(a, b) = self { return a.conjuncts + b.conjuncts }
        return [self]
    }

    var text: String {
        switch self {
        case let .comparison(comparison): comparison.text
        case let .membership(membership): membership.text
        case let .closure(text, _): text
        case let .and(a, b): "(\(a.text) && \(b.text))"
        case let .or(a, b): "(\(a.text) || \(b.text))"
        case let .not(a): "!\(a.text)"
        }
    }
}

// MARK: - Building filters from key paths

func comparison<T: Entity, V: Sendable>(
    _ field: KeyPath<T, V> & Sendable, _ op: Comparison<T>.Operator, _ value: V, _ evaluate: @escaping @Sendable (V) -> Bool
) -> Filter<T> {
    var comparison = Comparison<T>(
        keyPath: field, op: op, value: indexValue(of: value, for: op),
        text: "\(field) \(op.rawValue) \(value)", evaluate: { evaluate($0[keyPath: field]) })
    if op == .equal, comparison.value != nil {
        // The value is indexable, so the field's type is.
        comparison.fieldValue = { ($0[keyPath: field] as! any IndexableValue).indexValue }
    }
    return Filter(node: .comparison(comparison))
}

/// The value as an index can use it for `op`: any indexable value for
/// equality, only values whose `<` is the index's order for the rest.
func indexValue<V>(of value: V, for op: Comparison<some Entity>.Operator) -> IndexValue? {
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

public func == <T: Entity, V: Equatable & Sendable>(field: KeyPath<T, V> & Sendable, value: V) -> Filter<T> {
    comparison(field, .equal, value) { $0 == value }
}

public func != <T: Entity, V: Equatable & Sendable>(field: KeyPath<T, V> & Sendable, value: V) -> Filter<T> {
    comparison(field, .notEqual, value) { $0 != value }
}

public func < <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V> & Sendable, value: V) -> Filter<T> {
    comparison(field, .less, value) { orderedLess($0, value) }
}

public func <= <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V> & Sendable, value: V) -> Filter<T> {
    comparison(field, .lessOrEqual, value) { !orderedLess(value, $0) }
}

public func > <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V> & Sendable, value: V) -> Filter<T> {
    comparison(field, .greater, value) { orderedLess(value, $0) }
}

public func >= <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V> & Sendable, value: V) -> Filter<T> {
    comparison(field, .greaterOrEqual, value) { !orderedLess($0, value) }
}

// Optional fields: nil fails every ordering comparison.

func optionalComparison<T: Entity, V: Comparable & Sendable>(
    _ field: KeyPath<T, V?> & Sendable, _ op: Comparison<T>.Operator, _ value: V, _ evaluate: @escaping @Sendable (V) -> Bool
) -> Filter<T> {
    Filter(node: .comparison(Comparison(
        keyPath: field, op: op, value: indexValue(of: value, for: op),
        text: "\(field) \(op.rawValue) \(value)", evaluate: { $0[keyPath: field].map(evaluate) ?? false })))
}

public func < <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V?> & Sendable, value: V) -> Filter<T> {
    optionalComparison(field, .less, value) { orderedLess($0, value) }
}

public func <= <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V?> & Sendable, value: V) -> Filter<T> {
    optionalComparison(field, .lessOrEqual, value) { !orderedLess(value, $0) }
}

public func > <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V?> & Sendable, value: V) -> Filter<T> {
    optionalComparison(field, .greater, value) { orderedLess(value, $0) }
}

public func >= <T: Entity, V: Comparable & Sendable>(field: KeyPath<T, V?> & Sendable, value: V) -> Filter<T> {
    optionalComparison(field, .greaterOrEqual, value) { !orderedLess($0, value) }
}

public func && <T: Entity>(a: Filter<T>, b: Filter<T>) -> Filter<T> { Filter(node: .and(a.node, b.node)) }
public func || <T: Entity>(a: Filter<T>, b: Filter<T>) -> Filter<T> { Filter(node: .or(a.node, b.node)) }
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
    return Filter(node: .closure("\(field) ~= /…/", { shared.matchesAnywhere($0[keyPath: field]) }))
}

/// Holds when `regex` matches anywhere in the field; a `nil` field fails.
public func ~= <T: Entity, Output>(field: KeyPath<T, String?> & Sendable, regex: Regex<Output>) -> Filter<T> {
    let shared = SharedRegex(regex)
    return Filter(node: .closure("\(field) ~= /…/", { $0[keyPath: field].map(shared.matchesAnywhere) ?? false }))
}
