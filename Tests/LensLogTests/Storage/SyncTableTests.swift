import Testing
@testable import LensLog

/// The sync table, read for every platform on whatever machine runs the tests.
@Suite struct SyncTableTests {
    /// Every need that a durable commit depends on: the writes of log batches
    /// and of a new log's first sync, snapshots, new files, directory entries.
    static let needsBehindDurableCommits: [SyncNeed] = [.durable, .durableWithMetadata, .directoryEntries]

    @Test(arguments: SyncPlatform.allCases)
    func noSyncBehindADurableCommitMapsToACallThatOnlyReachesACache(_ platform: SyncPlatform) {
        for need in Self.needsBehindDurableCommits {
            let call = platform.plan(for: need).call
            #expect(platform.reach(of: call) == .stableStorage, "\(platform) syncs \(need) with \(call.rawValue)")
        }
    }

    @Test(arguments: SyncPlatform.allCases)
    func everyPlannedCallExistsOnItsPlatform(_ platform: SyncPlatform) {
        for need in SyncNeed.allCases {
            for call in platform.plan(for: need).calls {
                #expect(platform.reach(of: call) != nil, "\(platform) has no \(call.rawValue), planned for \(need)")
            }
        }
    }

    @Test func darwinSyncsDurablyWithFullFsyncAndFallsBackOnlyToFsync() {
        for platform in SyncPlatform.allCases where platform.isDarwin {
            for need in Self.needsBehindDurableCommits {
                #expect(platform.plan(for: need) == SyncPlan(call: .fullFsync, fallbacks: [.fsync]), "\(platform) \(need)")
            }
            #expect(platform.reach(of: .fsync) == .driveCache, "fsync(2) on Darwin stops at the drive's cache")
        }
    }

    @Test func linuxSyncsDataWithFdatasyncAndNeverFallsBack() {
        #expect(SyncPlatform.linux.plan(for: .durable) == SyncPlan(call: .fdatasync))
        #expect(SyncPlatform.linux.plan(for: .durableWithMetadata) == SyncPlan(call: .fsync))
        for need in SyncNeed.allCases {
            // A refused fdatasync (EINVAL on a file that cannot be synced) must fail, not quietly do less.
            #expect(SyncPlatform.linux.plan(for: need).fallbacks.isEmpty, "\(need)")
        }
    }

    @Test(arguments: SyncPlatform.allCases)
    func commitsSyncDurablyByDefaultAndStayOrderedWithBarrierOnly(_ platform: SyncPlatform) {
        var barrierOnly = LogWriterOptions()
        barrierOnly.appleBarrierOnly = true
        let byDefault = platform.plan(for: LogWriterOptions().commitSyncNeed).call
        let ordered = platform.plan(for: barrierOnly.commitSyncNeed).call
        #expect(platform.reach(of: byDefault) == .stableStorage)
        #expect(platform.reach(of: ordered) == (platform.isDarwin ? .ordered : .stableStorage))
        #expect(platform.isDarwin || ordered == byDefault, "barrier-only changes nothing on Linux")
    }

    @Test func theCurrentPlatformIsTheOneBuiltFor() {
        #if os(Linux)
        #expect(SyncPlatform.current == .linux)
        #elseif os(macOS)
        #expect(SyncPlatform.current == .macOS)
        #elseif os(iOS)
        #expect(SyncPlatform.current == .iOS)
        #endif
    }
}
