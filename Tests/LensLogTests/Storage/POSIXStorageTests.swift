#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LensTestSupport
import Testing
@testable import LensLog

@Suite struct POSIXStorageTests {
    let fileSystem = POSIXFileSystem()

    func inDirectory(_ body: (String) throws -> Void) throws {
        let directory = try TemporaryDirectory("storage")
        defer { directory.remove() }
        try body(directory.path)
    }

    @Test func writtenBytesReadBackAndReadsStopShortAtEndOfFile() throws {
        try inDirectory { directory in
            let file = try fileSystem.openFile(at: directory + "/a", mode: .createNew)
            defer { file.close() }
            try file.write([1, 2, 3, 4, 5], at: 0)
            try file.write([9, 9], at: 7)
            try file.sync(.durable)
            #expect(try file.size() == 9)
            #expect(try file.read(at: 0, count: 9) == [1, 2, 3, 4, 5, 0, 0, 9, 9])
            #expect(try file.read(at: 6, count: 100) == [0, 9, 9])
            #expect(try file.read(at: 50, count: 4) == [])
        }
    }

    @Test func preallocateExtendsSizeWithZerosAndKeepsData() throws {
        try inDirectory { directory in
            let file = try fileSystem.openFile(at: directory + "/a", mode: .create)
            defer { file.close() }
            try file.write([7, 7, 7], at: 0)
            try file.preallocate(at: 0, length: 4096)
            #expect(try file.size() == 4096)
            #expect(try file.read(at: 0, count: 5) == [7, 7, 7, 0, 0])
            try file.sync(.durableWithMetadata)
        }
    }

    @Test func startingWritebackKeepsTheBytesAndRefusesAClosedFile() throws {
        let directory = try TemporaryDirectory("writeback")
        defer { directory.remove() }
        let file = try fileSystem.openFile(at: directory.path + "/a", mode: .create)
        try file.write([UInt8](repeating: 7, count: 10_000), at: 0)
        try file.startWriteback(at: 0, length: 10_000)
        #expect(try file.read(at: 0, count: 10_000) == [UInt8](repeating: 7, count: 10_000))
        file.close()
        #expect(throws: StorageError.self) { try file.startWriteback(at: 0, length: 1) }
    }

    @Test func truncateCutsAndExtendsWithZeros() throws {
        try inDirectory { directory in
            let file = try fileSystem.openFile(at: directory + "/a", mode: .create)
            defer { file.close() }
            try file.write([1, 2, 3, 4], at: 0)
            try file.truncate(to: 2)
            #expect(try file.readAll() == [1, 2])
            try file.truncate(to: 4)
            #expect(try file.readAll() == [1, 2, 0, 0])
        }
    }

    @Test func renameReplacesTheDestination() throws {
        try inDirectory { directory in
            for (name, byte) in [("old", UInt8(1)), ("new", 2)] {
                let file = try fileSystem.openFile(at: "\(directory)/\(name)", mode: .createNew)
                try file.write([byte], at: 0)
                file.close()
            }
            try fileSystem.rename(directory + "/new", to: directory + "/old")
            try fileSystem.syncDirectory(at: directory)
            #expect(try fileSystem.listDirectory(directory) == ["old"])
            let file = try fileSystem.openFile(at: directory + "/old", mode: .readOnly)
            defer { file.close() }
            #expect(try file.readAll() == [2])
        }
    }

    @Test func listingIsSortedAndSkipsDotEntries() throws {
        try inDirectory { directory in
            for name in ["c", "a", "b"] { try fileSystem.openFile(at: "\(directory)/\(name)", mode: .create).close() }
            try fileSystem.createDirectory(at: directory + "/d/e")
            #expect(try fileSystem.listDirectory(directory) == ["a", "b", "c", "d"])
            #expect(try fileSystem.listDirectory(directory + "/d") == ["e"])
            try fileSystem.removeFile(at: directory + "/a")
            #expect(!fileSystem.fileExists(at: directory + "/a"))
        }
    }

    @Test func secondLockInSameProcessFailsNamingOurPid() throws {
        try inDirectory { directory in
            let path = directory + "/LOCK"
            let lock = try fileSystem.lockFile(at: path)
            let error = #expect(throws: StorageError.self) { try fileSystem.lockFile(at: path) }
            #expect(error?.code == .locked)
            #expect(error?.operation == .lock)
            #expect(error?.path == path)
            #expect(error?.lockHolder == getpid())
            lock.unlock()
            let again = try fileSystem.lockFile(at: path)
            again.unlock()
        }
    }

    @Test func openingMissingFileThrowsNotFoundWithPath() throws {
        try inDirectory { directory in
            let path = directory + "/missing"
            let error = #expect(throws: StorageError.self) { try fileSystem.openFile(at: path, mode: .readOnly) }
            #expect(error?.code == .notFound)
            #expect(error?.errno == ENOENT)
            #expect(error?.path == path)
        }
    }

    @Test func createNewOverExistingFileThrowsExists() throws {
        try inDirectory { directory in
            try fileSystem.openFile(at: directory + "/a", mode: .create).close()
            let error = #expect(throws: StorageError.self) { try fileSystem.openFile(at: directory + "/a", mode: .createNew) }
            #expect(error?.code == .exists)
        }
    }

    @Test func callsOnClosedFileThrowClosed() throws {
        try inDirectory { directory in
            let file = try fileSystem.openFile(at: directory + "/a", mode: .create)
            file.close()
            file.close()
            let error = #expect(throws: StorageError.self) { try file.write([1], at: 0) }
            #expect(error?.code == .closed)
        }
    }
}
