import LensTestSupport
import Testing
@testable import LensLog

/// A simulated file system with a durable directory "s", ready for files.
func makeSimulatedStore() throws -> SimulatedFileSystem {
    let fileSystem = SimulatedFileSystem()
    try fileSystem.createDirectory(at: "s")
    try fileSystem.syncDirectory(at: ".")
    return fileSystem
}

/// Creates `path` with `bytes`, synced, and its name made durable.
func writeDurably(_ bytes: [UInt8], to path: String, in fileSystem: SimulatedFileSystem) throws {
    let file = try fileSystem.openFile(at: path, mode: .create)
    defer { file.close() }
    try file.truncate(to: 0)
    try file.write(bytes, at: 0)
    try file.sync(.durable)
    try fileSystem.syncDirectory(at: parentDirectory(of: path))
}

@Suite struct SimulatedStorageCrashTests {
    @Test func syncedDataSurvivesCrash() throws {
        let fileSystem = try makeSimulatedStore()
        try writeDurably([1, 2, 3], to: "s/a", in: fileSystem)
        fileSystem.crash(seed: 1, model: .dropAll)
        #expect(fileSystem.contents(of: "s/a") == [1, 2, 3])
        #expect(try fileSystem.listDirectory("s") == ["a"])
    }

    @Test func unsyncedWritesAreLostUnderDropAll() throws {
        let fileSystem = try makeSimulatedStore()
        try writeDurably([1, 2, 3], to: "s/a", in: fileSystem)
        let file = try fileSystem.openFile(at: "s/a", mode: .readWrite)
        try file.write([9, 9, 9, 9, 9], at: 1)
        try file.truncate(to: 2)
        #expect(fileSystem.contents(of: "s/a") == [1, 9])
        #expect(fileSystem.durableContents(of: "s/a") == [1, 2, 3])
        fileSystem.crash(seed: 2, model: .dropAll)
        #expect(fileSystem.contents(of: "s/a") == [1, 2, 3])
    }

    @Test func startedWritebackMakesNothingDurable() throws {
        let fileSystem = try makeSimulatedStore()
        try writeDurably([1, 2, 3], to: "s/a", in: fileSystem)
        let file = try fileSystem.openFile(at: "s/a", mode: .readWrite)
        try file.write([9, 9, 9, 9, 9], at: 1)
        try file.startWriteback(at: 0, length: 6)
        #expect(fileSystem.durableContents(of: "s/a") == [1, 2, 3])
        fileSystem.crash(seed: 4, model: .dropAll)
        #expect(fileSystem.contents(of: "s/a") == [1, 2, 3])
        #expect(fileSystem.callCount(.writeback) == 1)
    }

    @Test func unsyncedChangesSurviveUnderKeepAll() throws {
        let fileSystem = try makeSimulatedStore()
        try writeDurably([1, 2, 3], to: "s/a", in: fileSystem)
        let file = try fileSystem.openFile(at: "s/a", mode: .readWrite)
        try file.write([9, 9, 9, 9, 9], at: 1)
        try file.truncate(to: 4)
        try file.preallocate(at: 0, length: 6)
        fileSystem.crash(seed: 3, model: .keepAll)
        #expect(fileSystem.contents(of: "s/a") == [1, 9, 9, 9, 0, 0])
    }

    @Test func tornWriteKeepsWholeSectorsOnly() throws {
        let old = [UInt8](repeating: 0xAA, count: 4096)
        var sawMixed = false
        for seed in UInt64(0)..<20 {
            let fileSystem = try makeSimulatedStore()
            try writeDurably(old, to: "s/a", in: fileSystem)
            let file = try fileSystem.openFile(at: "s/a", mode: .readWrite)
            try file.write([UInt8](repeating: 0xBB, count: 3000), at: 300)
            fileSystem.crash(seed: seed, model: .tearAll)
            let after = try #require(fileSystem.contents(of: "s/a"))
            #expect(after.count == 4096)
            var kinds: Set<UInt8> = []
            for sector in 0..<8 {
                let bytes = Set(after[(sector * 512)..<((sector + 1) * 512)].enumerated().compactMap { index, byte in
                    (300..<3300).contains(sector * 512 + index) ? byte : nil
                })
                #expect(bytes.count <= 1, "sector \(sector) mixes old and new bytes (seed \(seed))")
                kinds.formUnion(bytes)
            }
            #expect(after[..<300].allSatisfy { $0 == 0xAA } && after[3300...].allSatisfy { $0 == 0xAA })
            sawMixed = sawMixed || kinds == [0xAA, 0xBB]
        }
        #expect(sawMixed, "twenty torn writes never kept some sectors and dropped others")
    }

    /// Within one write, any subset of its sectors may reach the disk, not
    /// only a prefix: a later sector survives while an earlier one is lost,
    /// as when a group commit's batch keeps a record past a lost one.
    @Test func tornWriteCanKeepALaterSectorAndLoseAnEarlierOne() throws {
        var sawHole = false
        for seed in UInt64(0)..<20 {
            let fileSystem = try makeSimulatedStore()
            try writeDurably([], to: "s/a", in: fileSystem)
            let file = try fileSystem.openFile(at: "s/a", mode: .readWrite)
            try file.write([UInt8](repeating: 0xBB, count: 4096), at: 0)
            fileSystem.crash(seed: seed, model: .tearAll)
            let after = try #require(fileSystem.contents(of: "s/a"))
            let kept = (0..<8).map { sector in after.count > sector * 512 && after[sector * 512] == 0xBB }
            sawHole = sawHole || zip(kept, kept.dropFirst()).contains { !$0 && $1 }
        }
        #expect(sawHole, "twenty torn writes never kept a sector after a lost one")
    }

    @Test func garbledWriteChangesOnlyItsOwnSectors() throws {
        let fileSystem = try makeSimulatedStore()
        try writeDurably([UInt8](repeating: 0xAA, count: 2048), to: "s/a", in: fileSystem)
        let file = try fileSystem.openFile(at: "s/a", mode: .readWrite)
        try file.write([UInt8](repeating: 0xBB, count: 100), at: 1024)
        fileSystem.crash(seed: 4, model: CrashModel(keep: 0, drop: 0, tear: 0, garble: 1))
        let after = try #require(fileSystem.contents(of: "s/a"))
        #expect(after.count == 2048)
        #expect(after[..<1024].allSatisfy { $0 == 0xAA })
        #expect(after[1124...].allSatisfy { $0 == 0xAA })
    }

    @Test func createdFileVanishesWithoutDirectorySync() throws {
        let fileSystem = try makeSimulatedStore()
        let file = try fileSystem.openFile(at: "s/a", mode: .createNew)
        try file.write([1], at: 0)
        try file.sync(.durableWithMetadata)
        fileSystem.crash(seed: 5, model: .keepAll)
        #expect(!fileSystem.fileExists(at: "s/a"))
        #expect(try fileSystem.listDirectory("s") == [])
    }

    @Test func createdFileSurvivesAfterDirectorySync() throws {
        let fileSystem = try makeSimulatedStore()
        let file = try fileSystem.openFile(at: "s/a", mode: .createNew)
        try fileSystem.syncDirectory(at: "s")
        try file.write([1], at: 0)
        try file.sync(.durableWithMetadata)
        fileSystem.crash(seed: 6, model: .dropAll)
        #expect(fileSystem.contents(of: "s/a") == [1])
    }

    @Test func directoryWithoutParentSyncVanishesWithItsFiles() throws {
        let fileSystem = SimulatedFileSystem()
        try fileSystem.createDirectory(at: "s/t")
        try writeDurably([1], to: "s/t/a", in: fileSystem)
        fileSystem.crash(seed: 7, model: .keepAll)
        #expect(!fileSystem.fileExists(at: "s"))
        #expect(throws: StorageError.self) { try fileSystem.openFile(at: "s/t/a", mode: .readOnly) }
    }

    @Test func renameWithoutDirectorySyncReverts() throws {
        let fileSystem = try makeSimulatedStore()
        try writeDurably([1], to: "s/old", in: fileSystem)
        try writeDurably([2], to: "s/new", in: fileSystem)
        try fileSystem.rename("s/new", to: "s/old")
        #expect(try fileSystem.listDirectory("s") == ["old"])
        fileSystem.crash(seed: 8, model: .keepAll)
        #expect(fileSystem.contents(of: "s/old") == [1])
        #expect(fileSystem.contents(of: "s/new") == [2])
    }

    @Test func renameWithDirectorySyncSurvives() throws {
        let fileSystem = try makeSimulatedStore()
        try writeDurably([1], to: "s/old", in: fileSystem)
        try writeDurably([2], to: "s/new", in: fileSystem)
        try fileSystem.rename("s/new", to: "s/old")
        try fileSystem.syncDirectory(at: "s")
        fileSystem.crash(seed: 9, model: .dropAll)
        #expect(try fileSystem.listDirectory("s") == ["old"])
        #expect(fileSystem.contents(of: "s/old") == [2])
    }

    @Test func removeWithoutDirectorySyncReverts() throws {
        let fileSystem = try makeSimulatedStore()
        try writeDurably([1], to: "s/a", in: fileSystem)
        try fileSystem.removeFile(at: "s/a")
        #expect(!fileSystem.fileExists(at: "s/a"))
        fileSystem.crash(seed: 10, model: .dropAll)
        #expect(fileSystem.contents(of: "s/a") == [1])
    }

    @Test func handlesAreClosedAndLocksReleasedAfterCrash() throws {
        let fileSystem = try makeSimulatedStore()
        let file = try fileSystem.openFile(at: "s/a", mode: .create)
        let lock = try fileSystem.lockFile(at: "s/LOCK")
        fileSystem.crash(seed: 11)
        let error = #expect(throws: StorageError.self) { try file.write([1], at: 0) }
        #expect(error?.code == .closed)
        let relock = try fileSystem.lockFile(at: "s/LOCK")
        lock.unlock()  // stale: must not release the new holder
        #expect(throws: StorageError.self) { try fileSystem.lockFile(at: "s/LOCK") }
        relock.unlock()
    }

    @Test func secondLockFailsNamingHolderAndUnlockAllowsRelock() throws {
        let fileSystem = SimulatedFileSystem(processID: 4242)
        let lock = try fileSystem.lockFile(at: "LOCK")
        let error = #expect(throws: StorageError.self) { try fileSystem.lockFile(at: "./LOCK") }
        #expect(error?.code == .locked)
        #expect(error?.lockHolder == 4242)
        lock.unlock()
        try fileSystem.lockFile(at: "LOCK").unlock()
    }

    @Test func sameSeedGivesSameCrashOutcome() throws {
        func run() throws -> [UInt8]? {
            let fileSystem = try makeSimulatedStore()
            try writeDurably([UInt8](repeating: 1, count: 3000), to: "s/a", in: fileSystem)
            let file = try fileSystem.openFile(at: "s/a", mode: .readWrite)
            for offset in stride(from: 0, to: 3000, by: 700) { try file.write([UInt8](repeating: 2, count: 600), at: Int64(offset)) }
            fileSystem.crash(seed: 12)
            return fileSystem.contents(of: "s/a")
        }
        #expect(try run() == run())
    }
}
