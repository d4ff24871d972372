import Foundation

/// How a query finds its entities, chosen against one version's indexes;
/// ``Query/explain()`` prints it.
struct QueryPlan<T: Entity> {
    enum Access {
        /// Every entity, in identifier order.
        case scan
        /// The entries of one index within these ranges.
        case index(position: Int, ranges: [KeyRange])
        /// The entities with these identifiers (an `==` or `in` on `\.id`).
        case identifiers([IndexValue])
        /// The entities two indexes both find.
        case intersection(first: (position: Int, ranges: [KeyRange]), second: (position: Int, ranges: [KeyRange]))
    }

    var access: Access
    /// How many entities the access reads (exact for index ranges).
    var estimate: Int
    /// Set when results come in the query's order by walking this index
    /// (within the access's ranges), so no sort of all matches is needed
    /// and a limit stops the walk early.
    var walk: (position: Int, descending: Bool)?
    var total: Int
}

/// Chooses a plan: the most selective index that serves the filter's
/// conditions (equality, `in`, ranges, equality then a range on a two-field
/// index), an intersection of two when both are selective, an index walked
/// in order to serve an order with a limit, or a scan when nothing applies.
struct QueryPlanner<T: Entity> {
    let contents: TableStorage
    let query: Query<T>

    func plan() -> QueryPlan<T> {
        let total = contents.rows.count
        let conjuncts = query.filter?.node.conjuncts ?? []
        var candidates: [(position: Int, ranges: [KeyRange], count: Int)] = []
        for (position, index) in contents.indexes.enumerated() {
            guard let ranges = ranges(for: index.definition, conjuncts) else { continue }
            candidates.append((position, ranges, ranges.reduce(0) { $0 + index.count(in: $1) }))
        }
        candidates.sort { $0.count < $1.count }
        var plan = QueryPlan<T>(access: .scan, estimate: total, walk: nil, total: total)
        // The primary key serves equality and `in` on the identifier.
        if let path = identifierPath(conjuncts), let ids = Conditions(on: path, conjuncts)?.equals, ids.count <= candidates.first?.count ?? total {
            plan = QueryPlan(access: .identifiers(ids), estimate: ids.count, walk: nil, total: total)
            return plan
        }
        if let best = candidates.first {
            plan = QueryPlan(access: .index(position: best.position, ranges: best.ranges), estimate: best.count, walk: nil, total: total)
            // Two selective indexes whose results are of like size: the
            // intersection reads both but fetches only the common entities.
            let field = { (position: Int) in self.contents.indexes[position].definition.keyPaths[0] as AnyKeyPath }
            if let second = candidates.dropFirst().first(where: { field($0.position) != field(best.position) }),
               best.count > 64, second.count <= 2 * best.count {
                plan.access = .intersection(first: (best.position, best.ranges), second: (second.position, second.ranges))
            }
        }
        // Conditions on different fields are taken as independent: the
        // share of entities that match is the product of their shares.
        var seen = Set<AnyKeyPath>()
        var share = conjuncts.isEmpty || !candidates.isEmpty ? 1.0 : 0.5
        for candidate in candidates where seen.insert(contents.indexes[candidate.position].definition.keyPaths[0] as AnyKeyPath).inserted {
            share *= Double(candidate.count) / Double(max(total, 1))
        }
        plan.walk = walk(for: plan, matching: max(Double(total) * share, 1))
        return plan
    }

    /// The key path of the conditions that name the identifier: `\T.id`, as
    /// the program wrote it (a literal `\Person.id` is not equal to the
    /// generic `\T.id`, so it is recognized by its type and name).
    private func identifierPath(_ conjuncts: [Filter<T>.Node]) -> AnyKeyPath? {
        let name = "\\\(T.self).id"
        for conjunct in conjuncts {
            switch conjunct {
            case let .comparison(comparison) where comparison.keyPath is KeyPath<T, T.ID> && "\(comparison.keyPath)" == name:
                return comparison.keyPath
            case let .membership(membership) where membership.keyPath is KeyPath<T, T.ID> && "\(membership.keyPath)" == name:
                return membership.keyPath
            default: continue
            }
        }
        return nil
    }

    /// The index to walk in order, when the order's first key has one and
    /// walking beats sorting.
    private func walk(for plan: QueryPlan<T>, matching: Double) -> (Int, Bool)? {
        guard query.identifierOrder == nil, let first = query.order.first, first.indexOrdered,
              let position = contents.indexes.firstIndex(where: {
                  $0.definition.keyPaths.count == 1 && $0.definition.keyPaths[0] as AnyKeyPath == first.keyPath
              }) else { return nil }
        if case let .index(accessPosition, ranges) = plan.access, accessPosition == position, ranges.count == 1 {
            return (position, first.descending)
        }
        guard let limit = query.limitCount else { return nil }
        // Walking reads about (offset + limit) / share entries; sorting reads
        // what the access reads and sorts the matches.
        let wanted = Double(query.offsetCount + limit)
        let walkCost = wanted * Double(max(plan.total, 1)) / matching
        let sortCost = Double(plan.estimate) + matching * log2(max(matching, 2))
        return walkCost < sortCost ? (position, first.descending) : nil
    }

    /// The ranges of `index` that hold every entity the conditions allow,
    /// or nil when the index cannot narrow them.
    private func ranges(for index: IndexDefinition, _ conjuncts: [Filter<T>.Node]) -> [KeyRange]? {
        let paths = index.keyPaths.map { $0 as AnyKeyPath }
        guard let first = Conditions(on: paths[0], conjuncts) else { return nil }
        if paths.count == 1 || first.equals == nil {
            if let values = first.equals { return values.map { KeyRange(prefix: [$0]) } }
            return [KeyRange(lower: first.lower, upper: first.upper)]
        }
        let second = Conditions(on: paths[1], conjuncts)
        return first.equals!.map { value in
            if let equals = second?.equals { return equals.map { KeyRange(prefix: [value, $0]) } }
            return [KeyRange(prefix: [value], lower: second?.lower, upper: second?.upper)]
        }.flatMap { $0 }
    }
}

/// What the top-level conditions say about one field: the values it must
/// equal (one for `==`, several for `in`), or the bounds it must lie within.
private struct Conditions {
    var equals: [IndexValue]?
    var lower: KeyRange.Bound?
    var upper: KeyRange.Bound?

    init?<T>(on path: AnyKeyPath, _ conjuncts: [Filter<T>.Node]) {
        for conjunct in conjuncts {
            switch conjunct {
            case let .comparison(comparison) where comparison.keyPath as AnyKeyPath == path:
                guard let value = comparison.value else { continue }
                switch comparison.op {
                case .equal: equals = [value]
                case .notEqual: continue
                case .less: tighten(upper: .init(value: value, inclusive: false))
                case .lessOrEqual: tighten(upper: .init(value: value, inclusive: true))
                case .greater: tighten(lower: .init(value: value, inclusive: false))
                case .greaterOrEqual: tighten(lower: .init(value: value, inclusive: true))
                }
            case let .membership(membership) where membership.keyPath as AnyKeyPath == path && equals == nil:
                if let values = membership.values { equals = values }
            default: continue
            }
        }
        guard equals != nil || lower != nil || upper != nil else { return nil }
        // An ordering comparison never holds for nil, which indexes put first.
        if equals == nil && lower == nil { lower = .init(value: .null, inclusive: false) }
    }

    private mutating func tighten(lower bound: KeyRange.Bound) {
        guard let current = lower else { lower = bound; return }
        if current.value < bound.value || (current.value == bound.value && !bound.inclusive) { lower = bound }
    }

    private mutating func tighten(upper bound: KeyRange.Bound) {
        guard let current = upper else { upper = bound; return }
        if bound.value < current.value || (current.value == bound.value && !bound.inclusive) { upper = bound }
    }
}
