/// How a simulated power cut treats each unsynced change of a file.
///
/// Every unsynced write independently meets one fate, drawn with these
/// weights (they need not sum to 1):
/// - *kept*: all its bytes reach the disk;
/// - *dropped*: none do;
/// - *torn*: only a random subset of the ``sectorSize``-byte sectors it
///   touches (aligned to absolute file offsets) reach the disk;
/// - *garbled*: a random subset of those sectors is filled with random bytes,
///   the rest are dropped.
///
/// Unsynced truncations and preallocations are kept when they draw *kept*
/// and dropped otherwise, so a file's size after a crash is its durable size,
/// changed by the kept truncations and extended by whichever surviving writes
/// reach further.
public struct CrashModel: Sendable, Equatable {
    public var keep: Double
    public var drop: Double
    public var tear: Double
    public var garble: Double
    /// The unit that reaches the disk whole or not at all.
    public var sectorSize: Int

    public init(keep: Double, drop: Double, tear: Double, garble: Double, sectorSize: Int = 512) {
        precondition(keep >= 0 && drop >= 0 && tear >= 0 && garble >= 0 && keep + drop + tear + garble > 0,
                     "crash model weights must be non-negative and not all zero")
        precondition(sectorSize > 0, "sector size must be positive")
        self.keep = keep
        self.drop = drop
        self.tear = tear
        self.garble = garble
        self.sectorSize = sectorSize
    }

    /// Mostly kept or dropped, sometimes torn, rarely garbled.
    public static let `default` = CrashModel(keep: 0.4, drop: 0.3, tear: 0.2, garble: 0.1)
    /// Nothing unsynced survives: the file system after a crash is exactly the durable one.
    public static let dropAll = CrashModel(keep: 0, drop: 1, tear: 0, garble: 0)
    /// Everything unsynced survives, as if the cache was flushed just in time
    /// (directory changes still need ``SimulatedFileSystem/syncDirectory(at:)``).
    public static let keepAll = CrashModel(keep: 1, drop: 0, tear: 0, garble: 0)
    /// Every unsynced write is torn at sector boundaries.
    public static let tearAll = CrashModel(keep: 0, drop: 0, tear: 1, garble: 0)

    enum Fate { case keep, drop, tear, garble }

    func fate(using random: inout some RandomNumberGenerator) -> Fate {
        var roll = Double.random(in: 0..<(keep + drop + tear + garble), using: &random)
        for (weight, fate) in [(keep, Fate.keep), (drop, .drop), (tear, .tear)] {
            if roll < weight { return fate }
            roll -= weight
        }
        return garble > 0 ? .garble : .drop
    }
}

extension SimulatedFileSystem {
    /// Simulates a power loss with a generator seeded by `seed` (same seed,
    /// same state, same outcome).
    public func crash(seed: UInt64, model: CrashModel = .default) {
        var random = CrashRandom(state: seed)
        crash(using: &random, model: model)
    }

    /// Simulates a power loss, then a reboot.
    ///
    /// - Every directory's names revert to its durable map; files reachable
    ///   only through names that were never made durable vanish, a rename
    ///   without a directory sync reverts, and directories whose own name was
    ///   not durable vanish with all they hold.
    /// - Every surviving file becomes its durable content plus its unsynced
    ///   changes, each in call order meeting a fate drawn from `model` (see
    ///   ``CrashModel``). Writes doomed by a failed sync are always lost.
    /// - Every handle and lock from before the crash is dead: calls on old
    ///   handles throw `.closed`. A power cut is lifted.
    /// - Injected faults and call counts are kept: a fuzzer that wants a
    ///   healthy disk for recovery calls ``clearFaults()``.
    public func crash(using random: inout some RandomNumberGenerator, model: CrashModel = .default) {
        state.withLock { state in
            state.revertDirectories()
            // In inode order: fates are drawn from one stream, and a
            // dictionary's order changes from process to process, which
            // would make a crash seed replay differently.
            for id in state.inodes.keys.sorted() {
                state.inodes[id] = state.inodes[id]!.afterCrash(model: model, random: &random)
            }
            state.openHandles = []
            state.locks = [:]
            state.poweredOff = false
            state.powerCutBudget = nil
        }
    }
}

extension SimulatedState {
    /// Keeps the durable names of the directories reachable by durable names
    /// from the root, and only the inodes those names reach.
    mutating func revertDirectories() {
        var survivors: [String: SimulatedDirectory] = [:]
        var reachable: Set<Int> = []
        var queue = [""]
        while let key = queue.popLast() {
            guard let directory = directories[key] else { continue }
            survivors[key] = SimulatedDirectory(current: directory.durable, durable: directory.durable)
            for (name, entry) in directory.durable {
                switch entry {
                case .directory: queue.append(SimulatedPath.join(key, name))
                case .file(let inode): reachable.insert(inode)
                }
            }
        }
        directories = survivors
        inodes = inodes.filter { reachable.contains($0.key) }
    }
}

extension SimulatedInode {
    /// What the disk holds for this file after a power cut.
    func afterCrash(model: CrashModel, random: inout some RandomNumberGenerator) -> SimulatedInode {
        var bytes = durable
        for change in pending where !change.doomed {
            let fate = model.fate(using: &random)
            guard case .write(let offset, let data) = change.kind else {
                if fate == .keep { bytes.apply(change.kind) }
                continue
            }
            switch fate {
            case .keep: bytes.place(data, at: offset)
            case .drop: break
            case .tear, .garble:
                for (start, end) in sectors(offset, data.count, model.sectorSize) where Bool.random(using: &random) {
                    let piece = fate == .tear
                        ? Array(data[(start - offset)..<(end - offset)])
                        : (start..<end).map { _ in UInt8.random(in: 0...255, using: &random) }
                    bytes.place(piece, at: start)
                }
            }
        }
        return SimulatedInode(current: bytes, durable: bytes, pending: [])
    }

    /// The pieces of `[offset, offset + count)` cut at multiples of `size`.
    private func sectors(_ offset: Int, _ count: Int, _ size: Int) -> [(Int, Int)] {
        var pieces: [(Int, Int)] = []
        var start = offset
        while start < offset + count {
            let end = min((start / size + 1) * size, offset + count)
            pieces.append((start, end))
            start = end
        }
        return pieces
    }
}

/// SplitMix64 for ``SimulatedFileSystem/crash(seed:model:)``, so LensLog
/// needs no test-support code to replay a crash.
struct CrashRandom: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
