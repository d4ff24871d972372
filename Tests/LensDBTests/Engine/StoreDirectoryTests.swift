import Dispatch
import Foundation
import LensLog
import LensTestSupport
import Testing
@testable import LensDB

/// A store touches only what is its own: it refuses a folder of someone
/// else's files, removes only the temporary files it named, refuses files
/// that are not regular without blocking on them, and keeps its files as
/// private as its directory.
@Suite struct StoreDirectoryTests {
    // MARK: Whose directory

    /// By generation, then the order they were set aside (`.damaged`, `.2.`,
    /// `.10.`, not as text sorts them), never a temporary file; repair tries
    /// them with those in place, newest first, the one in place before
    /// those set aside at its generation.
    @Test func setAsideSnapshotsComeByGenerationThenByWhenTheyWereSetAside() throws {
        let names = [
            "snapshot-0000000000000002.snap.10.damaged", "snapshot-0000000000000002.snap.damaged",
            "snapshot-0000000000000003.snap.tmp.damaged", "log-0000000000000004.log.damaged",
            "snapshot-0000000000000002.snap.2.damaged", "snapshot-0000000000000001.snap.damaged",
            "snapshot-0000000000000002.snap", "snapshot-0000000000000003.snap",
        ]
        let fileSystem = SimulatedFileSystem()
        try fileSystem.createDirectory(at: "/s", permissions: nil)
        for name in names { fileSystem.setContents([1], of: "/s/\(name)") }
        let listing = try StoreDirectory(path: "/s", fileSystem: fileSystem).list()
        #expect(listing.setAside.count == names.count - 2)
        #expect(listing.setAsideSnapshots == [
            "/s/snapshot-0000000000000001.snap.damaged", "/s/snapshot-0000000000000002.snap.damaged",
            "/s/snapshot-0000000000000002.snap.2.damaged", "/s/snapshot-0000000000000002.snap.10.damaged",
        ])
        #expect(listing.snapshotsNewestFirst == [
            "/s/snapshot-0000000000000003.snap", "/s/snapshot-0000000000000002.snap",
            "/s/snapshot-0000000000000002.snap.10.damaged", "/s/snapshot-0000000000000002.snap.2.damaged",
            "/s/snapshot-0000000000000002.snap.damaged", "/s/snapshot-0000000000000001.snap.damaged",
        ])
    }

    @Test func openingAForeignDirectoryThrowsNotAStoreAndChangesNothing() throws {
        let temporary = try TemporaryDirectory("foreign")
        defer { temporary.remove() }
        let folder = try Fixtures.copyDirectory("foreign-directory", into: temporary)
        let before = try Self.contents(of: folder)
        for readOnly in [false, true] {
            var options = StoreOptions()
            options.readOnly = readOnly
            let error = #expect(throws: StoreError.self) { try Store(at: folder, options: options) }
            #expect(error == .notAStore(path: folder, foreignEntries: ["\(folder)/notes.txt", "\(folder)/report.tmp"]))
            #expect(error.map { "\($0)" }?.contains("open a new or empty directory, or set StoreOptions.adoptsNonEmptyDirectory") == true)
        }
        #expect(try Self.contents(of: folder) == before, "no lock, no marker, no file removed")
    }

    @Test func adoptingANonEmptyDirectoryLeavesItsFilesAloneAcrossReopens() throws {
        let temporary = try TemporaryDirectory("foreign")
        defer { temporary.remove() }
        let folder = try Fixtures.copyDirectory("foreign-directory", into: temporary)
        let before = try Self.contents(of: folder)
        var options = StoreOptions()
        options.adoptsNonEmptyDirectory = true
        let store = try Store(at: folder, options: options)
        try store.write { tx in tx.put([1], for: [1], in: "t") }
        try store.compact()
        store.close()
        // Adopted once, it is a store: a default open needs no option now.
        let reopened = try Store(at: folder)
        #expect(reopened.current.value(in: "t", key: [1]) != nil)
        reopened.close()
        let after = try Self.contents(of: folder)
        #expect(after.filter { before.keys.contains($0.key) } == before, "report.tmp and notes.txt kept, byte for byte")
    }

    @Test func aStoreRemovesOnlyTheTemporaryFilesItNamed() throws {
        try withTemporaryStore { path, options in
            try Store(at: path, options: options).close()
            let ours = "\(path)/snapshot-0000000000000009.snap.tmp"
            let theirs = ["report.tmp", "snapshot.tmp", "log-1.log.tmp", "x.damaged"].map { "\(path)/\($0)" }
            for file in [ours] + theirs { try Data("bytes".utf8).write(to: URL(fileURLWithPath: file)) }
            let store = try Store(at: path, options: options)
            store.close()
            #expect(!FileManager.default.fileExists(atPath: ours), "a snapshot a compaction never finished is removed")
            for file in theirs {
                #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data("bytes".utf8), "\(file) is not LensDB's to remove")
            }
        }
    }

    @Test func anEmptyDirectoryBecomesAStoreAndAFileIsNotADirectory() throws {
        let temporary = try TemporaryDirectory("empty")
        defer { temporary.remove() }
        let store = try Store(at: temporary.path)
        #expect(FileManager.default.fileExists(atPath: "\(temporary.path)/\(StoreDirectory.identityName)"))
        store.close()
        let file = "\(temporary.path)/plain-file"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        #expect(throws: StoreError.notADirectory(path: file)) { try Store(at: file) }
    }

    @Test func aStoreWrittenBeforeTheMarkerOpensAndGetsIt() throws {
        try withTemporaryStore { path, options in
            let store = try Store(at: path, options: options)
            try store.write { tx in tx.put([7], for: [7], in: "t") }
            store.close()
            let marker = "\(path)/\(StoreDirectory.identityName)"
            try FileManager.default.removeItem(atPath: marker)
            // A foreign file beside it does not make an older store foreign: its log says whose it is.
            try Data("x".utf8).write(to: URL(fileURLWithPath: "\(path)/notes.txt"))
            let reopened = try Store(at: path, options: options)
            #expect(reopened.current.value(in: "t", key: [7]) != nil)
            reopened.close()
            #expect(FileManager.default.fileExists(atPath: marker))
        }
    }

    @Test func aLockFileAmongOtherFilesIsNotAStore() throws {
        let temporary = try TemporaryDirectory("other-program")
        defer { temporary.remove() }
        // Another program's data directory: many name their lock LOCK.
        for name in ["LOCK", "CURRENT", "000003.log"] {
            try Data().write(to: URL(fileURLWithPath: "\(temporary.path)/\(name)"))
        }
        #expect(throws: StoreError.notAStore(path: temporary.path, foreignEntries: ["CURRENT", "000003.log"].sorted().map { "\(temporary.path)/\($0)" })) {
            try Store(at: temporary.path)
        }
    }

    // MARK: Files that are not regular

    /// A FIFO where a log, snapshot or marker belongs: every open, writable or
    /// read-only, fails at once with a typed error naming it, instead of
    /// blocking in `open(2)` for a writer that never comes.
    @Test(arguments: ["log-0000000000000002.log", "snapshot-0000000000000002.snap", "CLOSED"])
    func aFIFONamedLikeAStoreFileFailsEveryOpenWithoutBlocking(name: String) throws {
        try withTemporaryStore { path, options in
            let store = try Store(at: path, options: options)
            try store.write { tx in tx.put([1], for: [1], in: "t") }
            store.close()
            let fifo = "\(path)/\(name)"
            try? FileManager.default.removeItem(atPath: fifo)
            #expect(mkfifo(fifo, 0o600) == 0)
            for readOnly in [false, true] {
                var opening = options
                opening.readOnly = readOnly
                let error = try Self.withinSeconds(10, unblocking: fifo) { [opening] in try Store(at: path, options: opening) }
                let storage = try #require(error as? StorageError, "\(String(describing: error))")
                #expect(storage.code == .notRegularFile)
                #expect(storage.path == fifo)
                #expect("\(storage)".contains("is not a regular file"))
            }
        }
    }

    /// A symbolic link to nothing where the lock or a marker belongs: `O_EXCL`
    /// says it exists and following it says it does not, which once made
    /// the open (or the close, for `CLOSED`) loop forever.
    @Test(arguments: [StoreDirectory.lockName, StoreDirectory.identityName, StoreDirectory.closedMarkerName])
    func aLinkToNothingNamedLikeTheLockOrAMarkerNeverHangs(name: String) throws {
        try withTemporaryStore { path, options in
            try Store(at: path, options: options).close()
            let link = "\(path)/\(name)"
            try? FileManager.default.removeItem(atPath: link)
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/nonexistent/\(UUID())")
            let error = try Self.withinSeconds(10, unblocking: link) { [options] in
                let store = try Store(at: path, options: options)
                store.close()
                return store
            }
            if name == StoreDirectory.closedMarkerName {
                #expect(error == nil, "a marker that cannot be read or written is no marker: \(String(describing: error))")
            } else {
                #expect((error as? StorageError)?.code == .notRegularFile, "\(String(describing: error))")
            }
        }
    }

    @Test func aPathWithATrailingSlashNamesTheSameStoreWithItsMode() throws {
        let temporary = try TemporaryDirectory("slash")
        defer { temporary.remove() }
        let store = try Store(at: "\(temporary.path)/store.lensdb/")
        #expect(store.path == "\(temporary.path)/store.lensdb")
        store.close()
        #expect(try Self.mode(of: "\(temporary.path)/store.lensdb") == 0o700)
    }

    @Test func missingAncestorsGetTheProcesssDefaultModeNotTheStores() throws {
        let temporary = try TemporaryDirectory("ancestors")
        defer { temporary.remove() }
        // What mkdir gives here under this process's umask.
        let reference = "\(temporary.path)/reference"
        #expect(mkdir(reference, 0o777) == 0)
        try Store(at: "\(temporary.path)/a/b/store.lensdb").close()
        for ancestor in ["a", "a/b"] {
            #expect(try Self.mode(of: "\(temporary.path)/\(ancestor)") == Self.mode(of: reference), "\(ancestor)")
        }
        #expect(try Self.mode(of: "\(temporary.path)/a/b/store.lensdb") == 0o700)
    }

    @Test func aReadOnlyOpenOfNothingSaysThereIsNoStore() throws {
        let temporary = try TemporaryDirectory("missing")
        defer { temporary.remove() }
        var options = StoreOptions()
        options.readOnly = true
        let path = "\(temporary.path)/nothing.lensdb"
        #expect(throws: StoreError.noStore(path: path)) { try Store(at: path, options: options) }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func onlyLensDBsOwnNamesSetAsideMakeADirectoryAStore() throws {
        let temporary = try TemporaryDirectory("damaged")
        defer { temporary.remove() }
        try Data().write(to: URL(fileURLWithPath: "\(temporary.path)/log-notes.damaged"))
        #expect(throws: StoreError.notAStore(path: temporary.path, foreignEntries: ["\(temporary.path)/log-notes.damaged"])) {
            try Store(at: temporary.path)
        }
        try FileManager.default.removeItem(atPath: "\(temporary.path)/log-notes.damaged")
        try Data().write(to: URL(fileURLWithPath: "\(temporary.path)/log-0000000000000001.log.2.damaged"))
        try Store(at: temporary.path).close()
    }

    @Test func aDirectoryNamedLikeALogIsRefusedByTheFileSystemSeam() throws {
        let temporary = try TemporaryDirectory("seam")
        defer { temporary.remove() }
        let directory = "\(temporary.path)/log-0000000000000001.log"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        for mode in [FileOpenMode.readOnly, .readWrite, .create] {
            let error = #expect(throws: StorageError.self) { try POSIXFileSystem().openFile(at: directory, mode: mode) }
            #expect(error?.code == .notRegularFile, "\(mode)")
            #expect(error?.path == directory)
        }
    }

    // MARK: Permissions

    @Test func aNewStoreIsPrivateToItsOwner() throws {
        try withTemporaryStore { path, options in
            let store = try Store(at: path, options: options)
            try store.write { tx in tx.put([1], for: [1], in: "t") }
            store.close()
            #expect(try Self.mode(of: path) == 0o700)
            for name in try FileManager.default.contentsOfDirectory(atPath: path) {
                #expect(try Self.mode(of: "\(path)/\(name)") == 0o600, "\(name)")
            }
        }
    }

    @Test func anotherModeIsKeptByCompactionAndByRepair() throws {
        var options = StoreOptions()
        options.permissions = .groupReadable
        try withTemporaryStore(options) { path, options in
            let store = try Store(at: path, options: options)
            try store.write { tx in tx.put([1], for: [1], in: "t") }
            try store.compact()
            try store.write { tx in tx.put([2], for: [2], in: "t") }
            store.close()
            #expect(try Self.mode(of: path) == 0o750)
            let names = try FileManager.default.contentsOfDirectory(atPath: path)
            #expect(names.contains { $0.hasPrefix("snapshot-") }, "the compaction's snapshot is there")
            for name in names { #expect(try Self.mode(of: "\(path)/\(name)") == 0o640, "\(name)") }

            let output = path + ".repaired"
            _ = try StoreInspector(path: path).repair(to: output)
            #expect(try Self.mode(of: output) == 0o750)
            for name in try FileManager.default.contentsOfDirectory(atPath: output) {
                #expect(try Self.mode(of: "\(output)/\(name)") == 0o640, "\(name)")
            }
        }
    }

    @Test func aGroupWritableStoreKeepsSetgidThroughRepair() throws {
        var options = StoreOptions()
        options.permissions = .groupWritable
        try withTemporaryStore(options) { path, options in
            let store = try Store(at: path, options: options)
            try store.write { tx in tx.put([1], for: [1], in: "t") }
            store.close()
            #expect(try Self.mode(of: path) & 0o7777 == 0o2770)
            let output = path + ".repaired"
            _ = try StoreInspector(path: path).repair(to: output)
            #expect(try Self.mode(of: output) & 0o7777 == 0o2770, "files other members create keep the store's group")
            for name in try FileManager.default.contentsOfDirectory(atPath: output) {
                #expect(try Self.mode(of: "\(output)/\(name)") == 0o660, "\(name)")
            }
        }
    }

    @Test func aDirectoryOpenToEveryoneStillGetsNoFileOthersMayWrite() throws {
        let temporary = try TemporaryDirectory("open")
        defer { temporary.remove() }
        #expect(chmod(temporary.path, 0o777) == 0)
        let store = try Store(at: temporary.path)
        try store.write { tx in tx.put([1], for: [1], in: "t") }
        store.close()
        for name in try FileManager.default.contentsOfDirectory(atPath: temporary.path) {
            #expect(try Self.mode(of: "\(temporary.path)/\(name)") == 0o664, "\(name)")
        }
    }

    @Test func anExistingStoreKeepsItsDirectorysMode() throws {
        try withTemporaryStore { path, options in
            try Store(at: path, options: options).close()
            #expect(chmod(path, 0o755) == 0)
            var reopening = options
            reopening.permissions = .ownerOnly
            let store = try Store(at: path, options: reopening)
            try store.write { tx in tx.put([1], for: [1], in: "t") }
            store.close()
            let log = try StoreDirectory(path: path, fileSystem: POSIXFileSystem()).list().logs.last!.path
            #expect(try Self.mode(of: path) == 0o755, "an open changes no existing directory's mode")
            #expect(try Self.mode(of: log) == 0o644, "a new file follows its directory")
        }
    }

    // MARK: Helpers

    static func contents(of directory: String) throws -> [String: Data] {
        var contents: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            contents[name] = try Data(contentsOf: URL(fileURLWithPath: "\(directory)/\(name)"))
        }
        return contents
    }

    /// The permission bits of `path`, setgid included.
    static func mode(of path: String) throws -> UInt16 {
        var status = stat()
        guard stat(path, &status) == 0 else { throw StorageError(errno: errno, .list, path: path) }
        return UInt16(truncatingIfNeeded: status.st_mode) & 0o7777
    }

    /// Runs `body` on a thread of its own and returns what it threw (nil when
    /// it returned). If it is still running after `seconds`, records an issue
    /// and opens `fifo` for writing, which releases an `open(2)` blocked on it.
    static func withinSeconds(_ seconds: Int, unblocking fifo: String, _ body: @escaping @Sendable () throws -> Any) throws -> (any Error)? {
        let outcome = Locked<(any Error)??>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            do {
                _ = try body()
                outcome.withLock { $0 = .some(nil) }
            } catch {
                outcome.withLock { $0 = .some(error) }
            }
            done.signal()
        }
        if done.wait(timeout: .now() + .seconds(seconds)) == .timedOut {
            Issue.record("still blocked after \(seconds) s")
            // Releases an open(2) blocked on a FIFO; a loop that never ends is left to the process's exit.
            let writer = open(fifo, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
            _ = done.wait(timeout: .now() + .seconds(seconds))
        }
        return outcome.withLock { $0 } ?? nil
    }
}
