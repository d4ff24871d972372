import LensTestSupport
import Testing
@testable import LensLog

/// Item 6 (an index's order) as a reader meets it in a damaged or hostile
/// file: every malformed form is refused as malformed, never a crash and
/// never a large allocation.
@Suite struct IndexOrderItemTests {
    /// An item 6 with these fields, each varint as given.
    static func item(table: [UInt8] = [0], index: String = "city", start: [UInt8] = [0], count: [UInt8], positions: [[UInt8]]) -> [UInt8] {
        [SnapshotItemKind.indexOrder.rawValue] + table + [UInt8(index.utf8.count)] + Array(index.utf8) + start + count + positions.flatMap { $0 }
    }

    static func varint(_ value: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        return bytes + [UInt8(rest)]
    }

    static func read(_ bytes: [UInt8], version: UInt32 = SnapshotFormat.plainVersion) -> SnapshotItem? {
        var cursor = ByteCursor(bytes)
        return SnapshotFile.item(&cursor, version: version)
    }

    @Test func aWellFormedItemReadsInEveryVersionFromThree() {
        let bytes = Self.item(start: Self.varint(16384), count: [2], positions: [[1], Self.varint(UInt64(UInt32.max))])
        let expected = SnapshotItem.indexOrder(table: 0, index: "city", start: 16384, positions: [1, UInt32.max])
        #expect(Self.read(bytes, version: 3) == expected)
        #expect(Self.read(bytes, version: 4) == expected)
        #expect(Self.read(bytes, version: 2) == nil, "item 6 is malformed before version 3")
        #expect(Self.read(bytes, version: 1) == nil)
    }

    @Test func malformedItemsAreRefusedNeverACrash() {
        let overlong = [UInt8](repeating: 0xFF, count: 10) + [0x01]
        let cases: [(String, [UInt8])] = [
            ("more positions than an item holds", Self.item(count: Self.varint(UInt64(SnapshotFormat.maxIndexOrderPositions) + 1), positions: [])),
            ("a count of 2^64 - 1", Self.item(count: Self.varint(.max), positions: [])),
            ("a count that overflows a varint", Self.item(count: overlong, positions: [])),
            ("a position past UInt32", Self.item(count: [1], positions: [Self.varint(UInt64(UInt32.max) + 1)])),
            ("a position that overflows a varint", Self.item(count: [1], positions: [overlong])),
            ("a table id that overflows a varint", Self.item(table: overlong, count: [0], positions: [])),
            ("a start that overflows a varint", Self.item(start: overlong, count: [0], positions: [])),
            ("positions cut short", Self.item(count: Self.varint(UInt64(SnapshotFormat.maxIndexOrderPositions)), positions: [[0], [1]])),
            ("a position cut inside its varint", Self.item(count: [1], positions: [[0x80, 0x80]])),
            ("an index name longer than the item", [6, 0, 0x7F, 0x61]),
        ]
        for (name, bytes) in cases {
            #expect(Self.read(bytes) == nil, "\(name)")
            for length in 0..<bytes.count { #expect(Self.read(Array(bytes[..<length])) == nil, "\(name), cut at \(length)") }
        }
    }
}
