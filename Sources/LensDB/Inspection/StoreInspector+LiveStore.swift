import LensLog

/// Reading a store that a program writes and compacts meanwhile.
///
/// Reads take no lock, so a file can grow, appear or vanish between the
/// listing and the read of it: a log deleted by a compaction, a record
/// appended to a log already read. Files only change by append, creation,
/// removal and (on a writable open) a cut torn tail, so the names and sizes
/// of all files, equal before and after a read, prove that nothing changed
/// during it. A read that found something wrong while the store changed is
/// done again.
extension StoreInspector {
    /// How often a read that met a changing store is tried.
    static let liveReadAttempts = 8

    /// Runs `body` until its result is clean, or the store did not change
    /// while it ran, or ``liveReadAttempts`` runs are done; the last result
    /// (or error) is the answer.
    func readingConsistently<Result>(isClean: (Result) -> Bool, _ body: () throws -> Result) throws -> Result {
        for attempt in 1... {
            let before = fingerprint()
            let last = attempt == Self.liveReadAttempts
            do {
                let result = try body()
                if last || isClean(result) || fingerprint() == before { return result }
            } catch let error as InspectionError {
                throw error
            } catch let error as CallerError {
                throw error.error
            } catch {
                if last || fingerprint() == before { throw error }
            }
        }
        preconditionFailure("the loop returns or throws on its last attempt")
    }

    /// An error of the caller's closure, passed through without a retry.
    struct CallerError: Error {
        let error: any Error
    }

    /// The name and size of every file in the store's directory.
    func fingerprint() -> [String: Int64] {
        // An unlistable directory has no fingerprint to compare; the read
        // itself reports why it cannot be listed.
        guard let names = try? fileSystem.listDirectory(path) else { return [:] }
        var sizes: [String: Int64] = [:]
        for name in names {
            // A file removed between the listing and here counts as size -1,
            // which differs from any size it had.
            guard let file = try? fileSystem.openFile(at: "\(path)/\(name)", mode: .readOnly) else {
                sizes[name] = -1
                continue
            }
            // As above: a size that cannot be read is treated as a change.
            sizes[name] = (try? file.size()) ?? -1
            file.close()
        }
        return sizes
    }
}
