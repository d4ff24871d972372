import LensLog
import Logging

/// What a store tells ``StoreOptions/logger``: the events an operator wants
/// in a production log, and never one per commit.
///
/// | event | level | when |
/// |---|---|---|
/// | `opened` | info | every open, with what recovery did |
/// | `cut a torn tail` | notice | unsynced writes a crash tore, dropped quietly |
/// | `wrote the unproven tail again` | notice | records after an unclean end, re-logged |
/// | `removed logs` | info | logs the state no longer needs, removed by open |
/// | `set a damaged snapshot aside` | warning | a snapshot failed validation |
/// | `salvage dropped records` | warning | damage followed by valid records, under `.salvage` |
/// | `store is locked; retrying` / `store is locked; giving up` | notice / error | lock contention |
/// | `compaction started` / `compaction finished` / `compaction failed` | info / info / error | each compaction |
/// | `store failed; read-only until reopened` | critical | fail-stop (promise 6), once |
///
/// Every event carries the metadata key `store` (the store's path).
extension Store {
    /// A logger that drops everything: the default of ``StoreOptions/logger``.
    static let silentLogger = Logger(label: "lensdb", factory: { _ in SwiftLogNoOpLogHandler() })

    /// `options.logger` with the store's path as metadata.
    static func logger(for path: String, _ options: StoreOptions) -> Logger {
        var logger = options.logger
        logger[metadataKey: "store"] = .string(path)
        return logger
    }

    /// What recovery found and did, one event per finding.
    static func logRecovery(_ report: RecoveryReport, logger: Logger) {
        for tail in report.tornTails {
            logger.notice("cut a torn tail", metadata: [
                "file": .string(tail.file), "offset": "\(tail.offset)", "bytes": "\(tail.bytesDropped)",
                "reason": .string(tail.reason?.rawValue ?? "log cut while new"),
            ])
        }
        for snapshot in report.damagedSnapshots {
            logger.warning("set a damaged snapshot aside", metadata: [
                "file": .string(snapshot.path), "movedTo": .string(snapshot.movedTo ?? "(not moved: read-only open)"),
                "problem": .string(snapshot.problem),
            ])
        }
        for dropped in report.dropped {
            logger.warning("salvage dropped records", metadata: [
                "file": .string(dropped.file), "offset": "\(dropped.range.offset)", "bytes": "\(dropped.range.length)",
                "lostLSNs": "\(dropped.range.lostLSNs.lowerBound)..<\(dropped.range.lostLSNs.upperBound)",
                "reason": .string(dropped.range.reason.rawValue),
            ])
        }
        for copies in report.skippedCopies {
            logger.warning("salvage skipped a log's copies of LSNs it held already", metadata: [
                "file": .string(copies.file),
                "heldLSNs": "\(copies.range.lostLSNs.lowerBound)..<\(copies.range.lostLSNs.upperBound)",
            ])
        }
    }

    static func logRelog(_ records: [LogRecord], into log: LogWriter, logger: Logger) {
        logger.notice("wrote the unproven tail again", metadata: [
            "records": "\(records.count)", "firstLSN": "\(records.first?.lsn ?? 0)", "lastLSN": "\(records.last?.lsn ?? 0)",
            "log": .string(log.path),
        ])
    }

    static func logRemoved(_ files: [String], logger: Logger) {
        guard !files.isEmpty else { return }
        logger.info("removed logs", metadata: ["files": .array(files.map { .string($0) })])
    }

    static func logOpened(_ statistics: OpenStatistics, lsn: UInt64, logger: Logger) {
        logger.info("opened", metadata: [
            "lsn": "\(lsn)", "items": "\(statistics.items)", "seconds": "\(statistics.seconds)",
            "snapshot": .string(statistics.recovery.snapshot?.path ?? "none"),
            "recordsReplayed": "\(statistics.recovery.recordsReplayed)", "logBytes": "\(statistics.recovery.logBytes)",
        ])
    }

    /// The store went read-only (promise 6); logged once, by whoever failed it first.
    func logFailStop(_ failure: StoreError) {
        logger.critical("store failed; read-only until reopened", metadata: ["cause": .string("\(failure)")])
    }

    func logCompactionStarted(_ swapped: SwappedLog) {
        logger.info("compaction started", metadata: [
            "generation": "\(swapped.generation)", "lsn": "\(swapped.version.lsn)",
            "logBytes": "\(swapped.replacedLogBytes)", "stallMicroseconds": "\(swapped.stall.microseconds)",
        ])
    }

    func logCompactionFinished(_ swapped: SwappedLog, snapshotBytes: Int64, took: Duration) {
        logger.info("compaction finished", metadata: [
            "generation": "\(swapped.generation)", "snapshotBytes": "\(snapshotBytes)",
            "logBytes": "\(swapped.replacedLogBytes)", "seconds": "\(took.seconds)",
            "stallMicroseconds": "\(swapped.stall.microseconds)",
        ])
    }

    func logKeyChanged(to key: EncryptionKey?, generation: UInt64, took: Duration) {
        logger.notice("encryption key changed", metadata: [
            "keyID": .string(key.map { "\($0.id)" } ?? "none (plain)"), "generation": "\(generation)",
            "seconds": "\(took.seconds)",
        ])
    }

    func logCompactionFailed(_ error: any Error) {
        // A compaction asked for from inside a write block is the caller's
        // mistake, reported to it; nothing about the store to log.
        if case StoreError.reentrantWrite = error { return }
        logger.error("compaction failed; the previous snapshot stays in effect", metadata: ["error": .string("\(error)")])
    }
}

extension Duration {
    /// The duration in whole microseconds.
    var microseconds: Int64 {
        components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000
    }
}
