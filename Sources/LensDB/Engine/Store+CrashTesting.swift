import LensLog

// Entry points for the crash fuzzer, which must reach, from one thread and
// deterministically, the interleavings that threads reach by chance: several
// commits written by one group-commit call, and commits landing in a new log
// while a compaction's snapshot is still unwritten. They run the production
// code paths split at the points where threads would interleave; nothing
// here is a second implementation.

extension Store {
    /// Commits `bodies` as separate transactions that share one group commit:
    /// every record is queued before the first waits, so the log writes them
    /// all with one call (and one sync, for `.full`), as it does for
    /// concurrent committers.
    ///
    /// Each body's transaction is atomic on its own. If staging one throws,
    /// the ones staged before it are still committed, and the error is rethrown.
    @_spi(CrashTesting)
    public func writeGroup(durability: Durability? = nil, _ bodies: [(inout Transaction) -> Void]) throws {
        var commits: [Commit] = []
        var stagingError: (any Error)?
        for body in bodies {
            do {
                commits.append(try stage(body).1)
            } catch {
                stagingError = error
                break
            }
        }
        for commit in commits { try finish(commit, durability: durability ?? options.durability) }
        if let stagingError { throw stagingError }
    }

    /// Runs a compaction up to its log swap (steps 1–3 of ``compact()``) and
    /// returns it paused before the snapshot is written; nil when another
    /// compaction runs or the store lives in memory. Until the paused
    /// compaction is finished or abandoned, no other compaction starts and
    /// ``close()`` waits.
    @_spi(CrashTesting)
    public func beginPausedCompaction() throws -> PausedCompaction? {
        guard let directory, beginCompaction() else { return nil }
        do {
            return PausedCompaction(store: self, directory: directory, swapped: try swapInNextLog(directory))
        } catch {
            endCompaction()
            throw error
        }
    }
}

/// A compaction stopped after its log swap; see ``Store/beginPausedCompaction()``.
@_spi(CrashTesting)
public struct PausedCompaction: Sendable {
    let store: Store
    let directory: StoreDirectory
    let swapped: Store.SwappedLog

    /// Writes the snapshot and removes the files it replaces (steps 4–6).
    public func finish() throws {
        defer { store.endCompaction() }
        try store.writeSnapshot(after: swapped, in: directory)
    }

    /// Gives up before the snapshot, as a compaction whose snapshot write
    /// failed does: the store goes on in the new log on the old snapshot.
    public func abandon() {
        store.endCompaction()
    }
}
