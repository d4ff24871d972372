/// What planning a query depends on besides its values: for each term, the
/// field and the operator; the order's keys; whether there is a limit. Queries of one shape differ in
/// their values (`city == c && age in a...b` for each `c`, `a` and `b`), as
/// a prepared statement's bindings do.
///
/// Fields are told apart by their key path objects, not by `==`: a key
/// path literal is one object wherever it is evaluated, so a call site's
/// queries share one shape, and comparing or hashing an object's address
/// costs nothing where `==` walks each path's components. Two objects of
/// one path (a literal and the generic `\T.id`, say) only make two shapes.
/// A shape holds its key paths, so no other path takes one's address while
/// the shape lives.
struct PlanShape: Hashable {
    /// A key path compared and hashed by identity.
    struct Field: Hashable {
        let path: AnyKeyPath

        static func == (a: Field, b: Field) -> Bool { a.path === b.path }
        func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(path)) }
    }

    struct Term: Hashable {
        enum Operation: Hashable {
            case comparison(ComparisonOperator)
            case membership
        }

        let field: Field
        let operation: Operation
    }

    struct OrderKey: Hashable {
        let field: Field
        let descending: Bool
        let indexOrdered: Bool
    }

    let terms: [Term]
    let order: [OrderKey]
    let limited: Bool

    /// The shape of `spec`; nil when no plan of it would be reused, as one
    /// would always leave a condition to check (``QueryPlanner/reusing(_:)``
    /// reuses none that does): a condition no index serves (`||`, `!`,
    /// `.where`, `~=`), or on values no index range implies (of a type
    /// indexes cannot take, or NaN, whose `==` differs from the index's).
    /// The primary key serves a condition on the identifier, and an order
    /// by identifiers is never walked: those are planned afresh too.
    init?(_ spec: QuerySpec) {
        guard spec.identifierOrderCount == nil else { return nil }
        var terms: [Term] = []
        terms.reserveCapacity(spec.terms.count)
        for term in spec.terms {
            guard let path = term.path, !term.isIdentifier else { return nil }
            switch term.shape {
            case let .comparison(op, value?) where !value.isNaN:
                terms.append(Term(field: Field(path: path), operation: .comparison(op)))
            case let .membership(values?) where !values.contains(where: \.isNaN):
                terms.append(Term(field: Field(path: path), operation: .membership))
            default:
                return nil
            }
        }
        self.terms = terms
        order = spec.orderKeys.map { OrderKey(field: Field(path: $0.path), descending: $0.descending, indexOrdered: $0.indexOrdered) }
        limited = spec.limit != nil
    }
}

/// The way the planner chose for each query shape a table handle ran, to
/// plan the next query of that shape without weighing every way again
/// (``QueryPlanner/reusing(_:)`` says which ways are reused, and when).
/// A reused way is checked against the version's indexes, so a version
/// whose indexes differ plans afresh.
///
/// Thread-safety: any thread; the ways are behind a lock, held to look one
/// up or store one, never while planning.
final class PlanCache: Sendable {
    /// A way chosen for a shape, with the fields of the index it reads as
    /// the version had them, and which terms are on each of those fields:
    /// the same for every query of the shape, whose terms name the same
    /// key path objects.
    private struct Chosen {
        let way: QueryPlan.Way
        let index: [AnyKeyPath]
        let termsOnField: [[Int]]
        /// Which of those fields the order's first key is.
        let orderField: Int?

        var walks: Bool { if case .walk = way { true } else { false } }
    }

    private struct State {
        /// Per shape, the last walk and the last index range chosen, in
        /// that order: values may make either the right one (a walk for a
        /// wide range under a limit, the range itself for a narrow one).
        /// A walk is tried first: where both apply, it reads no more and
        /// needs no sort.
        var chosen: [PlanShape: [Chosen]] = [:]
        /// How many plans were reused: for tests.
        var reused = 0
    }

    private let state = Locked(State())
    /// The most shapes kept; past it, a new shape empties the cache first.
    /// A program runs a few dozen shapes, each from its own call site.
    private let capacity: Int

    init(capacity: Int = 256) {
        self.capacity = capacity
    }

    /// The plan for `spec` on `contents`: a way chosen for its shape
    /// before, when one still applies, else the planner's choice.
    func plan(_ spec: QuerySpec, _ contents: TableStorage) -> QueryPlan {
        let planner = QueryPlanner(contents: contents, spec: spec)
        guard let shape = PlanShape(spec) else { return planner.plan() }
        for chosen in state.withLock({ $0.chosen[shape] }) ?? [] {
            guard let position = chosen.way.indexPosition, position < contents.indexes.count,
                  contents.indexes[position].definition.paths == chosen.index else { continue }
            planner.know(chosen.termsOnField, orderField: chosen.orderField, position: position)
            guard var plan = planner.reusing(chosen.way) else { continue }
            plan.reused = true
            state.withLock { $0.reused += 1 }
            return plan
        }
        let plan = planner.plan()
        if plan.residual.isEmpty, let position = plan.alternatives[0].way.indexPosition {
            let chosen = Chosen(way: plan.alternatives[0].way, index: contents.indexes[position].definition.paths,
                                termsOnField: planner.termsOnField(position), orderField: planner.orderField(position))
            state.withLock { state in
                if state.chosen[shape] == nil, state.chosen.count >= capacity { state.chosen.removeAll() }
                let other = state.chosen[shape]?.first { $0.walks != chosen.walks }
                state.chosen[shape] = ([chosen] + (other.map { [$0] } ?? [])).sorted { $0.walks && !$1.walks }
            }
        }
        return plan
    }

    /// How many plans this cache reused.
    var reusedCount: Int { state.withLock { $0.reused } }
}

extension QueryPlan.Way {
    /// The index a reusable way reads; nil for the others.
    var indexPosition: Int? {
        switch self {
        case let .index(position), let .walk(position, _, _): position
        case .primaryKey, .scan, .intersection: nil
        }
    }
}
