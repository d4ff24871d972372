import Foundation
import LensDB
import LensLog
import LensTestSupport
import Testing

/// Every `logtool` command an error advises is one `logtool` takes as it
/// is written: pasted, it reaches the store instead of stopping at a usage
/// error (exit code 2). The store named does not exist, so each command
/// stops there, having changed nothing.
@Suite struct LogtoolAdviceTests {
    static let store = "/nonexistent-lensdb-advice/app.lensdb"
    static let log = "\(store)/log-0000000000000002.log"
    static let snapshot = "\(store)/snapshot-0000000000000002.snap"

    /// The errors whose advice names a `logtool` command.
    static let advising: [any Error] = [
        LogError.truncatedHeader(file: log, size: 7),
        LogError.badHeader(file: log),
        LogError.firstLSNOutOfRange(file: log, firstLSN: 0),
        LogError.corruption(file: log, offset: 128, lsn: 7, reason: .checksumMismatch),
        RecoveryError.noUsableSnapshot(directory: store, damaged: []),
        RecoveryError.missingRecords(file: log, expectedLSN: 5, firstLSN: 9),
        RecoveryError.missingRecords(file: log, expectedLSN: 9, firstLSN: 5),
        RecoveryError.lostAfterCleanClose(file: log, offset: 64, firstLostLSN: 4, closedLSN: 9, reason: .endsBeforeCleanClose),
        StoreError.recordDoesNotApply(file: log, offset: 64, lsn: 4, problem: "a patch of root app, which does not exist"),
        StoreError.generationsExhausted(path: store),
        FollowError.compactedAway(lsn: 4, snapshot: snapshot, snapshotLSN: 9),
        FollowError.corruption(file: log, offset: 64, lsn: 4, reason: .checksumMismatch),
        FollowError.diverged(lsn: 4, file: log),
        StoreError.malformedRecord(file: log, offset: 64, lsn: 4),
        InspectionError.repairCutShort(path: store, backup: store + ".backup-1", repaired: nil, cause: "EIO"),
        InspectionError.noSnapshot(path: store, damaged: []),
        InspectionError.noSnapshot(path: store, damaged: [snapshot]),
    ]

    /// The commands in `text`: spans between backticks that start `logtool `.
    static func commands(in text: String) -> [[String]] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 && $0.element.hasPrefix("logtool ") }
            .map { $0.element.split(separator: " ").dropFirst().map(String.init) }
    }

    @Test func everyAdvisedCommandIsOneLogtoolTakes() throws {
        var checked = 0
        for error in Self.advising {
            let advice = Self.commands(in: "\(error)")
            #expect(!advice.isEmpty, "\(error) names no logtool command")
            for arguments in advice {
                #expect(arguments.contains(Self.store), "\(arguments) does not name the store")
                let run = try logtool(arguments, timeout: .seconds(60))
                #expect(run.status != 2, "`logtool \(arguments.joined(separator: " "))` is a usage error: \(run.err)")
                #expect(run.err.contains("does not exist"), "\(arguments): \(run.err)")
                checked += 1
            }
        }
        #expect(checked >= Self.advising.count)
        #expect(!FileManager.default.fileExists(atPath: Self.store))
    }
}
