import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// Lens writes under power cuts: a cut after any mutating call of a run of
/// lens writes (whole roots, patches, promotions, removals, updates of an
/// object) reopens to the document after a prefix of the writes that holds
/// every acknowledged one, and the next open agrees.
@Suite struct LensCrashTests {
    /// Each step writes through a lens; `values` after step k is the
    /// document the store must show when k steps are in the prefix.
    static let steps: [@Sendable (Lens<AppState>) throws -> Void] = [
        { try $0.lens(\.theme).set("dark") },
        { try $0.lens(\.protection, default: Protection(enabled: false)).lens(\.passcode).set("2468") },
        { try $0.lens(\.flags, default: [:]).lens(key: "beta").set(true) },
        { try $0.lens(\.counters).update { $0["a"] = 1; $0["b"] = String(repeating: "x", count: 700).count } },
        { try $0.lens(\.protection).lens(\.enabled).set(true) },
        { try $0.lens(\.flags).lens(key: "beta").remove() },
        { try $0.update { $0.credentials = Credentials(user: "ada", token: String(repeating: "t", count: 300)) } },
        { try $0.lens(\.protection).remove() },
        { try $0.lens(\.counters).lens(key: "a", default: 0).update { $0 += 1 } },
    ]

    static func run(_ fileSystem: SimulatedFileSystem) -> Int {
        var acknowledged = 0
        do {
            let store = try lensStore(fileSystem)
            defer { store.close() }
            let state = try store.root(AppState.self, named: "app", default: AppState())
            for step in steps {
                try step(state)
                acknowledged += 1
            }
        } catch {}
        return acknowledged
    }

    static func expectedStates() throws -> [AppState] {
        let store = try lensStore()
        let state = try store.root(AppState.self, named: "app", default: AppState())
        var states = [state.value]
        for step in steps {
            try step(state)
            states.append(state.value)
        }
        return states
    }

    @Test func aPowerCutAfterAnyCallOfLensWritesReopensToAPrefixHoldingEveryAcknowledgedWrite() throws {
        let expected = try Self.expectedStates()
        let counting = SimulatedFileSystem()
        _ = Self.run(counting)
        var random = SeededGenerator.fromEnvironment(default: 11)
        for cut in 0...counting.mutatingCallCount {
            for model in [CrashModel.default, .tearAll, .dropAll] {
                let fileSystem = SimulatedFileSystem()
                fileSystem.powerCut(afterMutatingCalls: cut)
                let acknowledged = Self.run(fileSystem)
                fileSystem.clearFaults()
                fileSystem.crash(seed: random.next(), model: model)
                for open in 1...2 {
                    let store = try lensStore(fileSystem)
                    let value = try store.root(AppState.self, named: "app", default: AppState()).value
                    let prefix = expected.lastIndex(of: value)
                    #expect(prefix.map { $0 >= acknowledged } == true,
                            "cut \(cut), \(model), open \(open): \(prefix.map { "prefix \($0)" } ?? "no prefix") of \(expected.count - 1) writes, \(acknowledged) acknowledged")
                    fileSystem.powerCut(afterMutatingCalls: 0)
                    store.close()
                    fileSystem.clearFaults()
                    fileSystem.crash(seed: random.next(), model: model)
                }
            }
        }
    }
}
