import LensDB
import LensLog

/// Typed tables under power cuts: table transactions, compactions (whose
/// snapshots store index orders) and reopens, cut at a mutating call; after
/// recovery the table must hold a prefix of the attempted transactions with
/// every durable one, and its indexes, whether built in a snapshot's stored
/// order or sorted, must answer queries as a scan of the entities does.
public struct TableCrashWorkload: Sendable {
    /// The entity of the workload: few cities and scores, so keys repeat.
    public struct Item: Entity, Equatable {
        public var id: Int64
        public var city: String
        public var score: Int
        public var tag: String?
    }

    public enum Step: Sendable {
        case write(puts: [Item], removes: [Int64])
        case compact
        case reopen
    }

    public static let indexes: [Index<Item>] = [
        .on(\.city), .on(\.score), .on(\.city, \.score), .on(\.tag), .on(\.city, \.tag, \.score),
    ]
    public static let path = "/tables.lensdb"
    static let cities = ["Paris", "Lyon", "Nice"]

    public let seed: UInt64
    public let steps: [Step]

    public init(seed: UInt64, steps count: Int) {
        self.seed = seed
        var random = SeededGenerator(seed: seed)
        steps = (0..<count).map { _ in
            switch Int.random(in: 0..<8, using: &random) {
            case 0: return .compact
            case 1: return .reopen
            default:
                let puts = (0..<Int.random(in: 1...5, using: &random)).map { _ in
                    Item(id: Int64.random(in: 1...16, using: &random), city: Self.cities.randomElement(using: &random)!,
                         score: Int.random(in: 0...5, using: &random), tag: Bool.random(using: &random) ? nil : ["a", "b"].randomElement(using: &random))
                }
                let removes = (0..<Int.random(in: 0...1, using: &random)).map { _ in Int64.random(in: 1...16, using: &random) }
                return .write(puts: Dictionary(puts.map { ($0.id, $0) }) { $1 }.values.sorted { $0.id < $1.id }, removes: removes)
            }
        }
    }

    /// The store's options: deterministic, invariants checked only by `check`.
    static func options(_ fileSystem: SimulatedFileSystem) -> StoreOptions {
        var options = CrashCheck.options(fileSystem)
        options.checksInvariants = false
        return options
    }

    /// Runs the steps until one throws: the models after each attempted
    /// transaction, and how many of them were durable.
    public func run(on fileSystem: SimulatedFileSystem) -> (models: [[Int64: Item]], durable: Int) {
        var models: [[Int64: Item]] = [[:]]
        var durable = 0
        do {
            var store = try Store(at: Self.path, options: Self.options(fileSystem))
            defer { store.close() }
            var items = try store.table(Item.self, named: "items", indexes: Self.indexes)
            for step in steps {
                switch step {
                case let .write(puts, removes):
                    var next = models.last!
                    for item in puts { next[item.id] = item }
                    for id in removes { next[id] = nil }
                    models.append(next)
                    try store.write { tx in
                        try tx[items].put(puts)
                        try tx[items].remove(removes)
                    }
                    durable = models.count - 1
                case .compact:
                    try store.compact()
                case .reopen:
                    store.close()
                    store = try Store(at: Self.path, options: Self.options(fileSystem))
                    items = try store.table(Item.self, named: "items", indexes: Self.indexes)
                }
            }
        } catch {}
        return (models, durable)
    }

    /// How many mutating calls a run without a cut makes.
    public func mutatingCalls() -> Int {
        let fileSystem = SimulatedFileSystem()
        _ = run(on: fileSystem)
        return fileSystem.mutatingCallCount
    }

    /// What one cut found.
    public struct Outcome: Sendable {
        /// What broke a promise, if anything.
        public var violation: String?
        /// Whether the open after recovery built every index in a snapshot's stored order.
        public var inStoredOrder = false
    }

    /// Cuts the power after `cut` mutating calls, crashes under `model`,
    /// reopens and checks the table and its indexes.
    public func check(cut: Int, model: CrashModel, crashSeed: UInt64) -> Outcome {
        let fileSystem = SimulatedFileSystem()
        fileSystem.powerCut(afterMutatingCalls: cut)
        let (models, durable) = run(on: fileSystem)
        fileSystem.crash(seed: crashSeed, model: model)
        var outcome = Outcome()
        do {
            var options = CrashCheck.options(fileSystem)
            options.checksInvariants = true
            let store = try Store(at: Self.path, options: options)
            defer { store.close() }
            let items = try store.table(Item.self, named: "items", indexes: Self.indexes)
            try store.checkInvariants()
            outcome.inStoredOrder = store.statistics.tables.first?.indexesInStoredOrder == Self.indexes.count
            let all = items.all()
            let found = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0) })
            guard models.indices.contains(where: { $0 >= durable && models[$0] == found }) else {
                outcome.violation = "seed \(seed) cut \(cut): the table holds no prefix with the \(durable) durable transactions"
                return outcome
            }
            for (name, answer, expected) in try Self.queries(items, all) where answer != expected {
                outcome.violation = "seed \(seed) cut \(cut): \(name) answered \(answer), a scan \(expected)"
                return outcome
            }
        } catch {
            outcome.violation = "seed \(seed) cut \(cut): the reopen failed: \(error)"
        }
        return outcome
    }

    /// Queries each index serves, with what a scan of `all` (in identifier order) answers.
    static func queries(_ items: Table<Item>, _ all: [Item]) throws -> [(String, [Int64], [Int64])] {
        func ordered(_ items: [Item], by key: (Item) -> String) -> [Int64] {
            items.enumerated().sorted { (key($0.element), $0.offset) < (key($1.element), $1.offset) }.map(\.element.id)
        }
        var checks: [(String, [Int64], [Int64])] = []
        for city in cities {
            checks.append(("city == \(city)", try items.query.filter(\.city == city).all().map(\.id), all.filter { $0.city == city }.map(\.id)))
            checks.append(("city == \(city) by score", try items.query.filter(\.city == city).sorted(by: \.score).all().map(\.id),
                           ordered(all.filter { $0.city == city }) { String($0.score) }))
        }
        checks.append(("score >= 3 by score descending, limit 4",
                        try items.query.filter(\.score >= 3).sorted(by: \.score, .descending).limit(4).all().map(\.id),
                        Array(all.filter { $0.score >= 3 }.enumerated()
                            .sorted { ($1.element.score, $0.offset) < ($0.element.score, $1.offset) }.map(\.element.id).prefix(4))))
        checks.append(("by tag", try items.query.sorted(by: \.tag).all().map(\.id), ordered(all) { $0.tag.map { "1" + $0 } ?? "0" }))
        // Runs of city+score (one per city) or of city+tag+score, merged.
        let two = Array(cities.prefix(2))
        checks.append(("city in \(two) by score, limit 5",
                       try items.query.filter(.in(\.city, two)).sorted(by: \.score).limit(5).all().map(\.id),
                       Array(ordered(all.filter { two.contains($0.city) }) { String($0.score) }.prefix(5))))
        checks.append(("city == \(cities[0]) && tag >= \"a\" by score descending, limit 3",
                       try items.query.filter(\.city == cities[0] && \.tag >= "a").sorted(by: \.score, .descending).limit(3).all().map(\.id),
                       Array(all.filter { $0.city == cities[0] && ($0.tag.map { $0 >= "a" } ?? false) }.enumerated()
                           .sorted { ($1.element.score, $0.offset) < ($0.element.score, $1.offset) }.map(\.element.id).prefix(3))))
        return checks
    }
}
