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
    /// LSN ranges that could not be kept, each with where and why.
    public var lost: [LostRange]
    /// Snapshots that failed validation, each with why, and what salvaging
    /// one chunk by chunk could not keep.
    public var damagedSnapshots: [String]
    /// Torn tails cut (unsynced writes of a crash; nothing acknowledged).
    public var tornBytes: Int64
}

/// Transactions `repair` could not keep: damage followed by valid records.
public struct LostRange: Codable, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var offset: Int64
    /// The first LSN lost.
    public var fromLSN: UInt64
    /// The first LSN kept again after the damage (exclusive end).
    public var toLSN: UInt64
    /// The typed reason, e.g. `checksumMismatch`, `lsnOutOfSequence`.
    public var reason: String

    public var description: String { "LSNs \(fromLSN)..<\(toLSN) in \(file) at offset \(offset): \(reason)" }
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
    ///   ``InspectionError/outputExists(path:)``,
    ///   ``InspectionError/workspaceInUse(path:entries:)``, or the recovery error when
    ///   not even salvage can rebuild a state (a damaged snapshot whose logs are gone).
    /// - Parameters:
    ///   - output: where to write the repaired store; must not exist.
    ///   - progress: reading the store (bytes), then writing the snapshot (items).
    /// An encrypted store is repaired into one encrypted with the same key.
    public func repair(to output: String, progress: ProgressHandler? = nil) throws -> RepairReport {
        try requireFittingKey()
        let lock = try takeLock()
        defer { lock.unlock() }
        let output = Self.absolute(output)
        guard !fileSystem.fileExists(at: output) else { throw InspectionError.outputExists(path: output) }
        return try rebuild(into: output, progress: progress)
    }

    /// Repairs the store where it is: builds the repaired store beside it
    /// (`<store>.repair`), then renames the original to
    /// `<store>.backup-<time>` and the repaired one into its place. Says
    /// where the backup is. Repairing again gives the same state and one
    /// more backup.
    ///
    /// A crash before the first rename leaves the input untouched; between
    /// the two renames, the original is complete at the backup path and the
    /// repaired store at `<store>.repair`: rename either back to `<store>`.
    /// - Throws: as ``repair(to:progress:)``; and, once the original has
    ///   moved to its backup, ``InspectionError/repairCutShort(path:backup:repaired:cause:)``,
    ///   which names where each store is.
    public func repairInPlace(progress: ProgressHandler? = nil) throws -> RepairReport {
        try requireFittingKey()
        let lock = try takeLock()
        defer { lock.unlock() }
        let store = Self.absolute(path)
        let fresh = store + ".repair"
        try removeLeftoverRepair(fresh)
        var report = try rebuild(into: fresh, progress: progress)
        let backup = backupPath(for: store)
        try fileSystem.rename(store, to: backup)
        do {
            try fileSystem.rename(fresh, to: store)
        } catch {
            throw InspectionError.repairCutShort(path: store, backup: backup, repaired: fresh, cause: "\(error)")
        }
        do {
            try fileSystem.syncDirectory(at: parentDirectory(of: store))
        } catch {
            throw InspectionError.repairCutShort(path: store, backup: backup, repaired: nil, cause: "\(error)")
        }
        report.output = store
        report.backup = backup
        return report
    }

    /// `<store>.backup-<UTC time>`, with `-2`, `-3`… when repaired twice in a second.
    private func backupPath(for store: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let base = "\(store).backup-\(formatter.string(from: Date()))"
        var candidate = base, counter = 1
        while fileSystem.fileExists(at: candidate) {
            counter += 1
            candidate = "\(base)-\(counter)"
        }
        return candidate
    }

    /// `path` made absolute, without `.`, `..` or a trailing slash, so that
    /// the names built beside it land beside it.
    static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// Compacts the store offline: opens it (taking the lock), compacts, closes.
    /// - Parameter progress: the open reading the store (bytes), then writing the snapshot (items).
    public func compact(progress: ProgressHandler? = nil) throws -> InfoReport {
        try requireFittingKey()
        try withStore(progress: progress) { try $0.compact(progress: progress) }
        return try info()
    }

    /// Compacts the store offline under a new key: encrypts a plain store,
    /// re-keys an encrypted one, or, with nil, decrypts it
    /// (`Store/changeEncryptionKey(to:)`). The store is read with ``key``.
    /// Returns the store's report, read with the new key.
    /// - Throws: as ``compact(progress:)``.
    public func changeKey(to newKey: EncryptionKey?, progress: ProgressHandler? = nil) throws -> InfoReport {
        try requireFittingKey()
        try withStore(progress: progress) { try $0.changeEncryptionKey(to: newKey) }
        return try StoreInspector(path: path, fileSystem: fileSystem, key: newKey).info()
    }

    /// Opens the store with the lock and ``key``, runs `body`, closes it.
    private func withStore(progress: ProgressHandler?, _ body: (Store) throws -> Void) throws {
        var options = StoreOptions()
        options.fileSystem = fileSystem
        options.compactionLogRatio = nil
        options.encryptionKey = key
        do {
            let store = try Store(at: path, options: options, progress: progress)
            defer { store.close() }
            try body(store)
        } catch let StoreError.locked(path, holder) {
            throw InspectionError.locked(path: path, holder: holder)
        }
    }

    private func takeLock() throws -> any FileLock {
        _ = try listing()
        do {
            return try Store.takeLock(directory)
        } catch let StoreError.locked(_, holder) {
            throw InspectionError.locked(path: path, holder: holder)
        }
    }

    /// Removes what an interrupted repair left behind: a store's files, in
    /// a directory of its own naming. The directory stays (empty), which
    /// `rename` replaces.
    /// - Throws: ``InspectionError/workspaceInUse(path:entries:)``, removing
    ///   nothing, when it holds any other file (then it is someone else's)
    ///   or a snapshot: a whole store, such as one `repair --output` wrote
    ///   there, or the result of an in-place repair cut short, is never
    ///   removed.
    private func removeLeftoverRepair(_ directory: String) throws {
        guard fileSystem.fileExists(at: directory) else { return }
        let leftover = try StoreDirectory(path: directory, fileSystem: fileSystem).list()
        let kept = leftover.unknown + leftover.snapshots.map(\.path)
        guard kept.isEmpty else { throw InspectionError.workspaceInUse(path: directory, entries: kept) }
        for name in try fileSystem.listDirectory(directory) { try fileSystem.removeFile(at: "\(directory)/\(name)") }
    }

    /// What recovery under `.salvage` can read; when no snapshot is usable
    /// and the logs before it are gone, the newest snapshot whose header
    /// verifies (in place, or one an earlier open set aside), salvaged chunk
    /// by chunk, plus the logs after it. Newer snapshots whose headers do
    /// not verify are reported: nothing in them can be read. One a newer
    /// LensDB wrote stops the repair, with what it needs.
    /// - Throws: ``InspectionError/nothingToSalvage(path:snapshots:)`` when
    ///   no snapshot's header verifies.
    private func salvagedState(progress: ProgressHandler?) throws -> (StoreState, RecoveryReport, [String]) {
        do {
            let (state, recovery) = try recoveredState(policy: .salvage, progress: progress)
            return (state, recovery, [])
        } catch let RecoveryError.noUsableSnapshot(_, damaged) {
            let listing = try listing()
            if listing.snapshotsNewestFirst.isEmpty {
                // No snapshot at all: the logs alone, from an empty state.
                let (state, recovery, _) = try replayLogs(after: SalvagedSnapshot(), from: path, listing)
                return (state, recovery, [])
            }
            var unreadable: [String] = []
            for candidate in listing.snapshotsNewestFirst {
                let salvaged: SalvagedSnapshot
                do {
                    salvaged = try SnapshotFile.salvage(bytes: read(candidate), path: candidate, cipher: key)
                } catch let error as SnapshotError {
                    // A newer LensDB reads it: its history is not for this one to drop.
                    if error.isNewer { throw error }
                    unreadable.append("\(candidate): \(stripping(candidate, from: error.description))")
                    continue
                } catch let error as EncryptionError {
                    // One a key change cut short left under its new key: the
                    // key given fits the files in effect (requireFittingKey).
                    unreadable.append("\(candidate): \(stripping(candidate, from: error.description))")
                    continue
                } catch let error as StorageError {
                    unreadable.append("\(candidate): \(error)")
                    continue
                }
                var (state, recovery, lost) = try replayLogs(after: salvaged, from: candidate, listing)
                recovery.damagedSnapshots = damaged
                return (state, recovery, unreadable.map { "\($0), so nothing in it could be kept" } + lost)
            }
            throw InspectionError.nothingToSalvage(path: path, snapshots: unreadable)
        }
    }

    /// The state of `salvaged`, read from `file`, with the logs after it
    /// replayed under `.salvage`; and what of the snapshot was lost.
    private func replayLogs(
        after salvaged: SalvagedSnapshot, from file: String, _ listing: StoreDirectory.Listing
    ) throws -> (StoreState, RecoveryReport, [String]) {
        var loader = SnapshotLoader(lastLSN: salvaged.lastLSN)
        for item in salvaged.items { _ = loader.add(item) }
        var state = loader.state
        var recovery = RecoveryReport()
        let base = SnapshotSummary(path: file, generation: salvaged.generation, lastLSN: salvaged.lastLSN, size: 0)
        var notApplied: [DroppedLogRange] = []
        try chain(policy: .salvage)
            .replayLogs(listing: listing, after: base, into: &recovery) { record, file in
                if let dropped = try Store.replay(record, from: file, into: &state, policy: .salvage) { notApplied.append(dropped) }
            }
        recovery.addDropped(notApplied)
        // A log starts one past the state it was begun on, so a later log
        // the chain could not reach (its records unproven, or none) still
        // says that LSNs up to its start existed: they are lost.
        let begun = listing.logs.filter { $0.generation > salvaged.generation }
            .compactMap { log in logHeader(of: log.path).map { (file: log.path, before: $0.firstLSN - 1) } }
            .max { $0.before < $1.before }
        if let begun, case let lost = max(state.lsn, recovery.highestDroppedLSN) + 1, lost <= begun.before {
            recovery.addDropped([DroppedLogRange(file: begun.file, range: DroppedRange(
                offset: 0, length: 0, lostLSNs: lost ..< begun.before + 1, reason: .lsnOutOfSequence))])
        }
        let lost = salvaged.droppedRanges.map {
            "\(file): \($0.length) bytes at offset \($0.offset) did not verify; the entries in them are lost"
        } + (salvaged.orphanedEntries > 0 ? ["\(file): \(salvaged.orphanedEntries) entries whose table declaration was lost"] : [])
        return (state, recovery, lost)
    }

    private func rebuild(into output: String, progress: ProgressHandler?) throws -> RepairReport {
        var (state, recovery, snapshotLosses) = try salvagedState(progress: progress)
        // Numbered after every LSN the store gave out, lost ones too: a
        // follower may have seen them, and must not see one mean two things.
        state.lsn = max(state.lsn, recovery.highestDroppedLSN)
        let temporary = output + ".repair-tmp"
        try removeLeftoverRepair(temporary)
        // The copy keeps the store's mode: who may read the original may read it, and no one else.
        try fileSystem.createDirectory(at: temporary, permissions: fileSystem.directoryPermissions(at: path))
        let target = StoreDirectory(path: temporary, fileSystem: fileSystem)
        try target.writeIdentity()
        _ = try Store.writeSnapshot(of: state, generation: 1, in: target, compression: .lz4, key: key, progress: progress)
        let log = try LogWriter.create(
            fileSystem: fileSystem, path: target.logPath(generation: 1), generation: 1, firstLSN: state.lsn + 1, cipher: key)
        log.close()
        try fileSystem.rename(temporary, to: output)
        try fileSystem.syncDirectory(at: parentDirectory(of: output))
        let lost = recovery.dropped.map {
            LostRange(file: $0.file, offset: $0.range.offset, fromLSN: $0.range.lostLSNs.lowerBound,
                      toLSN: $0.range.lostLSNs.upperBound, reason: $0.range.reason.rawValue)
        }
        return RepairReport(
            output: output, backup: nil, recordsReplayed: recovery.recordsReplayed, lastLSN: state.lsn,
            entries: state.itemCount, lost: lost, damagedSnapshots: recovery.damagedSnapshots.map { "\($0.path): \(stripping($0.path, from: $0.problem))" } + snapshotLosses,
            tornBytes: recovery.tornBytes)
    }
}
