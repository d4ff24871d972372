/// A set of a query's terms, by position in ``QuerySpec/terms``: one bit
/// each, the first 64 in a word of their own, so that planning the usual
/// query allocates no set. A plan unites and counts these for every way it
/// weighs.
struct TermSet: Equatable, ExpressibleByArrayLiteral {
    private var low: UInt64 = 0
    /// Terms from the 64th on, 64 to a word; empty for most queries.
    private var high: [UInt64] = []

    init() {}

    init(_ positions: some Sequence<Int>) {
        for position in positions { insert(position) }
    }

    init(arrayLiteral positions: Int...) {
        self.init(positions)
    }

    mutating func insert(_ position: Int) {
        precondition(position >= 0, "a term's position is never negative")
        guard position >= 64 else { return low |= 1 << UInt64(position) }
        let word = position / 64 - 1
        if high.count <= word { high += repeatElement(0, count: word + 1 - high.count) }
        high[word] |= 1 << UInt64(position % 64)
    }

    func contains(_ position: Int) -> Bool {
        guard position >= 64 else { return position >= 0 && low & (1 << UInt64(position)) != 0 }
        let word = position / 64 - 1
        return word < high.count && high[word] & (1 << UInt64(position % 64)) != 0
    }

    mutating func formUnion(_ other: TermSet) {
        low |= other.low
        if high.count < other.high.count { high += repeatElement(0, count: other.high.count - high.count) }
        for word in other.high.indices { high[word] |= other.high[word] }
    }

    func union(_ other: TermSet) -> TermSet {
        var united = self
        united.formUnion(other)
        return united
    }

    func isSubset(of other: TermSet) -> Bool {
        guard low & ~other.low == 0 else { return false }
        return high.indices.allSatisfy { high[$0] & ~(($0 < other.high.count) ? other.high[$0] : 0) == 0 }
    }

    var count: Int {
        high.reduce(low.nonzeroBitCount) { $0 + $1.nonzeroBitCount }
    }

    /// Equal sets with and without trailing empty words are equal.
    static func == (a: TermSet, b: TermSet) -> Bool {
        a.isSubset(of: b) && b.isSubset(of: a)
    }
}
