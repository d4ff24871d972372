import Foundation
import LensDB
import LensTestSupport
import Testing

/// `logtool dump --follow --json` as a built binary, against LiveWriter
/// writing in a process of its own.
@Suite struct LogtoolFollowTests {
    /// LiveWriter steps that commit 150 transactions after the first one:
    /// compactions between commits, `.buffered` commits, a crash without
    /// close (its next open writes the unproven tail again), and a reopen.
    /// Each log lives several polls before the compaction that deletes it: a
    /// log created and compacted away between two polls is lost to the
    /// follower, which then stops with `FollowError.compactedAway`.
    static let firstWriter = ["commit:30", "pause:400", "compact", "commit:30", "pause:400", "buffered", "commit:20", "full", "commit:1", "pause:400", "crash"]
    static let secondWriter = ["commit:30", "pause:400", "compact", "reopen", "commit:30", "pause:400", "compact", "commit:9"]
    static let total: UInt64 = 151

    @Test func followPrintsEveryLSNOnceAndInOrderAcrossCompactionsACrashAndAReopen() throws {
        let directory = try TemporaryDirectory("follow")
        defer { directory.remove() }
        let store = directory.path + "/live.lensdb"
        #expect(try runLiveWriter(store, ["commit:1"]).status == 0)
        let follower = try BackgroundProcess(
            logtoolBinary, ["dump", store, "--follow", "--json", "--from", "1", "--until", "\(Self.total)", "--interval", "0.02"],
            outputPath: directory.path + "/follow.jsonl")
        #expect(try runLiveWriter(store, Self.firstWriter).signalled, "the first writer dies without closing the store")
        #expect(try runLiveWriter(store, Self.secondWriter).status == 0)
        let ended = follower.waitForExit(seconds: 60)
        #expect(ended, "the follower stops at --until once LSN \(Self.total) is proven")
        #expect(follower.process.terminationStatus == 0, "\(follower.standardError)")

        let (replayed, lsns) = try replayItems(follower.lines)
        #expect(lsns == Array(1...Self.total), "every LSN once, in order")
        let (stored, lastLSN) = try storedItems(store)
        #expect(lastLSN == Self.total)
        #expect(!stored.isEmpty)
        #expect(replayed == stored, "the lines replayed give the table the store holds")
    }

    @Test func followStopsOnSIGTERMAfterWholeLinesAndExitsZero() throws {
        let directory = try TemporaryDirectory("follow")
        defer { directory.remove() }
        let store = directory.path + "/live.lensdb"
        #expect(try runLiveWriter(store, ["commit:3"]).status == 0)
        let follower = try BackgroundProcess(
            logtoolBinary, ["dump", store, "--follow", "--json", "--from", "1"], outputPath: directory.path + "/follow.jsonl")
        #expect(follower.waitForLines(3, seconds: 20))
        kill(follower.process.processIdentifier, SIGTERM)
        #expect(follower.waitForExit(seconds: 10))
        #expect(follower.process.terminationReason == .exit)
        #expect(follower.process.terminationStatus == 0)
        #expect(try replayItems(follower.lines).lsns == [1, 2, 3])
    }

    @Test func followFromAnLSNInTheSnapshotSaysWhereToStartInstead() throws {
        let directory = try TemporaryDirectory("follow")
        defer { directory.remove() }
        let store = directory.path + "/live.lensdb"
        #expect(try runLiveWriter(store, ["commit:5", "compact", "commit:1"]).status == 0)
        let result = try logtool("dump", store, "--follow", "--from", "2")
        #expect(result.status == 1)
        #expect(result.err.contains("--from 6"), "\(result.err)")
        #expect(result.err.contains("--snapshot"))
    }

    @Test func followOptionsThatContradictEachOtherAreUsageErrors() throws {
        #expect(try logtool("dump", "/tmp/x", "--follow", "--snapshot").status == 2)
        #expect(try logtool("dump", "/tmp/x", "--follow", "--to", "4").status == 2)
        #expect(try logtool("dump", "/tmp/x", "--until", "4").status == 2)
        #expect(try logtool("dump", "/tmp/x", "--follow", "--interval", "0").status == 2)
    }
}
