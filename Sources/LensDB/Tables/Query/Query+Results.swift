extension Query {
    /// The matching entities, in the query's order, after the offset and
    /// within the limit. Reads one version.
    /// - Throws: ``QueryError`` for a negative offset or limit.
    /// - Complexity: the plan's (``explain()``): O(log n + k) for an index
    ///   range of k entries, O(n) for a scan, plus a sort of the matches
    ///   unless an index walk yields them in order.
    public func all() throws -> [T] {
        let storage = table.storage(in: version())
        return try QueryExecution(query: self, storage: storage, plan: QueryPlanner(contents: storage, query: self).plan()).run()
    }

    /// The first result, if any.
    public func first() throws -> T? {
        try limit(min(limitCount ?? 1, 1)).all().first
    }

    /// How many results ``all()`` returns.
    public func count() throws -> Int {
        if filter == nil, offsetCount == 0, limitCount == nil, afterEntity == nil {
            return table.storage(in: version()).rows.count
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
        let storage = table.storage(in: version())
        return QueryPlanner(contents: storage, query: self).plan().describe(for: self, storage)
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
    let storage: TableStorage
    let plan: QueryPlan<T>

    func run() throws -> [T] {
        if query.offsetCount < 0 { throw QueryError.negativeOffset(query.offsetCount) }
        if let limit = query.limitCount, limit < 0 { throw QueryError.negativeLimit(limit) }
        if query.limitCount == 0 { return [] }
        var page = try Page(query: query, order: try TotalOrder(query))
        if let walk = plan.walk {
            walkIndex(walk.position, descending: walk.descending, into: &page)
        } else {
            var found: [Candidate<T>] = []
            forEachCandidate { id, row in
                let entity = Table<T>.entity(row)
                if matches(entity) { found.append(page.order.candidate(id: id, entity: entity)) }
            }
            let positions = isInFinalOrder ? Array(found.indices) : page.order.sortedPositions(found)
            for position in positions where !page.add(found[position]) { break }
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

    private func forEachCandidate(_ body: (IndexValue, RowObject) -> Void) {
        switch plan.access {
        case .scan:
            storage.rows.forEach { id, row in body(id, row); return true }
        case let .index(position, ranges):
            for range in ranges {
                storage.indexes[position].forEach(in: range) { entry, row in body(entry.id, row); return true }
            }
        case let .intersection(first, second):
            var common = Set<IndexValue>()
            for range in first.ranges {
                storage.indexes[first.position].forEach(in: range) { entry, _ in common.insert(entry.id); return true }
            }
            for range in second.ranges {
                storage.indexes[second.position].forEach(in: range) { entry, row in
                    if common.contains(entry.id) { body(entry.id, row) }
                    return true
                }
            }
        }
    }

    /// Walks an index in the order's direction, one group of equal keys at
    /// a time (sorted by the rest of the order), stopping once the page is full.
    private func walkIndex(_ position: Int, descending: Bool, into page: inout Page<T>) {
        let index = storage.indexes[position]
        var range = KeyRange.everything
        if case let .index(accessPosition, ranges) = plan.access, accessPosition == position, ranges.count == 1 { range = ranges[0] }
        var group: [Candidate<T>] = []
        var groupKey: IndexedKey?
        var full = false
        func flush() {
            for position in page.order.sortedPositions(group) where !full { full = !page.add(group[position]) }
            group.removeAll(keepingCapacity: true)
        }
        let start = page.after.map { index.definition.key(RowBox($0.entity, lsn: 0)) }
        index.forEach(in: range, descending: descending, startingAt: start) { entry, row in
            if entry.key != groupKey {
                flush()
                if full { return false }
                groupKey = entry.key
            }
            let entity = Table<T>.entity(row)
            if matches(entity) { group.append(page.order.candidate(id: entry.id, entity: entity)) }
            return true
        }
        if !full { flush() }
    }
}

/// An entity with its identifier as tables order it and, when every sort
/// key of the query has one, its sort key values as indexes order them.
struct Candidate<T: Entity> {
    let id: IndexValue
    let entity: T
    let keys: [IndexValue]?
}

/// The total order of a query: identifiers given first, then its sort
/// keys, then the identifier (in the table's identifier order).
struct TotalOrder<T: Entity> {
    let keys: [SortKey<T>]
    let ranks: [IndexValue: Int]?
    /// Whether every sort key's field orders as its index value does, so
    /// candidates carry their key values and compare without key paths.
    let comparesKeyValues: Bool

    init(_ query: Query<T>) throws {
        keys = query.order
        comparesKeyValues = query.order.allSatisfy { $0.indexValue != nil }
        ranks = try query.identifierOrder.map { ids in
            var ranks: [IndexValue: Int] = [:]
            for (rank, id) in ids.enumerated() {
                let value = try identifierValue(id)
                if ranks[value] == nil { ranks[value] = rank }
            }
            return ranks
        }
    }

    func candidate(id: IndexValue, entity: T) -> Candidate<T> {
        Candidate(id: id, entity: entity, keys: comparesKeyValues ? keys.map { $0.indexValue!(entity) } : nil)
    }

    func compare(_ a: Candidate<T>, _ b: Candidate<T>) -> Int {
        if let ranks {
            let x = ranks[a.id] ?? .max, y = ranks[b.id] ?? .max
            if x != y { return x < y ? -1 : 1 }
        }
        if let x = a.keys, let y = b.keys {
            for (index, key) in keys.enumerated() where x[index] != y[index] {
                return (x[index] < y[index]) != key.descending ? -1 : 1
            }
        } else {
            for key in keys {
                let result = key.directed(a.entity, b.entity)
                if result != 0 { return result }
            }
        }
        return a.id < b.id ? -1 : (b.id < a.id ? 1 : 0)
    }

    /// The positions of `candidates` in this order. Sorting positions moves
    /// integers, not entities, whose copies cost more the larger they are.
    func sortedPositions(_ candidates: [Candidate<T>]) -> [Int] {
        candidates.withUnsafeBufferPointer { buffer in
            var positions = Array(buffer.indices)
            positions.sort { compare(buffer[$0], buffer[$1]) < 0 }
            return positions
        }
    }
}

/// Collects results in order, applying `after`, the offset and the limit.
struct Page<T: Entity> {
    let query: Query<T>
    let order: TotalOrder<T>
    /// The entity results must come strictly after, with its identifier.
    let after: Candidate<T>?
    private(set) var results: [T] = []
    private var skipped = 0

    init(query: Query<T>, order: TotalOrder<T>) throws {
        self.query = query
        self.order = order
        after = try query.afterEntity.map { order.candidate(id: try identifierValue($0.id), entity: $0) }
    }

    /// Adds the next entity in order; false once the page is full.
    mutating func add(_ candidate: Candidate<T>) -> Bool {
        if let limit = query.limitCount, results.count >= limit { return false }
        if let after, order.compare(candidate, after) <= 0 { return true }
        if skipped < query.offsetCount {
            skipped += 1
            return true
        }
        results.append(candidate.entity)
        return query.limitCount.map { results.count < $0 } ?? true
    }
}

extension QueryPlan {
    func describe(for query: Query<T>, _ contents: TableStorage) -> String {
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
