/// One relationship a query follows: from each entity of the source type,
/// the identifiers it references, in which table, and what to follow from
/// the entities found. Without the types, so a graph of any shape is one list.
struct GraphStep: Sendable {
    /// The key path, for `missing` and plans.
    let label: String
    let sourceType: ObjectIdentifier
    let targetType: ObjectIdentifier
    let targetTypeName: String
    /// The table named with `from:`, or nil for the one holding the type.
    let table: String?
    /// The identifiers a source row references.
    let references: @Sendable (RowObject) -> [IndexValue]
    /// Steps applied to the entities found.
    var nested: [GraphStep] = []
    /// How many times to follow this step, each time from the entities the
    /// last found: 1 follows it once, nil without end. Only a step between
    /// entities of one type repeats.
    var depth: Int? = 1
}

/// The relationships to follow from entities of type `T`: what the
/// closures of nested `including` calls build.
///
/// ```swift
/// people.query.including(\.manager) { $0.including(\.team) }
/// ```
public struct Inclusions<T: Entity>: Sendable {
    var steps: [GraphStep] = []

    init() {}

    /// Also follows the to-one reference `field`.
    public func including<R: Entity>(
        _ field: KeyPath<T, Ref<R>?> & Sendable, from table: Table<R>? = nil, _ nested: (@Sendable (Inclusions<R>) -> Inclusions<R>)? = nil
    ) -> Inclusions {
        adding(field, table, nested) { $0[keyPath: field].map { [$0.indexValue] } ?? [] }
    }

    /// Also follows the reference `field`.
    public func including<R: Entity>(
        _ field: KeyPath<T, Ref<R>> & Sendable, from table: Table<R>? = nil, _ nested: (@Sendable (Inclusions<R>) -> Inclusions<R>)? = nil
    ) -> Inclusions {
        adding(field, table, nested) { [$0[keyPath: field].indexValue] }
    }

    /// Also follows the to-many references `field`.
    public func including<R: Entity>(
        _ field: KeyPath<T, [Ref<R>]> & Sendable, from table: Table<R>? = nil, _ nested: (@Sendable (Inclusions<R>) -> Inclusions<R>)? = nil
    ) -> Inclusions {
        adding(field, table, nested) { $0[keyPath: field].map(\.indexValue) }
    }

    /// Follows the relationship added last again from the entities it
    /// finds, `depth` times in all (for references between entities of one
    /// type, such as a manager's manager). An entity already in the graph
    /// is not followed again, so cycles end.
    public func recursive(depth: RecursionDepth) -> Inclusions {
        var copy = self
        if !copy.steps.isEmpty { copy.steps[copy.steps.count - 1].depth = depth.limit }
        return copy
    }

    private func adding<R: Entity>(
        _ field: AnyKeyPath, _ table: Table<R>?, _ nested: (@Sendable (Inclusions<R>) -> Inclusions<R>)?,
        _ references: @escaping @Sendable (T) -> [IndexValue]
    ) -> Inclusions {
        var copy = self
        copy.steps.append(GraphStep(
            label: "\(field)", sourceType: ObjectIdentifier(T.self), targetType: ObjectIdentifier(R.self), targetTypeName: "\(R.self)", table: table?.name,
            references: { references(Table<T>.entity($0)) }, nested: nested.map { $0(Inclusions<R>()).steps } ?? []))
        return copy
    }
}

/// How deep a recursive relationship is followed.
public enum RecursionDepth: Sendable, Equatable, ExpressibleByIntegerLiteral {
    case levels(Int)
    case unlimited

    public init(integerLiteral value: Int) { self = .levels(value) }

    var limit: Int? {
        switch self {
        case let .levels(count): max(count, 1)
        case .unlimited: nil
        }
    }
}

extension Query {
    /// Also follows the to-one reference `field` when building ``graph()``
    /// (and, with `nested`, the relationships of the entities it finds). The
    /// target table is the one holding `R`, or `table`.
    public func including<R: Entity>(
        _ field: KeyPath<T, Ref<R>?> & Sendable, from table: Table<R>? = nil, _ nested: (@Sendable (Inclusions<R>) -> Inclusions<R>)? = nil
    ) -> Query {
        with(inclusions.including(field, from: table, nested))
    }

    /// Also follows the reference `field` when building ``graph()``.
    public func including<R: Entity>(
        _ field: KeyPath<T, Ref<R>> & Sendable, from table: Table<R>? = nil, _ nested: (@Sendable (Inclusions<R>) -> Inclusions<R>)? = nil
    ) -> Query {
        with(inclusions.including(field, from: table, nested))
    }

    /// Also follows the to-many references `field` when building ``graph()``.
    public func including<R: Entity>(
        _ field: KeyPath<T, [Ref<R>]> & Sendable, from table: Table<R>? = nil, _ nested: (@Sendable (Inclusions<R>) -> Inclusions<R>)? = nil
    ) -> Query {
        with(inclusions.including(field, from: table, nested))
    }

    /// Follows the relationship added last again from the entities it finds:
    /// see ``Inclusions/recursive(depth:)``.
    public func recursive(depth: RecursionDepth) -> Query {
        with(inclusions.recursive(depth: depth))
    }

    private func with(_ inclusions: Inclusions<T>) -> Query {
        var query = self
        query.inclusions = inclusions
        return query
    }
}
