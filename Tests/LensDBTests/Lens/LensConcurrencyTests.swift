import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// Promise 8 for lenses: readers read while a writer commits, and each read
/// sees one committed version.
@Suite struct LensConcurrencyTests {
    @Test func readsDuringCommitsEachSeeOneWholeVersion() throws {
        let store = try lensStore()
        let state = try store.root(AppState.self, named: "app", default: AppState())
        let counters = state.lens(\.counters)
        let document = try store.root(named: "app")
        let failures = Locked<[String]>([])
        runConcurrently(threads: 3) { thread in
            if thread == 0 {
                for _ in 0..<200 {
                    // Both counters move in one commit: a reader never sees them apart.
                    do {
                        try counters.update { $0["a", default: 0] += 1; $0["b", default: 0] += 1 }
                    } catch {
                        failures.withLock { $0.append("write: \(error)") }
                    }
                }
                return
            }
            for _ in 0..<300 {
                let typed = counters.value
                if typed["a"] != typed["b"] { failures.withLock { $0.append("typed read saw \(typed)") } }
                let version = store.current
                if counters.value(in: version)["a"] != state.value(in: version).counters["a"] {
                    failures.withLock { $0.append("two lenses on one version disagree") }
                }
                let dynamic = document["counters"].value
                if dynamic["a"] != dynamic["b"] { failures.withLock { $0.append("dynamic read saw \(dynamic)") } }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(3) })")
        #expect(counters.value == ["a": 200, "b": 200])
    }
}
