import Foundation
import LensDB
import LensLog
import LensTestSupport
import Testing

/// Every `logtool` command an error advises is one `logtool` takes as it
/// is written: pasted into a shell, it reaches the store instead of
/// stopping at a usage error (exit code 2). The store named does not exist,
/// so each command stops there, having changed nothing; its path holds a
/// space and a quote, which the advice must quote.
@Suite struct LogtoolAdviceTests {
    static let store = "/nonexistent-lensdb-advice/Jo's App/app.lensdb"
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
    static func commands(in text: String) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 && $0.element.hasPrefix("logtool ") }
            .map { String($0.element) }
    }

    /// Runs `command` through `/bin/sh`, the built `logtool` in place of its first word.
    static func shell(_ command: String) throws -> (status: Int32, err: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "exec \"$0\" " + command.dropFirst("logtool ".count), logtoolBinary.path]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    @Test func everyAdvisedCommandIsOneLogtoolTakes() throws {
        var checked = 0
        for error in Self.advising {
            let advice = Self.commands(in: "\(error)")
            #expect(!advice.isEmpty, "\(error) names no logtool command")
            for command in advice {
                let run = try Self.shell(command)
                #expect(run.status != 2, "`\(command)` is a usage error: \(run.err)")
                #expect(run.err.contains("\(Self.store) is not a LensDB store: it does not exist"), "`\(command)`: \(run.err)")
                checked += 1
            }
        }
        #expect(checked >= Self.advising.count)
        #expect(!FileManager.default.fileExists(atPath: Self.store))
    }

    /// A relative path, or one ending in a slash, is advised absolute, and
    /// the repaired store goes beside the store, never inside it; a path
    /// that exists is taken as the file system resolves it.
    @Test func advisedPathsAreAbsoluteAndTheOutputIsBesideTheStore() throws {
        let temporary = try TemporaryDirectory("advice")
        defer { temporary.remove() }
        let real = URL(fileURLWithPath: temporary.path).resolvingSymlinksInPath().path
        try FileManager.default.createDirectory(atPath: "\(real)/data/app.lensdb", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: "\(real)/link", withDestinationPath: "\(real)/data/app.lensdb")
        #expect(absolutePath("\(real)/data/./app.lensdb/") == "\(real)/data/app.lensdb")
        #expect(absolutePath("\(real)/link/../app.lensdb") == "\(real)/data/app.lensdb", "as the file system reads `..`")
        #expect(repairCommand(for: "\(real)/link/").hasPrefix("`logtool repair \(pathWord(real))/data/app.lensdb --output \(pathWord(real))/data/app.lensdb.repaired`"))
        let here = FileManager.default.currentDirectoryPath
        #expect(absolutePath("./absent/../state.lensdb/") == absolutePath(here) + "/state.lensdb")
        #expect(pathWord("/a b/it's") == "'/a b/it'\\''s'")
    }
}
