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
    /// `\Person.id` is not equal to the generic `\T.id`, so it is recognized
    /// by its type and its name (described only when the type fits).
    private static func isIdentifier(_ path: AnyKeyPath) -> Bool {
        path is KeyPath<T, T.ID> && "\(path)" == "\\\(T.self).id"
    }
}
