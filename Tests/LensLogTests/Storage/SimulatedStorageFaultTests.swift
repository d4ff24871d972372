import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LensTestSupport
import Testing
@testable import LensLog

@Suite struct SimulatedStorageFaultTests {
    @Test func nthWriteThrowsNoSpaceAndOthersSucceed() throws {
        let fileSystem = try makeSimulatedStore()
        fileSystem.injectFault(Fault(.noSpace, operations: [.write], trigger: .nthCall(3)))
        let file = try fileSystem.openFile(at: "s/a", mode: .create)
        try file.write([1], at: 0)
        try file.write([2], at: 1)
        let error = #expect(throws: StorageError.self) { try file.write([3], at: 2) }
        #expect(error?.code == .noSpace)
        #expect(error?.errno == ENOSPC)
        #expect(error?.path == "s/a")
        try file.write([4], at: 2)
        #expect(fileSystem.contents(of: "s/a") == [1, 2, 4])
    }

    @Test func everyMatchingCallFromNthThrowsIOErrorOnlyForMatchingPath() throws {
        let fileSystem = try makeSimulatedStore()
        fileSystem.injectFault(Fault(.ioError, operations: [.write, .sync], pathSuffix: ".log", trigger: .fromNthCall(2)))
        let log = try fileSystem.openFile(at: "s/1.log", mode: .create)
        let other = try fileSystem.openFile(at: "s/1.snap", mode: .create)
        try log.write([1], at: 0)
        for _ in 0..<3 {
            let error = #expect(throws: StorageError.self) { try log.sync(.durable) }
            #expect(error?.code == .ioError)
        }
        try other.write([1], at: 0)
        try other.sync(.durable)
        fileSystem.clearFaults()
        try log.sync(.durable)
    }

    @Test func shortWriteLeavesPrefixAndThrowsNoSpace() throws {
        let fileSystem = try makeSimulatedStore()
        fileSystem.injectFault(Fault(.shortWrite(keepingBytes: 3), operations: [.write]))
        let file = try fileSystem.openFile(at: "s/a", mode: .create)
        let error = #expect(throws: StorageError.self) { try file.write([1, 2, 3, 4, 5], at: 0) }
        #expect(error?.code == .noSpace)
        #expect(fileSystem.contents(of: "s/a") == [1, 2, 3])
    }

    @Test func failedSyncThrowsAndItsWritesNeverBecomeDurable() throws {
        let fileSystem = try makeSimulatedStore()
        try writeDurably([1], to: "s/a", in: fileSystem)
        fileSystem.injectFault(Fault(.failedSync, operations: [.sync]))
        let file = try fileSystem.openFile(at: "s/a", mode: .readWrite)
        try file.write([2], at: 1)
        let error = #expect(throws: StorageError.self) { try file.sync(.durableWithMetadata) }
        #expect(error?.code == .ioError)
        #expect(fileSystem.contents(of: "s/a") == [1, 2])
        // A retried fsync succeeds, as on Linux, yet the page was dropped.
        try file.sync(.durableWithMetadata)
        #expect(fileSystem.durableContents(of: "s/a") == [1])
        fileSystem.crash(seed: 1, model: .keepAll)
        #expect(fileSystem.contents(of: "s/a") == [1])
    }

    @Test func powerCutFailsTheCutCallAndFreezesEverything() throws {
        let fileSystem = try makeSimulatedStore()
        let file = try fileSystem.openFile(at: "s/a", mode: .create)
        fileSystem.powerCut(afterMutatingCalls: 2)
        try file.write([1], at: 0)
        try file.write([2], at: 1)
        let error = #expect(throws: StorageError.self) { try file.sync(.durable) }
        #expect(error?.code == .ioError)
        #expect(fileSystem.isPoweredOff)
        #expect(throws: StorageError.self) { try file.read(at: 0, count: 1) }
        #expect(throws: StorageError.self) { try fileSystem.listDirectory("s") }
        #expect(!fileSystem.fileExists(at: "s"))
        fileSystem.crash(seed: 2, model: .keepAll)
        #expect(!fileSystem.isPoweredOff)
        #expect(fileSystem.fileExists(at: "s"))
        #expect(!fileSystem.fileExists(at: "s/a"), "the name of s/a was never synced")
    }

    @Test func powerCutAtEveryBoundaryLeavesAPrefixOfTheWork() throws {
        func workload(_ fileSystem: SimulatedFileSystem) throws {
            let file = try fileSystem.openFile(at: "s/a", mode: .createNew)
            try fileSystem.syncDirectory(at: "s")
            try file.write([1, 1], at: 0)
            try file.sync(.durable)
            try file.write([2, 2], at: 2)
            try file.sync(.durable)
            try fileSystem.rename("s/a", to: "s/b")
            try fileSystem.syncDirectory(at: "s")
        }
        let counter = try makeSimulatedStore()
        let before = counter.mutatingCallCount
        try workload(counter)
        let total = counter.mutatingCallCount - before
        #expect(total == 8)
        var outcomes: Set<String> = []
        for cut in 0...total {
            let fileSystem = try makeSimulatedStore()
            fileSystem.powerCut(afterMutatingCalls: cut)
            do {
                try workload(fileSystem)
                #expect(cut == total, "the workload outlived a power cut after \(cut) calls")
            } catch {
                #expect(fileSystem.isPoweredOff)
            }
            fileSystem.crash(seed: UInt64(cut), model: .dropAll)
            let listing = try fileSystem.listDirectory("s")
            let bytes = listing.first.flatMap { fileSystem.contents(of: "s/" + $0) }
            outcomes.insert("\(listing) \(bytes ?? [])")
        }
        #expect(outcomes == ["[] []", "[\"a\"] []", "[\"a\"] [1, 1]", "[\"a\"] [1, 1, 2, 2]", "[\"b\"] [1, 1, 2, 2]"])
    }

    @Test func callsAreCountedPerOperationAndObserved() throws {
        let fileSystem = try makeSimulatedStore()
        let seen = Locked<[String]>([])
        fileSystem.observeCalls { operation, path in seen.withLock { $0.append("\(operation.rawValue) \(path)") } }
        let file = try fileSystem.openFile(at: "s/a", mode: .create)
        try file.write([1], at: 0)
        try file.write([2], at: 1)
        _ = try file.read(at: 0, count: 2)
        try file.sync(.durable)
        #expect(fileSystem.callCount(.write) == 2)
        #expect(fileSystem.callCount(.read) == 1)
        #expect(fileSystem.callCount(.syncDirectory) == 1)
        #expect(seen.withLock { $0 } == ["open s/a", "write s/a", "write s/a", "read s/a", "sync s/a"])
    }

    @Test func readOnlyHandleRefusesWrites() throws {
        let fileSystem = try makeSimulatedStore()
        try writeDurably([1], to: "s/a", in: fileSystem)
        let file = try fileSystem.openFile(at: "s/a", mode: .readOnly)
        let error = #expect(throws: StorageError.self) { try file.write([2], at: 0) }
        #expect(error?.code == .permissionDenied)
    }

    @Test func missingFilesAndParentsThrowNotFoundWithPath() throws {
        let fileSystem = try makeSimulatedStore()
        for (call, path) in [
            ({ _ = try fileSystem.openFile(at: "s/x", mode: .readWrite) }, "s/x"),
            ({ _ = try fileSystem.openFile(at: "t/x", mode: .create) }, "t/x"),
            ({ try fileSystem.removeFile(at: "s/x") }, "s/x"),
            ({ try fileSystem.rename("s/x", to: "s/y") }, "s/x"),
        ] as [(() throws -> Void, String)] {
            let error = #expect(throws: StorageError.self) { try call() }
            #expect(error?.code == .notFound)
            #expect(error?.path == path)
        }
    }
}

@Suite struct SimulatedStorageConcurrencyTests {
    @Test func concurrentWritersToDisjointRegionsAllLand() throws {
        let fileSystem = try makeSimulatedStore()
        let file = try fileSystem.openFile(at: "s/a", mode: .create)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for step in 0..<50 {
                // A failure shows up below as a missing byte; the closure cannot throw.
                try? file.write([UInt8(worker + 1)], at: Int64(worker * 50 + step))
            }
        }
        let bytes = try file.readAll()
        #expect(bytes == (0..<8).flatMap { [UInt8](repeating: UInt8($0 + 1), count: 50) })
        #expect(fileSystem.callCount(.write) == 400)
    }
}
