import LensLog
import LensTestSupport
import Testing
@testable import LensDB

/// The state an open builds from a snapshot's items: each entry in the
/// table its identifier names when the entry comes, however the snapshot
/// orders its tables' entries.
@Suite struct SnapshotLoaderTests {
    /// A snapshot holding `items`, written and read back.
    static func snapshot(_ items: [SnapshotItem], lastLSN: UInt64 = 7) throws -> SnapshotFile {
        let fileSystem = SimulatedFileSystem()
        let writer = try SnapshotWriter(fileSystem: fileSystem, path: "/s.snapshot", generation: 1, lastLSN: lastLSN)
        for item in items {
            switch item {
            case let .table(id, name): try writer.addTable(id: id, name: name)
            case let .entry(table, key, value): try writer.addEntry(table: table, key: key, value: value)
            case let .root(name, value): try writer.addRoot(name: name, value: value)
            case let .tableEncoding(table, key, value): try writer.addTableEncoding(table: table, key: key, value: value)
            case let .rootEncoding(name, value): try writer.addRootEncoding(name: name, value: value)
            case let .indexOrder(table, index, _, positions): try writer.addIndexOrder(table: table, index: index, positions: positions)
            }
        }
        try writer.finish()
        return try SnapshotFile(fileSystem: fileSystem, path: "/s.snapshot")
    }

    /// The loaded state of a snapshot holding `items`, read as an open reads it.
    static func loaded(_ items: [SnapshotItem]) throws -> StoreState {
        try Store.loadState(from: snapshot(items))
    }

    /// Each table's entries as the state holds them, by name.
    static func contents(_ state: StoreState) -> [String: [[UInt8]: [UInt8]]] {
        state.snapshotTables.reduce(into: [:]) { contents, table in
            var entries: [[UInt8]: [UInt8]] = [:]
            table.value.forEach { key, value in
                #expect(entries[key] == nil, "each key once")
                entries[key] = value
            }
            contents[table.key] = entries
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

    /// Entries stay in the chunks that hold them. Two tables' entries
    /// share chunks, many chunks each; every key reads back its value,
    /// found by its bytes, and no other key is found.
    @Test func entriesReadInPlaceAcrossManyChunksReadBackByKey() throws {
        var random = SeededGenerator.fromEnvironment("entriesInPlace")
        var items: [SnapshotItem] = [.table(id: 1, name: "a"), .table(id: 2, name: "b")]
        var expected: [String: [[UInt8]: [UInt8]]] = ["a": [:], "b": [:]]
        for index in 0..<6000 {
            let table = UInt64(1 + index % 2), key = OrderedKey.int64(Int64(index / 2))
            let value = (0..<Int.random(in: 0..<120, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            items.append(.entry(table: table, key: key, value: value))
            expected[table == 1 ? "a" : "b"]![key] = value
        }
        let state = try Self.loaded(items)
        #expect(Self.contents(state) == expected)
        for (name, entries) in expected {
            let loaded = try #require(state.snapshotTables[name])
            #expect(loaded.keysAscend)
            for (key, value) in entries { #expect(try state.value(in: name, key: key)?.bytes() == value) }
            for absent in [[], OrderedKey.int64(-1), OrderedKey.int64(3000), OrderedKey.int64(7) + [0]] {
                #expect(state.value(in: name, key: absent) == nil)
            }
        }
    }

    /// A snapshot LensDB did not write may give a table's keys out of
    /// order, or one key twice: the entries are sorted, and the last value
    /// given for a key is its value, read in place or given whole.
    @Test func entriesOutOfOrderAreSortedAndTheLastValueOfAKeyStays() throws {
        let items: [SnapshotItem] = [
            .table(id: 1, name: "a"),
            .entry(table: 1, key: [5], value: [50]), .entry(table: 1, key: [1], value: [10]),
            .entry(table: 1, key: [5], value: [51]), .entry(table: 1, key: [3], value: [30]),
            .entry(table: 1, key: [1, 0], value: [100]), .entry(table: 1, key: [5], value: [52]),
        ]
        let expected: [[UInt8]: [UInt8]] = [[1]: [10], [1, 0]: [100], [3]: [30], [5]: [52]]
        var whole = SnapshotLoader(lastLSN: 7)
        for item in items { #expect(whole.add(item) == nil) }
        for state in [try Self.loaded(items), whole.state] {
            #expect(Self.contents(state) == ["a": expected])
            let loaded = try #require(state.snapshotTables["a"])
            #expect(loaded.keysAscend)
            #expect((0..<loaded.count).map(loaded.key(at:)) == [[1], [1, 0], [3], [5]])
            #expect(try state.value(in: "a", key: [5])?.bytes() == [52])
        }
    }

    /// A chunk ends after the item that fills it: a table's last entries
    /// share theirs with whatever large item comes next. The table keeps
    /// a copy of its own bytes, not the chunk, which would hold the root
    /// (or another table's entries) in memory for as long as it stays.
    @Test func aTableKeepsOnlyItsOwnBytesOfAChunkItUsesLittleOf() throws {
        let root = [UInt8](repeating: 3, count: 1 << 20)
        let state = try Self.loaded([
            .table(id: 1, name: "a"), .entry(table: 1, key: [1], value: [10]), .entry(table: 1, key: [2], value: [20, 21]),
            .root(name: "settings", value: root),
            .table(id: 2, name: "b"), .entry(table: 2, key: [3], value: [UInt8](repeating: 5, count: 40_000)),
            .entry(table: 2, key: [4], value: [40]),
        ])
        #expect(Self.contents(state) == ["a": [[1]: [10], [2]: [20, 21]], "b": [[3]: [UInt8](repeating: 5, count: 40_000), [4]: [40]]])
        #expect(try state.root(named: "settings")?.bytes() == root)
        #expect(try #require(state.snapshotTables["a"]).chunkBytes == 5)
        // Most of b's chunk is b's own: kept whole.
        #expect(try #require(state.snapshotTables["b"]).chunkBytes >= 40_000)
    }

    /// Keys out of order and given twice, across many chunks: the last
    /// value given for a key is its value.
    @Test func entriesOutOfOrderAcrossChunksAreSorted() throws {
        var random = SeededGenerator.fromEnvironment("entriesOutOfOrder")
        var items: [SnapshotItem] = [.table(id: 1, name: "a")]
        var expected: [[UInt8]: [UInt8]] = [:]
        for index in 0..<4000 {
            let key = OrderedKey.int64(Int64.random(in: 0..<1500, using: &random))
            let value = [UInt8](repeating: UInt8(index % 256), count: 50 + index % 7)
            items.append(.entry(table: 1, key: key, value: value))
            expected[key] = value
        }
        let state = try Self.loaded(items)
        #expect(Self.contents(state) == ["a": expected])
        let loaded = try #require(state.snapshotTables["a"])
        #expect(loaded.keysAscend && loaded.count == expected.count)
    }

    @Test func anEntryOfATableNeverDeclaredIsMalformed() throws {
        #expect(throws: SnapshotError.self) {
            try Self.loaded([.table(id: 1, name: "a"), .entry(table: 1, key: [1], value: [10]), .entry(table: 2, key: [2], value: [20])])
        }
    }
}
