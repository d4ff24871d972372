import Foundation
import LensLog
import LensTestSupport
import Testing
@testable import LensDB

/// Root lenses as programs use them: versions held by readers, removal,
/// reopening, transactions with tables, and typed and dynamic lenses over
/// one document.
@Suite struct LensBehaviourTests {
    @Test func aSetGivesANewValueWhileAnOldVersionKeepsItsOwnAndANestedUpdateLeavesSiblingsEqual() throws {
        let store = try lensStore()
        let state = try store.root(AppState.self, named: "app", default: AppState())
        try state.set(AppState(credentials: Credentials(user: "ada", token: "t1"), protection: Protection(enabled: false, passcode: "1234")))
        let old = store.current
        let protection = state.lens(\.protection)
        try state.lens(\.protection, default: Protection(enabled: false)).lens(\.enabled).set(true)
        #expect(protection.value == Protection(enabled: true, passcode: "1234"))
        #expect(protection.value(in: old) == Protection(enabled: false, passcode: "1234"), "the old version is unchanged")
        #expect(state.value.credentials == state.value(in: old).credentials, "the sibling is equal")
        #expect(state.value.theme == "light")
        try protection.update { $0?.retries = 9 }
        #expect(protection.value == Protection(enabled: true, passcode: "1234", retries: 9))
    }

    @Test func aRemoveOfANestedKeyDeletesItWhileAnOldVersionKeepsIt() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try lensStore(fileSystem)
        let state = try store.root(AppState.self, named: "app", default: AppState())
        let passcode = state.lens(\.protection, default: Protection(enabled: true)).lens(\.passcode)
        try passcode.set("2468")
        let old = store.current
        try passcode.remove()
        #expect(passcode.value == nil && passcode.value(in: old) == "2468")
        let logged = try lastLoggedOperations(store, fileSystem)
        guard case .patchRoot("app", ["protection", "passcode"], nil)? = logged.last else {
            Issue.record("logged \(logged)")
            return
        }
        let beta = state.lens(\.flags, default: [:]).lens(key: "beta")
        try beta.set(true)
        let withBeta = store.current
        try beta.remove()
        #expect(state.value.flags == [:] && state.value(in: withBeta).flags == ["beta": true])
        #expect(throws: LensError.notRemovable(path: "app.protection.enabled")) {
            try state.lens(\.protection, default: Protection(enabled: true)).lens(\.enabled).remove()
        }
        let beforeRemoval = store.current
        try state.remove()
        #expect(state.value == AppState() && store.current.rootNames.isEmpty)
        #expect(state.value(in: beforeRemoval).protection == Protection(enabled: true))
    }

    @Test func afterAReopenEveryLensReadsWhatWasCommitted() throws {
        let fileSystem = SimulatedFileSystem()
        var store = try lensStore(fileSystem)
        var state = try store.root(AppState.self, named: "app", default: AppState())
        try state.lens(\.protection, default: Protection(enabled: false)).lens(\.passcode).set("1357")
        try state.lens(\.counters).lens(key: "launches", default: 0).update { $0 += 1 }
        try state.lens(\.flags, default: [:]).lens(key: "beta").set(false)
        try state.lens(\.theme).set("dark")
        let config = try store.root(named: "config")
        try config.set(["server": ["url": "https://example.com"]])
        try config["server"]["retries"].set(3)
        let committed = (state.value, config.value)
        for reopen in ["log", "snapshot"] {
            if reopen == "snapshot" { try store.compact() }
            store.close()
            store = try lensStore(fileSystem)
            state = try store.root(AppState.self, named: "app", default: AppState())
            #expect(state.value == committed.0, "after replaying the \(reopen)")
            #expect(try store.root(named: "config").value == committed.1, "after replaying the \(reopen)")
            #expect(state.lens(\.protection).lens(\.passcode).value == "1357")
        }
        store.close()
    }

    @Test func aTransactionWritesLensesAndTablesAsOneRecordOrNothing() throws {
        let fileSystem = SimulatedFileSystem()
        var store = try lensStore(fileSystem)
        var state = try store.root(AppState.self, named: "app", default: AppState())
        var people = try store.table(Person.self, named: "people")
        var random = SeededGenerator(seed: 1)
        let alice = Person.random(1, using: &random)
        try store.write { tx in
            try tx[state].set(\.theme, "dark")
            try tx[state.lens(\.counters)].update { $0["people", default: 0] += 1 }
            #expect(tx[state].value.theme == "dark", "the transaction reads its own write")
            try tx[people].put(alice)
        }
        #expect(store.current.lsn == 1 && state.value.theme == "dark" && people[1] == alice)
        #expect(throws: LensError.self) {
            try store.write { tx in
                try tx[people].remove(1)
                try tx[state].set(\.theme, "sepia")
                try tx[state.lens(\.flags).lens(key: "x")].set(true)
            }
        }
        #expect(store.current.lsn == 1 && state.value.theme == "dark" && people[1] == alice)
        store.close()
        store = try lensStore(fileSystem)
        state = try store.root(AppState.self, named: "app", default: AppState())
        people = try store.table(Person.self, named: "people")
        #expect(state.value.theme == "dark" && state.value.counters == ["people": 1] && people[1] == alice, "the record held both")
    }

    @Test func typedAndDynamicLensesShareOneDocument() throws {
        let store = try lensStore()
        let state = try store.root(AppState.self, named: "app", default: AppState())
        try state.lens(\.protection).set(Protection(enabled: false))
        let document = try store.root(named: "app")
        #expect(document["protection"]["enabled"].value == false)
        try document["protection"]["enabled"].set(true)
        #expect(state.lens(\.protection).value == Protection(enabled: true), "a dynamic write is a typed value at once")
        #expect(throws: LensError.undecodable(path: "app.protection.enabled", reason: "expected Bool: Expected a bool but found string")) {
            try document["protection"]["enabled"].set("yes")
        }
        #expect(state.value.protection == Protection(enabled: true) && store.current.lsn == 2, "nothing was written")
        try document["protection"].remove()
        #expect(state.value.protection == nil)
        #expect(try store.root(named: "app").value == ["theme": "light", "counters": [:]])
    }

    /// A key path's coding keys come from the encoding: a renamed coding
    /// key is where the patch goes, and replay puts the value back in place.
    @Test func aRenamedCodingKeyIsLearntAndPatchedAtItsPlace() async throws {
        struct Renamed: Codable, Sendable, Equatable {
            var enabled = false
            var level = 0
            enum CodingKeys: String, CodingKey {
                case enabled = "on"
                case level = "lvl"
            }
        }
        struct Root: Codable, Sendable, Equatable {
            var inner = Renamed()
            var other = "x"
            var computedLevel: Int {
                get { inner.level }
                set { inner.level = newValue; other = "set \(newValue)" }
            }
        }
        let fileSystem = SimulatedFileSystem()
        let store = try lensStore(fileSystem)
        let root = try store.root(Root.self, named: "r", default: Root())
        try root.lens(\.other).set("y")
        try root.lens(\.inner.enabled).set(true)
        guard case let .patchRoot("r", path, value?)? = try lastLoggedOperations(store, fileSystem).last else {
            Issue.record("expected a patch")
            return
        }
        #expect(path == ["inner", "on"])
        #expect(try value.bytes() == [0x02])
        #expect(CodingPathLearning.resolution(of: \Root.inner.enabled) == .keys(["inner", "on"]))
        // Watching learns a key path's keys from trial writes, before any write through it.
        for await _ in root.lens(\.inner.level).values { break }
        #expect(CodingPathLearning.resolution(of: \Root.inner.level) == .keys(["inner", "lvl"]))
        try root.lens(\.computedLevel).set(7)
        let logged = try lastLoggedOperations(store, fileSystem).compactMap { operation -> [String]? in
            if case let .patchRoot("r", path, _) = operation { return path }
            return nil
        }
        #expect(logged == [["inner", "lvl"], ["other"]], "a key path that changes two members: each member it changed")
        store.close()
        let reopened = try lensStore(fileSystem)
        #expect(try reopened.root(Root.self, named: "r", default: Root()).value == Root(inner: Renamed(enabled: true, level: 7), other: "set 7"))
    }
}
