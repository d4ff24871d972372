import LensTestSupport
import Testing
@testable import LensDB

/// Every table and root records how it is encoded (promise 10): declared by
/// the transaction that first writes it, carried across reopen and
/// compaction, forgotten when the table empties or the root goes.
@Suite struct EncodingCatalogTests {
    let typed = TableEncoding(key: .int64, value: .valueFormat)

    func options(_ fileSystem: SimulatedFileSystem) -> StoreOptions {
        var options = StoreOptions()
        options.fileSystem = fileSystem
        options.checksInvariants = true
        options.compactionLogRatio = nil
        return options
    }

    @Test func firstPutDeclaresTheEncodingOnceAndItSurvivesReopenAndCompaction() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try Store(at: "/s.lensdb", options: options(fileSystem))
        var declarations = 0
        try store.write { tx in
            tx.put([1], for: [1], in: "raw")
            tx.put([2], for: [2], in: "raw")
            tx.put(.encoded(try ValueEncoder().encode("x")), for: OrderedKey.int64(5), in: "typed", encoding: typed)
            tx.setRoot(.encoded(try ValueEncoder().encode(true)), named: "flags", encoding: .valueFormat)
            declarations = tx.operations.filter {
                if case .declareTable = $0 { return true }
                if case .declareRoot = $0 { return true }
                return false
            }.count
        }
        #expect(declarations == 3, "one declaration per table and root, not one per put")
        for reopen in ["log", "snapshot"] {
            let state = store.current
            #expect(state.encoding(ofTable: "raw") == .raw, "\(reopen)")
            #expect(state.encoding(ofTable: "typed") == typed, "\(reopen)")
            #expect(state.encoding(ofRoot: "flags") == .valueFormat, "\(reopen)")
            if reopen == "log" { try store.compact() }
        }
        store.close()
        for _ in 0..<2 {
            let reopened = try Store(at: "/s.lensdb", options: options(fileSystem))
            #expect(reopened.current.encoding(ofTable: "raw") == .raw)
            #expect(reopened.current.encoding(ofTable: "typed") == typed)
            #expect(reopened.current.encoding(ofRoot: "flags") == .valueFormat)
            try reopened.write { tx in tx.put([3], for: [3], in: "after") }
            reopened.close()
        }
    }

    @Test func anEmptiedTableForgetsItsEncodingAndTakesANewOne() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try Store(at: "/s.lensdb", options: options(fileSystem))
        try store.write { tx in tx.put([1], for: [1], in: "t") }
        try store.write { tx in tx.remove([1], from: "t") }
        #expect(store.current.encoding(ofTable: "t") == nil)
        try store.write { tx in tx.put(.encoded([0x06, 0x00]), for: OrderedKey.int64(1), in: "t", encoding: typed) }
        #expect(store.current.encoding(ofTable: "t") == typed)
        try store.write { tx in tx.removeRoot(named: "none") }
        try store.write { tx in tx.setRoot([9], named: "r") }
        #expect(store.current.encoding(ofRoot: "r") == .raw)
        try store.write { tx in tx.setRoot(.encoded([0x01]), named: "r", encoding: .valueFormat) }
        #expect(store.current.encoding(ofRoot: "r") == .valueFormat, "a root takes the encoding of its latest set")
        try store.write { tx in tx.removeRoot(named: "r") }
        #expect(store.current.encoding(ofRoot: "r") == nil)
        store.close()
        let reopened = try Store(at: "/s.lensdb", options: options(fileSystem))
        #expect(reopened.current.encoding(ofTable: "t") == typed)
        #expect(reopened.current.encoding(ofRoot: "r") == nil)
    }

    /// Stores written before encodings were recorded (the crash fixtures are
    /// such stores) open with every table's encoding unknown; a byte-level
    /// write declares its table raw, and the log it goes to is of version 2.
    @Test func storesWrittenBeforeEncodingsOpenWithUnknownEncodings() throws {
        let fileSystem = SimulatedFileSystem()
        try Fixtures.plant("torn-batch-after-log-swap", at: "/old.lensdb", on: fileSystem)
        let store = try Store(at: "/old.lensdb", options: options(fileSystem))
        #expect(store.current.tableNames.allSatisfy { store.current.encoding(ofTable: $0) == nil })
        try store.write { tx in tx.put([1], for: [0xAA], in: "alpha") }
        #expect(store.current.encoding(ofTable: "alpha") == .raw)
        #expect(store.current.encoding(ofTable: "beta") == nil)
        store.close()
        let newest = try StoreDirectory(path: "/old.lensdb", fileSystem: fileSystem).list().logs.last!.path
        let reader = try LogReader(fileSystem: fileSystem, path: newest, policy: .strict)
        #expect(reader.header.version == LogFormat.plainVersion)
    }
}
