import Foundation

/// How a query finds its entities, chosen against one version's indexes;
/// ``Query/explain()`` prints it with the estimates that chose it.
struct QueryPlan {
    enum Access {
        /// Every entity, in identifier order.
        case scan
        /// The entries of one index within these ranges.
        case index(position: Int, ranges: [KeyRange])
        /// The entities with these identifiers (an `==` or `in` on `\.id`).
        case identifiers([IndexValue])
        /// The entities two indexes both find: the smaller one's identifiers,
        /// sorted, probed by the other's entries.
        case intersection(first: (position: Int, ranges: [KeyRange]), second: (position: Int, ranges: [KeyRange]))
    }

    /// An index walked in the query's order, so no sort of the matches is
    /// needed and a limit stops the walk early: one range, or several runs
    /// merged (``IndexStorage/forEachMerged(runs:field:descending:startingAt:_:)``),
    /// each fixing the fields before the order's, as `city == c && age in
    /// a...b` does on an index on city, age and score ordered by score.
    struct Walk {
        var position: Int
        var descending: Bool
        var runs: [KeyRange]
        /// The index field the order follows; every run fixes those before it.
        var field: Int
        /// The ranks of each run's entries in the version planned on, when
        /// planning found them (runs made from a range's distinct values):
        /// a single run with nothing to check skips its offset by them.
        var runRanks: [Range<Int>]? = nil
    }

    /// One way the planner weighed, for ``Query/explain()``.
    struct Alternative {
        /// Named only when explained: a plan weighs several per query.
        var way: Way
        /// Entries it would read.
        var reads: Double
        /// Reads, filter work and sorting, in units of one entry read.
        var cost: Double
    }

    enum Way: Equatable {
        case primaryKey
        case scan
        case index(Int)
        case intersection(Int, Int, merged: Bool)
        case walk(Int, descending: Bool, runs: Int)

        func name(_ contents: TableStorage) -> String {
            let index = { (position: Int) in "index \(contents.name).\(contents.indexes[position].definition.name)" }
            switch self {
            case .primaryKey: return "primary key"
            case .scan: return "scan"
            case let .index(position): return index(position)
            case let .intersection(first, second, merged): return "intersection of \(index(first)) and \(index(second))\(merged ? ", merged" : "")"
            case let .walk(position, descending, runs):
                return "walk \(index(position))\(descending ? " backwards" : "")\(runs > 1 ? ", merging \(runs) runs" : "")"
            }
        }
    }

    var access: Access
    /// How many entities the access reads (exact for index ranges).
    var estimate: Int
    /// Set when results come in the query's order by walking an index.
    var walk: Walk?
    /// The terms (positions in ``QuerySpec/terms``) the access does not
    /// guarantee, checked on each candidate; empty when the index ranges
    /// imply every condition.
    var residual: [Int]
    /// How many entities are expected to match.
    var matches: Double
    var total: Int
    /// Every way weighed, the chosen one first.
    var alternatives: [Alternative] = []
    /// Whether the way was chosen for an earlier query of the same shape,
    /// and only its own estimate was made (``PlanCache``).
    var reused = false
}

/// Chooses a plan by estimated cost: the primary key; the index range that
/// reads the fewest entries (equality, `in`, ranges, equalities then a
/// range on a composite index); an intersection of two selective indexes;
/// an index walked in the order asked for, within one run or merging
/// several, stopping once offset + limit results are found; or a scan.
/// Index ranges are counted exactly in O(log n); conditions no index serves
/// count as halving the matches, and conditions on different fields as
/// independent.
///
/// A class, used by one thread for one plan: its methods and the closures
/// they pass share one planner, where a struct holding a table's storage
/// and a query would be copied, with every reference in them retained.
final class QueryPlanner {
    let contents: TableStorage
    let spec: QuerySpec
    /// For each index, its fields: read when a plan is weighed, not when
    /// one is reused.
    private lazy var paths: [[AnyKeyPath]] = contents.indexes.map(\.definition.paths)
    /// For each index, for each of its fields, the terms on that field:
    /// found when a plan first asks, since a reused plan asks of one index.
    private var termsOnFieldFound: [[[Int]]?]
    /// The ranks and end keys of the ranges counted so far by this planner. A plan
    /// counts a few ranges, so they are looked up in order, which costs
    /// less than hashing their values.
    private var counted: [(position: Int, range: KeyRange, ends: RangeEnds)] = []

    init(contents: TableStorage, spec: QuerySpec) {
        self.contents = contents
        self.spec = spec
        termsOnFieldFound = Array(repeating: nil, count: contents.indexes.count)
    }

    /// For each field of the index at `position`, the terms on that field.
    /// Comparing key paths walks their components: done once a plan, for
    /// each indexed field, not for each way the plan weighs, and not at all
    /// for a way reused (``know(_:position:)``).
    func termsOnField(_ position: Int) -> [[Int]] {
        if let found = termsOnFieldFound[position] { return found }
        let found = paths[position].map { path in
            spec.terms.indices.filter { spec.terms[$0].path.map { $0 == path } ?? false }
        }
        termsOnFieldFound[position] = found
        return found
    }

    /// Tells the planner the terms on each field of the index at
    /// `position`, as ``termsOnField(_:)`` found them for an earlier query
    /// of this one's shape (``PlanShape``).
    func know(_ termsOnField: [[Int]], orderField: Int?, position: Int) {
        termsOnFieldFound[position] = termsOnField
        orderFieldKnown = (position, orderField)
    }

    /// The order's first field, known for one index.
    private var orderFieldKnown: (position: Int, field: Int?)?

    /// Which field of the index at `position` the order's first key is, if any.
    func orderField(_ position: Int) -> Int? {
        if let known = orderFieldKnown, known.position == position { return known.field }
        guard let first = spec.orderKeys.first else { return nil }
        return paths[position].firstIndex(of: first.path)
    }

    /// An index range narrowing the candidates, with the conditions it makes redundant.
    private struct Candidate {
        var position: Int
        var ranges: [KeyRange]
        var count: Int
        var implied: TermSet
        /// Whether its entries come in identifier order: one range of
        /// equal keys, which an index orders by identifier.
        var inIdentifierOrder: Bool
    }

    // Costs in units of reading one index entry in order. Checking a
    // condition on a candidate reaches its row, elsewhere in memory, and
    // runs the condition; comparing two sort keys or identifiers is cheap.
    private static var checkCost: Double { 2 }
    private static var comparisonCost: Double { 0.1 }

    func plan() -> QueryPlan {
        let total = contents.rows.count
        let candidates = indexCandidates()
        // A range that decides every condition holds the matches exactly.
        let exactMatches = candidates.first { $0.implied.count == spec.terms.count }.map { Double($0.count) }
        let matches = exactMatches ?? estimatedMatches(total: total)
        // The primary key serves equality and `in` on the identifier: never more reads than matches.
        if let (ids, implied) = identifiers(), ids.count <= candidates.first?.count ?? total {
            var plan = QueryPlan(access: .identifiers(ids), estimate: ids.count, residual: residual(implied),
                                 matches: min(matches, Double(ids.count)), total: total)
            plan.alternatives = [.init(way: .primaryKey, reads: Double(ids.count), cost: Double(ids.count))]
            return plan
        }
        var options: [QueryPlan] = []
        var scan = QueryPlan(access: .scan, estimate: total, residual: residual([]), matches: matches, total: total)
        scan.alternatives = [.init(way: .scan, reads: Double(total), cost: cost(reads: total, residual: scan.residual, matches: matches, sortedAlready: spec.isIdentifierOrder))]
        options.append(scan)
        for candidate in candidates.prefix(4) { options.append(indexPlan(candidate, matches: matches, total: total)) }
        if let intersection = intersection(candidates, matches: matches, total: total) { options.append(intersection) }
        // Only an exact count of the matches bounds what a walk reads.
        let cheapest = exactMatches == nil ? .infinity : options.map { $0.alternatives[0].cost }.min()!
        options += walks(matches: matches, total: total, toBeat: cheapest)
        // Plans are chosen by position, so only the chosen one is copied.
        let best = options.indices.min { options[$0].alternatives[0].cost < options[$1].alternatives[0].cost }!
        var chosen = options.remove(at: best)
        for option in options where option.alternatives[0].way != chosen.alternatives[0].way {
            chosen.alternatives.append(option.alternatives[0])
        }
        return chosen
    }

    /// The plan `way` gives this query, when an earlier query of the same
    /// shape (``PlanShape``) chose it and it is still as good as any:
    /// nil when it does not apply here, and the query is planned afresh.
    ///
    /// Only ways that leave nothing to check are reused, and only where no
    /// other way costs less: an index range, which reads exactly the
    /// matches, when there is no limit or the matches are within offset +
    /// limit (every way reads them then); a walk in the query's order,
    /// when it costs no more than reading its matches as a range and
    /// sorting them (with a limit it reads at most offset + limit entries,
    /// but merging runs costs a descent each). Counting the other ways is
    /// what this saves: most of planning a query that an index decides.
    func reusing(_ way: QueryPlan.Way) -> QueryPlan? {
        let total = contents.rows.count
        switch way {
        case let .index(position):
            guard let candidate = candidate(position: position), candidate.implied.count == spec.terms.count,
                  spec.pageEnd.map({ candidate.count <= $0 }) ?? true else { return nil }
            return indexPlan(candidate, matches: Double(candidate.count), total: total)
        case let .walk(position, descending, _):
            guard spec.identifierOrderCount == nil, let first = spec.orderKeys.first, first.indexOrdered, first.descending == descending,
                  let field = orderField(position) else { return nil }
            let onField = termsOnField(position)
            let conditions = (0...field).map { Conditions(onField[$0], spec.terms) }
            // Runs that imply every condition hold exactly the matches.
            guard let runs = walkRuns(position, conditions), runs.implied.count == spec.terms.count else { return nil }
            let plan = walkPlan(position, field: field, runs, matches: Double(runs.entries), total: total)
            // The runs hold exactly the matches: as a range, reading them
            // and sorting them is the way to beat.
            let asRange = cost(reads: runs.entries, residual: [], matches: Double(runs.entries), sortedAlready: false)
            return plan.alternatives[0].cost <= asRange ? plan : nil
        case .primaryKey, .scan, .intersection:
            return nil
        }
    }

    /// Reading the ranges of `candidate`, then checking what they leave.
    private func indexPlan(_ candidate: Candidate, matches: Double, total: Int) -> QueryPlan {
        var plan = QueryPlan(access: .index(position: candidate.position, ranges: candidate.ranges), estimate: candidate.count,
                             residual: residual(candidate.implied), matches: min(matches, Double(candidate.count)), total: total)
        plan.alternatives = [.init(way: .index(candidate.position), reads: Double(candidate.count),
                                   cost: cost(reads: candidate.count, residual: plan.residual, matches: plan.matches, sortedAlready: false))]
        return plan
    }

    /// The index ranges that narrow the candidates, fewest entries first.
    /// Indexes on more fields come first, being the most specific. A range
    /// that decides every condition holds exactly the matches, which any
    /// other range holds too: once one is found, the indexes left are not
    /// counted.
    private func indexCandidates() -> [Candidate] {
        let order = paths.indices.sorted { paths[$0].count > paths[$1].count }
        var found: [Candidate] = []
        for position in order {
            guard var candidate = candidate(position: position) else { continue }
            if candidate.implied.count == spec.terms.count {
                // The same ranges read from the index with the fewest
                // fields that begins with those the ranges fix: its entries
                // are smaller, and equal keys come in identifier order.
                let fixed = candidate.ranges.map { $0.prefix.count + ($0.lower == nil && $0.upper == nil ? 0 : 1) }.max() ?? 0
                let leading = paths[position].prefix(fixed)
                if fixed > 0, let narrowest = order.last(where: { paths[$0].count >= fixed && paths[$0].prefix(fixed) == leading }),
                   paths[narrowest].count < paths[position].count {
                    candidate.position = narrowest
                    candidate.inIdentifierOrder = candidate.ranges.count == 1 && candidate.ranges[0].prefix.count == paths[narrowest].count
                }
                found.append(candidate)
                break
            }
            found.append(candidate)
        }
        return found.sorted { $0.count != $1.count ? $0.count < $1.count : paths[$0.position].count < paths[$1.position].count }
    }

    /// The estimated cost of reading `reads` entries, checking `residual` on
    /// each (or on `checked` of them), and ordering the `matches` (only the
    /// offset + limit first ones when there is a limit) unless they come in
    /// order already.
    private func cost(reads: Int, residual: [Int], matches: Double, sortedAlready: Bool, checked: Int? = nil) -> Double {
        var cost = Double(reads) + (residual.isEmpty ? 0 : Self.checkCost * Double(checked ?? reads))
        if !sortedAlready, matches > 1 {
            let kept = spec.pageEnd.map { Double($0) } ?? matches
            cost += Self.comparisonCost * matches * log2(max(2, min(kept, matches)))
        }
        return cost
    }

    /// The terms `implied` does not cover.
    private func residual(_ implied: TermSet) -> [Int] {
        spec.terms.indices.filter { !implied.contains($0) }
    }

    /// How many entities are expected to match: per field, the share an
    /// index on it finds for the conditions on it; per condition no index
    /// can count, a half.
    private func estimatedMatches(total: Int) -> Double {
        guard total > 0 else { return 0 }
        var share = 1.0
        var counted = TermSet()
        for position in paths.indices where paths[position].count == 1 {
            guard let conditions = Conditions(termsOnField(position)[0], spec.terms), !conditions.used.isSubset(of: counted) else { continue }
            let ranges = conditions.ranges(prefix: [])
            share *= Double(ranges.reduce(0) { $0 + count(position, $1) }) / Double(total)
            counted.formUnion(conditions.used)
        }
        share *= pow(0.5, Double(spec.terms.count - counted.count))
        return max(Double(total) * share, 0)
    }

    /// The ranges of the index at `position` that hold every entity the
    /// conditions allow, with their count and the conditions they imply;
    /// nil when the index cannot narrow them. Equalities (`==`, `in`) fix
    /// fields in turn, until an `in` past the first field would multiply
    /// the ranges past ``maxRanges``: that field and those after are left
    /// to the filter. The first field without an equality ends the ranges
    /// with its bounds, if it has any.
    private func candidate(position: Int) -> Candidate? {
        let fields = termsOnField(position)
        guard let first = Conditions(fields[0], spec.terms) else { return nil }
        var prefixes: [[IndexValue]] = [[]]
        var ranges: [KeyRange]?
        var implied = TermSet()
        for field in fields.indices {
            guard let conditions = field == 0 ? first : Conditions(fields[field], spec.terms) else { break }
            if field > 0, let equals = conditions.equals, Self.multiplies(prefixes.count, by: equals.count) { break }
            implied.formUnion(conditions.implied)
            guard let equals = conditions.equals, field < fields.count - 1 else {
                ranges = prefixes.count == 1 ? conditions.ranges(prefix: prefixes[0]) : prefixes.flatMap { conditions.ranges(prefix: $0) }
                break
            }
            prefixes.extend(by: equals)
        }
        var found = ranges ?? prefixes.map { KeyRange(prefix: $0) }
        if found.contains(where: \.isEmpty) { found.removeAll(where: \.isEmpty) }
        let inIdentifierOrder = found.count == 1 && found[0].prefix.count == fields.count
        return Candidate(position: position, ranges: found, count: found.reduce(0) { $0 + count(position, $1) },
                         implied: implied, inIdentifierOrder: inIdentifierOrder)
    }

    /// The most ranges a plan reads one index by, unless the values of an
    /// `in` on the index's first field alone are more; and the most runs a
    /// merged walk merges.
    private static var maxRanges: Int { 64 }

    /// Whether following each of `count` ranges (or runs) by each of
    /// `values` values makes more than ``maxRanges``: asked before they are
    /// made, since two `in` lists of a thousand values would make a
    /// million. One value multiplies nothing.
    private static func multiplies(_ count: Int, by values: Int) -> Bool {
        values > 1 && count * values > maxRanges
    }

    /// Starting one run of a merged walk, in entry reads: a descent.
    private static var seekCost: Double { 8 }

    /// Two indexes on different fields: the intersection reads both but
    /// reaches only the rows of the common identifiers, which pays where
    /// each alone would leave many rows to check. Two ranges of equal keys
    /// come in identifier order and merge in one pass; otherwise the
    /// first's identifiers are sorted and probed.
    private func intersection(_ candidates: [Candidate], matches: Double, total: Int) -> QueryPlan? {
        guard let best = candidates.first, best.count > 0 else { return nil }
        guard let second = candidates.dropFirst().first(where: { paths[$0.position][0] != paths[best.position][0] }) else { return nil }
        let merging = best.inIdentifierOrder && second.inIdentifierOrder
        var plan = QueryPlan(
            access: .intersection(first: (best.position, best.ranges), second: (second.position, second.ranges)),
            estimate: best.count + second.count, residual: residual(best.implied.union(second.implied)),
            matches: min(matches, Double(best.count)), total: total)
        let reads = best.count + second.count
        let probing = merging ? 0 : Self.comparisonCost * Double(reads) * log2(Double(max(best.count, 2)))
        plan.alternatives = [.init(
            way: .intersection(best.position, second.position, merged: merging),
            reads: Double(reads),
            cost: cost(reads: reads, residual: plan.residual, matches: plan.matches, sortedAlready: false,
                       checked: Int(plan.matches.rounded(.up))) + probing)]
        return plan
    }

    /// Index walks that yield the query's order: an index on the order's
    /// first key, after fields that equalities fix (one run) or that `in`
    /// or a range on the field just before split into a few runs, each in
    /// order, merged as the walk goes. A walk reads about (offset + limit)
    /// ÷ (the share of walked entries that match) entries before it stops,
    /// and a merge first starts each run with a descent.
    ///
    /// A walk that cannot cost less than `toBeat` is not counted: it reads
    /// at least the matches (when `matches` is exact) or the page's
    /// entries, whichever is fewer (its runs hold every match), and checks
    /// each when a condition is left.
    private func walks(matches: Double, total: Int, toBeat: Double) -> [QueryPlan] {
        guard spec.identifierOrderCount == nil, let first = spec.orderKeys.first, first.indexOrdered else { return [] }
        var plans: [QueryPlan] = []
        var toBeat = toBeat
        let fewestReads = min(matches, spec.pageEnd.map { Double($0) + 1 } ?? matches)
        for position in paths.indices {
            guard let field = orderField(position) else { continue }
            let onField = termsOnField(position)
            let conditions = (0...field).map { Conditions(onField[$0], spec.terms) }
            guard let impliedAtMost = walkImplied(conditions) else { continue }
            if fewestReads * (impliedAtMost.count == spec.terms.count ? 1 : 1 + Self.checkCost) >= toBeat { continue }
            guard let runs = walkRuns(position, conditions) else { continue }
            let plan = walkPlan(position, field: field, runs, matches: matches, total: total)
            toBeat = min(toBeat, plan.alternatives[0].cost)
            plans.append(plan)
        }
        return plans
    }

    /// The walk of the index at `position` in the order of its `field`
    /// through `walked`.
    private func walkPlan(_ position: Int, field: Int, _ walked: WalkRuns, matches: Double, total: Int) -> QueryPlan {
        let descending = spec.orderKeys[0].descending
        let runs = walked.runs, inRange = walked.entries, implied = walked.implied
        let residual = residual(implied)
        // The share of the walked entries that match, from the matches
        // expected in the whole table and how many the runs hold.
        let share = inRange == 0 ? 1 : min(1, max(matches, 1) / Double(inRange))
        let wanted = spec.pageEnd.map { Double($0) } ?? Double(inRange)
        let reads = min(Double(inRange), (wanted + 1) / share)
        let merging = runs.count > 1
            ? Double(runs.count) * Self.seekCost + Self.comparisonCost * reads * log2(Double(runs.count)) : 0
        var plan = QueryPlan(access: .index(position: position, ranges: runs), estimate: Int(reads.rounded(.up)),
                             walk: .init(position: position, descending: descending, runs: runs, field: field, runRanks: walked.ranks),
                             residual: residual, matches: min(matches, Double(inRange)), total: total)
        plan.alternatives = [.init(way: .walk(position, descending: descending, runs: runs.count), reads: reads,
                                   cost: reads * (residual.isEmpty ? 1 : 1 + Self.checkCost) + merging)]
        return plan
    }

    /// The conditions a walk in the order of an index's field would imply
    /// at most, given `conditions` on that field and the ones before it (in
    /// index order); nil when those before cannot all be fixed, each by an
    /// equality or, the one just before, by a range. Counts nothing.
    private func walkImplied(_ conditions: [Conditions?]) -> TermSet? {
        let field = conditions.count - 1
        var implied = TermSet()
        for (before, conditions) in conditions.enumerated() {
            guard let conditions else {
                if before == field { break }
                return nil
            }
            guard before == field || conditions.equals != nil || before == field - 1 else { return nil }
            implied.formUnion(conditions.implied)
        }
        return implied
    }

    /// The runs a walk of the index at `position` in the order of its
    /// field takes, how many entries they hold, and the conditions they
    /// imply, from `conditions` on that field and the ones before it (in
    /// index order); nil when the fields before are not fixed. Each field
    /// before is fixed by equality (`in` gives a run per value) or, the one
    /// just before, by a range whose distinct values are found by descents;
    /// that search is made only under a limit, where the range holds more
    /// entries than the page reaches (else reading them all costs no more),
    /// and gives up past ``maxRanges`` values, as the walk does when `in`
    /// values would make more runs than that.
    private func walkRuns(_ position: Int, _ conditions: [Conditions?]) -> WalkRuns? {
        let field = conditions.count - 1
        // Each prefix grows by a value a field, most often in place: one
        // equality per field leaves one prefix, with room for every field.
        var first: [IndexValue] = []
        first.reserveCapacity(field + 1)
        var prefixes = [first]
        var implied = TermSet()
        // The entries of the ranges whose distinct values made the runs.
        var searched: Int?
        // The ranks of the runs those distinct values made.
        var runRanks: [Range<Int>]?
        for before in 0..<field {
            guard let conditions = conditions[before] else { return nil }
            if let equals = conditions.equals {
                guard !Self.multiplies(prefixes.count, by: equals.count) else { return nil }
                prefixes.extend(by: equals)
            } else {
                guard before == field - 1, let pageEnd = spec.pageEnd else { return nil }
                let ranges = prefixes.map { KeyRange(prefix: $0, lower: conditions.lower, upper: conditions.upper) }
                let entries = ranges.reduce(0) { $0 + count(position, $1) }
                guard entries > pageEnd else { return nil }
                var found: [[IndexValue]] = []
                var foundRanks: [Range<Int>] = []
                for range in ranges {
                    let room = Self.maxRanges - found.count
                    guard let values = contents.indexes[position].distinctRuns(
                        within: ends(position, range), prefix: range.prefix, field: before, limit: room) else { return nil }
                    for (value, ranks) in values {
                        var prefix = range.prefix
                        prefix.append(value)
                        found.append(prefix)
                        foundRanks.append(ranks)
                    }
                }
                prefixes = found
                runRanks = foundRanks
                searched = entries
            }
            implied.formUnion(conditions.implied)
            guard prefixes.count <= Self.maxRanges else { return nil }
        }
        // The order's own field: one equality or its bounds narrow each
        // run (several values would interleave within it).
        var runs = prefixes.map { KeyRange(prefix: $0) }
        if let conditions = conditions[field], (conditions.equals?.count ?? 1) == 1 {
            runs = prefixes.map { conditions.ranges(prefix: $0)[0] }
            implied.formUnion(conditions.implied)
            searched = nil
            runRanks = nil
        }
        // Runs made from values only (the ones ranked) are never empty.
        runs.removeAll(where: \.isEmpty)
        return WalkRuns(runs: runs, entries: searched ?? runs.reduce(0) { $0 + count(position, $1) }, implied: implied, ranks: runRanks)
    }

    /// The runs a walk takes (``walkRuns(_:_:)``), how many entries they
    /// hold, the conditions they imply, and their ranks when known.
    private struct WalkRuns {
        var runs: [KeyRange]
        var entries: Int
        var implied: TermSet
        var ranks: [Range<Int>]?
    }

    /// The entries of the index at `position` within `range`, counted once a
    /// plan: the estimates, the candidates and the walks ask for the same ranges.
    private func count(_ position: Int, _ range: KeyRange) -> Int {
        if range == .everything { return contents.indexes[position].count }
        return ranks(position, range).count
    }

    /// The ranks of the entries of the index at `position` within `range`,
    /// found once a plan.
    private func ranks(_ position: Int, _ range: KeyRange) -> Range<Int> {
        ends(position, range).ranks
    }

    /// ``ranks(_:_:)`` with the range's first and last keys, when known.
    private func ends(_ position: Int, _ range: KeyRange) -> RangeEnds {
        if let known = counted.first(where: { $0.position == position && $0.range == range }) { return known.ends }
        let ends = contents.indexes[position].ends(of: range)
        counted.append((position, range, ends))
        return ends
    }

    /// The identifiers an `==` or `in` on the identifier names, with the term that names them.
    private func identifiers() -> ([IndexValue], TermSet)? {
        let onIdentifier = spec.terms.indices.filter { spec.terms[$0].isIdentifier }
        guard let conditions = Conditions(onIdentifier, spec.terms), let ids = conditions.equals else { return nil }
        return (ids, conditions.equalsFrom.map { [$0] } ?? [])
    }
}

/// What the top-level conditions say about one field: the values it must
/// equal (one for `==`, several for `in`), or the bounds it must lie within,
/// and which conditions an index range built from them makes redundant.
struct Conditions {
    var equals: [IndexValue]?
    var lower: KeyRange.Bound?
    var upper: KeyRange.Bound?
    /// The condition (a position among the conjuncts) that set ``equals``.
    var equalsFrom: Int?
    /// The conditions folded into the bounds.
    var boundsFrom = TermSet()
    /// Whether each folded condition means exactly what the index order
    /// says (no NaN, whose `==` differs from the index's).
    private var exact = true

    /// The conditions of `positions`, terms all on one field.
    init?(_ positions: [Int], _ terms: [QueryTerm]) {
        for position in positions {
            switch terms[position].shape {
            case let .comparison(op, value?):
                if value.isNaN { exact = false }
                switch op {
                case .equal:
                    equals = [value]
                    equalsFrom = position
                case .notEqual: continue
                case .less: tighten(upper: .init(value: value, inclusive: false), from: position)
                case .lessOrEqual: tighten(upper: .init(value: value, inclusive: true), from: position)
                case .greater: tighten(lower: .init(value: value, inclusive: false), from: position)
                case .greaterOrEqual: tighten(lower: .init(value: value, inclusive: true), from: position)
                }
            case let .membership(values?) where equals == nil:
                if values.contains(where: \.isNaN) { exact = false }
                // One range per key: a program's own `IndexableValue` may
                // give two of its values one key, whose range would then be
                // read twice.
                equals = values.sorted().reduce(into: []) { distinct, value in
                    if distinct.last.map({ $0 < value }) ?? true { distinct.append(value) }
                }
                equalsFrom = position
            default: continue
            }
        }
        guard equals != nil || lower != nil || upper != nil else { return nil }
        // An ordering comparison never holds for nil, which indexes put first.
        if equals == nil && lower == nil { lower = .init(value: .null, inclusive: false) }
    }

    /// Every condition on the field that the ranges of ``ranges(prefix:)`` decide.
    var used: TermSet {
        var used = boundsFrom
        if let equalsFrom { used.insert(equalsFrom) }
        return used
    }

    /// The conditions an index range built from these conditions makes
    /// redundant: the equality that picked the values (bounds are not
    /// applied beside one), or else every bound.
    var implied: TermSet {
        guard exact else { return [] }
        guard let equalsFrom else { return boundsFrom }
        // Not the literal `[equalsFrom]`: its variadic array is an
        // allocation, in every query's plan.
        var implied = TermSet()
        implied.insert(equalsFrom)
        return implied
    }

    /// The ranges of an index whose earlier fields equal `prefix` and whose
    /// next field is this one.
    func ranges(prefix: [IndexValue]) -> [KeyRange] {
        if let equals { return equals.map { KeyRange(prefix: prefix.appending($0)) } }
        return [KeyRange(prefix: prefix, lower: lower, upper: upper)]
    }

    private mutating func tighten(lower bound: KeyRange.Bound, from position: Int) {
        boundsFrom.insert(position)
        guard let current = lower else { lower = bound; return }
        if current.value < bound.value || (current.value == bound.value && !bound.inclusive) { lower = bound }
    }

    private mutating func tighten(upper bound: KeyRange.Bound, from position: Int) {
        boundsFrom.insert(position)
        guard let current = upper else { upper = bound; return }
        if bound.value < current.value || (current.value == bound.value && !bound.inclusive) { upper = bound }
    }
}

extension Array {
    /// A copy with `element` after the rest: one allocation, where
    /// `self + [element]` makes two.
    func appending(_ element: Element) -> [Element] {
        var copy = self
        copy.append(element)
        return copy
    }
}

extension [[IndexValue]] {
    /// Each key prefix followed by each of `values`, a prefix for every
    /// pair, in order. One value, the most common case, grows every prefix
    /// in place.
    mutating func extend(by values: [IndexValue]) {
        if values.count == 1 {
            for place in indices { self[place].append(values[0]) }
        } else {
            self = flatMap { prefix in values.map { prefix.appending($0) } }
        }
    }
}
