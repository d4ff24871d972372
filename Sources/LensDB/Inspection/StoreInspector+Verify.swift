import LensLog

/// What `logtool verify` found.
public struct VerifyReport: Codable, Sendable {
    /// One thing wrong, with where it is.
    public struct Problem: Codable, Sendable, Equatable, CustomStringConvertible {
        public var file: String
        public var offset: Int64?
        public var lsn: UInt64?
        public var message: String

        public var description: String {
            var place = file
            if let offset { place += " at offset \(offset)" }
            if let lsn { place += " (LSN \(lsn))" }
            return "\(place): \(message)"
        }

        public init(file: String, offset: Int64? = nil, lsn: UInt64? = nil, message: String) {
            self.file = file
            self.offset = offset
            self.lsn = lsn
            self.message = message
        }

        /// A problem whose message is `error`, without the file name it usually starts with.
        init(file: String, error: any Error, prefix: String = "") {
            self.init(file: file, message: prefix + stripping(file, from: "\(error)"))
        }
    }

    public var problems: [Problem] = []
    /// Normal things worth knowing: torn tails, orphaned or superseded logs,
    /// temporary files. None of them makes verify fail.
    public var notes: [String] = []
    public var bytesRead: Int64 = 0
    public var recordsChecked = 0
    public var valuesChecked = 0

    /// True when no problem was found; notes do not count.
    public var isOK: Bool { problems.isEmpty }
}

extension StoreInspector {
    /// Reads every byte of the store: every checksum, LSN continuity within
    /// and across logs, that the snapshot and the logs agree, that every
    /// record is a transaction and every value decodes. Takes no lock and
    /// changes no file.
    ///
    /// Across files it applies the rules open applies (`LogChain`): a log
    /// that starts past a torn point and holds only unsynced records, or that
    /// an open after a crash wrote again from an earlier LSN, is a note;
    /// a gap that a later record proves was durable is a problem.
    /// - Parameter progress: bytes read of the snapshots and logs, after each file.
    /// - Throws: ``InspectionError/notAStore(path:reason:)`` only; damage is reported, not thrown.
    ///
    /// On a store that a program writes meanwhile, a run that found problems
    /// is made again while files change under it, so that a log compacted
    /// away or grown mid-read is not reported as damage.
    public func verify(progress: ProgressHandler? = nil) throws -> VerifyReport {
        try requireFittingKey()
        return try readingConsistently(isClean: \.isOK) { try verifyOnce(progress: progress) }
    }

    private func verifyOnce(progress handler: ProgressHandler?) throws -> VerifyReport {
        let listing = try listing()
        // Every file opened at once: a compaction that removes one while this
        // pass reads the others leaves it readable through its handle, so the
        // pass reads the files of one moment. One that is gone already is
        // reported when its turn comes (and the pass is done again).
        var handles: [String: any StoredFile] = [:]
        for file in listing.snapshots.map(\.path) + listing.logs.map(\.path) {
            handles[file] = try? fileSystem.openFile(at: file, mode: .readOnly)
        }
        defer { for handle in handles.values { handle.close() } }
        var report = VerifyReport()
        report.notes += listing.temporaries.map { "\($0): an unfinished snapshot or log; open removes it" }
        report.problems += markerProblems()
        report.notes += listing.setAside.map { "\($0): a damaged file set aside earlier; an open never reads it; when no snapshot is usable, repair salvages the newest snapshot whose header verifies, set aside or not" }
        let chain = verifyChain(into: &report)
        let total = handler == nil ? 0 : (listing.snapshots + listing.logs).reduce(Int64(0)) { $0 + size(of: $1.path, in: fileSystem) }
        var progress = ProgressCounter(.reading, total: total, handler: handler)
        defer { progress.finish() }
        for snapshot in listing.snapshots {
            verifySnapshot(snapshot.path, handle: handles[snapshot.path], into: &report)
            progress.update(report.bytesRead)
        }
        let base = listing.snapshots.first { $0.generation == chain.generation }?.path
        var catalog = catalog(ofSnapshot: base, handle: base.flatMap { handles[$0] })
        for log in listing.logs {
            if log.generation < chain.generation {
                report.notes.append("\(log.path): older than the snapshot, which holds its records; \(chain.fate(log.path))")
                // Open never reads it, so it need not be a readable log.
                if !isRegularFile(log.path) { continue }
            }
            verifyLog(log.path, handle: handles[log.path], chain: chain, catalog: &catalog, into: &report)
            progress.update(report.bytesRead)
        }
        return report
    }

    /// What the checks across files found that the checks of each log use.
    private struct ChainFindings {
        /// The generation of the snapshot open would start from (0 for none).
        var generation: UInt64 = 0
        /// Logs whose header no record vouches for (cut while new, or being created now).
        var cutWhileNew: Set<String> = []
        /// Logs a later one supersedes: never read.
        var superseded: Set<String> = []
        /// Logs where a clean close proves that what they lack was durable.
        var lostAfterCleanClose: Set<String> = []
        /// The logs open removes.
        var removedByOpen: Set<String> = []

        func fate(_ log: String) -> String {
            removedByOpen.contains(log) ? "open removes it" : "open keeps it, since its name marks the snapshot in effect"
        }
    }

    /// The store's own small files (lock, markers) that an open would fail
    /// on: one that is not a regular file, or a link to nothing.
    private func markerProblems() -> [VerifyReport.Problem] {
        let names = (try? fileSystem.listDirectory(path)) ?? []
        return [StoreDirectory.lockName, StoreDirectory.identityName, StoreDirectory.closedMarkerName]
            .filter(names.contains).compactMap { name in
                let file = "\(path)/\(name)"
                do {
                    try fileSystem.openFile(at: file, mode: .readOnly).close()
                    return nil
                } catch let error as StorageError where error.code == .notFound {
                    return .init(file: file, message: "a link to nothing; an open would fail on it: remove it")
                } catch {
                    return .init(file: file, error: error, prefix: "an open would fail: ")
                }
            }
    }

    /// The checks across files, as open makes them (with the clean-close
    /// marker open would read).
    private func verifyChain(into report: inout VerifyReport) -> ChainFindings {
        var findings = ChainFindings()
        do {
            let (_, recovery) = try recoveredState(policy: .salvage)
            findings.removedByOpen = Set(directory.logsRemovedByOpen(after: recovery))
            report.notes += recovery.orphanedLogs.map {
                "\($0): starts past the end of the log before it and holds only unsynced records (a crash); \(findings.fate($0))"
            }
            report.notes += recovery.supersededLogs.map {
                "\($0): a later log holds everything from its first LSN on (written again after a crash); never read, and \(findings.fate($0))"
            }
            // Damage inside a log is reported by verifyLog with its offset;
            // here only what lies between files, what only the clean close
            // proves lost, and records that verify but do not apply (which
            // only replay finds).
            let kept: Set<DamageReason> = [.lsnOutOfSequence, .doesNotApply]
            for dropped in recovery.dropped where kept.contains(dropped.range.reason) || dropped.range.proof == .cleanClose {
                let range = dropped.range, lost = "LSNs \(range.lostLSNs.lowerBound)..<\(range.lostLSNs.upperBound)"
                let message = switch (range.reason, range.proof) {
                case (.doesNotApply, _):
                    "record \(range.lostLSNs.lowerBound) verifies but does not apply: it changes a root document as a missing record left it, or LensDB did not write it; a strict open fails, and .salvage or \(repairCommand(forFileIn: dropped.file)) drops it"
                case (.lsnOutOfSequence, .laterRecord): "\(lost) are missing before this log, and a later record proves they were durable"
                case (.lsnOutOfSequence, .cleanClose): "\(lost) are missing before this log, and the store's clean close proves they were durable"
                default: "\(range.reason.rawValue): \(lost) are missing, though the store was closed cleanly after them: the file was cut or damaged after the close"
                }
                report.problems.append(.init(file: dropped.file, offset: range.offset, lsn: range.lostLSNs.lowerBound, message: message))
                if range.proof == .cleanClose { findings.lostAfterCleanClose.insert(dropped.file) }
            }
            report.problems += recovery.skippedCopies.map { copies in
                let range = copies.range
                return .init(file: copies.file, offset: 0, lsn: range.lostLSNs.lowerBound, message: "LSNs \(range.lostLSNs.lowerBound)..<\(range.lostLSNs.upperBound) are held again by this log, which starts before the LSN expected; a strict open fails, and .salvage or repair keeps the copies read first")
            }
            findings.generation = recovery.snapshot?.generation ?? 0
            findings.cutWhileNew = Set(recovery.logsCutWhileNew)
            findings.superseded = Set(recovery.supersededLogs)
        } catch let error as RecoveryError {
            if case let .missingRecords(file, expected, first) = error {
                report.problems.append(.init(file: file, offset: 0, lsn: expected,
                    message: "starts at LSN \(first) but LSN \(expected) is next, and a later record proves the log before it ended durably"))
            } else {
                report.problems.append(.init(file: path, error: error))
            }
        } catch {
            report.problems.append(.init(file: path, error: error, prefix: "open would fail even with salvage: "))
        }
        return findings
    }

    /// The encodings a snapshot records; empty for none (or one that does
    /// not read, which verifySnapshot reports).
    private func catalog(ofSnapshot file: String?, handle: (any StoredFile)?) -> EncodingCatalog {
        var catalog = EncodingCatalog()
        guard let file, let snapshot = try? SnapshotFile(bytes: read(file, through: handle), path: file, cipher: key) else { return catalog }
        // A snapshot that fails midway leaves what it recorded before; verifySnapshot reports the failure.
        try? snapshot.forEachItem { catalog.note($0) }
        return catalog
    }

    /// Checks a snapshot on its own: checksums, and every key and value
    /// against the encoding the snapshot records for it (none is judged
    /// where it records none).
    private func verifySnapshot(_ file: String, handle: (any StoredFile)?, into report: inout VerifyReport) {
        do {
            let bytes = try read(file, through: handle)
            report.bytesRead += Int64(bytes.count)
            var catalog = EncodingCatalog()
            var entries: [UInt64: Int] = [:], orders: [IndexOrderKey: [UInt32]] = [:]
            try SnapshotFile(bytes: bytes, path: file, cipher: key).forEachItem { item in
                catalog.note(item)
                switch item {
                case let .indexOrder(table, index, _, positions):
                    orders[IndexOrderKey(table: table, index: index), default: []].append(contentsOf: positions)
                case let .entry(id, key, value):
                    let table = catalog.tableName(id) ?? "table \(id)"
                    let encoding = catalog.tables[table]
                    let rendered = RenderedValue(key: key, encoding: encoding?.key)
                    judge(["key": rendered, "value": RenderedValue(value: value, encoding: encoding?.value)],
                          of: "\(table)[\(rendered.text)]", into: &report) { .init(file: file, message: $0) }
                case let .root(name, value):
                    judge(["value": RenderedValue(value: value, encoding: catalog.roots[name])],
                          of: "root \(name)", into: &report) { .init(file: file, message: $0) }
                case .table, .tableEncoding, .rootEncoding: break
                }
                if case let .entry(id, _, _) = item { entries[id, default: 0] += 1 }
            }
            for (key, order) in orders.sorted(by: { ($0.key.table, $0.key.index) < ($1.key.table, $1.key.index) }) {
                let count = entries[key.table] ?? 0
                if !StoreState.namesEachOnce(order, count: count) {
                    let table = catalog.tableName(key.table) ?? "table \(key.table)"
                    report.problems.append(.init(file: file, message: "the stored order of index \(key.index) of \(table) does not name each of its \(count) entries once; an open sorts instead, and the next compaction leaves it out"))
                }
            }
        } catch {
            report.problems.append(.init(file: file, error: error))
        }
    }

    /// Counts the rendered parts and reports those that break their encoding's promise.
    private func judge(
        _ parts: KeyValuePairs<String, RenderedValue>, of target: String, into report: inout VerifyReport,
        _ problem: (String) -> VerifyReport.Problem
    ) {
        for (role, rendered) in parts {
            report.valuesChecked += 1
            if let reason = rendered.problem {
                report.problems.append(problem("\(target): the \(role) breaks its table's encoding (\(rendered.encoding)): \(reason)"))
            }
        }
    }

    /// Checks one log on its own: header, checksums, LSNs in sequence, every
    /// record a transaction, every key and value against the encoding
    /// `catalog` holds for it at that point (the declarations in this log
    /// are added as they come).
    /// A log cut while new whose header does not verify is a note: its
    /// header was never synced, so it holds nothing that was acknowledged;
    /// so is a superseded log's, which open never reads.
    private func verifyLog(
        _ file: String, handle opened: (any StoredFile)?, chain: ChainFindings, catalog: inout EncodingCatalog, into report: inout VerifyReport
    ) {
        do {
            // Streamed through the reader's window: verify holds one window
            // of a log, not the log.
            let handle = try opened ?? fileSystem.openFile(at: file, mode: .readOnly)
            defer { if opened == nil { handle.close() } }
            report.bytesRead += try handle.size()
            let opened = Result { try LogReader(file: handle, path: file, policy: .salvage, cipher: key) }
            if case let .failure(error) = opened, error is LogError {
                let reason = stripping(file, from: "\(error)")
                if chain.cutWhileNew.contains(file) {
                    report.notes.append("\(file): a log cut while new (\(reason)), or being created now; no record vouches for it, and \(chain.fate(file))")
                    return
                }
                if chain.superseded.contains(file) {
                    report.notes.append("\(file): its header is damaged (\(reason)), but a later log holds everything from its first LSN on, so open never reads it")
                    return
                }
            }
            var reader = try opened.get()
            while let record = try reader.next() {
                report.recordsChecked += 1
                check(Self.dumped(record, file: file, catalog: &catalog), into: &report)
            }
            report.problems += reader.dropped.map {
                .init(file: file, offset: $0.offset, lsn: $0.lostLSNs.lowerBound,
                      message: "\($0.reason.rawValue), followed by valid records: LSNs \($0.lostLSNs.lowerBound)..<\($0.lostLSNs.upperBound) lost")
            }
            // Where the clean close proves the end lost, verifyChain reported it as a problem.
            if case let .tornTail(offset, dropped, reason)? = reader.end, !chain.lostAfterCleanClose.contains(file) {
                report.notes.append("\(file): torn tail of \(dropped) bytes at offset \(offset) (\(reason.rawValue)): unsynced writes cut by a crash, not damage")
            }
        } catch {
            report.problems.append(.init(file: file, error: error))
        }
    }

    private func check(_ transaction: DumpedTransaction, into report: inout VerifyReport) {
        let place = { (message: String) in
            VerifyReport.Problem(file: transaction.file, offset: transaction.offset, lsn: transaction.lsn, message: message)
        }
        if let problem = transaction.problem { report.problems.append(place(problem)) }
        for operation in transaction.operations {
            var parts: KeyValuePairs<String, RenderedValue> = [:]
            switch (operation.key, operation.value) {
            case let (key?, value?): parts = ["key": key, "value": value]
            case let (key?, nil): parts = ["key": key]
            case let (nil, value?): parts = ["value": value]
            case (nil, nil): continue
            }
            judge(parts, of: "\(operation.op) \(operation.target)", into: &report, place)
        }
    }
}

extension StoreInspector {
    /// Whether `file` opens as a regular file.
    func isRegularFile(_ file: String) -> Bool {
        do {
            try fileSystem.openFile(at: file, mode: .readOnly).close()
            return true
        } catch let error as StorageError where error.code == .notRegularFile {
            return false
        } catch {
            // Other failures (a file removed meanwhile, a failed read) are verifyLog's to report.
            return true
        }
    }
}

/// One index's stored order in a snapshot: its table's id there and its name.
private struct IndexOrderKey: Hashable {
    let table: UInt64
    let index: String
}
