import LensLog
import LensTestSupport
import Testing
@testable import LensDB

/// The state an open builds from a snapshot's items: each entry in the
/// table its identifier names when the entry comes, however the snapshot
/// orders its tables' entries.
@Suite struct SnapshotLoaderTests {
    /// The loaded state of a snapshot holding `items`.
    static func loaded(_ items: [SnapshotItem]) throws -> StoreState {
        let fileSystem = SimulatedFileSystem()
        let writer = try SnapshotWriter(fileSystem: fileSystem, path: "/s.snapshot", generation: 1, lastLSN: 7)
        for item in items {
            switch item {
            case let .table(id, name): try writer.addTable(id: id, name: name)
            case let .entry(table, key, value): try writer.addEntry(table: table, key: key, value: value)
            default: Issue.record("only tables and entries here")
            }
        }
        try writer.finish()
        return try Store.loadState(from: SnapshotFile(fileSystem: fileSystem, path: "/s.snapshot"))
    }

    /// Each table's entries as the state holds them, by name.
    static func contents(_ state: StoreState) -> [String: [[UInt8]: [UInt8]]] {
        state.snapshotTables.reduce(into: [:]) { contents, table in
            contents[table.key] = Dictionary(uniqueKeysWithValues: zip(table.value.keys, table.value.values))
        }
    }

    @Test func entriesGoToTheTableTheirIdentifierNamesWhenTheyCome() throws {
        let state = try Self.loaded([
            .table(id: 1, name: "a"), .entry(table: 1, key: [1], value: [10]),
            .table(id: 2, name: "b"), .entry(table: 2, key: [2], value: [20]),
            // Back to an earlier table, after another's entries.
            .entry(table: 1, key: [3], value: [30]),
            // An identifier declared again names another table from here on.
            .table(id: 1, name: "c"), .entry(table: 1, key: [4], value: [40]),
            .entry(table: 2, key: [5], value: [50]),
            .table(id: 3, name: "a"), .entry(table: 3, key: [6], value: [60]),
        ])
        #expect(Self.contents(state) == [
            "a": [[1]: [10], [3]: [30], [6]: [60]],
            "b": [[2]: [20], [5]: [50]],
            "c": [[4]: [40]],
        ])
        #expect(state.lsn == 7)
    }

    @Test func anEntryOfATableNeverDeclaredIsMalformed() throws {
        #expect(throws: SnapshotError.self) {
            try Self.loaded([.table(id: 1, name: "a"), .entry(table: 1, key: [1], value: [10]), .entry(table: 2, key: [2], value: [20])])
        }
    }
}
