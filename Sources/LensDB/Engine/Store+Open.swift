#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import LensLog
import Logging

extension Store {
    /// Everything open produces, handed to the initializer.
    struct Opened {
        var state: StoreState
        var log: LogWriter?
        var generation: UInt64
        var lock: (any FileLock)?
        var statistics: OpenStatistics
        var snapshotBytes: Int64
        var olderLogBytes: Int64
    }

    /// The path of an open: check the directory is a store's, lock, tidy,
    /// recover, start a new log.
    /// What a crash here leaves: at most a new, empty log file, which the
    /// next open reads as a log cut while new; or, when salvage dropped LSNs
    /// past the last record kept, what `startPastLoss` says.
    /// - Throws: as ``Store/init(at:options:)``; a key that does not fit the
    ///   files as the `StoreError` encryption case that says how.
    static func open(at path: String, options: StoreOptions, progress: ProgressHandler? = nil) throws -> Opened {
        do {
            return try openWithKey(at: path, options: options, progress: progress)
        } catch let error as EncryptionError {
            throw StoreError.encryption(error, path: path)
        } catch LogError.encryption(let error) {
            throw StoreError.encryption(error, path: path)
        }
    }

    private static func openWithKey(at path: String, options: StoreOptions, progress: ProgressHandler?) throws -> Opened {
        let started = ContinuousClock.now
        let fileSystem = options.fileSystem
        let directory = StoreDirectory(path: path, fileSystem: fileSystem)
        let logger = Store.logger(for: path, options)
        var lock: (any FileLock)?
        try prepareStoreDirectory(directory, options: options)
        if !options.readOnly { lock = try takeLock(directory, logger: logger) }
        do {
            if !options.readOnly { try directory.writeIdentity() }
            // Asked before any write: on Darwin it costs one F_FULLFSYNC of the directory.
            let durableSync = options.readOnly ? nil : try fileSystem.durableSyncSupport(in: path)
            var listing = try directory.list()
            // Read, not removed: an open that fails must leave the proof for the next one.
            let cleanClose = try directory.cleanClose()
            if !options.readOnly {
                // Refused before anything changes: a writable open starts the next generation's log.
                _ = try StoreError.generation(after: listing.newestGeneration, path: directory.path)
                try removeTemporaries(&listing, directory)
            }
            var state = StoreState()
            var unproven: [LogRecord] = []
            // A clean close proves its records (a marker without an LSN,
            // written by an earlier LensDB or garbled by a crash, proves
            // every record read); read-only opens log nothing again. Either
            // way nothing is kept: a long log would otherwise be held whole.
            let closedLSN = cleanClose.map { $0.lastLSN ?? .max } ?? 0
            let mayRelog = !options.readOnly
            var reading = ReadingProgress(listing, fileSystem: fileSystem, handler: progress)
            // The chain reads every file it uses with the open's key, and
            // fails before decrypting anything if one does not fit.
            let chain = LogChain(
                directory: directory, policy: options.recovery, setAsideDamaged: !options.readOnly, cleanClose: cleanClose,
                cipher: options.encryptionKey)
            // Set once salvage skipped records: what follows a skip is kept
            // for logging again even below the close's LSN, since only the
            // marker, removed below, proved it (`LogChain`'s provenLSN).
            var pastSkip = false
            var notApplied: [DroppedLogRange] = []
            var report = try chain.recover(listing: listing, loadSnapshot: { snapshot in
                state = try loadState(from: snapshot)
                unproven = []
                pastSkip = false
                notApplied = []
                reading.read(snapshot: snapshot.path)
            }, apply: { record, file in
                if record.lsn != state.lsn + 1 { pastSkip = true }
                if let dropped = try replay(record, from: file, into: &state, policy: options.recovery) { notApplied.append(dropped) }
                reading.read(record, in: file)
                guard mayRelog, record.lsn > closedLSN || pastSkip else { return }
                // Unproven records are in LSN order, so a record proves a prefix of them.
                if let first = unproven.first, first.lsn <= record.syncedLSN {
                    unproven.removeSubrange(..<(unproven.firstIndex { $0.lsn > record.syncedLSN } ?? unproven.endIndex))
                }
                unproven.append(record)
            })
            reading.finish()
            report.addDropped(notApplied)
            unproven.removeAll { $0.lsn <= report.provenLSN }
            logRecovery(report, logger: logger)
            var opened = Opened(
                state: state, log: nil, generation: listing.newestGeneration, lock: lock,
                statistics: OpenStatistics(recovery: report, items: state.itemCount, seconds: 0, durableSync: durableSync),
                snapshotBytes: report.snapshot?.size ?? 0, olderLogBytes: report.logBytes)
            if !options.readOnly {
                opened.generation += 1  // checked above
                // LSNs dropped past the last record kept were given out (a
                // clean close or a later log proves it), and a follower may
                // have seen them: new commits are numbered after them, from
                // a snapshot that says so, written before the marker goes.
                let pastLoss = report.highestDroppedLSN > state.lsn
                if pastLoss { try startPastLoss(&opened, through: report.highestDroppedLSN, in: directory, options: options, logger: logger) }
                // From here on this session writes: a crash must not leave
                // the last session's marker vouching for what it did not close.
                try directory.removeCleanClose()
                var removed: [String]
                if pastLoss {
                    removed = try removeFiles(olderThan: opened.generation, in: directory)
                } else {
                    removed = try remove(directory.logsRemovedByOpen(after: report), directory)
                    // The next log is created by the first write: an open that
                    // only reads costs no file creation and no sync.
                    if !unproven.isEmpty {
                        let log = try relog(unproven, from: report.provenLSN, generation: opened.generation, in: directory, options: options)
                        opened.log = log
                        logRelog(unproven, into: log, logger: logger)
                        removed += try removeLogs(supersededBy: log, report, directory)
                    }
                }
                logRemoved(removed, logger: logger)
            }
            opened.statistics.seconds = (ContinuousClock.now - started).seconds
            logOpened(opened.statistics, lsn: opened.state.lsn, logger: logger)
            return opened
        } catch {
            lock?.unlock()
            throw error
        }
    }

    /// After an unclean end (a crash, or a failed write or sync), the last
    /// records read may exist only in this boot's page cache: after a failed
    /// fsync, Linux may never write them, and a new commit must not build on
    /// them. So they are written again, into a new log that starts at the
    /// first unproven LSN and that appears under its name only once synced
    /// whole (``LogWriter/createHolding(_:fileSystem:path:generation:firstLSN:options:)``).
    /// Later opens read the new log in place of the old tail (`LogChain`
    /// caps a log at the next one's first LSN).
    private static func relog(
        _ records: [LogRecord], from provenLSN: UInt64, generation: UInt64, in directory: StoreDirectory, options: StoreOptions
    ) throws -> LogWriter {
        // Sealed again under the store's key with this writer's own nonces:
        // the same LSNs and payloads as before, never the same nonces.
        try LogWriter.createHolding(
            records.map { ($0.type, $0.payload) }, fileSystem: directory.fileSystem,
            path: directory.logPath(generation: generation), generation: generation,
            firstLSN: provenLSN + 1, options: logOptions(options), cipher: options.encryptionKey)
    }

    /// Makes `opened`'s state the store's at `lastLSN`, past the LSNs
    /// salvage dropped: creates log G (the open's generation) starting one
    /// after it, then writes snapshot G of the state at `lastLSN`, which
    /// holds every record replayed, unproven ones too. A crash before the
    /// snapshot's rename leaves the old files and an empty log whose start
    /// the clean close vouches for (the next open drops the same LSNs
    /// again) or nothing does (the log is orphaned); after it, the store
    /// at `lastLSN`.
    private static func startPastLoss(
        _ opened: inout Opened, through lastLSN: UInt64, in directory: StoreDirectory, options: StoreOptions, logger: Logger
    ) throws {
        opened.state.lsn = lastLSN
        let log = try LogWriter.create(
            fileSystem: directory.fileSystem, path: directory.logPath(generation: opened.generation), generation: opened.generation,
            firstLSN: lastLSN + 1, options: logOptions(options), cipher: options.encryptionKey)
        do {
            opened.snapshotBytes = try writeSnapshot(
                of: opened.state, generation: opened.generation, in: directory, compression: options.compression, key: options.encryptionKey)
        } catch {
            log.close()
            throw error
        }
        opened.log = log
        opened.olderLogBytes = 0
        logger.notice("numbered new commits after the LSNs salvage dropped", metadata: [
            "lastLSN": "\(lastLSN)", "snapshot": .string(directory.snapshotPath(generation: opened.generation)),
        ])
    }

    /// Removes the logs that `relog` now supersedes entirely: each record
    /// they hold is in it. Later opens would skip them anyway; removing them
    /// keeps the directory to the files that matter.
    private static func removeLogs(supersededBy relog: LogWriter, _ report: RecoveryReport, _ directory: StoreDirectory) throws -> [String] {
        let superseded = report.logsRead.filter { $0.firstLSN >= relog.header.firstLSN }.map(\.path)
        return try remove(superseded.filter { $0 != directory.logOfSnapshot(in: report) }, directory)
    }

    /// Removes `logs` and syncs the directory. Returns the logs removed.
    private static func remove(_ logs: [String], _ directory: StoreDirectory) throws -> [String] {
        guard !logs.isEmpty else { return [] }
        for log in logs { try directory.fileSystem.removeFile(at: log) }
        try directory.fileSystem.syncDirectory(at: directory.path)
        return logs
    }

    static func logOptions(_ options: StoreOptions) -> LogWriterOptions {
        var log = options.log
        log.compression = options.compression == .lz4
        if options.durability == .none { log.backgroundSyncInterval = nil }
        return log
    }

    /// Makes sure `directory` may hold the store before anything in it is
    /// touched: a new directory is created (with ``StoreOptions/permissions``);
    /// an existing one must be a store, or empty, or adopted by
    /// ``StoreOptions/adoptsNonEmptyDirectory``. A read-only open creates nothing.
    /// - Throws: ``StoreError/notAStore(path:foreignEntries:)``,
    ///   ``StoreError/notADirectory(path:)``, ``StoreError/noStore(path:)``, `StorageError`.
    private static func prepareStoreDirectory(_ directory: StoreDirectory, options: StoreOptions) throws {
        let fileSystem = directory.fileSystem
        guard fileSystem.fileExists(at: directory.path) else {
            if options.readOnly { throw StoreError.noStore(path: directory.path) }
            return try createStoreDirectory(directory.path, permissions: options.permissions, fileSystem: fileSystem)
        }
        let listing: StoreDirectory.Listing
        do {
            listing = try directory.list()
        } catch let error as StorageError where error.errno == ENOTDIR {
            throw StoreError.notADirectory(path: directory.path)
        }
        switch listing.identity {
        case .store: return
        case .foreign(let entries) where !options.adoptsNonEmptyDirectory:
            throw StoreError.notAStore(path: directory.path, foreignEntries: entries)
        case .empty, .foreign:
            // An earlier open may have created the directory and failed
            // before syncing its parent: make its entry durable now.
            if !options.readOnly { try fileSystem.syncDirectory(at: parentDirectory(of: directory.path)) }
        }
    }

    /// Creates the store's directory, and any missing ancestors, and makes
    /// each new entry durable: a name is durable only once its parent
    /// directory is synced, so every directory created gets its parent
    /// synced, not only the last.
    private static func createStoreDirectory(_ path: String, permissions: FilePermissions, fileSystem: any FileSystem) throws {
        var missing = [path]
        while case let parent = parentDirectory(of: missing.last!), parent != missing.last!, !fileSystem.fileExists(at: parent) {
            missing.append(parent)
        }
        for directory in missing.reversed() {
            // Ancestors are not the store's: they get the process's default mode.
            try fileSystem.createDirectory(at: directory, permissions: directory == path ? permissions : nil)
            try fileSystem.syncDirectory(at: parentDirectory(of: directory))
        }
    }

    /// Takes the store's lock, trying for up to 200 ms: a process that spawns
    /// a child lends it every descriptor between fork and exec, so a lock
    /// just released can look held for a moment. Contention is logged: once
    /// when it starts, once more when open gives up.
    static func takeLock(_ directory: StoreDirectory, logger: Logger = Store.silentLogger) throws -> any FileLock {
        var attempt = 0
        while true {
            do {
                return try directory.fileSystem.lockFile(at: directory.lockPath)
            } catch let error as StorageError where error.code == .locked {
                attempt += 1
                let holder: Logger.MetadataValue = error.lockHolder.map { "\($0)" } ?? "unknown"
                guard attempt < lockAttempts else {
                    logger.error("store is locked; giving up", metadata: ["holder": holder, "attempts": "\(attempt)"])
                    throw StoreError.locked(path: directory.path, holder: error.lockHolder)
                }
                if attempt == 1 { logger.notice("store is locked; retrying", metadata: ["holder": holder]) }
                var pause = timespec(tv_sec: 0, tv_nsec: 10_000_000)
                nanosleep(&pause, nil)
            }
        }
    }

    static let lockAttempts = 20

    /// A temporary file is a snapshot whose compaction never finished, or a
    /// log that an open was writing again when it stopped. Only the names
    /// LensDB gives them are listed as temporaries (``StoreDirectory``).
    private static func removeTemporaries(_ listing: inout StoreDirectory.Listing, _ directory: StoreDirectory) throws {
        guard !listing.temporaries.isEmpty else { return }
        for file in listing.temporaries { try directory.fileSystem.removeFile(at: file) }
        try directory.fileSystem.syncDirectory(at: directory.path)
        listing.temporaries = []
    }

    static func loadState(from snapshot: SnapshotFile) throws -> StoreState {
        var loader = SnapshotLoader(lastLSN: snapshot.lastLSN)
        func check(_ problem: String?) throws {
            if let problem { throw SnapshotError.malformedItem(file: snapshot.path, reason: problem) }
        }
        // Entries stay in their chunks: a table's keys and values are not
        // copied out one allocation each.
        try snapshot.forEachItem(entriesInPlace: { entry in try check(loader.add(entry)) }, { item in try check(loader.add(consume item)) })
        return loader.state
    }

    /// Applies `record` to `state`, all of it or none.
    ///
    /// A record whose change does not apply (a patch of a root a dropped
    /// record held) is, under `.salvage`, dropped whole and returned to be
    /// reported; its LSN is spent all the same, as the log still holds it.
    /// - Throws: ``StoreError/malformedRecord(file:offset:lsn:)`` for a
    ///   payload that is not a transaction, under either policy;
    ///   ``StoreError/recordDoesNotApply(file:offset:lsn:problem:)`` under
    ///   `.strict`.
    @discardableResult
    static func replay(
        _ record: LogRecord, from file: String, into state: inout StoreState, policy: RecoveryPolicy
    ) throws -> DroppedLogRange? {
        guard let operations = TransactionFormat.decode(record.payload) else {
            throw StoreError.malformedRecord(file: file, offset: record.offset, lsn: record.lsn)
        }
        var dropped: DroppedLogRange?
        do {
            try state.applyAllOrNone(operations)
        } catch {
            guard policy == .salvage else {
                throw StoreError.recordDoesNotApply(file: file, offset: record.offset, lsn: record.lsn, problem: error.description)
            }
            dropped = DroppedLogRange(file: file, range: DroppedRange(
                offset: record.offset, length: Int64(record.frameSize), lostLSNs: record.lsn..<record.lsn + 1,
                reason: .doesNotApply))
        }
        state.lsn = record.lsn
        return dropped
    }
}

extension RecoveryReport {
    /// Adds what LensDB's replay dropped to what the chain dropped, in LSN
    /// order. A record dropped as not applying is not one replayed, though
    /// the chain counted it when it handed it over.
    mutating func addDropped(_ ranges: [DroppedLogRange]) {
        guard !ranges.isEmpty else { return }
        dropped += ranges
        dropped.sort { $0.range.lostLSNs.lowerBound < $1.range.lostLSNs.lowerBound }
        recordsReplayed -= ranges.count { $0.range.reason == .doesNotApply }
    }

    /// The highest LSN among those dropped (0 for none): the store gave it
    /// out, though no record of it was kept.
    var highestDroppedLSN: UInt64 {
        dropped.map { $0.range.lostLSNs.upperBound - 1 }.max() ?? 0
    }
}

extension Duration {
    /// The duration in seconds, as a Double.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// Builds a state from snapshot items, in order.
struct SnapshotLoader {
    private var loaded = StoreState()
    private var tableNames: [UInt64: String] = [:]
    /// The entries of each table so far, in the snapshot's order, but for
    /// those of the table that took the last entry.
    private var entries: [String: SnapshotEntries.Builder] = [:]
    /// The table that took the last entry, with its entries, held apart:
    /// a snapshot gives each table's entries together, so an entry neither
    /// hashes its table's name nor looks it up, and the builder it goes
    /// into is not shared with a dictionary (which would copy its arrays).
    private var current: (id: UInt64, name: String, builder: SnapshotEntries.Builder)?

    init(lastLSN: UInt64) { loaded.lsn = lastLSN }

    /// The state the items added so far describe.
    var state: StoreState {
        var state = loaded
        for (name, builder) in entries { state.snapshotTables[name] = builder.build() }
        if let current { state.snapshotTables[current.name] = current.builder.build() }
        return state
    }

    /// Puts the table at hand back with the others, if there is one.
    private mutating func setCurrentAside() {
        if let previous = current.take() { entries[previous.name] = previous.builder }
    }

    /// Adds an entry read in place in its chunk; nil when it fits, else
    /// why it does not.
    mutating func add(_ entry: SnapshotEntryBytes) -> String? {
        if let problem = take(entry.table) { return problem }
        current!.builder.append(entry)
        return nil
    }

    /// Makes `table` the table at hand, for an entry of it; nil when it
    /// can, else why not.
    private mutating func take(_ table: UInt64) -> String? {
        guard current?.id != table else { return nil }
        guard let name = tableNames[table] else { return "an entry of table \(table), never declared" }
        setCurrentAside()
        current = (table, name, entries.removeValue(forKey: name) ?? SnapshotEntries.Builder())
        return nil
    }

    /// Adds one item; nil when it fits, else why it does not.
    mutating func add(_ item: consuming SnapshotItem) -> String? {
        // Consumed: nothing the item holds is retained to be kept (an
        // entry given whole is copied into a chunk of its own).
        switch consume item {
        case let .table(id, name):
            tableNames[id] = name
            // An identifier declared again names another table from here on.
            if current?.id == id { setCurrentAside() }
        case let .entry(table, key, value):
            if let problem = take(table) { return problem }
            current!.builder.append(key: key, value: value)
        case let .root(name, value):
            loaded.roots[name] = .encoded(value)
        case let .tableEncoding(table, key, value):
            guard let name = tableNames[table] else { return "the encoding of table \(table), never declared" }
            guard let key = KeyEncoding(rawValue: key), let value = ValueEncoding(rawValue: value) else {
                return "table \(name) has encoding bytes \(key), \(value), which this LensDB does not know"
            }
            loaded.tableEncodings[name] = TableEncoding(key: key, value: value)
        case let .rootEncoding(name, value):
            guard let value = ValueEncoding(rawValue: value) else {
                return "root \(name) has encoding byte \(value), which this LensDB does not know"
            }
            loaded.rootEncodings[name] = value
        case let .indexOrder(table, index, start, positions):
            guard let name = tableNames[table] else { return "the order of an index of table \(table), never declared" }
            let known = loaded.indexOrders[name]?[index]?.count ?? 0
            guard start == known else {
                return "the order of index \(index) of table \(name) goes on at position \(start), after \(known)"
            }
            loaded.indexOrders[name, default: [:]][index, default: []].append(contentsOf: positions)
        }
        return nil
    }
}
