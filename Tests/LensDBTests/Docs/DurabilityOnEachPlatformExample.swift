// The examples of the "Durability on each platform" article, which quotes
// the lines between each pair of markers verbatim (ArticleExampleTests
// checks that it does); the lines after them check what the article says of
// them on Linux, where these tests run.
import LensDB
import LensTestSupport
import Testing

@Suite struct DurabilityOnEachPlatformExample {
    @Test func barrierOnlyCommitsAndTheSyncSupportAnOpenFound() throws {
        let directory = try TemporaryDirectory("durability-platform")
        defer { directory.remove() }
        let path = "\(directory.path)/app.lensdb"
        var logged: [String] = []
        func log(_ message: String) { logged.append(message) }
        // article:begin DurabilityOnEachPlatform.md
        var options = StoreOptions()
        options.log.appleBarrierOnly = true   // commits kept in order; a power cut may lose the last ones
        let store = try Store(at: path, options: options)
        // article:end
        defer { store.close() }
        #expect(options.log.commitSyncNeed == .ordered)
        try store.write { tx in tx.put([1], for: [1], in: "t") }
        // article:begin DurabilityOnEachPlatform.md
        if case .fallingBack(let refused, let using)? = store.openStatistics.durableSync {
            log("\(refused.rawValue) refused here; using \(using.rawValue): .full commits may not survive a power cut")
        }
        // article:end
        #if os(Linux)
        // On Linux nothing can be refused: the plan has no fallback to fall to.
        #expect(store.openStatistics.durableSync == .asPlanned(.fdatasync))
        #expect(logged.isEmpty)
        #endif
    }

    /// The article's scene-phase handler, run with both phases it handles.
    @MainActor
    @Test func closingBeforeSuspensionAndReopening() throws {
        let directory = try TemporaryDirectory("durability-ios")
        defer { directory.remove() }
        let model = try AppModel(path: "\(directory.path)/app.lensdb")
        let first = model.store
        try first.write { tx in tx.put([1], for: [1], in: "t") }
        for scenePhase in [ScenePhase.background, .active] {
            _ = SceneStandIn()
                // article:begin DurabilityOnEachPlatform.md
                .onChange(of: scenePhase) { _, phase in
                    switch phase {
                    case .background:
                        let task = UIApplication.shared.beginBackgroundTask(withName: "Close store")
                        model.store.close()            // flushes, waits for a compaction, releases the lock
                        UIApplication.shared.endBackgroundTask(task)
                    case .active:
                        model.reopenStore()            // a new Store: a closed one only reads
                    default:
                        break
                    }
                }
                // article:end
        }
        #expect(throws: StoreError.closed(path: first.path!)) { try first.write { tx in tx.put([2], for: [2], in: "t") } }
        #expect(model.store !== first)
        try model.store.write { tx in tx.put([2], for: [2], in: "t") }
        #expect(model.store.current.count(in: "t") == 2)
        model.store.close()
    }
}

/// The app's model in the article: it owns the store and opens it again.
@MainActor
private final class AppModel {
    let path: String
    private(set) var store: Store

    init(path: String) throws {
        self.path = path
        store = try Store(at: path)
    }

    func reopenStore() {
        // A test double of an app: a failed reopen fails the test at its next write.
        if let reopened = try? Store(at: path) { store = reopened }
    }
}

// Just enough of SwiftUI and UIKit, with Apple's names and shapes, for the
// article's handler to compile and run on Linux, which has neither: what it
// checks is the handler's LensDB calls.
private enum ScenePhase { case background, inactive, active }

@MainActor
private struct SceneStandIn {
    /// SwiftUI's `onChange(of:initial:_:)`, called at once with the new phase.
    func onChange(of phase: ScenePhase, _ action: (ScenePhase, ScenePhase) -> Void) -> SceneStandIn {
        action(phase, phase)
        return self
    }
}

@MainActor
private final class UIApplication {
    static let shared = UIApplication()
    func beginBackgroundTask(withName name: String?) -> Int { 1 }
    func endBackgroundTask(_ identifier: Int) {}
}
