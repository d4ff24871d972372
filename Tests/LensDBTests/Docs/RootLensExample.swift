// The example of the "Root lens" article, which quotes the lines between
// the markers verbatim (ArticleExampleTests checks that it does).
import Foundation
import LensDB
import Testing

@Suite struct RootLensExample {
    @Test func settingsThroughLenses() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("root-lens-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("app.lensdb").path
        struct NoPasscode: Error {}
        // article:begin RootLens.md
        struct Protection: Codable, Sendable {
            var enabled = false
            var passcode: String?
        }
        struct AppState: Codable, Sendable {
            var protection: Protection?
            var flags: [String: Bool]?
            var theme = "light"
        }

        let store = try Store(at: path)
        let state = try store.root(AppState.self, named: "app", default: AppState())

        // Sub-lenses: by key path, with a default, by dictionary key.
        let protection = state.lens(\.protection, default: Protection())
        let enabled = protection.lens(\.enabled)
        let beta = state.lens(\.flags, default: [:]).lens(key: "beta")

        // Watch one value: its current value, then each committed change.
        let watcher = Task {
            for await isOn in enabled.values where isOn { return "protection on" }
            return "cancelled"
        }

        // Stores the default of `protection` and the new value, in one commit.
        try protection.lens(\.passcode).set("2468")
        try protection.update { current in
            guard current.passcode != nil else { throw NoPasscode() }
            current.enabled = true
        }
        try beta.set(true)

        // Lenses and everything else in one transaction: both or neither.
        try store.write { tx in
            try tx[state].set(\.theme, "dark")
            try tx[beta].remove()
        }

        print(await watcher.value)          // protection on
        print(enabled.value, beta.value ?? false)    // true false

        // The same document, read and written dynamically.
        let document = try store.root(named: "app")
        print(document["protection"]["passcode"].value)   // "2468"
        store.close()
        // article:end
        #expect(await watcher.value == "protection on")
        let reopened = try Store(at: path)
        defer { reopened.close() }
        let again = try reopened.root(AppState.self, named: "app", default: AppState())
        #expect(again.value.theme == "dark" && again.value.flags == [:] && again.value.protection?.enabled == true)
    }
}
