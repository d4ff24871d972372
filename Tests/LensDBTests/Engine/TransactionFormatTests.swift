import LensLog
import LensTestSupport
import Testing
@_spi(CrashTesting) @testable import LensDB

/// Operation 7 (log format v3): the bytes the article shows, and payloads
/// that must not parse.
@Suite struct TransactionFormatTests {
    @Test func articleExamplePatchBytesAreWhatTheEncoderWrites() throws {
        let operations: [Operation] = [
            .patchRoot(name: "app", path: ["protection", "enabled"], value: .encoded([0x02])),
            .patchRoot(name: "app", path: ["flags", "beta"], value: nil),
        ]
        let expected: [UInt8] = [
            0x02,
            0x07, 0x03, 0x61, 0x70, 0x70,
            0x02, 0x0A, 0x70, 0x72, 0x6F, 0x74, 0x65, 0x63, 0x74, 0x69, 0x6F, 0x6E,
            0x07, 0x65, 0x6E, 0x61, 0x62, 0x6C, 0x65, 0x64,
            0x01, 0x01, 0x02,
            0x07, 0x03, 0x61, 0x70, 0x70,
            0x02, 0x05, 0x66, 0x6C, 0x61, 0x67, 0x73, 0x04, 0x62, 0x65, 0x74, 0x61,
            0x02,
        ]
        let bytes = try TransactionFormat.encode(operations)
        #expect(bytes == expected)
        let decoded = try #require(TransactionFormat.decode(bytes))
        guard case let .patchRoot("app", ["protection", "enabled"], value?) = decoded[0], case .patchRoot("app", ["flags", "beta"], nil) = decoded[1] else {
            Issue.record("decoded \(decoded)")
            return
        }
        #expect(try value.bytes() == [0x02])
    }

    /// The size reserved before encoding is the record's, across the
    /// lengths where a varint takes another byte; a value still to encode
    /// counts as none.
    @Test func theSizeReservedIsTheRecordsExactly() throws {
        var random = SeededGenerator.fromEnvironment("TransactionFormatTests.theSizeReservedIsTheRecordsExactly")
        let lengths = [0, 1, 127, 128, 300, 16_383, 16_384]
        func bytes() -> [UInt8] { Array(repeating: 7, count: lengths.randomElement(using: &random)!) }
        func name() -> String { String(repeating: "é", count: lengths.randomElement(using: &random)! / 2) }
        for _ in 0..<40 {
            let operations: [Operation] = (0..<Int.random(in: 0...130, using: &random)).map { _ in
                switch Int.random(in: 0..<7, using: &random) {
                case 0: .put(table: name(), key: bytes(), value: .encoded(bytes()))
                case 1: .remove(table: name(), key: bytes())
                case 2: .setRoot(name: name(), value: .encoded(bytes()))
                case 3: .removeRoot(name: name())
                case 4: .declareTable(table: name(), encoding: TableEncoding(key: .uuid, value: .valueFormat))
                case 5: .declareRoot(name: name(), encoding: .valueFormat)
                default: .patchRoot(name: name(), path: (0..<Int.random(in: 1...3, using: &random)).map { _ in name() },
                                    value: Bool.random(using: &random) ? .encoded(bytes()) : nil)
                }
            }
            #expect(TransactionFormat.encodedSize(of: operations) == (try TransactionFormat.encode(operations)).count)
            var drained = operations
            #expect(try TransactionFormat.encode(draining: &drained) == (try TransactionFormat.encode(operations)), "draining writes the same bytes")
            #expect(drained.isEmpty)
        }
        let document = Document.object(["a": .int(1)])
        let documentBytes = try document.encodedBytes().count
        let toEncode: [Operation] = [.setRoot(name: "app", value: .decoded(document))]
        #expect(TransactionFormat.encodedSize(of: toEncode) == (try TransactionFormat.encode(toEncode)).count - 1 - documentBytes)
    }

    /// A commit reserves its record at the size the transaction summed as
    /// operations were added, through every way one is added: typed puts
    /// (one and a batch), byte-level puts and removes, roots, patches, and
    /// a lens's first write with the declaration it brings.
    @Test func aTransactionSumsItsRecordsSizeAsOperationsAreAdded() throws {
        let store = Store.inMemory()
        defer { store.close() }
        let table = try store.table(Tagged.self, named: "tagged")
        let document = try store.root(named: "document")
        try store.write { tx in
            tx.setRoot([0x01], named: "plain")
            tx.setRoot(.encoded(Document.object(["a": .int(1)]).binaryEncoded()), named: "app", encoding: .valueFormat)
        }
        try store.write { tx in
            try tx[table].put(Tagged(id: 1, tag: "one", score: 1, group: 2, email: "a@b"))
            try tx[table].put((2...40).map { Tagged(id: $0, tag: "t\($0 % 3)", score: Double($0), group: nil, email: nil) })
            tx.put(Array(repeating: 9, count: 200), for: [1, 2], in: "raw")
            tx.remove([3], from: "raw")
            tx.removeRoot(named: "plain")
            tx.patchRoot(named: "app", at: ["b"], to: Document.string(String(repeating: "x", count: 130)).binaryEncoded())
            try tx[table].remove(5)
            try tx[document].set(["k": "v"])
            let operations = tx.operations
            #expect(operations.count > 44)
            // A value still to encode (the lens's document) counts as none.
            let unencoded = try operations.reduce(0) { size, operation in
                guard case let .setRoot(_, .decoded(value)) = operation else { return size }
                let bytes = try value.encodedBytes().count
                return size + TransactionFormat.varintSize(UInt64(bytes)) + bytes
            }
            #expect(unencoded > 0)
            let record = try TransactionFormat.encode(operations).count - unencoded
            #expect(tx.operationBytes + TransactionFormat.varintSize(UInt64(operations.count)) == record)
            #expect(TransactionFormat.encodedSize(of: operations) == record)
        }
    }

    /// A record made by draining its operations releases each one's value
    /// once written, before the next is encoded: a large transaction's
    /// values are not all held beside the payload they were copied into.
    @Test func drainingReleasesEachValueOnceItIsWritten() throws {
        let tracker = ValueTracker()
        var operations: [Operation] = (0..<5).map { index in
            .setRoot(name: "root\(index)", value: .decoded(TrackedValue(index, tracker)))
        }
        let expected = try TransactionFormat.encode(operations)
        #expect(tracker.encodedWhileAlive() == [[0, 1, 2, 3, 4], [0, 1, 2, 3, 4], [0, 1, 2, 3, 4], [0, 1, 2, 3, 4], [0, 1, 2, 3, 4]],
                "encoding without draining holds every value to the end")
        tracker.reset()
        #expect(try TransactionFormat.encode(draining: &operations) == expected)
        #expect(tracker.encodedWhileAlive() == [[0, 1, 2, 3, 4], [1, 2, 3, 4], [2, 3, 4], [3, 4], [4]])
        #expect(tracker.alive() == [])
    }

    @Test func patchesWithoutKeysOrWithAnUnknownChangeDoNotParse() {
        let noKeys: [UInt8] = [0x01, 0x07, 0x01, 0x61, 0x00, 0x02]
        let unknownChange: [UInt8] = [0x01, 0x07, 0x01, 0x61, 0x01, 0x01, 0x62, 0x03]
        let cutValue: [UInt8] = [0x01, 0x07, 0x01, 0x61, 0x01, 0x01, 0x62, 0x01, 0x05, 0x02]
        let tooDeep: [UInt8] = [0x01, 0x07, 0x01, 0x61, 0x81, 0x02] + Array(repeating: [0x01, 0x62], count: 257).flatMap { $0 } + [0x02]
        for payload in [noKeys, unknownChange, cutValue, tooDeep] {
            #expect(TransactionFormat.decode(payload) == nil, "\(payload.prefix(10))")
        }
    }
}

/// Which ``TrackedValue``s are alive, and which were alive as each encoded.
private final class ValueTracker: Sendable {
    private let state = Locked((alive: Set<Int>(), encodings: [[Int]]()))

    func born(_ index: Int) { state.withLock { _ = $0.alive.insert(index) } }
    func died(_ index: Int) { state.withLock { _ = $0.alive.remove(index) } }
    func encoded() { state.withLock { $0.encodings.append($0.alive.sorted()) } }
    func alive() -> [Int] { state.withLock { $0.alive.sorted() } }
    func encodedWhileAlive() -> [[Int]] { state.withLock { $0.encodings } }
    func reset() { state.withLock { $0.encodings = [] } }
}

/// A value still to encode that reports its life to a tracker.
private final class TrackedValue: SelfEncodingValue {
    let index: Int
    let tracker: ValueTracker

    init(_ index: Int, _ tracker: ValueTracker) {
        self.index = index
        self.tracker = tracker
        tracker.born(index)
    }

    deinit { tracker.died(index) }

    func encodedBytes() throws -> [UInt8] {
        tracker.encoded()
        return [UInt8(index)]
    }
}
