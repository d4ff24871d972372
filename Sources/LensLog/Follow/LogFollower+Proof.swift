/// What proves records durable to a follower that holds no lock, and what
/// it does when the chain stops moving. The rules are explained on
/// ``LogFollower``.
extension LogFollower {
    struct Proof {
        /// The highest LSN the writer's own evidence proves durable: synced
        /// LSNs of records, snapshots, the `CLOSED` marker.
        var writer: UInt64 = 0
        /// The highest LSN the follower's own sync of a log proved.
        var own: UInt64 = 0
        /// The newest snapshot in place: its path and last LSN.
        var newestSnapshot: (path: String, lastLSN: UInt64)?
        /// Snapshots whose header has been read.
        var snapshotsRead: Set<String> = []
        /// Payload checksums of records handed on that only the follower's
        /// own sync proved, by LSN: an open after a crash writes them again,
        /// and must write the same.
        var ownlyProven: [UInt64: UInt32] = [:]

        var lsn: UInt64 { max(writer, own) }

        /// Once the writer proves them too, nothing can write them again differently.
        mutating func forgetOwnChecksums() {
            guard !ownlyProven.isEmpty else { return }
            ownlyProven = ownlyProven.filter { $0.key > writer }
        }
    }

    /// A snapshot in place proves its last LSN durable: compaction synced the
    /// old log before writing it, and renames it into place only once written.
    mutating func proveFromSnapshots(_ listing: StoreDirectory.Listing) {
        for snapshot in listing.snapshots where !proof.snapshotsRead.contains(snapshot.path) {
            // A snapshot removed since the listing (a newer one replaced it)
            // proves nothing the newer one does not.
            guard let file = try? directory.fileSystem.openFile(at: snapshot.path, mode: .readOnly) else { continue }
            defer { file.close() }
            // As above: a header that cannot be read is treated as absent.
            guard let bytes = try? file.read(at: 0, count: SnapshotFormat.maxHeaderSize),
                  let last = SnapshotFile.lastLSN(inHeader: bytes) else { continue }
            proof.snapshotsRead.insert(snapshot.path)
            proof.writer = max(proof.writer, last)
            if last >= proof.newestSnapshot?.lastLSN ?? 0 { proof.newestSnapshot = (snapshot.path, last) }
        }
    }

    /// When records have waited a whole poll for proof, the follower syncs
    /// the log it read them from: a `.full` writer synced them already (the
    /// sync is then cheap), a `.buffered` or `.none` writer gets them synced
    /// earlier than it asked. Only records written after the follower opened
    /// the file are proven so (see ``LogFollower``), and never again once a
    /// sync through this descriptor failed.
    mutating func proveBySyncingQuietTail() {
        guard var tail = current, !tail.syncFailed, let atOpen = tail.lastLSNAtOpen,
              let oldest = pending.first, oldest.poll < polls, proof.lsn >= atOpen
        else { return }
        let through = tail.nextLSN - 1
        do {
            try tail.file.sync(.durable)
            proof.own = max(proof.own, through)
        } catch {
            tail.syncFailed = true
            current = tail
        }
    }

    /// Fails when the next LSN the chain needs is in a snapshot and in no log
    /// the follower holds: a log was created and compacted away between two
    /// polls (a compaction deletes every log before the one it swaps in).
    ///
    /// Sound because the listing was taken before the reads: a snapshot in it
    /// was written after its old log was synced, so that log's records were
    /// all readable, and every log that could continue the chain was created
    /// before that snapshot.
    func checkNotBehind() throws {
        let position = current?.nextLSN ?? expectedLSN
        guard let snapshot = proof.newestSnapshot, snapshot.lastLSN >= position else { return }
        throw FollowError.compactedAway(lsn: position, snapshot: snapshot.path, snapshotLSN: snapshot.lastLSN)
    }

    /// The current log has stopped at the same place twice, at bytes that
    /// are not the next record (or at zeros while a later log says more
    /// records belong here): read it whole, as open would, once per place.
    /// Damage that a later record proves durable is corruption; anything
    /// else is a write still under way or a tail a crash tore, which the
    /// next open of the store resolves.
    /// - Throws: ``FollowError/corruption(file:offset:lsn:reason:)``.
    mutating func judgeStop() throws {
        guard let tail = current else { return }
        let here = StopPoint(path: tail.path, offset: tail.offset)
        defer { previousStop = here }
        guard here == previousStop, here != judgedStop, stopNeedsJudging(tail) else { return }
        var reader = try LogReader(file: tail.file, path: tail.path, policy: .strict, cipher: cipher)
        do {
            while try reader.next() != nil {}
        } catch let LogError.corruption(file, offset, lsn, reason) {
            throw FollowError.corruption(file: file, offset: offset, lsn: lsn, reason: reason)
        }
        judgedStop = here
    }

    private func stopNeedsJudging(_ tail: LogTail) -> Bool {
        switch tail.stop {
        case .damage, .incomplete: return true
        case .cutBack: return false
        case .endOfRecords:
            return later.contains { ($0.header?.firstLSN ?? 0) > tail.nextLSN }
        }
    }
}
