extension Query {
    /// The matching entities, in the query's order, after the offset and
    /// within the limit. Reads one version.
    /// - Throws: ``QueryError`` for a negative offset or limit.
    /// - Complexity: the plan's (``explain()``): O(log n + k) for an index
    ///   range of k entries, O(n) for a scan, plus a sort of the matches
    ///   unless an index walk yields them in order.
    public func all() throws -> [T] {
        let contents = table.contents(in: version())
        return try QueryExecution(query: self, contents: contents, plan: QueryPlanner(contents: contents, query: self).plan()).run()
    }

    /// The first result, if any.
    public func first() throws -> T? {
        try limit(min(limitCount ?? 1, 1)).all().first
    }

    /// How many results ``all()`` returns.
    public func count() throws -> Int {
        if filter == nil, offsetCount == 0, limitCount == nil, afterEntity == nil {
            return table.contents(in: version()).rows.count
        }
        return try all().count
    }

    /// The identifiers of the results, in order.
    public func ids() throws -> [T.ID] {
        try all().map(\.id)
    }

    /// The results grouped by `field`: groups in order of first appearance,
    /// each keeping the query's order. Grouping comes last in the pipeline,
    /// after offset and limit.
    public func grouped<V: Hashable>(by field: KeyPath<T, V>) throws -> [(key: V, entities: [T])] {
        var groups: [(key: V, entities: [T])] = []
        var positions: [V: Int] = [:]
        for entity in try all() {
            let key = entity[keyPath: field]
            if let position = positions[key] {
                groups[position].entities.append(entity)
            } else {
                positions[key] = groups.count
                groups.append((key, [entity]))
            }
        }
        return groups
    }

    /// The plan this query would run with now, in words: which index (and
    /// which ranges of it) or a scan, how many entities it reads, and how
    /// the order is made.
    public func explain() -> String {
        let contents = table.contents(in: version())
        return QueryPlanner(contents: contents, query: self).plan().describe(for: self, contents)
    }

    func version() -> StoreState {
        switch source {
        case .latest: table.store.current
        case let .state(state): state
        }
    }
}

/// Runs one plan on one version.
struct QueryExecution<T: Entity> {
    let query: Query<T>
    let contents: TableContents<T>
    let plan: QueryPlan<T>

    func run() throws -> [T] {
        if query.offsetCount < 0 { throw QueryError.negativeOffset(query.offsetCount) }
        if let limit = query.limitCount, limit < 0 { throw QueryError.negativeLimit(limit) }
        if query.limitCount == 0 { return [] }
        var page = Page(query: query, order: TotalOrder(query))
        if let walk = plan.walk {
            walkIndex(walk.position, descending: walk.descending, into: &page)
        } else {
            var matches = candidates().compactMap { contents.row($0)?.value }.filter(matches)
            if !isInFinalOrder { matches.sort { page.order.compare($0, $1) < 0 } }
            for entity in matches where !page.add(entity) { break }
        }
        return page.results
    }

    private func matches(_ entity: T) -> Bool { query.filter?.matches(entity) ?? true }

    /// Whether the candidates already come in the query's order: a scan
    /// (identifier order) of a query with no order of its own.
    private var isInFinalOrder: Bool {
        if case .scan = plan.access { return query.order.isEmpty && query.identifierOrder == nil }
        return false
    }

    private func candidates() -> [T.ID] {
        switch plan.access {
        case .scan:
            var ids: [T.ID] = []
            ids.reserveCapacity(contents.rows.count)
            contents.rows.forEach { id, _ in ids.append(id); return true }
            return ids
        case let .index(position, ranges):
            return ids(of: position, in: ranges)
        case let .intersection(first, second):
            let common = Set(ids(of: first.position, in: first.ranges))
            return ids(of: second.position, in: second.ranges).filter(common.contains)
        }
    }

    private func ids(of position: Int, in ranges: [KeyRange]) -> [T.ID] {
        var ids: [T.ID] = []
        for range in ranges {
            contents.indexes[position].forEach(in: range) { _, id in ids.append(id); return true }
        }
        return ids
    }

    /// Walks an index in the order's direction, one group of equal keys at
    /// a time (sorted by the rest of the order), stopping once the page is full.
    private func walkIndex(_ position: Int, descending: Bool, into page: inout Page<T>) {
        let index = contents.indexes[position]
        var range = KeyRange.everything
        if case let .index(accessPosition, ranges) = plan.access, accessPosition == position, ranges.count == 1 { range = ranges[0] }
        var group: [T] = []
        var groupKey: IndexedKey?
        var full = false
        func flush() {
            group.sort { page.order.compare($0, $1) < 0 }
            for entity in group where !full { full = !page.add(entity) }
            group.removeAll(keepingCapacity: true)
        }
        index.forEach(in: range, descending: descending, startingAt: query.afterEntity.map(index.definition.key)) { key, id in
            if key != groupKey {
                flush()
                if full { return false }
                groupKey = key
            }
            if let entity = contents.row(id)?.value, matches(entity) { group.append(entity) }
            return true
        }
        if !full { flush() }
    }
}

/// The total order of a query: identifiers given first, then its sort
/// keys, then the identifier.
struct TotalOrder<T: Entity> {
    let keys: [SortKey<T>]
    let ranks: [T.ID: Int]?

    init(_ query: Query<T>) {
        keys = query.order
        ranks = query.identifierOrder.map { ids in
            var ranks: [T.ID: Int] = [:]
            for (rank, id) in ids.enumerated() where ranks[id] == nil { ranks[id] = rank }
            return ranks
        }
    }

    func compare(_ a: T, _ b: T) -> Int {
        if let ranks {
            let x = ranks[a.id] ?? .max, y = ranks[b.id] ?? .max
            if x != y { return x < y ? -1 : 1 }
        }
        for key in keys {
            let result = key.directed(a, b)
            if result != 0 { return result }
        }
        return a.id < b.id ? -1 : (b.id < a.id ? 1 : 0)
    }
}

/// Collects results in order, applying `after`, the offset and the limit.
struct Page<T: Entity> {
    let query: Query<T>
    let order: TotalOrder<T>
    private(set) var results: [T] = []
    private var skipped = 0

    init(query: Query<T>, order: TotalOrder<T>) {
        self.query = query
        self.order = order
    }

    /// Adds the next entity in order; false once the page is full.
    mutating func add(_ entity: T) -> Bool {
        if let limit = query.limitCount, results.count >= limit { return false }
        if let after = query.afterEntity, order.compare(entity, after) <= 0 { return true }
        if skipped < query.offsetCount {
            skipped += 1
            return true
        }
        results.append(entity)
        return query.limitCount.map { results.count < $0 } ?? true
    }
}

extension QueryPlan {
    func describe(for query: Query<T>, _ contents: TableContents<T>) -> String {
        var lines = ["query \(contents.name) (\(total) entities)"]
        let name = { (position: Int) in "index \(contents.name).\(contents.indexes[position].definition.name)" }
        let ranges = { (ranges: [KeyRange]) in ranges.map(\.description).joined(separator: " | ") }
        switch access {
        case .scan: lines.append("  scan: every entity, in identifier order")
        case let .index(position, within):
            lines.append("  use \(name(position)) (\(ranges(within))): reads \(estimate) entities")
        case let .intersection(first, second):
            lines.append("  intersect \(name(first.position)) (\(ranges(first.ranges))) with \(name(second.position)) (\(ranges(second.ranges)))")
        }
        if let filter = query.filter { lines.append("  filter: \(filter.node.text)") }
        let keys = (query.identifierOrder.map { ["\($0.count) identifiers first"] } ?? [])
            + query.order.map { "\($0.keyPath)" + ($0.descending ? " descending" : "") } + ["id"]
        if let walk {
            lines.append("  order: \(keys.joined(separator: ", ")) by walking \(name(walk.position))\(walk.descending ? " backwards" : "")")
        } else {
            lines.append("  order: \(keys.joined(separator: ", ")) by sorting the matches")
        }
        if query.afterEntity != nil { lines.append("  after: \(query.afterEntity.map { "\($0.id)" } ?? "")") }
        if query.offsetCount > 0 || query.limitCount != nil {
            lines.append("  offset \(query.offsetCount)" + (query.limitCount.map { ", limit \($0)" } ?? ""))
        }
        return lines.joined(separator: "\n")
    }
}
