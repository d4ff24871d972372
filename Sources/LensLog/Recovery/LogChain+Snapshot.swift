extension LogChain {
    /// The newest snapshot that verifies, loads, and whose own log exists;
    /// nil when the logs alone hold the whole history.
    ///
    /// Compaction creates log G before snapshot G takes effect and deletes
    /// it only after a newer snapshot has, so a snapshot whose log is gone was
    /// superseded, and falling back to it would skip transactions. Damaged
    /// snapshots are reported, and set aside (renamed, never deleted) once
    /// a state is chosen without them: when none is, every file stays as it
    /// is, for the next open and for `logtool repair`, which salvages the
    /// newest snapshot chunk by chunk.
    func chooseSnapshot(
        listing: StoreDirectory.Listing, report: inout RecoveryReport, load: (SnapshotFile) throws -> Void
    ) throws -> SnapshotSummary? {
        var damaged: [String] = []
        for candidate in listing.snapshots.reversed() {
            do {
                let snapshot = try SnapshotFile(fileSystem: directory.fileSystem, path: candidate.path)
                guard listing.logs.contains(where: { $0.generation == snapshot.generation }) else {
                    // Also what a key change leaves when it stops before its
                    // log is in place: the snapshot under the new key is not
                    // in effect yet, and the store reads with the old key.
                    report.damagedSnapshots.append(DamagedFile(
                        path: candidate.path, movedTo: nil,
                        problem: "valid, but its log is gone: a newer snapshot replaced it, or its compaction never finished"))
                    continue
                }
                // The snapshot in effect says which key the store needs: a
                // key that does not fit is the caller's mistake, never damage.
                try EncryptionError.check(snapshot.encryption, against: cipher, file: candidate.path)
                try load(snapshot.keyed(by: cipher))
                let summary = SnapshotSummary(
                    path: candidate.path, generation: snapshot.generation, lastLSN: snapshot.lastLSN, size: snapshot.size)
                report.snapshot = summary
                try setAside(damaged, &report)
                return summary
            } catch let error as SnapshotError {
                damaged.append(candidate.path)
                report.damagedSnapshots.append(DamagedFile(path: candidate.path, movedTo: nil, problem: error.description))
            }
        }
        // Logs that do not reach back to LSN 1 continue a snapshot. One set
        // aside earlier (by an open of an earlier LensDB, which did so even
        // when the open then failed) may hold that history: it is named,
        // never taken as absent.
        let earlier = listing.setAsideSnapshots.map {
            DamagedFile(path: $0, movedTo: $0, problem: "set aside as damaged by an earlier open; it may hold the history the logs lack")
        }
        guard try (listing.snapshots.isEmpty && earlier.isEmpty) || logsStartAtTheBeginning(listing) else {
            throw RecoveryError.noUsableSnapshot(directory: directory.path, damaged: report.damagedSnapshots + earlier)
        }
        try setAside(damaged, &report)
        return nil
    }

    /// Sets aside the snapshots in `paths`, reported damaged, and notes where each went.
    private func setAside(_ paths: [String], _ report: inout RecoveryReport) throws {
        guard setAsideDamaged else { return }
        for path in paths {
            let movedTo = try directory.setAside(path)
            for index in report.damagedSnapshots.indices where report.damagedSnapshots[index].path == path {
                report.damagedSnapshots[index].movedTo = movedTo
            }
        }
    }

    /// Whether the logs still hold the whole history, from LSN 1: the first
    /// log with a valid header starts there. Asked only when every snapshot
    /// failed, since a finished compaction deletes the logs before it.
    private func logsStartAtTheBeginning(_ listing: StoreDirectory.Listing) throws -> Bool {
        // A log cut while new holds nothing: look at the next one.
        for log in listing.logs {
            if let first = try firstLSN(of: log.path) { return first == 1 }
        }
        return false
    }
}
