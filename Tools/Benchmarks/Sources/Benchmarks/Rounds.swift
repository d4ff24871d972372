import Foundation

/// One side of an interleaved comparison: `run` works until the deadline
/// (a `now()` value) and returns how many operations it completed.
struct Contender {
    let name: String
    let run: (_ deadline: Double) throws -> Int
}

/// What `interleave` measured: totals per contender and each round's rate.
struct RoundResults {
    var operations: [Int]
    var seconds: [Double]
    /// `roundRates[contender][round]`, operations per second.
    var roundRates: [[Double]]

    /// Operations per second of contender `index` over all its windows.
    func rate(_ index: Int) -> Double { Double(operations[index]) / seconds[index] }

    /// Each round's rate of `index` over the rate of `baseline` in the same
    /// round; `baseline` may pick the better of several contenders.
    func roundRatios(_ index: Int, over baseline: (Int) -> Double) -> [Double] {
        roundRates[index].indices.map { roundRates[index][$0] / baseline($0) }
    }
}

/// Runs the contenders in turn, `window` seconds each, for `rounds` rounds,
/// starting each round one contender later. On a shared machine the disk and
/// the CPUs have slow and fast spells lasting seconds; measured one after the
/// other, two loops can differ 2× from that alone, while short alternating
/// windows spread those spells over every contender alike.
func interleave(_ contenders: [Contender], rounds: Int, window: Double) throws -> RoundResults {
    var results = RoundResults(
        operations: Array(repeating: 0, count: contenders.count),
        seconds: Array(repeating: 0, count: contenders.count),
        roundRates: Array(repeating: [], count: contenders.count))
    for contender in contenders { _ = try contender.run(now() + window / 4) }  // warm up
    for round in 0..<rounds {
        for step in contenders.indices {
            let index = (round + step) % contenders.count
            let start = now()
            let operations = try contenders[index].run(start + window)
            let elapsed = now() - start
            results.operations[index] += operations
            results.seconds[index] += elapsed
            results.roundRates[index].append(Double(operations) / elapsed)
        }
    }
    return results
}

/// "median (min–max)" of per-round ratios, as percentages.
func percentSpread(_ ratios: [Double]) -> String {
    let sorted = ratios.sorted()
    guard let low = sorted.first, let high = sorted.last else { return "" }
    return "\(percent(sorted[sorted.count / 2])) (\(percent(low))–\(percent(high)))"
}

/// "median× (min–max×)" of per-round ratios.
func timesSpread(_ ratios: [Double]) -> String {
    let sorted = ratios.sorted()
    guard let low = sorted.first, let high = sorted.last else { return "" }
    return String(format: "%.2f× (%.2f–%.2f×)", sorted[sorted.count / 2], low, high)
}

func percent(_ ratio: Double) -> String { String(format: "%.0f%%", ratio * 100) }
