import Foundation
import LensLog

/// What `logtool repair` did.
public struct RepairReport: Codable, Sendable {
    /// The repaired store.
    public var output: String
    /// Where the original went, for `--in-place`.
    public var backup: String?
    public var recordsReplayed: Int
    public var lastLSN: UInt64
    public var entries: Int
    /// What could not be kept: LSN ranges lost and files set aside, each with why.
    public var lost: [String]
    /// Torn tails cut (unsynced writes of a crash; nothing acknowledged).
    public var tornBytes: Int64
}

extension StoreInspector {
    /// Writes a consistent store at `output` from everything in this one that
    /// verifies: torn tails cut, damaged records skipped (as `.salvage`
    /// opens), one snapshot of the result. Never changes the input; takes its
    /// lock so that no process writes it meanwhile. The result passes
    /// ``verify(progress:)``; repairing twice gives the same bytes.
    ///
    /// A crash during repair leaves the input untouched and at most a
    /// `<output>.repair-tmp` directory, which a new repair replaces.
    /// - Throws: ``InspectionError/locked(path:holder:)``,
    ///   ``InspectionError/outputExists(path:)``, or the recovery error when
    ///   not even salvage can rebuild a state (a damaged snapshot whose logs are gone).
    public func repair(to output: String) throws -> RepairReport {
        let lock = try takeLock()
        defer { lock.unlock() }
        guard !fileSystem.fileExists(at: output) else { throw InspectionError.outputExists(path: output) }
        return try rebuild(into: output)
    }

    /// Repairs the store where it is: builds the repaired store beside it,
    /// then renames the original to `<path>.backup-<time>` and the repaired
    /// one into its place. Says where the backup is.
    public func repairInPlace() throws -> RepairReport {
        let lock = try takeLock()
        defer { lock.unlock() }
        let fresh = path + ".repair"
        try removeDirectory(fresh)
        var report = try rebuild(into: fresh)
        let backup = "\(path).backup-\(Int(Date().timeIntervalSince1970))"
        try fileSystem.rename(path, to: backup)
        try fileSystem.rename(fresh, to: path)
        try fileSystem.syncDirectory(at: parentDirectory(of: path))
        report.output = path
        report.backup = backup
        return report
    }

    /// Compacts the store offline: opens it (taking the lock), compacts, closes.
    public func compact() throws -> InfoReport {
        var options = StoreOptions()
        options.fileSystem = fileSystem
        options.compactionLogRatio = nil
        do {
            let store = try Store(at: path, options: options)
            try store.compact()
            store.close()
        } catch let StoreError.locked(path, holder) {
            throw InspectionError.locked(path: path, holder: holder)
        }
        return try info()
    }

    private func takeLock() throws -> any FileLock {
        _ = try listing()
        do {
            return try fileSystem.lockFile(at: directory.lockPath)
        } catch let error as StorageError where error.code == .locked {
            throw InspectionError.locked(path: path, holder: error.lockHolder)
        }
    }

    /// Removes what an interrupted repair left behind: files LensDB wrote, in
    /// a directory of its own naming. The directory stays (empty), which
    /// `rename` replaces.
    private func removeDirectory(_ directory: String) throws {
        guard fileSystem.fileExists(at: directory) else { return }
        for name in try fileSystem.listDirectory(directory) { try fileSystem.removeFile(at: "\(directory)/\(name)") }
    }

    /// What recovery under `.salvage` can read; when no snapshot is usable
    /// and the logs before it are gone, the newest snapshot salvaged chunk by
    /// chunk plus the logs after it.
    private func salvagedState() throws -> (StoreState, RecoveryReport, [String]) {
        do {
            let (state, recovery) = try recoveredState(policy: .salvage)
            return (state, recovery, [])
        } catch RecoveryError.noUsableSnapshot {
            let listing = try listing()
            guard let newest = listing.snapshots.last else { throw InspectionError.notAStore(path: path, reason: "it has no snapshot to salvage") }
            let salvaged = try SnapshotFile.salvage(bytes: read(newest.path), path: newest.path)
            var loader = SnapshotLoader(lastLSN: salvaged.lastLSN)
            for item in salvaged.items { _ = loader.add(item) }
            var state = loader.state
            var recovery = RecoveryReport()
            let base = SnapshotSummary(path: newest.path, generation: salvaged.generation, lastLSN: salvaged.lastLSN, size: 0)
            try LogChain(directory: directory, policy: .salvage, setAsideDamaged: false)
                .replayLogs(listing: listing, after: base, into: &recovery) { record, file in
                    try Store.replay(record, from: file, into: &state)
                }
            let lost = salvaged.droppedRanges.map {
                "\(newest.path): \($0.length) bytes at offset \($0.offset) did not verify; the entries in them are lost"
            } + (salvaged.orphanedEntries > 0 ? ["\(newest.path): \(salvaged.orphanedEntries) entries whose table declaration was lost"] : [])
            return (state, recovery, lost)
        }
    }

    private func rebuild(into output: String) throws -> RepairReport {
        let (state, recovery, snapshotLosses) = try salvagedState()
        let temporary = output + ".repair-tmp"
        try removeDirectory(temporary)
        try fileSystem.createDirectory(at: temporary)
        let target = StoreDirectory(path: temporary, fileSystem: fileSystem)
        _ = try Store.writeSnapshot(of: state, generation: 1, in: target, compression: .lz4)
        let log = try LogWriter.create(fileSystem: fileSystem, path: target.logPath(generation: 1), generation: 1, firstLSN: state.lsn + 1)
        log.close()
        try fileSystem.rename(temporary, to: output)
        try fileSystem.syncDirectory(at: parentDirectory(of: output))
        var lost = recovery.dropped.map {
            "LSNs \($0.range.lostLSNs.lowerBound)..<\($0.range.lostLSNs.upperBound) in \($0.file) at offset \($0.range.offset): \($0.range.reason.rawValue)"
        }
        lost += recovery.damagedSnapshots.map { "\($0.path): \($0.problem)" } + snapshotLosses
        return RepairReport(
            output: output, backup: nil, recordsReplayed: recovery.recordsReplayed, lastLSN: state.lsn,
            entries: state.itemCount, lost: lost, tornBytes: recovery.tornBytes)
    }
}
