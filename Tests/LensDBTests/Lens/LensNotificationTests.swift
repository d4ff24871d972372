import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// What `values` and `changes` yield: each committed change of the lens's
/// own value, never a sibling's, and nothing for writes that change
/// nothing or fail.
@Suite struct LensNotificationTests {
    /// Collects what an async sequence yields, in a task of its own.
    final class Collector<Element: Sendable>: Sendable {
        let items = Locked<[Element]>([])
        let task: Task<Void, Never>

        init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Element {
            let items = items
            task = Task {
                do {
                    for try await item in sequence { items.withLock { $0.append(item) } }
                } catch {}
            }
        }

        var count: Int { items.withLock { $0.count } }
        var all: [Element] { items.withLock { $0 } }

        /// Waits up to five seconds for `count` items.
        func wait(for count: Int) async {
            for _ in 0..<5000 where self.count < count { try? await Task.sleep(nanoseconds: 1_000_000) }
        }

        deinit { task.cancel() }
    }

    /// Gives consumers time to take what the last commit offered.
    func settle() async { try? await Task.sleep(nanoseconds: 50_000_000) }

    @Test func twoUpdatesAndADuplicateEmitThreeTimesOnTheRootTheBranchAndTheLeafOnlyOnceElsewhere() async throws {
        let store = try lensStore()
        let state = try store.root(AppState.self, named: "app", default: AppState())
        let branch = state.lens(\.protection, default: Protection(enabled: false))
        let leaf = branch.lens(\.enabled)
        let root = Collector(state.values), onBranch = Collector(branch.values), onLeaf = Collector(leaf.values)
        let sibling = Collector(state.lens(\.theme).values), cousin = Collector(branch.lens(\.retries).values)
        let nonexistent = Collector(state.lens(\.flags).lens(key: "nope").values)
        for collector in [root.count, onBranch.count] where collector == 0 { await onLeaf.wait(for: 1) }
        await root.wait(for: 1)
        await onBranch.wait(for: 1)
        try leaf.set(true)
        await onLeaf.wait(for: 2)
        try leaf.set(false)
        await onLeaf.wait(for: 3)
        try leaf.set(false)
        await root.wait(for: 3)
        await onBranch.wait(for: 3)
        await settle()
        #expect(onLeaf.all == [false, true, false])
        #expect(onBranch.all.map(\.enabled) == [false, true, false])
        #expect(root.all.map { $0.protection?.enabled } == [nil, true, false])
        #expect(sibling.all == ["light"] && cousin.all == [3] && nonexistent.all == [nil])
    }

    @Test func changesYieldTwoPairsOnTheChangedPathAndNoneElsewhere() async throws {
        let store = try lensStore()
        let state = try store.root(AppState.self, named: "app", default: AppState())
        let leaf = state.lens(\.protection, default: Protection(enabled: false)).lens(\.enabled)
        let changes = Collector(leaf.changes), rootChanges = Collector(state.changes)
        let elsewhere = Collector(state.lens(\.theme).changes)
        await settle()
        try leaf.set(true)
        await changes.wait(for: 1)
        try leaf.set(true)
        try leaf.set(false)
        await changes.wait(for: 2)
        await rootChanges.wait(for: 2)
        await settle()
        #expect(changes.all.map { [$0.old, $0.new] } == [[false, true], [true, false]])
        #expect(rootChanges.count == 2 && elsewhere.count == 0)
    }

    @Test func aLensOnAMissingPathEmitsWhenAnAncestorCreatesItAndNilOrItsDefaultWhenRemoved() async throws {
        let store = try lensStore()
        let state = try store.root(AppState.self, named: "app", default: AppState())
        let token = state.lens(\.credentials).lens(\.token)
        let user = state.lens(\.credentials).lens(\.user, default: "guest")
        let document = try store.root(named: "config")
        let member = document["server"]["port"]
        let tokens = Collector(token.values), users = Collector(user.values), members = Collector(member.values)
        await settle()
        try state.lens(\.credentials).set(Credentials(user: "ada", token: "t1"))
        try document.set(["server": ["port": 8080]])
        await tokens.wait(for: 2)
        await members.wait(for: 2)
        try state.lens(\.credentials).remove()
        try document["server"].remove()
        await tokens.wait(for: 3)
        await users.wait(for: 3)
        await members.wait(for: 3)
        #expect(tokens.all == [nil, "t1", nil])
        #expect(users.all == ["guest", "ada", "guest"])
        #expect(members.all == [.null, 8080, .null])
    }

    @Test func writesThatChangeNothingOrFailNotifyNobody() async throws {
        struct Failure: Error {}
        let fileSystem = SimulatedFileSystem()
        let store = try lensStore(fileSystem)
        let state = try store.root(AppState.self, named: "app", default: AppState())
        let theme = state.lens(\.theme)
        try state.lens(\.flags).set([:])
        let values = Collector(theme.values), rootValues = Collector(state.values)
        await settle()
        try theme.set("light")
        #expect(throws: Failure.self) { try theme.update { $0 = "dark"; throw Failure() } }
        fileSystem.injectFault(Fault(.failedSync, operations: [.sync], trigger: .nthCall(1)))
        #expect(throws: StoreError.self) { try theme.set("dark") }
        #expect(throws: StoreError.self) { try theme.set("dark") }
        await settle()
        #expect(values.all == ["light"] && rootValues.count == 1)
    }

    /// The cost promise: a commit evaluates the lenses on the changed
    /// member's path and below it, and no other.
    @Test func aCommitEvaluatesOnlyTheLensesOnThePathOfWhatItChanged() async throws {
        let store = try lensStore()
        let state = try store.root(AppState.self, named: "app", default: AppState())
        let counters = state.lens(\.counters)
        try counters.set(Dictionary(uniqueKeysWithValues: (0..<1000).map { ("c\($0)", 0) }))
        let leaves = (0..<1000).map { Collector(counters.lens(key: "c\($0)").values) }
        let onCounters = Collector(counters.values), theme = Collector(state.lens(\.theme).values)
        let notifier = store.attachments.attachment { LensNotifier() }
        for leaf in leaves { await leaf.wait(for: 1) }
        #expect(notifier.counts.watched == 1002)
        let before = notifier.counts.evaluations
        try counters.lens(key: "c7").set(1)
        #expect(notifier.counts.evaluations - before == 2, "the counters lens and c7's lens, not the 999 others nor theme")
        try state.lens(\.counters).update { $0["c8"] = nil }
        #expect(notifier.counts.evaluations - before == 4, "a removal visits its own path too")
        await leaves[7].wait(for: 2)
        await leaves[8].wait(for: 2)
        await onCounters.wait(for: 3)
        #expect(leaves[7].all == [0, 1] && leaves[8].all == [0, nil] && leaves[9].count == 1 && theme.count == 1)
        try state.lens(\.theme).set("dark")
        #expect(notifier.counts.evaluations - before == 5)
    }

    @Test func anIterationReleasesEverythingWhenItEndsOrIsCancelled() async throws {
        let store = try lensStore()
        let state = try store.root(AppState.self, named: "app", default: AppState())
        let notifier = store.attachments.attachment { LensNotifier() }
        for await value in state.lens(\.theme).values {
            #expect(value == "light")
            #expect(notifier.counts.watched == 1 && store.commitFeed.isObserved)
            break
        }
        #expect(notifier.counts.watched == 0 && !store.commitFeed.isObserved)
        let waiting = Collector(state.lens(\.theme).changes)
        await settle()
        #expect(notifier.counts.watched == 1)
        waiting.task.cancel()
        await waiting.task.value
        #expect(notifier.counts.watched == 0 && !store.commitFeed.isObserved, "the cancelled iteration let go")
        try state.lens(\.theme).set("dark")
        #expect(waiting.count == 0)
    }

    /// Readers watch while writers commit: each consumer sees values in
    /// commit order, ending with the last.
    @Test func watchersDuringConcurrentCommitsSeeOrderedValuesEndingWithTheLast() async throws {
        let store = try lensStore()
        let state = try store.root(AppState.self, named: "app", default: AppState())
        let count = state.lens(\.counters).lens(key: "n", default: 0)
        let watchers = (0..<3).map { _ in Collector(count.values) }
        for watcher in watchers { await watcher.wait(for: 1) }
        runConcurrently(threads: 4) { _ in
            for _ in 0..<50 {
                // A failure shows in the final value below.
                try? count.update { $0 += 1 }
            }
        }
        for watcher in watchers {
            for _ in 0..<5000 where watcher.all.last != 200 { try? await Task.sleep(nanoseconds: 1_000_000) }
            let seen = watcher.all
            #expect(seen.last == 200 && seen == seen.sorted() && Set(seen).count == seen.count, "\(seen.prefix(20))")
        }
    }
}
