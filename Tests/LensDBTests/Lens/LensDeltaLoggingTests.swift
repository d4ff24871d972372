import Foundation
import LensLog
import LensTestSupport
import Testing
@testable import LensDB

/// Updating one leaf of a large root logs only the change (issue 11).
@Suite struct LensDeltaLoggingTests {
    struct Large: Codable, Sendable, Equatable {
        var counter = 0
        var names: [String] = []
        var settings: [String: String] = [:]
    }

    static func large() -> Large {
        // About 1 MiB: 8,192 names and 2,048 settings of about 100 bytes each.
        Large(names: (0..<8192).map { "name \($0) " + String(repeating: "n", count: 90) },
              settings: Dictionary(uniqueKeysWithValues: (0..<2048).map { ("key \($0)", String(repeating: "s", count: 100)) }))
    }

    @Test func aOneFieldUpdateOfAOneMebibyteRootLogsLessThanAKibibyte() throws {
        let fileSystem = SimulatedFileSystem()
        var options = StoreOptions()
        options.fileSystem = fileSystem
        options.compactionLogRatio = nil
        options.compression = .none
        let store = try Store(at: "/d.lensdb", options: options)
        let root = try store.root(Large.self, named: "large", default: Large())
        let large = Self.large()
        try root.set(large)
        let whole = store.statistics.bytesLogged
        #expect(whole > 1 << 20, "the first write stores the whole root")
        let counter = root.lens(\.counter)
        let setting = root.lens(\.settings).lens(key: "key 7")
        for value in 1...20 {
            try counter.set(value)
            try setting.set("v\(value)")
        }
        let perCommit = Double(store.statistics.bytesLogged - whole) / 40
        #expect(perCommit < 1024, "\(perCommit) bytes a commit")
        // An update of the whole root that changes one field logs that field.
        let beforeUpdates = store.statistics.bytesLogged
        for _ in 0..<3 { try root.update { $0.counter += 1 } }
        #expect(store.statistics.bytesLogged - beforeUpdates < 3 * 1024)
        store.close()
        let reopened = try Store(at: "/d.lensdb", options: options)
        var expected = large
        expected.counter = 23
        expected.settings["key 7"] = "v20"
        #expect(try reopened.root(Large.self, named: "large", default: Large()).value == expected)
    }
}
