import LensLog

extension StoreInspector {
    /// Checks that ``key`` can read this store, from its files' headers
    /// alone: every command calls it first, so that `logtool` refuses a
    /// store it has no key for, or the wrong one, with the key id the store
    /// needs, instead of reporting its files as damaged.
    ///
    /// A key fits when it is the key of some encrypted file; which files
    /// open reads, and whether they agree, is then the chain's to judge (a
    /// key change cut short leaves files under two keys, of which only one
    /// set is in effect). Without a key, no file may be encrypted.
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

    /// What the header of each snapshot and log says, newest first (nil:
    /// plain); files whose header does not verify are left out.
    func encryptions() throws -> [FileEncryption?] {
        let listing = try listing()
        // A header that cannot be read or does not verify says nothing: left out.
        let snapshots: [FileEncryption?] = listing.snapshots.reversed().compactMap { file in
            (try? SnapshotHeader(decoding: head(of: file.path, count: SnapshotFormat.maxHeaderSize), path: file.path)).map(\.encryption)
        }
        let logs: [FileEncryption?] = listing.logs.reversed().compactMap { file in
            (try? head(of: file.path, count: LogFormat.maxFileHeaderSize).withUnsafeBytes {
                try LogFileHeader(decoding: $0, file: file.path)
            }).map(\.encryption)
        }
        return snapshots + logs
    }

    /// The first `count` bytes of `file` (fewer when it is shorter).
    private func head(of file: String, count: Int) throws -> [UInt8] {
        let handle = try fileSystem.openFile(at: file, mode: .readOnly)
        defer { handle.close() }
        return try handle.read(at: 0, count: count)
    }
}
