extension LogChain {
    /// The newest snapshot that verifies, loads, and whose own log exists;
    /// nil when the logs alone hold the whole history.
    ///
    /// Compaction creates log G before snapshot G takes effect and deletes
    /// it only after a newer snapshot has, so a snapshot whose log is gone was
    /// superseded, and falling back to it would skip transactions. Damaged
    /// snapshots are reported (``RecoveryReport/damagedSnapshots``), and
    /// named in the report's `snapshotsToSetAside`: ``recover(listing:loadSnapshot:apply:)``
    /// sets them aside once the state without them is recovered. A
    /// snapshot a newer LensDB wrote is not damage: never set aside, it
    /// stops the recovery with its ``SnapshotError/unsupportedVersion(file:version:)``
    /// or ``SnapshotError/unsupportedCipher(file:cipher:)`` when its log
    /// is there, which puts it in effect.
    func chooseSnapshot(
        listing: StoreDirectory.Listing, report: inout RecoveryReport, load: (SnapshotFile) throws -> Void
    ) throws -> SnapshotSummary? {
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
                return summary
            } catch let error as SnapshotError where error.isNewer {
                // A newer LensDB's snapshot is never set aside. In effect (its
                // log is there), it may hold history no file here has: this
                // LensDB does not open without it. Its log gone, it is not in
                // effect, as a valid snapshot of this version would not be.
                guard listing.logs.contains(where: { $0.generation == candidate.generation }) else {
                    report.damagedSnapshots.append(DamagedFile(
                        path: candidate.path, movedTo: nil, problem: "\(error.description); its log is gone, so it is not in effect"))
                    continue
                }
                throw error
            } catch let error as SnapshotError {
                report.snapshotsToSetAside.append(candidate.path)
                report.damagedSnapshots.append(DamagedFile(path: candidate.path, movedTo: nil, problem: error.description))
            }
        }
        // Logs that do not reach back to LSN 1 continue a snapshot. One set
        // aside earlier (by an open of an earlier LensDB, which did so even
        // when the open then failed) may hold that history: it is named,
        // never taken as absent. With no snapshot at all, the one that held
        // it is gone (removed, or not copied with the logs), or the header
        // of the log that starts at LSN 1 is damaged: either way an empty
        // state must not stand in for it, and repair, which reads a log
        // with a damaged header from LSN 1, keeps what verifies.
        let earlier = listing.setAsideSnapshots.map {
            DamagedFile(path: $0, movedTo: $0, problem: "set aside as damaged by an earlier open; it may hold the history the logs lack")
        }
        let starts = try logStarts(listing)
        guard starts.contains(1) || (listing.snapshots.isEmpty && earlier.isEmpty && starts.isEmpty) else {
            throw RecoveryError.noUsableSnapshot(directory: directory.path, damaged: report.damagedSnapshots + earlier)
        }
        return nil
    }

    /// Sets aside the snapshots the report's `snapshotsToSetAside` names,
    /// when this chain does, and notes where each went.
    func setAsideDamagedSnapshots(_ report: inout RecoveryReport) throws {
        guard setAsideDamaged else { return }
        for path in report.snapshotsToSetAside {
            let movedTo = try directory.setAside(path)
            for index in report.damagedSnapshots.indices where report.damagedSnapshots[index].path == path {
                report.damagedSnapshots[index].movedTo = movedTo
            }
        }
        report.snapshotsToSetAside = []
    }

    /// The first LSN of every log whose header verifies. Asked only when no
    /// snapshot is usable, since a finished compaction deletes the logs
    /// before it: the logs hold the whole history when one starts at LSN 1.
    /// Any such log, not only the first: a later log that starts at LSN 1
    /// (an open that logged every record again) is what replay reads,
    /// whatever is left of the logs before it.
    private func logStarts(_ listing: StoreDirectory.Listing) throws -> [UInt64] {
        try listing.logs.compactMap { try firstLSN(of: $0.path) }
    }
}
