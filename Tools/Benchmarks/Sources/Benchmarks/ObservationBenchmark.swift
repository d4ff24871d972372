import Foundation
import LensDB
import LensLog

/// The cost of live queries to commits: 1,000 live queries on distinct
/// cities against none, single-entity durable commits taking turns on two
/// like stores; the latency from a commit to its consumer; and graph().
let observationWorkload = Workload(
    name: "observers",
    summary: "commit throughput with 1,000 live queries vs none, emission latency, graph() of 1,000 roots"
) {
    let quietPath = BenchPath("observe-quiet"), watchedPath = BenchPath("observe-watched")
    defer { quietPath.remove(); watchedPath.remove() }
    let (quietStore, quiet) = try openLensPeople(quietPath.path)
    let (watchedStore, watched) = try openLensPeople(watchedPath.path)
    let people = (1...10_000).map { id in with(BenchPerson.make(Int64(id))) { $0.city = "City \(id % 1000)" } }
    try quiet.put(people)
    try watched.put(people)
    let consumers = (0..<1000).map { city in
        Task.detached { for await _ in watched.query.filter(\.city == "City \(city)").values {} }
    }
    var version = 0
    func commit(_ table: LensDB.Table<BenchPerson>, _ deadline: Double) throws -> Int {
        var count = 0
        while now() < deadline {
            version += 1
            try table.put(with(people[version % people.count]) { $0.score = Double(version) })
            count += 1
        }
        return count
    }
    let results = try interleave([
        Contender(name: "no live query") { try commit(quiet, $0) },
        Contender(name: "1,000 live queries") { try commit(watched, $0) },
    ], rounds: 8, window: 0.5)
    let latencies = try emissionLatencies(watched)
    for consumer in consumers { consumer.cancel() }
    let graphSeconds = try graphCost(watchedStore)
    printTable(["measure", "value", "per round: median (min–max)", "goal"], [
        ["commits/s without live queries", format(results.rate(0)), "", ""],
        ["commits/s with 1,000 live queries", format(results.rate(1)), "", ""],
        ["with / without", String(format: "%.0f%%", results.rate(1) / results.rate(0) * 100),
         percentSpread(results.roundRatios(1) { results.roundRates[0][$0] }), "≥ 80%"],
        ["commit → consumer latency p50", String(format: "%.0f µs", latencies.p50 * 1e6), "", ""],
        ["commit → consumer latency p99", String(format: "%.0f µs", latencies.p99 * 1e6), "", ""],
        ["graph() of 1,000 roots, depth 2", String(format: "%.2f ms", graphSeconds * 1000), "", ""],
    ])
    quietStore.close()
    watchedStore.close()
}

private func with<T>(_ value: T, _ change: (inout T) -> Void) -> T {
    var copy = value
    change(&copy)
    return copy
}

/// From the start of a commit to its result arriving at a consumer.
private func emissionLatencies(_ people: LensDB.Table<BenchPerson>) throws -> (p50: Double, p99: Double) {
    let received = Locked<[Double]>([])
    // Stored scores are below 100; a score from this clock is a start time.
    let firstStart = now()
    let stream = people.query.filter(\.id == 1).values
    let consumer = Task.detached {
        for await result in stream {
            // The score carries the commit's start time.
            if let started = result.first?.score, started >= firstStart { received.withLock { $0.append(now() - started) } }
        }
    }
    for _ in 0..<500 {
        var person = BenchPerson.make(1)
        person.score = now()
        try people.put(person)
        Thread.sleep(forTimeInterval: 0.0005)
    }
    Thread.sleep(forTimeInterval: 0.05)
    consumer.cancel()
    let sorted = received.withLock { $0 }.sorted()
    guard !sorted.isEmpty else { return (.nan, .nan) }
    return (sorted[sorted.count / 2], sorted[min(sorted.count - 1, sorted.count * 99 / 100)])
}

struct BenchEmployee: Entity {
    var id: Int64
    var name: String
    var manager: Ref<BenchEmployee>?
}

/// graph() of 1,000 employees following their managers two levels up.
private func graphCost(_ store: Store) throws -> Double {
    let employees = try store.table(BenchEmployee.self, named: "employees")
    try employees.put((1...5000).map { BenchEmployee(id: $0, name: "E\($0)", manager: $0 > 1 ? Ref($0 / 2) : nil) })
    let query = employees.query.filter(\.id > 4000).limit(1000).including(\.manager).recursive(depth: 2)
    _ = try query.graph()
    let start = now()
    for _ in 0..<20 {
        let roots = try query.graph().roots.count
        precondition(roots == 1000)
    }
    return (now() - start) / 20
}
