import Foundation
import LensLog
import LensTestSupport
import Testing
@testable import LensDB

/// The six semantics of a root lens, one test each (issue 11).
@Suite struct LensSemanticsTests {
    struct Failure: Error {}

    /// 1. A lens reads its parent's effective value; its own default applies
    /// only when the parent has no value at its key.
    @Test func aChildReadsItsParentsDefaultBeforeItsOwn() throws {
        let store = try lensStore()
        let state = try store.root(AppState.self, named: "app", default: AppState())
        let code = state.lens(\.settings, default: Settings(code: "123")).lens(\.code, default: "321")
        #expect(code.value == "123")
        let bare = state.lens(\.settings, default: Settings(code: nil)).lens(\.code, default: "321")
        #expect(bare.value == "321", "the parent's default holds no code: the child's default applies")
        try state.lens(\.settings).set(Settings(code: "stored"))
        #expect(code.value == "stored" && bare.value == "stored")
        try state.lens(\.settings).set(Settings(code: nil))
        #expect(code.value == "321" && bare.value == "321", "a stored parent without the key: the child's default")
    }

    /// 2. A write below a missing parent promotes the defaults on the way in
    /// the same commit; with no default on the way it throws and writes nothing.
    @Test func aWriteBelowAMissingParentPromotesDefaultsOrThrowsWritingNothing() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try lensStore(fileSystem)
        let state = try store.root(AppState.self, named: "app", default: AppState(theme: "dark"))
        let enabled = state.lens(\.protection, default: Protection(enabled: false, retries: 5)).lens(\.enabled)
        try enabled.set(true)
        #expect(store.current.lsn == 1, "one commit")
        #expect(state.value == AppState(protection: Protection(enabled: true, retries: 5), theme: "dark"))
        let flag = state.lens(\.flags).lens(key: "beta")
        #expect(throws: LensError.missingParent(path: "app.flags")) { try flag.set(true) }
        let code = state.lens(\.settings).lens(\.code)
        #expect(throws: LensError.missingParent(path: "app.settings")) { try code.set("x") }
        let member = try store.root(named: "config")["protection"]["enabled"]
        #expect(throws: LensError.missingParent(path: "config.protection")) { try member.set(true) }
        #expect(store.current.lsn == 1 && store.statistics.commits == 1, "nothing was written")
        #expect(store.current.rootNames == ["app"])
        try state.lens(\.flags, default: [:]).lens(key: "beta").set(true)
        #expect(state.value.flags == ["beta": true])
        try store.root(named: "config").lens(key: "protection", default: ["retries": 2])["enabled"].set(true)
        #expect(try store.root(named: "config").value == ["protection": ["retries": 2, "enabled": true]])
    }

    /// 3. A value that encodes as the current one logs nothing.
    @Test func writingTheCurrentValueLogsNothing() throws {
        let store = try lensStore()
        let state = try store.root(AppState.self, named: "app", default: AppState())
        try state.lens(\.theme).set("dark")
        let lsn = store.current.lsn
        try state.lens(\.theme).set("dark")
        try state.lens(\.protection, default: Protection(enabled: false)).lens(\.enabled).set(false)
        try state.lens(\.protection).remove()
        try state.update { _ in }
        try state.lens(\.flags).lens(key: "absent").remove()
        #expect(store.current.lsn == lsn && store.statistics.commits == 1)
        #expect(state.value.protection == nil, "setting a default's own value stores nothing")
    }

    /// 4. A throw in an update block, a failed commit or an I/O error leaves
    /// memory as it was.
    @Test func aThrowOrAFailedCommitLeavesMemoryUnchanged() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try lensStore(fileSystem)
        let state = try store.root(AppState.self, named: "app", default: AppState())
        let protection = state.lens(\.protection, default: Protection(enabled: false))
        try protection.lens(\.retries).set(4)
        let before = state.value
        #expect(throws: Failure.self) {
            try protection.update { current in
                current.enabled = true
                throw Failure()
            }
        }
        #expect(throws: Failure.self) {
            try store.write { tx in
                try tx[protection].set(\.enabled, true)
                throw Failure()
            }
        }
        #expect(state.value == before && store.current.lsn == 1)
        fileSystem.injectFault(Fault(.failedSync, operations: [.sync], trigger: .nthCall(1)))
        #expect(throws: StoreError.self) { try protection.lens(\.enabled).set(true) }
        #expect(state.value == before, "the failed commit is not visible")
        #expect(throws: StoreError.self) { try protection.lens(\.enabled).set(true) }
        #expect(state.value == before)
    }

    /// 5. Writes are serialized with every other writer and durable when
    /// they return; a value read earlier stays as it was.
    @Test func writesAreSerializedAndDurableAndAnOldValueStaysAsItWas() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try lensStore(fileSystem)
        let state = try store.root(AppState.self, named: "app", default: AppState())
        let count = state.lens(\.counters).lens(key: "n", default: 0)
        let held = state.value
        runConcurrently(threads: 4) { _ in
            for _ in 0..<25 {
                // A failure shows in the count below.
                try? count.update { $0 += 1 }
            }
        }
        #expect(count.value == 100, "every increment read the one before it")
        #expect(held == AppState(), "the value read before is unchanged")
        fileSystem.powerCut(afterMutatingCalls: 0)
        fileSystem.crash(seed: 1, model: .dropAll)
        fileSystem.clearFaults()
        let reopened = try lensStore(fileSystem)
        #expect(try reopened.root(AppState.self, named: "app", default: AppState()).lens(\.counters).value == ["n": 100])
    }

    struct AppStateV2: Codable, Sendable, Equatable {
        var protection: Protection?
        var theme: String
        var accent: String?
    }

    struct StrictProtection: Codable, Sendable {
        var enabled: Int
    }

    struct StrictState: Codable, Sendable {
        var protection: StrictProtection?
    }

    /// 6. A stored document that no longer decodes throws with its coding
    /// path and keeps its bytes; a field added as optional decodes as nil.
    @Test func anUndecodableDocumentThrowsWithItsPathAndKeepsItsBytes() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try lensStore(fileSystem)
        try store.root(AppState.self, named: "app", default: AppState()).lens(\.protection).set(Protection(enabled: true))
        let bytes = try #require(store.current.root(named: "app")).bytes()
        store.close()
        let reopened = try lensStore(fileSystem)
        #expect(throws: LensError.undecodable(path: "app.protection.enabled", reason: "expected Int: Expected an integer but found true")) {
            try reopened.root(StrictState.self, named: "app", default: StrictState())
        }
        #expect(try reopened.current.root(named: "app")?.bytes() == bytes)
        let newer = try reopened.root(AppStateV2.self, named: "app", default: AppStateV2(theme: "x"))
        #expect(newer.value == AppStateV2(protection: Protection(enabled: true), theme: "light", accent: nil))
        #expect(throws: LensError.typeMismatch(root: "app", openedAs: "AppStateV2", requested: "AppState")) {
            try reopened.root(AppState.self, named: "app", default: AppState())
        }
        reopened.close()
        #expect(try lensStore(fileSystem).current.root(named: "app")?.bytes() == bytes, "opening wrote nothing")
    }
}
