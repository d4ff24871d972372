extension LogChain {
    /// The newest snapshot that verifies, loads, and is continued by the logs;
    /// nil when the logs alone hold the whole history (they start at LSN 1).
    /// Damaged snapshots are set aside (renamed, never deleted) and reported.
    func chooseSnapshot(
        listing: StoreDirectory.Listing, report: inout RecoveryReport, load: (SnapshotFile) throws -> Void
    ) throws -> SnapshotSummary? {
        for candidate in listing.snapshots.reversed() {
            do {
                let snapshot = try SnapshotFile(fileSystem: directory.fileSystem, path: candidate.path)
                guard try logsContinue(after: snapshot.lastLSN, from: snapshot.generation, listing: listing) else {
                    report.damagedSnapshots.append(DamagedFile(
                        path: candidate.path, movedTo: nil,
                        problem: "valid, but no log continues it from LSN \(snapshot.lastLSN + 1)"))
                    continue
                }
                try load(snapshot)
                let summary = SnapshotSummary(
                    path: candidate.path, generation: snapshot.generation, lastLSN: snapshot.lastLSN, size: snapshot.size)
                report.snapshot = summary
                return summary
            } catch let error as SnapshotError {
                let movedTo = setAsideDamaged ? try directory.setAside(candidate.path) : nil
                report.damagedSnapshots.append(DamagedFile(path: candidate.path, movedTo: movedTo, problem: error.description))
            }
        }
        guard try logsContinue(after: 0, from: 0, listing: listing) else {
            throw RecoveryError.noUsableSnapshot(directory: directory.path, damaged: report.damagedSnapshots)
        }
        return nil
    }

    /// Whether the first log of generation ≥ `generation` starts at or before
    /// `lastLSN + 1` (or there is no such log: the snapshot is the whole state).
    private func logsContinue(after lastLSN: UInt64, from generation: UInt64, listing: StoreDirectory.Listing) throws -> Bool {
        guard let first = listing.logs.first(where: { $0.generation >= generation }) else { return lastLSN > 0 || listing.snapshots.isEmpty }
        let file = try directory.fileSystem.openFile(at: first.path, mode: .readOnly)
        defer { file.close() }
        let head = try file.read(at: 0, count: LogFormat.fileHeaderSize)
        guard let header = try? head.withUnsafeBytes({ try LogFileHeader(decoding: $0, file: first.path) }) else {
            // A log cut while new carries no header; the snapshot of the same
            // generation is what precedes it.
            return first.generation == generation
        }
        return header.firstLSN <= lastLSN + 1
    }
}
