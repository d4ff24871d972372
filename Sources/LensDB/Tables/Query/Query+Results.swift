import CLensPrefetch

extension Query {
    /// The matching entities, in the query's order, after the offset and
    /// within the limit. Reads one version.
    /// - Throws: ``QueryError`` for a negative offset or limit.
    /// - Complexity: the plan's (``explain()``): O(log n + k) for an index
    ///   range of k entries, O(n) for a scan, plus a sort of the matches
    ///   unless an index walk yields them in order.
    public func all() throws -> [T] {
        Self.entities(of: try execution().runCandidates())
    }

    /// The entities of `candidates`, copied out in order. Their rows lie
    /// anywhere in memory, and a page names few of them: each is asked
    /// for a few places before it is copied, so the misses overlap.
    static func entities(of candidates: [Candidate]) -> [T] {
        let ahead = 8
        func prefetch(_ place: Int) {
            if place < candidates.count { lens_prefetch_object(Unmanaged.passUnretained(candidates[place].row).toOpaque()) }
        }
        for place in 0..<ahead { prefetch(place) }
        var entities: [T] = []
        entities.reserveCapacity(candidates.count)
        for place in candidates.indices {
            prefetch(place + ahead)
            entities.append(Table<T>.entity(candidates[place].row))
        }
        return entities
    }

    /// The first result, if any.
    public func first() throws -> T? {
        try limit(min(limitCount ?? 1, 1)).all().first
    }

    /// How many results ``all()`` returns, without copying any entity out.
    ///
    /// - Complexity: O(log n) per index range when the plan's ranges decide
    ///   every condition (``explain()`` says "nothing left to check") and
    ///   the query has no `after`: the ranges are counted, not walked.
    ///   Otherwise the plan runs as for ``all()``, up to the rows it would copy.
    public func count() throws -> Int {
        if filter == nil, offsetCount == 0, limitCount == nil, afterEntity == nil {
            return table.storage(in: version()).rows.count
        }
        let execution = try execution()
        return try execution.countedResults() ?? execution.runCandidates().count
    }

    /// The identifiers of the results, in order. Reads each result's
    /// identifier from its row, without copying the entity out.
    public func ids() throws -> [T.ID] {
        let candidates = try execution().runCandidates()
        // A loop over the candidates' buffer, not `map`: this code is not
        // specialized for `T`, and `map` would copy each candidate through
        // its value witnesses.
        var ids: [T.ID] = []
        ids.reserveCapacity(candidates.count)
        candidates.withUnsafeBufferPointer { candidates in
            for place in candidates.indices { ids.append(Table<T>.identifier(candidates[place].row)) }
        }
        return ids
    }

    /// The results grouped by `field`: groups in order of first appearance,
    /// each keeping the query's order. Grouping comes last in the pipeline,
    /// after offset and limit.
    public func grouped<V: Hashable>(by field: KeyPath<T, V>) throws -> [(key: V, entities: [T])] {
        try grouped(all(), by: field)
    }

    /// `results` grouped by `field`, groups in order of first appearance.
    func grouped<V: Hashable>(_ results: [T], by field: KeyPath<T, V>) throws -> [(key: V, entities: [T])] {
        var groups: [(key: V, entities: [T])] = []
        var positions: [V: Int] = [:]
        for entity in results {
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
    ///
    /// A query whose shape (its fields, operators and order; not its
    /// values) this table handle ran before may reuse the way chosen then,
    /// without weighing the others, when that way leaves nothing to check
    /// and no other way can cost less; the estimates line says so.
    public func explain() -> String {
        let storage = table.storage(in: version())
        // Only an identifier that does not encode fails a spec, and then the query runs nowhere.
        guard let spec = try? spec() else { return "query \(storage.name): its after or identifier order does not encode" }
        return table.plans.plan(spec, storage).describe(spec, storage)
    }

    /// An execution of this query on its version.
    func execution() throws -> QueryExecution {
        let storage = table.storage(in: version())
        let spec = try spec()
        return QueryExecution(spec: spec, storage: storage, plan: table.plans.plan(spec, storage))
    }

    func version() -> StoreState {
        switch source {
        case .latest: table.store.current
        case let .state(state): state
        }
    }
}

/// Runs one plan on one version: compiled once, for rows, with no
/// metadata of the entity type.
struct QueryExecution {
    let spec: QuerySpec
    let storage: TableStorage
    let plan: QueryPlan
    let predicate: (@Sendable (RowObject) -> Bool)?

    init(spec: QuerySpec, storage: TableStorage, plan: QueryPlan) {
        self.spec = spec
        self.storage = storage
        self.plan = plan
        // Only what the plan's index ranges do not already guarantee.
        let checks = plan.residual.map { spec.terms[$0].check }
        switch checks.count {
        case 0: predicate = nil
        case 1: predicate = checks[0]
        default: predicate = { row in checks.allSatisfy { $0(row) } }
        }
    }

    /// The results with their identifiers and rows (whose LSNs tell live
    /// queries whether a result changed).
    func runCandidates() throws -> [Candidate] {
        try checkPaging()
        if spec.limit == 0 { return [] }
        var page = Page(spec: spec)
        if let walk = plan.walk {
            walkIndex(walk, into: &page)
        } else {
            var found: [Candidate] = []
            // Room for the expected matches at once, where growing from
            // empty would reallocate several times; more grow as usual.
            found.reserveCapacity(Int(min(plan.matches.rounded(.up), Double(Self.candidatesReserved))))
            forEachCandidate { id, row in
                if matches(row) { found.append(spec.order.candidate(id: id, row: row)) }
            }
            let positions: [Int]
            if isInFinalOrder {
                positions = Array(found.indices)
            } else {
                // Only the offset + limit first of those after `after` can be on the page.
                if let after = spec.after { found.removeAll { spec.order.compare($0, after) <= 0 } }
                positions = spec.order.sortedPositions(found, keeping: spec.pageEnd)
            }
            for position in positions where !page.add(found[position]) { break }
        }
        return page.results
    }

    private func matches(_ row: RowObject) -> Bool { predicate?(row) ?? true }

    /// The most candidates room is made for before any is found: an
    /// estimate may be far above the matches (each condition no index
    /// serves counts as halving them). Tuning only.
    private static var candidatesReserved: Int { 64 }

    /// Throws ``QueryError`` for a negative offset or limit.
    private func checkPaging() throws {
        if spec.offset < 0 { throw QueryError.negativeOffset(spec.offset) }
        if let limit = spec.limit, limit < 0 { throw QueryError.negativeLimit(limit) }
    }

    /// How many results ``runCandidates()`` gives, counted from the index
    /// ranks alone when every entry of the plan's ranges is a result: nothing
    /// is left to check and no `after` applies. Nil otherwise. A plan's
    /// ranges share no entry (each fixes distinct values of the fields
    /// before its bounds: ``Conditions``), so their counts add up.
    /// O(log n) per range.
    func countedResults() throws -> Int? {
        try checkPaging()
        guard plan.residual.isEmpty, spec.after == nil, case let .index(position, ranges) = plan.access else { return nil }
        let index = storage.indexes[position]
        let entries = ranges.reduce(0) { $0 + index.ranks(of: $1).count }
        let afterOffset = max(0, entries - spec.offset)
        return spec.limit.map { min($0, afterOffset) } ?? afterOffset
    }

    /// Whether the candidates already come in the query's order: a scan
    /// (identifier order) of a query with no order of its own.
    private var isInFinalOrder: Bool {
        if case .scan = plan.access { return spec.isIdentifierOrder }
        return false
    }

    private func forEachCandidate(_ body: (IndexValue, RowObject) -> Void) {
        switch plan.access {
        case .scan:
            storage.rows.forEach { id, row in body(id, row); return true }
        case let .index(position, ranges):
            for range in ranges {
                storage.indexes[position].forEachRow(in: range) { row in body(row.id, row); return true }
            }
        case let .identifiers(ids):
            for id in Set(ids).sorted() {
                if let row = storage.row(id) { body(id, row) }
            }
        case let .intersection(first, second):
            // The first index's identifiers as a sorted array: in order
            // already for one range of equal keys, which then merges with
            // the second's in one pass when it is one too; else sorted and
            // probed by binary search.
            var common: [IndexValue] = []
            for range in first.ranges {
                storage.indexes[first.position].forEachRow(in: range) { row in common.append(row.id); return true }
            }
            let keyCount = { (position: Int) in self.storage.indexes[position].definition.keyPaths.count }
            if first.ranges.count == 1, first.ranges[0].prefix.count == keyCount(first.position),
               second.ranges.count == 1, second.ranges[0].prefix.count == keyCount(second.position) {
                var next = 0
                storage.indexes[second.position].forEachRow(in: second.ranges[0]) { row in
                    while next < common.count, common[next] < row.id { next += 1 }
                    if next < common.count, common[next] == row.id { body(row.id, row) }
                    return next < common.count
                }
                return
            }
            common.sort()
            for range in second.ranges {
                storage.indexes[second.position].forEachRow(in: range) { row in
                    let at = common.lowerBound(of: row.id)
                    if at < common.count, common[at] == row.id { body(row.id, row) }
                    return true
                }
            }
        }
    }

    /// Walks an index in the order's direction (merging the walk's runs
    /// when it has several), one group of entries with equal values of the
    /// order's field at a time, sorted by the rest of the order, stopping
    /// once the page is full.
    private func walkIndex(_ walk: QueryPlan.Walk, into page: inout Page) {
        let index = storage.indexes[walk.position]
        // An index orders entries with equal keys by identifier. So when
        // one run is walked by its last field and the query orders by that
        // field alone (then by identifier), each group comes in the order
        // the page wants, or its reverse when walked backwards.
        let groupsInOrder = walk.runs.count == 1 && walk.field == index.definition.keyPaths.count - 1 && spec.orderKeys.count == 1
        if groupsInOrder && page.after == nil {
            walkInOrder(walk, index, into: &page)
            return
        }
        var group: [Candidate] = []
        var groupValue: IndexValue?
        var full = false
        func flush() {
            if group.count == 1 || groupsInOrder {
                for candidate in walk.descending ? group.reversed() : group where !full { full = !page.add(candidate) }
            } else {
                for position in page.order.sortedPositions(group) where !full { full = !page.add(group[position]) }
            }
            group.removeAll(keepingCapacity: true)
        }
        let visit = { (value: IndexValue, row: RowObject) -> Bool in
            if value != groupValue {
                flush()
                if full { return false }
                groupValue = value
            }
            if matches(row) { group.append(page.order.candidate(id: row.id, row: row)) }
            return true
        }
        // Where `after` lies in each run: its value of the order's field
        // after the run's fixed prefix (the prefix is not part of the
        // query's order, so the entity's own prefix does not count).
        let starts = page.after.map { after -> [[IndexValue]] in
            let value = index.definition.key(after.row)[walk.field]
            return walk.runs.map { $0.prefix(atField: walk.field, equalTo: value) }
        }
        if walk.runs.count == 1 {
            index.forEach(in: walk.runs[0], field: walk.field, descending: walk.descending, startingAt: starts?[0], visit)
        } else {
            index.forEachMerged(runs: walk.runs, field: walk.field, descending: walk.descending, startingAt: starts, visit)
        }
        if !full { flush() }
    }

    /// ``walkIndex(_:into:)`` where each group comes in the page's order
    /// (or its reverse) and no `after` applies: the rows the offset skips
    /// are counted, and only the page's rows become candidates. With no
    /// condition to check, the offset is skipped by rank, without reading
    /// the entries it skips.
    private func walkInOrder(_ walk: QueryPlan.Walk, _ index: IndexStorage, into page: inout Page) {
        var groups = OrderedGroups(descending: walk.descending, predicate: predicate)
        var run = walk.runs[0]
        if predicate == nil, spec.offset > 0 {
            let rest = skipOffset(walk, index, skip: { page.skip($0) }, add: { page.add(inOrder: $0) },
                                  below: { groups.visit($0, $1, into: &page) })
            guard let rest else {
                groups.finish(into: &page)
                return
            }
            run = rest
        }
        // Without a condition to check, only the page's rows are read.
        index.forEach(in: run, field: walk.field, descending: walk.descending, readsRows: predicate != nil) { groups.visit($0, $1, into: &page) }
        groups.finish(into: &page)
    }

    /// The entries of an in-order walk gathered a group of equal values of
    /// the walked field at a time, each group added to the page in the
    /// walk's direction. A struct the walk's closures reach through
    /// `inout`, not local variables they capture: captured, those would be
    /// boxed, and each access checked for exclusivity at run time.
    private struct OrderedGroups {
        let descending: Bool
        let predicate: (@Sendable (RowObject) -> Bool)?
        /// The group's rows, unretained: the version's row tree holds them.
        var group: [Unmanaged<RowObject>] = []
        var value: IndexValue?
        var full = false

        init(descending: Bool, predicate: (@Sendable (RowObject) -> Bool)?) {
            self.descending = descending
            self.predicate = predicate
            // Room for most groups at once, where growing from empty would
            // reallocate several times on the first.
            group.reserveCapacity(16)
        }

        /// Takes the next entry, by its value of the walked field and its
        /// row; false once the page is full.
        mutating func visit(_ value: IndexValue, _ row: RowObject, into page: inout Page) -> Bool {
            if value != self.value {
                flush(into: &page)
                if full { return false }
                self.value = value
            }
            if predicate?(row) ?? true { group.append(.passUnretained(row)) }
            return true
        }

        /// Adds the group gathered so far, unless the page is full.
        mutating func finish(into page: inout Page) {
            if !full { flush(into: &page) }
        }

        private mutating func flush(into page: inout Page) {
            if descending { group.reverse() }
            for row in group where !full { full = row._withUnsafeGuaranteedRef { !page.add(inOrder: $0) } }
            group.removeAll(keepingCapacity: true)
        }
    }

    /// How many entries ``skipOffset(_:_:skip:add:below:)`` steps over each
    /// way (from the offset's entry up, and below it) to find the ends of
    /// its group, before it descends for them instead.
    static let groupSteps = 32

    /// Skips the offset of a walk whose every entry matches, by rank: adds
    /// to the page (`add`, false once it is full) the entries of the group
    /// the offset ends in that come after it, and returns what is left of
    /// the run to walk; nil when the page is full or nothing is left, or
    /// when the rest was walked here, each entry passed to `below`.
    ///
    /// Ascending, query order is index order, so the page starts at the
    /// offset's rank. Descending, groups of equal values come last first,
    /// each in ascending order: the group holding the offset is the one at
    /// rank end - 1 - offset, and the page starts inside it at the offset's
    /// distance from the groups after it. A small group is found by
    /// stepping from the offset's entry, and the walk goes on down from
    /// its lower end; a large one is found by descents.
    private func skipOffset(
        _ walk: QueryPlan.Walk, _ index: IndexStorage, skip: (Int) -> Void, add: (RowObject) -> Bool,
        below: (IndexValue, RowObject) -> Bool
    ) -> KeyRange? {
        let run = walk.runs[0]
        let ranks = walk.runRanks?[0] ?? index.ranks(of: run)
        guard spec.offset < ranks.count else { return nil }
        skip(spec.offset)
        // Adds the rows at `ranks`, in index order; false once the page is full.
        func addRows(at ranks: Range<Int>) -> Bool {
            var full = false
            index.forEachRow(ranks: ranks) { row in
                full = !add(row)
                return !full
            }
            return !full
        }
        guard walk.descending else {
            // From the offset's entry on, to the run's end, in index order.
            _ = addRows(at: ranks.lowerBound + spec.offset..<ranks.upperBound)
            return nil
        }
        let offset = spec.offset, rank = ranks.upperBound - 1 - offset
        // The walk below the group stays within the run's ranks. The
        // closure takes the offset alone: capturing `self` would copy it.
        let stepped = index.group(atRank: rank, within: ranks, field: walk.field, limit: Self.groupSteps, found: { group, rows in
            let into = offset - (ranks.upperBound - group.upperBound)
            for row in rows[into...] where !row._withUnsafeGuaranteedRef(add) { return false }
            return true
        }, below: below)
        guard !stepped, let key = index.key(atRank: rank) else { return nil }
        // The group of the whole index, where stepping found the run's: the
        // same entries, since the run bounds the order's field by value and
        // never splits a group.
        let value = key[walk.field]
        let group = index.ranks(of: KeyRange(prefix: run.prefix(atField: walk.field, equalTo: value)))
        let into = spec.offset - (ranks.upperBound - group.upperBound)
        // A run fixed on the order's field is one group.
        guard addRows(at: group.lowerBound + into..<group.upperBound), run.prefix.count == walk.field else { return nil }
        return KeyRange(prefix: run.prefix, lower: run.lower, upper: .init(value: value, inclusive: false))
    }
}

/// An entity's row with its identifier as tables order it and, when every
/// sort key of the query has one, its place in the order as plain values.
/// Holds no copy of the entity: only the page's results are copied out.
struct Candidate {
    let id: IndexValue
    let row: RowObject
    let sortKey: SortEntry?
}

/// A candidate's place in a query's order, as values of concrete types, so
/// that sorting compares them without going through `T`'s generic metadata.
struct SortEntry {
    /// Its position among identifiers given first; `Int.max` for the rest.
    let rank: Int
    /// The first sort key's value (`.null` when the order has none) with
    /// its ``IndexValue/orderPrefix``, and the others': most orders have one
    /// key, which then needs no array, and most comparisons end at the prefix.
    let prefix: UInt64
    let first: IndexValue
    let rest: [IndexValue]
    let id: IndexValue

    init(rank: Int, first: IndexValue, rest: [IndexValue], id: IndexValue) {
        self.rank = rank
        prefix = first.orderPrefix
        self.first = first
        self.rest = rest
        self.id = id
    }

    /// -1, 0 or 1, with `descending[i]` reversing key `i`.
    static func compare(_ a: SortEntry, _ b: SortEntry, descending: [Bool]) -> Int {
        withUnsafePointer(to: a) { a in withUnsafePointer(to: b) { b in compare(a, b, descending: descending) } }
    }

    /// ``compare(_:_:descending:)`` of the entries at two places, each
    /// field read where it lies. A sort compares entries in an array by
    /// position: passed by value, both were copied for every comparison
    /// (their values retained, then released), which cost more than the
    /// comparison itself.
    static func compare(_ a: UnsafePointer<SortEntry>, _ b: UnsafePointer<SortEntry>, descending: [Bool]) -> Int {
        if a.pointee.rank != b.pointee.rank { return a.pointee.rank < b.pointee.rank ? -1 : 1 }
        if a.pointee.prefix != b.pointee.prefix { return (a.pointee.prefix < b.pointee.prefix) != (descending.first ?? false) ? -1 : 1 }
        if let order = Self.compare(a.pointee.first, b.pointee.first, descending: descending.first ?? false) { return order }
        for index in a.pointee.rest.indices {
            if let order = Self.compare(a.pointee.rest[index], b.pointee.rest[index], descending: descending[index + 1]) { return order }
        }
        return IndexValue.order(a.pointee.id, b.pointee.id)
    }

    /// -1 or 1 when `x` and `y` differ, in the direction asked; nil when equal.
    @inline(__always)
    private static func compare(_ x: IndexValue, _ y: IndexValue, descending: Bool) -> Int? {
        let order = IndexValue.order(x, y)
        return order == 0 ? nil : (descending ? -order : order)
    }
}

/// The total order of a query: identifiers given first, then its sort
/// keys, then the identifier (in the table's identifier order).
struct TotalOrder {
    let ranks: [IndexValue: Int]?
    let descending: [Bool]
    /// The sort keys' fields, which read and compare rows.
    let fields: [any FieldOrder]
    /// Whether every sort key has a value as indexes order it: candidates
    /// then carry their place as plain values.
    let comparesValues: Bool

    /// The query's order, over rows: building a candidate then needs no
    /// metadata of the entity type.
    init<T: Entity>(_ query: Query<T>) throws {
        descending = query.order.map(\.descending)
        fields = query.order.map(\.field)
        comparesValues = fields.allSatisfy(\.hasValues)
        ranks = try query.identifierOrder.map { ids in
            var ranks: [IndexValue: Int] = [:]
            for (rank, id) in ids.enumerated() {
                let value = try identifierValue(id)
                if ranks[value] == nil { ranks[value] = rank }
            }
            return ranks
        }
    }

    func candidate(id: IndexValue, row: RowObject) -> Candidate {
        guard comparesValues else { return Candidate(id: id, row: row, sortKey: nil) }
        let first = fields.first.map { $0.value(of: row) } ?? .null
        let rest = fields.count > 1 ? fields.dropFirst().map { $0.value(of: row) } : []
        return Candidate(id: id, row: row, sortKey: SortEntry(rank: ranks?[id] ?? .max, first: first, rest: rest, id: id))
    }

    func compare(_ a: Candidate, _ b: Candidate) -> Int {
        if let x = a.sortKey, let y = b.sortKey { return SortEntry.compare(x, y, descending: descending) }
        if let ranks {
            let x = ranks[a.id] ?? .max, y = ranks[b.id] ?? .max
            if x != y { return x < y ? -1 : 1 }
        }
        for key in fields.indices {
            let result = fields[key].compare(a.row, b.row)
            if result != 0 { return descending[key] ? -result : result }
        }
        return IndexValue.order(a.id, b.id)
    }

    /// The positions of `candidates` in this order; with `keeping`, only
    /// that many of the first, chosen in O(n log k) when they are few.
    /// Sorting positions moves integers, not entities.
    func sortedPositions(_ candidates: [Candidate], keeping: Int? = nil) -> [Int] {
        if comparesValues {
            let entries = candidates.map { $0.sortKey! }
            return entries.withUnsafeBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return [] }
                return firstPositions(buffer.count, keeping: keeping) { SortEntry.compare(base + $0, base + $1, descending: descending) < 0 }
            }
        }
        return candidates.withUnsafeBufferPointer { buffer in
            firstPositions(buffer.count, keeping: keeping) { compare(buffer[$0], buffer[$1]) < 0 }
        }
    }
}

/// Collects results in order, applying `after`, the offset and the limit.
struct Page {
    let spec: QuerySpec
    private(set) var results: [Candidate] = []
    private var skipped = 0

    init(spec: QuerySpec) {
        self.spec = spec
        // A page of a few results grows its array several times otherwise.
        if let limit = spec.limit { results.reserveCapacity(min(limit, 256)) }
    }

    /// The entity results must come strictly after, with its identifier.
    var after: Candidate? { spec.after }
    var order: TotalOrder { spec.order }

    /// Counts `count` results as skipped by the offset without adding them.
    mutating func skip(_ count: Int) {
        skipped += count
    }

    /// Adds the next row in order, where no `after` applies: a row the
    /// offset skips gets no candidate. False once the page is full.
    mutating func add(inOrder row: RowObject) -> Bool {
        place { Candidate(id: row.id, row: row, sortKey: nil) }
    }

    /// Adds the next entity in order; false once the page is full.
    mutating func add(_ candidate: Candidate) -> Bool {
        if let after = spec.after, spec.order.compare(candidate, after) <= 0 { return !isFull }
        return place { candidate }
    }

    /// Whether the page holds its limit.
    private var isFull: Bool { spec.limit.map { results.count >= $0 } ?? false }

    /// Counts the next result against the offset, or adds the one `make`
    /// makes; false once the page is full.
    private mutating func place(_ make: () -> Candidate) -> Bool {
        if isFull { return false }
        if skipped < spec.offset {
            skipped += 1
            return true
        }
        results.append(make())
        return !isFull
    }
}

/// The positions `0..<count` in the order `before` gives; with `keeping`,
/// only that many of the first. When they are few beside `count`, a bounded
/// max-heap keeps the best seen so far, so the rest are never sorted.
func firstPositions(_ count: Int, keeping: Int?, by before: (Int, Int) -> Bool) -> [Int] {
    guard let keeping, keeping < count / 4 else {
        var positions = Array(0..<count)
        positions.sort(by: before)
        return keeping.map { Array(positions.prefix($0)) } ?? positions
    }
    guard keeping > 0 else { return [] }
    // heap[0] is the worst kept position; a better one replaces it.
    var heap: [Int] = []
    heap.reserveCapacity(keeping)
    func siftDown(_ start: Int) { heapSiftDown(&heap, from: start) { before($1, $0) } }
    func siftUp(_ start: Int) {
        var child = start
        while child > 0, before(heap[(child - 1) / 2], heap[child]) {
            heap.swapAt(child, (child - 1) / 2)
            child = (child - 1) / 2
        }
    }
    for position in 0..<count {
        if heap.count < keeping {
            heap.append(position)
            siftUp(heap.count - 1)
        } else if before(position, heap[0]) {
            heap[0] = position
            siftDown(0)
        }
    }
    heap.sort(by: before)
    return heap
}

/// Moves `heap[start]` down a binary heap of positions until no child
/// belongs above it; `above(a, b)` says whether `a` belongs above `b`.
func heapSiftDown(_ heap: inout [Int], from start: Int, above: (Int, Int) -> Bool) {
    var parent = start
    while true {
        let left = 2 * parent + 1, right = left + 1
        var top = parent
        if left < heap.count, above(heap[left], heap[top]) { top = left }
        if right < heap.count, above(heap[right], heap[top]) { top = right }
        if top == parent { return }
        heap.swapAt(parent, top)
        parent = top
    }
}

extension QueryPlan {
    func describe(_ spec: QuerySpec, _ contents: TableStorage) -> String {
        var lines = ["query \(contents.name) (\(total) entities)"]
        let name = { (position: Int) in "index \(contents.name).\(contents.indexes[position].definition.name)" }
        let ranges = { (ranges: [KeyRange]) in ranges.map(\.description).joined(separator: " | ") }
        if let walk, walk.runs.count > 1 {
            let shown = walk.runs.prefix(4).map(\.description).joined(separator: " | ") + (walk.runs.count > 4 ? " | …" : "")
            lines.append("  walk \(name(walk.position))\(walk.descending ? " backwards" : ""), merging \(walk.runs.count) runs (\(shown)): reads about \(estimate) entities")
        } else if let walk {
            lines.append("  walk \(name(walk.position))\(walk.descending ? " backwards" : "") (\(ranges(walk.runs))): reads about \(estimate) entities")
        } else {
            switch access {
            case .scan: lines.append("  scan: every entity, in identifier order")
            case let .identifiers(ids): lines.append("  use the primary key: \(ids.count) identifier(s)")
            case let .index(position, within):
                lines.append("  use \(name(position)) (\(ranges(within))): reads \(estimate) entities")
            case let .intersection(first, second):
                lines.append("  intersect \(name(first.position)) (\(ranges(first.ranges))) with \(name(second.position)) (\(ranges(second.ranges))): reads \(estimate) entries")
            }
        }
        let terms = { (positions: [Int]) in positions.map { spec.terms[$0].text }.joined(separator: " && ") }
        if !residual.isEmpty {
            lines.append("  filter: \(terms(residual))")
        } else if !spec.terms.isEmpty {
            lines.append("  filter: \(terms(Array(spec.terms.indices))), which the index ranges decide: nothing left to check")
        }
        let keys = (spec.identifierOrderCount.map { ["\($0) identifiers first"] } ?? [])
            + spec.orderKeys.map { "\($0.path)" + ($0.descending ? " descending" : "") } + ["id"]
        if let walk {
            lines.append("  order: \(keys.joined(separator: ", ")) by walking \(name(walk.position))\(walk.descending ? " backwards" : ""), stopping once the page is full")
        } else if case .scan = access, spec.isIdentifierOrder {
            lines.append("  order: id, as the scan reads them")
        } else {
            let kept = spec.pageEnd.map { ", keeping the first \($0)" } ?? ""
            lines.append("  order: \(keys.joined(separator: ", ")) by sorting the matches\(kept)")
        }
        if let after = spec.afterText { lines.append("  after: \(after)") }
        if spec.offset > 0 || spec.limit != nil {
            lines.append("  offset \(spec.offset)" + (spec.limit.map { ", limit \($0)" } ?? ""))
        }
        let weighed = alternatives.map { String(format: "%@ (reads %.0f, cost %.0f)", $0.way.name(contents), $0.reads, $0.cost) }
        lines.append(String(format: "  estimates: ~%.0f matches; chose ", matches) + weighed.first!
            + (weighed.count > 1 ? " over " + weighed.dropFirst().joined(separator: ", ") : "")
            + (reused ? ", the way an earlier query of this shape chose (no other way weighed)" : ""))
        return lines.joined(separator: "\n")
    }
}

extension KeyRange {
    /// The prefix of a walk's run with `value` on the order's field (at
    /// `field`, after the run's equalities); the run's own prefix when an
    /// equality fixes that field already, whose value then stands.
    fileprivate func prefix(atField field: Int, equalTo value: IndexValue) -> [IndexValue] {
        prefix.count == field ? prefix.appending(value) : prefix
    }
}
