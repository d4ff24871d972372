import Foundation
import LensDB
import LensLog

/// The consistency manager's two costs: a push that only some holders can
/// be affected by, and one merge against the size of the holder's value.
let consistencyWorkload = Workload(
    name: "consistency",
    summary: "push of one entity to 10,000 holders of which 100 contain it; merge cost per holder against value size"
) {
    pushToManyHolders()
    mergeCostBySize()
}

/// A nonisolated holder, its value behind a lock.
final class BenchHolder<Value: Codable & Sendable>: ConsistentHolder {
    private let storage: Locked<Value>
    init(_ value: Value) { storage = Locked(value) }
    var consistentValue: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}

/// An entity of a type that holds no person.
struct BenchTag: Entity {
    var id: Int64
    var label: String
}

/// Seconds per push, median of `rounds` runs of `pushes` pushes each.
private func secondsPerPush(_ manager: ConsistencyManager, rounds: Int = 7, pushes: Int) -> Double {
    var version = 0
    var samples: [Double] = []
    for _ in 0..<rounds {
        let start = now()
        for _ in 0..<pushes {
            version += 1
            var person = BenchPerson.make(42)
            person.score = Double(version)
            manager.push(person)
        }
        samples.append((now() - start) / Double(pushes))
    }
    return samples.sorted()[samples.count / 2]
}

/// 100 holders of ten people, person 42 among them, and 9,900 holders that
/// cannot contain a person (tags); against a manager with the 100 alone.
private func pushToManyHolders() {
    let containing: [BenchHolder<[BenchPerson]>] = (0..<100).map { (holder: Int) in
        BenchHolder(tenPeople(first: 1000 + holder * 10, including42: true))
    }
    let unrelated: [BenchHolder<[BenchTag]>] = (0..<9_900).map { (index: Int) in
        BenchHolder([BenchTag(id: Int64(index), label: "tag \(index)"), BenchTag(id: -1, label: "x")])
    }
    let all = ConsistencyManager(), alone = ConsistencyManager()
    for holder in containing { all.register(holder); alone.register(holder) }
    for holder in unrelated { all.register(holder) }
    // Same type, other ids: what the type cache cannot skip.
    let sameType: [BenchHolder<[BenchPerson]>] = (0..<9_900).map { (holder: Int) in
        BenchHolder(tenPeople(first: 200_000 + holder * 10, including42: false))
    }
    let crowded = ConsistencyManager()
    for holder in containing { crowded.register(holder) }
    for holder in sameType { crowded.register(holder) }

    // The 9,900 alone against no holder at all: what skipping them costs.
    let unrelatedOnly = ConsistencyManager(), none = ConsistencyManager()
    for holder in unrelated { unrelatedOnly.register(holder) }
    var totals: [Double] = [], alones: [Double] = [], skipping: [Double] = [], bare: [Double] = []
    for _ in 0..<5 {
        totals.append(secondsPerPush(all, rounds: 3, pushes: 50))
        alones.append(secondsPerPush(alone, rounds: 3, pushes: 50))
        skipping.append(secondsPerPush(unrelatedOnly, rounds: 3, pushes: 2_000))
        bare.append(secondsPerPush(none, rounds: 3, pushes: 2_000))
    }
    let total = totals.sorted()[2], only100 = alones.sorted()[2]
    let skipped = skipping.sorted()[2] - bare.sorted()[2]
    let crowdedTotal = secondsPerPush(crowded, rounds: 3, pushes: 5)
    printTable(["push of one person to 10,000 holders", "value", "goal"], [
        ["total (100 contain it, 9,900 hold tags)", String(format: "%.0f µs", total * 1e6), ""],
        ["the 100 that contain it alone", String(format: "%.0f µs", only100 * 1e6), ""],
        ["a push to the 9,900 alone / to no holder", String(format: "%.2f µs / %.2f µs", skipping.sorted()[2] * 1e6, bare.sorted()[2] * 1e6), ""],
        ["spent on the 9,900 that cannot contain it", String(format: "%.2f µs (%.2f%% of the push, %.3f ns per holder)",
                                                            skipped * 1e6, skipped / total * 100, skipped / 9_900 * 1e9), "near zero"],
        ["per holder that contains it (10 people)", String(format: "%.1f µs", only100 / 100 * 1e6), ""],
        ["for contrast: 9,900 other holders of people (other ids)", String(format: "%.0f µs (%.1f µs per holder)",
                                                                          crowdedTotal * 1e6, max(0, crowdedTotal - only100) / 9_900 * 1e6), ""],
    ])
    withExtendedLifetime((containing, unrelated, sameType)) {}
}

/// Ten people with identifiers from `first`, the sixth replaced by person 42 when asked.
private func tenPeople(first: Int, including42: Bool) -> [BenchPerson] {
    (0..<10).map { (offset: Int) -> BenchPerson in
        BenchPerson.make(including42 && offset == 5 ? 42 : Int64(first + offset))
    }
}

/// One holder of n people, person 42 among them; and one of n people
/// without it (its type can contain a person, so it is walked).
private func mergeCostBySize() {
    var rows: [[String]] = []
    for size in [1, 10, 100, 1000] {
        let people: [BenchPerson] = (0..<size).map { (index: Int) -> BenchPerson in
            BenchPerson.make(index == size / 2 ? 42 : Int64(1000 + index))
        }
        let holding = ConsistencyManager(), notHolding = ConsistencyManager()
        let holder = BenchHolder(people)
        let other = BenchHolder(people.map { (person: BenchPerson) -> BenchPerson in person.id == 42 ? BenchPerson.make(7) : person })
        holding.register(holder)
        notHolding.register(other)
        let pushes = max(5, 20_000 / size)
        let merge = secondsPerPush(holding, pushes: pushes)
        let walk = secondsPerPush(notHolding, pushes: pushes)
        precondition(holder.consistentValue[size / 2].score > 0)
        rows.append([
            "\(size)", String(format: "%.1f µs", merge * 1e6), String(format: "%.0f ns", merge / Double(size) * 1e9),
            String(format: "%.1f µs", walk * 1e6),
        ])
    }
    printTable(["people in the holder's value", "merge (contains it)", "per entity in the value", "walk only (does not contain it)"], rows)
}
