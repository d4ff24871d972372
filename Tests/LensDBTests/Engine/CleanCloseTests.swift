import Foundation
import LensLog
import LensTestSupport
import Testing
@testable import LensDB

/// After a clean close every record through the close is proven durable:
/// a log that ends sooner is damage, never a crash's torn tail, and every
/// open (and `logtool`) says so the same way.
@Suite struct CleanCloseTests {
    let path = "/s.lensdb"

    func options(_ fileSystem: SimulatedFileSystem, _ recovery: RecoveryPolicy = .strict) -> StoreOptions {
        var options = StoreOptions(recovery: recovery)
        options.fileSystem = fileSystem
        options.checksInvariants = true
        return options
    }

    /// Ten commits, one a transaction, closed cleanly; returns the log's path.
    func closedStore(_ fileSystem: SimulatedFileSystem, durability: Durability = .full) throws -> String {
        let store = try Store(at: path, options: options(fileSystem))
        for index in 0..<10 {
            try store.write(durability: durability) { tx in tx.put(Array("value \(index)".utf8), for: [UInt8(index)], in: "t") }
        }
        store.close()
        return try StoreDirectory(path: path, fileSystem: fileSystem).list().logs.last!.path
    }

    /// The offset of each record of `log`, in LSN order.
    func recordOffsets(_ log: String, _ fileSystem: SimulatedFileSystem) throws -> [Int64] {
        var reader = try LogReader(fileSystem: fileSystem, path: log, policy: .strict)
        var offsets: [Int64] = []
        while let record = try reader.next() { offsets.append(record.offset) }
        return offsets
    }

    @Test func aCleanCloseRecordsItsLastLSN() throws {
        let fileSystem = SimulatedFileSystem()
        _ = try closedStore(fileSystem)
        #expect(try StoreDirectory(path: path, fileSystem: fileSystem).cleanClose() == CleanClose(lastLSN: 10))
    }

    @Test func aTruncatedLogAfterACleanCloseFailsStrictWithFileOffsetAndLSN() throws {
        let fileSystem = SimulatedFileSystem()
        let log = try closedStore(fileSystem)
        let offsets = try recordOffsets(log, fileSystem)
        fileSystem.truncate(file: log, to: fileSystem.contents(of: log)!.count - 5)
        let expected = RecoveryError.lostAfterCleanClose(file: log, offset: offsets[9], firstLostLSN: 10, closedLSN: 10, reason: .truncatedPayload)
        // Twice: a failed open leaves the marker, so the next one judges the same.
        for _ in 1...2 {
            #expect(throws: expected) { try Store(at: path, options: options(fileSystem)) }
            #expect(try StoreDirectory(path: path, fileSystem: fileSystem).cleanClose() == CleanClose(lastLSN: 10))
        }
        #expect("\(expected)".contains("closed cleanly through LSN 10"))
    }

    @Test func salvageKeepsThePrefixAndReportsTheLostLSNs() throws {
        let fileSystem = SimulatedFileSystem()
        let log = try closedStore(fileSystem)
        let offsets = try recordOffsets(log, fileSystem)
        fileSystem.truncate(file: log, to: Int(offsets[7]) + 3)
        let store = try Store(at: path, options: options(fileSystem, .salvage))
        let recovery = store.openStatistics.recovery
        #expect(recovery.tornTails.isEmpty, "a clean close rules out a torn tail")
        #expect(recovery.dropped.map(\.range.lostLSNs) == [8..<11])
        #expect(recovery.dropped.map(\.range.proof) == [.cleanClose])
        // The store gave out LSNs 8…10 before the close: new commits are
        // numbered after them, from a snapshot that says so.
        #expect(store.current.lsn == 10)
        #expect(store.current.count(in: "t") == 7)
        #expect(fileSystem.fileExists(at: "\(path)/snapshot-0000000000000002.snap"))
        #expect(!fileSystem.fileExists(at: log), "the damaged log is superseded")
        try store.write { tx in tx.put([0xAA], for: [0xAA], in: "t") }
        store.close()
        // Accepted once, the loss is the store's history: a strict open finds nothing wrong.
        let reopened = try Store(at: path, options: options(fileSystem))
        #expect(reopened.current.lsn == 11)
        #expect(reopened.current.value(in: "t", key: [0xAA]) != nil)
        #expect(reopened.current.count(in: "t") == 8)
        #expect(reopened.openStatistics.recovery.dropped.isEmpty)
    }

    /// The snapshot is written before the clean-close marker goes: a power
    /// cut at any step of a salvage open leaves a store whose next `.salvage`
    /// open ends as an uncut one does, and whose strict opens never take a
    /// lost LSN for a new commit's.
    @Test func aSalvageOpenCutAtEveryStepNumbersNewCommitsAfterTheLostLSNs() throws {
        func damagedStore() throws -> SimulatedFileSystem {
            let fileSystem = SimulatedFileSystem()
            let log = try closedStore(fileSystem)
            fileSystem.truncate(file: log, to: Int(try recordOffsets(log, fileSystem)[7]) + 3)
            // Everything made durable, the marker too: a power cut must not
            // take the proof that LSNs 8…10 were given out before the open starts.
            try fileSystem.syncDirectory(at: path)
            fileSystem.crash(seed: 0, model: .keepAll)
            return fileSystem
        }
        let plan = try damagedStore()
        let callsBefore = plan.mutatingCallCount
        try Store(at: path, options: options(plan, .salvage)).close()
        let callsOfOpen = plan.mutatingCallCount - callsBefore
        #expect(callsOfOpen > 4)
        for cut in 0...callsOfOpen {
            for (index, model) in [CrashModel.default, .tearAll, .keepAll].enumerated() {
                let fileSystem = try damagedStore()
                fileSystem.powerCut(afterMutatingCalls: cut)
                try? Store(at: path, options: options(fileSystem, .salvage)).close()
                fileSystem.crash(seed: UInt64(cut * 3 + index), model: model)
                // Strict either still refuses the loss or finds it accepted, numbered past.
                if let strict = try? Store(at: path, options: options(fileSystem)) {
                    #expect(strict.current.lsn == 10, "cut \(cut), model \(index)")
                    #expect(strict.current.count(in: "t") == 7, "cut \(cut), model \(index)")
                    strict.close()
                }
                let salvaged = try Store(at: path, options: options(fileSystem, .salvage))
                #expect(salvaged.current.lsn == 10, "cut \(cut), model \(index)")
                #expect(salvaged.current.count(in: "t") == 7, "cut \(cut), model \(index)")
                try salvaged.write { tx in tx.put([0xAA], for: [0xAA], in: "t") }
                salvaged.close()
                let reopened = try Store(at: path, options: options(fileSystem))
                #expect(reopened.current.lsn == 11, "cut \(cut), model \(index): the next commit took LSN 11")
                #expect(reopened.current.count(in: "t") == 8)
                reopened.close()
            }
        }
    }

    @Test func damagedLastRecordAfterACleanCloseIsLostNotTorn() throws {
        let fileSystem = SimulatedFileSystem()
        let log = try closedStore(fileSystem)
        let offsets = try recordOffsets(log, fileSystem)
        fileSystem.flip(byteAt: Int(offsets[9]) + LogFormat.frameHeaderSize + 1, inFile: log)
        #expect(throws: RecoveryError.lostAfterCleanClose(file: log, offset: offsets[9], firstLostLSN: 10, closedLSN: 10, reason: .checksumMismatch)) {
            try Store(at: path, options: options(fileSystem))
        }
        let store = try Store(at: path, options: options(fileSystem, .salvage))
        #expect(store.current.lsn == 10, "numbered after the lost LSN")
        #expect(store.current.count(in: "t") == 9)
        #expect(store.openStatistics.recovery.dropped.map(\.range.lostLSNs) == [10..<11])
    }

    /// `.buffered` commits carry no proof of one another (nothing was synced
    /// until the close), so only the clean close says the damaged one was
    /// durable; salvage skips it and keeps every record after it.
    @Test func salvageKeepsWhatFollowsDamageThatOnlyTheCleanCloseProves() throws {
        let fileSystem = SimulatedFileSystem()
        let log = try closedStore(fileSystem, durability: .buffered)
        let offsets = try recordOffsets(log, fileSystem)
        fileSystem.flip(byteAt: Int(offsets[4]) + LogFormat.frameHeaderSize + 1, inFile: log)
        #expect(throws: RecoveryError.lostAfterCleanClose(file: log, offset: offsets[4], firstLostLSN: 5, closedLSN: 10, reason: .checksumMismatch)) {
            try Store(at: path, options: options(fileSystem))
        }
        let salvaged = try Store(at: path, options: options(fileSystem, .salvage))
        #expect(salvaged.current.lsn == 10)
        #expect(salvaged.current.count(in: "t") == 9, "every record but LSN 5")
        #expect(salvaged.openStatistics.recovery.dropped.map(\.range.lostLSNs) == [5..<6])
        #expect(salvaged.openStatistics.recovery.dropped.map(\.range.proof) == [.cleanClose])
    }

    /// Salvage keeps records after damage that only the clean close proves;
    /// once the open removed the marker, nothing on disk would prove them,
    /// so the open writes them again. A crash later, salvage gives the same
    /// history plus what came after: never LSN 1…4 and 11 without 6…10.
    @Test func recordsSalvageKeptOnTheCloseAloneSurviveTheNextCrash() throws {
        let fileSystem = SimulatedFileSystem()
        let log = try closedStore(fileSystem, durability: .buffered)
        fileSystem.flip(byteAt: Int(try recordOffsets(log, fileSystem)[4]) + LogFormat.frameHeaderSize + 1, inFile: log)
        let salvaged = try Store(at: path, options: options(fileSystem, .salvage))
        #expect(salvaged.current.count(in: "t") == 9)
        try salvaged.write(durability: .full) { tx in tx.put(Array("after".utf8), for: [0xAA], in: "t") }
        // The power goes before the store can close.
        fileSystem.powerCut(afterMutatingCalls: 0)
        salvaged.close()
        fileSystem.crash(seed: 1, model: .dropAll)
        let again = try Store(at: path, options: options(fileSystem, .salvage))
        #expect(again.current.lsn == 11)
        #expect(again.current.count(in: "t") == 10, "LSN 1…4, 6…10 and 11")
        #expect(again.openStatistics.recovery.dropped.map(\.range.lostLSNs) == [5..<6])
        again.close()
        #expect(throws: (any Error).self, "damage that was durable still stops .strict") {
            try Store(at: path, options: options(fileSystem))
        }
    }

    @Test func aRemovedNewestLogAfterACleanCloseFailsStrict() throws {
        let fileSystem = SimulatedFileSystem()
        // Two sessions, one log each: LSN 1 in the first, LSN 2 in the second.
        for key in [UInt8(1), 2] {
            let store = try Store(at: path, options: options(fileSystem))
            try store.write { tx in tx.put([key], for: [key], in: "t") }
            store.close()
        }
        let logs = try StoreDirectory(path: path, fileSystem: fileSystem).list().logs
        #expect(logs.count == 2)
        try fileSystem.removeFile(at: logs.last!.path)
        let error = #expect(throws: RecoveryError.self) { try Store(at: path, options: options(fileSystem)) }
        guard case let .lostAfterCleanClose(_, _, first, closed, reason)? = error else {
            Issue.record("expected lostAfterCleanClose, got \(String(describing: error))")
            return
        }
        #expect((first, closed, reason) == (2, 2, .endsBeforeCleanClose))
    }

    @Test func theRealPathTruncatedFixtureFailsStrictAndVerifiesWithAProblem() throws {
        let temporary = try TemporaryDirectory("fixture")
        defer { temporary.remove() }
        let store = try Fixtures.copy("truncated-after-clean-close", into: temporary)
        let log = "\(store)/log-0000000000000001.log"
        for _ in 1...2 {
            #expect(throws: RecoveryError.lostAfterCleanClose(file: log, offset: 188, firstLostLSN: 2, closedLSN: 3, reason: .truncatedPayload)) {
                try Store(at: store)
            }
        }
        #expect(FileManager.default.fileExists(atPath: "\(store)/CLOSED"), "a failed open leaves the marker")
        let report = try StoreInspector(path: store).verify()
        #expect(!report.isOK)
        #expect(report.problems.map(\.lsn) == [2])
        let salvaged = try Store(at: store, options: StoreOptions(recovery: .salvage))
        #expect(salvaged.current.lsn == 3, "numbered after the LSNs the close proves given out")
        #expect(salvaged.openStatistics.recovery.dropped.map(\.range.lostLSNs) == [2..<4])
        salvaged.close()
    }

    /// An earlier LensDB wrote an empty marker, and a power cut soon after a
    /// close can leave one: the close was clean, but no LSN is proven, so a
    /// short log is judged as after a crash.
    @Test(arguments: [[UInt8](), Array("LENSCLOS".utf8) + [1, 0, 0]])
    func aMarkerWithoutAnLSNProvesNothingAndTheTailIsTorn(marker: [UInt8]) throws {
        let fileSystem = SimulatedFileSystem()
        let log = try closedStore(fileSystem)
        let directory = StoreDirectory(path: path, fileSystem: fileSystem)
        fileSystem.setContents(marker, of: directory.closedMarkerPath)
        #expect(try directory.cleanClose() == CleanClose(lastLSN: nil))
        fileSystem.truncate(file: log, to: fileSystem.contents(of: log)!.count - 5)
        let store = try Store(at: path, options: options(fileSystem))
        #expect(store.current.lsn == 9)
        #expect(store.openStatistics.recovery.tornTails.count == 1)
    }

    @Test func aMarkerOlderThanTheLogProvesOnlyWhatItSaysAndTheTailIsLoggedAgain() throws {
        let fileSystem = SimulatedFileSystem()
        _ = try closedStore(fileSystem)
        let directory = StoreDirectory(path: path, fileSystem: fileSystem)
        // As if the removal of LSN 5's marker had not reached the disk before LSN 6…10 did.
        try directory.markClosedCleanly(CleanClose(lastLSN: 5))
        let store = try Store(at: path, options: options(fileSystem))
        #expect(store.current.lsn == 10)
        #expect(store.openStatistics.recovery.provenLSN >= 5)
        store.close()
        #expect(try directory.cleanClose() == CleanClose(lastLSN: 10))
    }

    @Test func theMarkerBytesAreFrozen() {
        let bytes = CleanClose(lastLSN: 0x0102_0304_0506_0708).encoded()
        #expect(bytes.count == CleanClose.size)
        #expect(Array(bytes[0..<24]) == Array("LENSCLOS".utf8) + [1, 0, 0, 0, 0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1])
        #expect(CleanClose(decoding: bytes) == CleanClose(lastLSN: 0x0102_0304_0506_0708))
        for index in bytes.indices {
            var flipped = bytes
            flipped[index] ^= 0x40
            #expect(CleanClose(decoding: flipped).lastLSN == nil, "a flip at byte \(index) must not verify")
        }
    }
}

