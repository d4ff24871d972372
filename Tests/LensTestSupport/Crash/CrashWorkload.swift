import LensDB

/// One step of a crash workload.
public enum CrashStep: Sendable, CustomStringConvertible {
    /// One transaction, committed with the given durability.
    case write([ModelOperation], Durability)
    /// `store.flush()`: everything before it becomes durable.
    case flush
    /// `store.compact()`: a snapshot replaces the logs.
    case compact
    /// Several transactions written by one group commit (one write call, one
    /// sync for `.full`), as concurrent committers are.
    case group([[ModelOperation]], Durability)
    /// A compaction's log swap, with its snapshot left for
    /// ``finishCompaction``: the commits in between land in the new log
    /// while only the old snapshot is in effect, as they do while a
    /// background compaction writes its snapshot.
    case beginCompaction
    /// Writes the snapshot of the compaction begun last; nothing when none is paused.
    case finishCompaction
    /// `store.close()`, then a new `Store` on the same files: the clean
    /// close writes its `CLOSED` marker, the open reads and removes it.
    case reopen
    /// `store.changeEncryptionKey(to:)`: the key of ``CrashWorkload/encryptionKeys``
    /// at this index, or nil to write the store plain.
    case changeKey(Int?)

    public var description: String {
        switch self {
        case let .write(operations, durability): "write \(operations.count) ops \(durability)"
        case .flush: "flush"
        case .compact: "compact"
        case let .group(transactions, durability): "group of \(transactions.count) \(durability)"
        case .beginCompaction: "begin compaction"
        case .finishCompaction: "finish compaction"
        case .reopen: "close and reopen"
        case let .changeKey(key): "change the key to \(key.map { "key \($0)" } ?? "none")"
        }
    }
}

/// A random, replayable sequence of transactions, flushes and compactions
/// over a few tables and root documents, small enough that a power cut can
/// be tried at every one of its I/O calls.
public struct CrashWorkload: Sendable {
    public let seed: UInt64
    public let steps: [CrashStep]
    /// The index in ``encryptionKeys`` of the key the store is created with; nil: plain.
    public let initialKey: Int?

    /// The keys ``CrashStep/changeKey(_:)`` chooses from.
    public static let encryptionKeys = [TestKeys.first, TestKeys.second, TestKeys.third]

    /// Whether a random workload runs on a plain store or an encrypted one.
    public enum Encryption: String, Sendable, CaseIterable {
        /// A plain store and no key changes: the workloads of every seed as they always were.
        case plain
        /// Created under a key, with key changes (to another key, the same,
        /// or none and back) among the steps.
        case rotating
    }

    /// A workload of exactly these steps (`seed` only names it in reports).
    public init(seed: UInt64, steps: [CrashStep], initialKey: Int? = nil) {
        self.seed = seed
        self.steps = steps
        self.initialKey = initialKey
    }

    /// A random workload of `count` steps drawn from `seed`. With
    /// `.rotating`, the same steps run on an encrypted store, with key
    /// changes drawn from a generator of their own put among them, so a
    /// seed's other steps stay what they are in `.plain`.
    public init(seed: UInt64, steps count: Int, encryption: Encryption = .plain) {
        self.init(seed: seed, plainSteps: count)
        guard encryption == .rotating else { return }
        var random = SeededGenerator(seed: seed ^ 0x4B45_5953)
        var steps: [CrashStep] = []
        for step in self.steps {
            if Int.random(in: 0..<8, using: &random) == 0 {
                let target = Int.random(in: 0...Self.encryptionKeys.count, using: &random)
                steps.append(.changeKey(target == Self.encryptionKeys.count ? nil : target))
            }
            steps.append(step)
        }
        self.init(seed: seed, steps: steps, initialKey: 0)
    }

    private init(seed: UInt64, plainSteps count: Int) {
        self.seed = seed
        initialKey = nil
        var random = SeededGenerator(seed: seed)
        // What the store holds if every transaction so far commits: patches
        // are drawn only where their path exists, as lenses log them.
        var shadow = ReferenceModel()
        var steps: [CrashStep] = []
        for _ in 0..<count {
            let durability: Durability = Bool.random(using: &random) ? .full : .buffered
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<5: steps.append(.compact)
            case 5..<9: steps.append(.beginCompaction)
            case 9..<13: steps.append(.finishCompaction)
            case 13..<19: steps.append(.flush)
            case 19..<22: steps.append(.reopen)
            case 22..<31:
                let transactions = (0..<Int.random(in: 2...5, using: &random)).map { _ in Self.transaction(&random, &shadow) }
                steps.append(.group(transactions, durability))
            default:
                steps.append(.write(Self.transaction(&random, &shadow), durability))
            }
        }
        self.steps = steps
    }

    private static func transaction(_ random: inout SeededGenerator, _ shadow: inout ReferenceModel) -> [ModelOperation] {
        (0..<Int.random(in: 1...4, using: &random)).map { _ in
            let operation = Int.random(in: 0..<5, using: &random) == 0 ? documentOperation(&random, shadow) : operation(&random)
            shadow.apply([operation])
            return operation
        }
    }

    private static func operation(_ random: inout SeededGenerator) -> ModelOperation {
        if Int.random(in: 0..<4, using: &random) == 0 { return typedOperation(&random) }
        let table = ["people", "orders"][Int.random(in: 0...1, using: &random)]
        let key = Array("k\(Int.random(in: 0..<12, using: &random))".utf8)
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<5:
            // Sizes cross the compression threshold and sector boundaries.
            let size = [3, 40, 200, 700][Int.random(in: 0..<4, using: &random)]
            let fill = UInt8.random(in: 0...255, using: &random)
            let value = (0..<size).map { UInt8(truncatingIfNeeded: $0 % 7 == 0 ? Int(fill) : $0) }
            return .put(table: table, key: key, value: value)
        case 5..<8: return .remove(table: table, key: key)
        case 8: return .setRoot(name: "settings", value: random.bytes(Int.random(in: 1..<60, using: &random)))
        default: return .removeRoot(name: "settings")
        }
    }

    /// A write as typed tables and lenses make them: ordered Int64 keys and
    /// values in the value format, so the log carries encoding declarations.
    private static func typedOperation(_ random: inout SeededGenerator) -> ModelOperation {
        let key = OrderedKey.int64(Int64.random(in: -6...6, using: &random))
        let text = String(repeating: "x", count: Int.random(in: 0...300, using: &random))
        // Encoding a String cannot fail.
        let value = try! ValueEncoder().encode(text)
        switch Int.random(in: 0..<4, using: &random) {
        case 0..<2: return .put(table: "typed", key: key, value: value, encoding: TableEncoding(key: .int64, value: .valueFormat))
        case 2: return .remove(table: "typed", key: key)
        default: return .setRoot(name: "document", value: value, encoding: .valueFormat)
        }
    }
}
