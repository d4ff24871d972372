import LensLog

extension StoreInspector {
    /// Checks that ``key`` can read this store, from its files' headers
    /// alone: every command calls it first, so that `logtool` refuses a
    /// store it has no key for, or the wrong one, with the key id the store
    /// needs, instead of reporting its files as damaged.
    ///
    /// The key is judged as an open judges it, by the files in effect
    /// (``encryptions()``): a key change cut short leaves a snapshot under
    /// the new key whose log is not in place, which says nothing of the key
    /// the store needs. A key fits when it is the key of one of those files;
    /// without a key, none may be encrypted.
    /// - Throws: ``InspectionError/keyRequired(path:keyID:)``,
    ///   ``InspectionError/wrongKey(path:found:given:)``,
    ///   ``InspectionError/notEncrypted(path:given:)``,
    ///   ``InspectionError/notAStore(path:reason:)``.
    func requireFittingKey() throws {
        let found = try encryptions()
        let keys = found.compactMap { $0?.keyID }
        guard let key else {
            if let first = keys.first { throw InspectionError.keyRequired(path: path, keyID: first) }
            return
        }
        guard !keys.contains(key.id) else { return }
        if keys.isEmpty {
            if !found.isEmpty { throw InspectionError.notEncrypted(path: path, given: key.id) }
            return
        }
        var seen = Set<KeyID>()
        throw InspectionError.wrongKey(path: path, found: keys.filter { seen.insert($0).inserted }, given: key.id)
    }

    /// What the headers of the files in effect say, newest first (nil:
    /// plain): the newest snapshot whose header verifies and whose own log
    /// is there, as open chooses it, then the logs from its generation on
    /// (every log, with no such snapshot). Files whose header does not
    /// verify are left out.
    func encryptions() throws -> [FileEncryption?] {
        let listing = try listing()
        let logGenerations = Set(listing.logs.map(\.generation))
        // Each header read once: a live store's files change between reads.
        var snapshot: SnapshotHeader?
        for file in listing.snapshots.reversed() where logGenerations.contains(file.generation) {
            snapshot = try? SnapshotHeader(decoding: head(of: file.path, count: SnapshotFormat.maxHeaderSize), path: file.path)
            if snapshot != nil { break }
        }
        let logs: [FileEncryption?] = listing.logs.reversed().filter { $0.generation >= snapshot?.generation ?? 0 }.compactMap {
            logHeader(of: $0.path).map(\.encryption)
        }
        return (snapshot.map { [$0.encryption] } ?? []) + logs
    }

    /// The header of the log at `file`; nil when it cannot be read or does not verify.
    func logHeader(of file: String) -> LogFileHeader? {
        try? head(of: file, count: LogFormat.maxFileHeaderSize).withUnsafeBytes { try LogFileHeader(decoding: $0, file: file) }
    }

    /// The first `count` bytes of `file` (fewer when it is shorter).
    private func head(of file: String, count: Int) throws -> [UInt8] {
        let handle = try fileSystem.openFile(at: file, mode: .readOnly)
        defer { handle.close() }
        return try handle.read(at: 0, count: count)
    }
}
