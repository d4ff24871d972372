import LensLog

/// What `logtool info` prints.
public struct InfoReport: Codable, Sendable {
    public struct FileInfo: Codable, Sendable {
        public var role: FileRole
        public var name: String
        public var size: Int64
        public var formatVersion: UInt32?
        public var generation: UInt64?
        /// Snapshot: its last LSN. Log: its first and last LSN.
        public var firstLSN: UInt64?
        public var lastLSN: UInt64?
        public var records: Int?
        /// Stored bytes / decompressed bytes of the payloads (logs) or chunks.
        public var compressionRatio: Double?
        /// The cipher and key id the file is encrypted with; nil when plain
        /// or when its header does not verify.
        public var encryption: String?
        /// Snapshot: the index orders it stores, as `table.index`, which an
        /// open of the table uses instead of sorting.
        public var indexOrders: [String]?
        /// What is wrong with the file, if anything.
        public var problem: String?
    }

    /// What a file in a store's directory is for.
    public enum FileRole: String, Codable, Sendable {
        case snapshot, log
        /// An unfinished snapshot (`*.tmp`); open removes it.
        case temporary
        /// A file set aside by an earlier recovery (`*.damaged`); never read by an open.
        case damaged
        /// Not named like any LensDB file; LensDB leaves it alone.
        case unknown
    }

    public struct TableInfo: Codable, Sendable {
        public var name: String
        public var entries: Int
        /// How keys and values are encoded (``TableEncoding``), or `unknown`
        /// for a table written before encodings were recorded.
        public var encoding: String
        /// ``KeyEncoding/name`` and ``ValueEncoding/name``; nil when unknown.
        public var keyEncoding: String?
        public var valueEncoding: String?
        /// How many migrations changed the table (``MigrationHistory/schemaVersion(ofTable:)``).
        public var schemaVersion: Int = 0
    }

    public struct RootInfo: Codable, Sendable {
        public var name: String
        /// ``ValueEncoding/name``; nil when unknown.
        public var encoding: String?
    }

    public var path: String
    public var files: [FileInfo]
    public var tables: [TableInfo]
    public var roots: [String]
    /// Each root document with its encoding.
    public var rootEncodings: [RootInfo]
    public var lastLSN: UInt64
    /// The migrations the store has run, in order (``MigrationHistory/applied``).
    public var migrations: [AppliedMigration] = []
    /// Why the migration history does not read, when it does not.
    public var migrationProblem: String?
    /// How the store is encrypted: "AES-256-GCM, key id 9c1e3a7d5f20b864",
    /// or "none". From the newest snapshot's or log's header.
    public var encryption: String
    /// What open would do now: torn bytes cut, damage, orphaned logs; or why
    /// it would fail and what `.salvage` (and `logtool repair`) would keep.
    public var recovery: [String]
    /// Whether a default (`.strict`) open succeeds. When false, ``tables``,
    /// ``roots`` and ``lastLSN`` describe what salvage would keep.
    public var opensCleanly: Bool
}

extension StoreInspector {
    /// The store's files and their roles, versions, LSN ranges, sizes and
    /// compression; its tables and root documents; what recovery would do now.
    /// - Throws: ``InspectionError/notAStore(path:reason:)``.
    ///
    /// On a store that a program writes meanwhile, a report that found
    /// something wrong is made again while files change under it (see
    /// `readingConsistently(isClean:_:)`).
    public func info() throws -> InfoReport {
        try requireFittingKey()
        return try readingConsistently(isClean: { $0.opensCleanly && $0.files.allSatisfy { $0.problem == nil } }, infoOnce)
    }

    private func infoOnce() throws -> InfoReport {
        let listing = try listing()
        var files = try listing.snapshots.map { try snapshotInfo($0.path) } + listing.logs.map { try logInfo($0.path) }
        files += listing.temporaries.map { FileInfo(role: .temporary, name: $0) }
        files += listing.setAside.map { FileInfo(role: .damaged, name: $0) }
        files += listing.unknown.map { FileInfo(role: .unknown, name: $0) }
        let encryption = try encryptions().first.map { $0.map { "\($0)" } ?? "none" } ?? "none"
        var report = InfoReport(
            path: path, files: files, tables: [], roots: [], rootEncodings: [], lastLSN: 0, encryption: encryption, recovery: [],
            opensCleanly: true)
        do {
            try describeRecovery(policy: .strict, into: &report)
        } catch {
            report.opensCleanly = false
            report.recovery = ["open would fail: \(error)"]
            do {
                try describeRecovery(policy: .salvage, into: &report)
                report.recovery.insert("with .salvage or \(repairCommand(for: path)), keeps LSNs through \(report.lastLSN):", at: 1)
            } catch {
                report.recovery.append("not even .salvage can rebuild a state: \(error)")
            }
        }
        return report
    }

    private func describeRecovery(policy: RecoveryPolicy, into report: inout InfoReport) throws {
        var (state, recovery) = try recoveredState(policy: policy)
        // What an open gives: a migration cut between its batches undone.
        var undone: String?
        if let running = (try? MigrationHistory(state, store: path))?.running {
            do {
                state = try Store.undoingInterruptedMigration(state, store: path)
                undone = "migration \(running.name) was cut after \(running.batches) of its batches; an open undoes them, and the next migrate runs it again"
            } catch {
                undone = "migration \(running.name) was cut after \(running.batches) of its batches, and cannot be undone: \(error)"
            }
        }
        let history: MigrationHistory
        do {
            history = try MigrationHistory(state, store: path)
        } catch {
            history = MigrationHistory()
            report.migrationProblem = "\(error)"
        }
        report.tables = state.tableNames.map { name in
            let encoding = state.encoding(ofTable: name)
            return .init(name: name, entries: state.count(in: name), encoding: encoding.map { "\($0)" } ?? "unknown",
                         keyEncoding: encoding?.key.name, valueEncoding: encoding?.value.name,
                         schemaVersion: history.schemaVersion(ofTable: name))
        }
        report.migrations = history.applied
        report.roots = state.rootNames
        report.rootEncodings = state.rootNames.map { .init(name: $0, encoding: state.encoding(ofRoot: $0)?.name) }
        report.lastLSN = state.lsn
        report.recovery += describe(recovery, cleanClose: try directory.cleanClose())
        if let undone { report.recovery.append(undone) }
    }

    private func snapshotInfo(_ file: String) throws -> InfoReport.FileInfo {
        let bytes = try read(file)
        var info = FileInfo(role: .snapshot, name: file, size: Int64(bytes.count))
        do {
            let snapshot = try SnapshotFile(bytes: bytes, path: file, cipher: key)
            info.formatVersion = snapshot.version
            info.generation = snapshot.generation
            info.lastLSN = snapshot.lastLSN
            info.encryption = snapshot.encryption.map { "\($0)" }
            var raw = 0
            var tables: [UInt64: String] = [:], orders: [String] = []
            try snapshot.forEachItem { item in
                raw += item.approximateSize
                if case let .table(id, name) = item { tables[id] = name }
                if case let .indexOrder(table, index, 0, _) = item { orders.append("\(tables[table] ?? "table \(table)").\(index)") }
            }
            info.indexOrders = orders
            info.records = Int(snapshot.itemCount)
            info.compressionRatio = raw > 0 ? Double(bytes.count) / Double(raw) : nil
        } catch {
            info.problem = "\(error)"
        }
        return info
    }

    private func logInfo(_ file: String) throws -> InfoReport.FileInfo {
        let handle: any StoredFile
        do {
            handle = try fileSystem.openFile(at: file, mode: .readOnly)
        } catch let error as StorageError where error.code == .notRegularFile {
            // Whether open fails on it is the recovery lines' to say: it never opens a log the snapshot covers.
            var info = FileInfo(role: .log, name: file)
            info.problem = "\(error)"
            return info
        }
        defer { handle.close() }
        var info = FileInfo(role: .log, name: file, size: try handle.size())
        // The header alone, which needs no key: shown even for a log under another key.
        if let header = try? handle.read(at: 0, count: LogFormat.maxFileHeaderSize).withUnsafeBytes({
            try LogFileHeader(decoding: $0, file: file)
        }) {
            info.formatVersion = header.version
            info.generation = header.generation
            info.firstLSN = header.firstLSN
            info.encryption = header.encryption.map { "\($0)" }
        }
        do {
            var reader = try LogReader(file: handle, path: file, policy: .salvage, cipher: key)
            info.formatVersion = reader.header.version
            info.generation = reader.header.generation
            info.firstLSN = reader.header.firstLSN
            var records = 0, stored = 0, raw = 0
            while let record = try reader.next() {
                records += 1
                stored += record.frameSize - LogFormat.frameHeaderSize
                raw += record.payload.count
            }
            info.records = records
            info.lastLSN = records > 0 ? reader.nextLSN - 1 : nil
            info.compressionRatio = raw > 0 ? Double(stored) / Double(raw) : nil
            if !reader.dropped.isEmpty { info.problem = "damage: \(reader.dropped.count) range(s) would be dropped by salvage" }
        } catch {
            info.problem = "\(error)"
        }
        return info
    }

    /// What open does, line by line: the same judgements and the same
    /// files removed (``StoreDirectory/logsRemovedByOpen(after:)``).
    func describe(_ recovery: RecoveryReport, cleanClose: CleanClose?) -> [String] {
        var lines = ["replays \(recovery.recordsReplayed) records" + (recovery.snapshot.map { " after the snapshot at LSN \($0.lastLSN)" } ?? "")]
        switch cleanClose?.lastLSN {
        case let lsn?: lines.append("finds a clean close through LSN \(lsn): every record up to it was durable")
        case nil where cleanClose != nil: lines.append("finds a clean close that records no LSN")
        case nil: break
        }
        lines += recovery.tornTails.map { "cuts a torn tail of \($0.bytesDropped) bytes at offset \($0.offset) of \($0.file) (unsynced writes of a crash)" }
        let removed = Set(directory.logsRemovedByOpen(after: recovery))
        let fate = { (log: String) in removed.contains(log) ? "removes \(log)" : "keeps \(log) (its name marks the snapshot in effect)" }
        lines += recovery.orphanedLogs.map { "\(fate($0)): it starts past a torn point and holds only unsynced records" }
        lines += recovery.obsoleteLogs.map { "\(fate($0)): the snapshot covers it" }
        lines += recovery.supersededLogs.map { "skips and \(fate($0)): a later log holds everything from its first LSN on" }
        lines += recovery.logsCutWhileNew.map { "\(fate($0)): cut while new, it holds nothing durable" }
        lines += recovery.damagedSnapshots.map { "sets aside \($0.path): \($0.problem)" }
        lines += recovery.dropped.map {
            let lost = "LSNs \($0.range.lostLSNs.lowerBound)..<\($0.range.lostLSNs.upperBound) at offset \($0.range.offset) of \($0.file): \($0.range.reason.rawValue)"
            return $0.range.proof == .cleanClose ? "drops \(lost), though the clean close says they were durable" : "drops \(lost)"
        }
        lines += recovery.skippedCopies.map {
            "skips \($0.file)'s copies of LSNs \($0.range.lostLSNs.lowerBound)..<\($0.range.lostLSNs.upperBound), held already: nothing is lost"
        }
        return lines
    }
}

typealias FileInfo = InfoReport.FileInfo

extension InfoReport.FileInfo {
    init(role: InfoReport.FileRole, name: String, size: Int64 = 0) {
        self.init(role: role, name: name, size: size, formatVersion: nil, generation: nil, firstLSN: nil,
                  lastLSN: nil, records: nil, compressionRatio: nil, encryption: nil, problem: nil)
    }
}

extension SnapshotItem {
    /// The item's size in the item stream, near enough for a ratio.
    var approximateSize: Int {
        switch self {
        case let .table(_, name): 2 + name.utf8.count
        case let .entry(_, key, value): 4 + key.count + value.count
        case let .root(name, value): 3 + name.utf8.count + value.count
        case .tableEncoding: 4
        case let .rootEncoding(name, _): 3 + name.utf8.count
        case let .indexOrder(_, index, _, positions): 4 + index.utf8.count + 3 * positions.count
        }
    }
}
