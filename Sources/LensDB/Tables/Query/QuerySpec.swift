/// One condition of a query's filter as planning and running see it: the
/// field it names and how (when an index could serve it), and its check on
/// a row. A filter is split at its top-level `&&`s into these terms.
struct QueryTerm {
    enum Shape {
        /// `field <op> value`; `value` nil for a type indexes cannot take.
        case comparison(ComparisonOperator, IndexValue?)
        /// `field in values`; nil for values indexes cannot take.
        case membership([IndexValue]?)
        /// A condition no index serves: `||`, `!`, `.where`, `~=`.
        case opaque
    }

    let path: AnyKeyPath?
    let shape: Shape
    /// Whether `path` is the entity's identifier (`\.id`).
    let isIdentifier: Bool
    /// The condition itself. Its check and its text are made only where
    /// asked for: a plan whose index ranges decide a term never checks it.
    let node: FilterNode

    /// The condition as a closure over rows.
    var check: @Sendable (RowObject) -> Bool { node.compiledForRows() }
    /// The condition as the program wrote it, for plans.
    var text: String { node.text }
}

/// One key of a query's order as planning sees it.
struct QueryOrderKey {
    let path: AnyKeyPath
    let descending: Bool
    /// Whether an index on the field yields this order.
    let indexOrdered: Bool
}

/// A query without its entity type: its terms, order, paging and `after`,
/// as closures over rows and plain values. Planning and running a query are
/// compiled once, inside LensDB, for this, so they need no metadata of the
/// program's types; only building it (once a query) and copying out the
/// page's entities are generic.
struct QuerySpec {
    let terms: [QueryTerm]
    let orderKeys: [QueryOrderKey]
    let order: TotalOrder
    /// How many identifiers `sorted(byIdentifiers:)` put first; nil without it.
    let identifierOrderCount: Int?
    let offset: Int
    let limit: Int?
    /// The entity results must come strictly after, as a candidate.
    let after: Candidate?
    let afterText: String?

    /// Whether the query asks for identifier order, which a scan yields.
    var isIdentifierOrder: Bool { orderKeys.isEmpty && identifierOrderCount == nil }

    /// How far into the order the page reaches: offset + limit, held at
    /// `Int.max` (`limit(.max)` is a query too); nil without a limit.
    var pageEnd: Int? {
        limit.map { limit in
            let (end, overflow) = offset.addingReportingOverflow(limit)
            return overflow ? (limit > 0 ? .max : .min) : end
        }
    }
}

extension Query {
    /// The query without its entity type.
    /// - Throws: `EncodingError` when an identifier in `sorted(byIdentifiers:)`
    ///   or `after` does not encode (only value-format identifiers can fail).
    func spec() throws -> QuerySpec {
        let order = try TotalOrder(self)
        let after = try afterEntity.map { entity -> Candidate in
            let id = try identifierValue(entity.id)
            return order.candidate(id: id, row: RowBox(entity, id: id, lsn: 0))
        }
        return QuerySpec(
            terms: (filter?.node.conjuncts ?? []).map(Self.term),
            orderKeys: self.order.map { QueryOrderKey(path: $0.keyPath, descending: $0.descending, indexOrdered: $0.indexOrdered) },
            order: order, identifierOrderCount: identifierOrder?.count, offset: offsetCount, limit: limitCount,
            after: after, afterText: afterEntity.map { "\($0.id)" })
    }

    private static func term(_ node: FilterNode) -> QueryTerm {
        switch node {
        case let .comparison(comparison):
            return QueryTerm(path: comparison.keyPath, shape: .comparison(comparison.op, comparison.value),
                             isIdentifier: isIdentifier(comparison.keyPath), node: node)
        case let .membership(membership):
            return QueryTerm(path: membership.keyPath, shape: .membership(membership.values),
                             isIdentifier: isIdentifier(membership.keyPath), node: node)
        default:
            return QueryTerm(path: nil, shape: .opaque, isIdentifier: false, node: node)
        }
    }

    /// Whether `path` is `\T.id`, as the program wrote it: a literal
    /// `\Person.id` is not equal to the generic `\T.id` (which reads
    /// through `Identifiable`), so it is recognized by its type and its
    /// name, described once per key path object (``IdentifierPaths``).
    ///
    /// The types are compared as the path's class reports them: a cast to
    /// `KeyPath<T, T.ID>` asked the runtime for that type's metadata on
    /// every term of every query.
    private static func isIdentifier(_ path: AnyKeyPath) -> Bool {
        let pathType = type(of: path)
        guard pathType.rootType == T.self, pathType.valueType == T.ID.self else { return false }
        return IdentifierPaths.shared.isIdentifier(path) { "\(path)" == "\\\(T.self).id" }
    }
}

/// Which key paths of an identifier's type name the identifier, by key
/// path object. Describing a path to read its name costs about 1.4 µs,
/// more than most queries, and a filter on a field of the identifier's
/// type (an `Int64` owner beside an `Int64` id) asked it for every query.
/// A literal is one object wherever it is evaluated, so each is described
/// once. The paths are held, so no other path takes one's address while
/// its answer is kept.
///
/// Thread-safety: any thread; the answers are behind a lock, never held
/// while a path is described.
final class IdentifierPaths: Sendable {
    static let shared = IdentifierPaths()

    private let known = Locked<[ObjectIdentifier: (path: AnyKeyPath, isIdentifier: Bool)]>([:])
    /// The most answers kept; past it, a new path empties the cache first.
    /// A program writes a few dozen such paths, each at a call site.
    private let capacity: Int

    init(capacity: Int = 1024) {
        self.capacity = capacity
    }

    /// The answer kept for `path`, else `describe()`'s, then kept.
    func isIdentifier(_ path: AnyKeyPath, describing describe: () -> Bool) -> Bool {
        let key = ObjectIdentifier(path)
        if let known = known.withLock({ $0[key] }) { return known.isIdentifier }
        let answer = describe()
        known.withLock { known in
            if known.count >= capacity { known.removeAll() }
            known[key] = (path, answer)
        }
        return answer
    }

    /// How many answers are kept: for tests.
    var count: Int { known.withLock { $0.count } }
}
