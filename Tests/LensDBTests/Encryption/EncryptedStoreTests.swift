import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// An encrypted store: what its files hold, and what an open with the
/// wrong key, no key, or a key for a plain store does.
@Suite struct EncryptedStoreTests {
    let path = "/secret.lensdb"

    func options(_ fileSystem: SimulatedFileSystem, key: EncryptionKey?, _ policy: RecoveryPolicy = .strict) -> StoreOptions {
        var options = StoreOptions(recovery: policy, encryptionKey: key)
        options.fileSystem = fileSystem
        options.checksInvariants = true
        options.compactionLogRatio = nil
        options.log.backgroundSyncInterval = nil
        return options
    }

    /// A store with `count` commits of a recognisable value, closed cleanly.
    @discardableResult
    func store(_ fileSystem: SimulatedFileSystem, key: EncryptionKey?, commits count: Int = 10, compacting: Bool = false) throws -> Store {
        let store = try Store(at: path, options: options(fileSystem, key: key))
        for index in 0..<count {
            try store.write { tx in tx.put(bytes("secret value \(index) " + String(repeating: "x", count: 80)), for: bytes("k\(index)"), in: "t") }
            if compacting && index == count / 2 { try store.compact() }
        }
        store.close()
        return store
    }

    @Test func encryptedStoreReopensAfterCompactionWithItsState() throws {
        let fileSystem = SimulatedFileSystem()
        let written = try store(fileSystem, key: TestKeys.first, compacting: true)
        let reopened = try Store(at: path, options: options(fileSystem, key: TestKeys.first))
        defer { reopened.close() }
        #expect(try reopened.current.everything() == written.current.everything())
        #expect(reopened.current.count(in: "t") == 10)
    }

    @Test func noPlaintextAndEveryHeaderNamesTheKey() throws {
        let fileSystem = SimulatedFileSystem()
        try store(fileSystem, key: TestKeys.first, compacting: true)
        let listing = try StoreDirectory(path: path, fileSystem: fileSystem).list()
        #expect(!listing.snapshots.isEmpty && !listing.logs.isEmpty)
        for file in listing.snapshots.map(\.path) + listing.logs.map(\.path) {
            let contents = try #require(fileSystem.contents(of: file))
            #expect(!contains(contents, bytes("secret value")), "\(file) holds plaintext")
            #expect(!contains(contents, bytes("xxxxxxxx")), "\(file) holds plaintext")
        }
        let log = try LogReader(fileSystem: fileSystem, path: listing.logs.last!.path, policy: .strict, cipher: TestKeys.first)
        #expect(log.header.version == 4)
        #expect(log.header.encryption == TestKeys.first.encryption)
        let snapshot = try SnapshotFile(fileSystem: fileSystem, path: listing.snapshots.last!.path)
        #expect(snapshot.version == 4)
        #expect(snapshot.encryption == TestKeys.first.encryption)
    }

    @Test func openWithoutKeyThrowsKeyRequiredNamingTheStoreAndKeyID() throws {
        let fileSystem = SimulatedFileSystem()
        try store(fileSystem, key: TestKeys.first)
        let before = try fileSystem.snapshotOfFiles(in: path)
        let log = try StoreDirectory(path: path, fileSystem: fileSystem).list().logs.last!.path
        #expect(throws: StoreError.encryptionKeyRequired(path: path, file: log, keyID: TestKeys.first.id)) {
            try Store(at: path, options: options(fileSystem, key: nil))
        }
        #expect(try fileSystem.snapshotOfFiles(in: path) == before, "a refused open changed a file")
    }

    @Test func openWithWrongKeyThrowsNamingFoundAndGivenKeyIDsAndChangesNothing() throws {
        let fileSystem = SimulatedFileSystem()
        try store(fileSystem, key: TestKeys.first, compacting: true)
        let before = try fileSystem.snapshotOfFiles(in: path)
        let snapshot = try StoreDirectory(path: path, fileSystem: fileSystem).list().snapshots.last!.path
        for policy in [RecoveryPolicy.strict, .salvage] {
            #expect(throws: StoreError.wrongEncryptionKey(path: path, file: snapshot, found: TestKeys.first.id, given: TestKeys.second.id)) {
                try Store(at: path, options: options(fileSystem, key: TestKeys.second, policy))
            }
        }
        // Nothing set aside as damaged, no tail cut, no marker removed.
        #expect(try fileSystem.snapshotOfFiles(in: path) == before)
        #expect("\(StoreError.wrongEncryptionKey(path: path, file: snapshot, found: TestKeys.first.id, given: TestKeys.second.id))"
            .contains("\(TestKeys.first.id)"))
    }

    @Test func plainStoreOpenedWithAKeyIsRefusedAndStaysPlain() throws {
        let fileSystem = SimulatedFileSystem()
        try store(fileSystem, key: nil)
        let before = try fileSystem.snapshotOfFiles(in: path)
        let log = try StoreDirectory(path: path, fileSystem: fileSystem).list().logs.last!.path
        #expect(throws: StoreError.notEncrypted(path: path, file: log, given: TestKeys.first.id)) {
            try Store(at: path, options: options(fileSystem, key: TestKeys.first))
        }
        #expect(try fileSystem.snapshotOfFiles(in: path) == before)
        let plain = try Store(at: path, options: options(fileSystem, key: nil))
        plain.close()
    }

    /// A chain whose logs disagree (here planted: a plain log after an
    /// encrypted one) is never read as one store, with either key or none.
    @Test func mixedChainIsRefusedWhicheverKeyIsGiven() throws {
        let fileSystem = SimulatedFileSystem()
        try store(fileSystem, key: TestKeys.first, commits: 3)
        let plain = SimulatedFileSystem()
        let other = try Store(at: path, options: options(plain, key: nil))
        for index in 0..<2 { try other.write { tx in tx.put(bytes("v\(index)"), for: bytes("p\(index)"), in: "t") } }
        other.close()
        // The plain store's only log, renamed to continue the encrypted chain.
        let plainLog = try StoreDirectory(path: path, fileSystem: plain).list().logs.last!
        let directory = StoreDirectory(path: path, fileSystem: fileSystem)
        let last = try directory.list().logs.last!.generation
        var moved = try #require(plain.contents(of: plainLog.path))
        // Its header, made to say it continues at LSN 4 of generation last + 1.
        let header = LogFileHeader(generation: last + 1, firstLSN: 4).encoded()
        overwrite(at: 0, with: header, in: &moved)
        fileSystem.setContents(moved, of: directory.logPath(generation: last + 1))
        try? fileSystem.removeFile(at: directory.closedMarkerPath)
        for key in [TestKeys.first, nil] {
            #expect(throws: (any Error).self) { try Store(at: path, options: options(fileSystem, key: key)) }
        }
        let error = try #require(throws: StoreError.self) { try Store(at: path, options: options(fileSystem, key: TestKeys.first)) }
        guard case .notEncrypted = error else { Issue.record("\(error)"); return }
    }

    /// The same LSNs written twice under one key — a tail written again by
    /// the open after a crash — and every compaction and reopen: no nonce is
    /// ever used by two envelopes.
    @Test func noncesNeverRepeatAcrossReopensRelogsCompactionsAndKeyChanges() throws {
        let fileSystem = SimulatedFileSystem()
        var seen: [[UInt8]: String] = [:]
        func collect() throws {
            for (place, nonce) in try envelopes(fileSystem) {
                if let other = seen[nonce], other != place { Issue.record("nonce \(nonce) at \(place) and \(other)") }
                seen[nonce] = place
            }
        }
        for round in 0..<3 {
            let store = try Store(at: path, options: options(fileSystem, key: TestKeys.first))
            for index in 0..<5 { try store.write(durability: .buffered) { tx in tx.put(bytes("r\(round) \(index)"), for: bytes("k\(index)"), in: "t") } }
            try collect()
            // A power cut that keeps the unsynced records: the next open writes them again.
            fileSystem.powerCut(afterMutatingCalls: 0)
            fileSystem.crash(seed: UInt64(round), model: .keepAll)
            store.close()
            let reopened = try Store(at: path, options: options(fileSystem, key: TestKeys.first))
            #expect(reopened.openStatistics.recovery.recordsReplayed > 0)
            try collect()
            try reopened.compact()
            try collect()
            try reopened.changeEncryptionKey(to: TestKeys.first)
            try collect()
            reopened.close()
        }
        #expect(seen.count > 30)
    }

    /// Every envelope in the store's logs and snapshots: where it is, and its nonce.
    func envelopes(_ fileSystem: SimulatedFileSystem) throws -> [(String, [UInt8])] {
        let listing = try StoreDirectory(path: path, fileSystem: fileSystem).list()
        var found: [(String, [UInt8])] = []
        let nonceStart = EncryptionFormat.keyIDSize, nonceEnd = nonceStart + EncryptionFormat.nonceSize
        for log in listing.logs {
            let bytes = fileSystem.contents(of: log.path)!
            guard var reader = try? LogReader(bytes: bytes, path: log.path, policy: .salvage, cipher: TestKeys.first) else { continue }
            while let record = try reader.next() {
                let stored = Int(record.offset) + LogFormat.frameHeaderSize
                found.append(("\(log.path)@\(record.offset)", Array(bytes[(stored + nonceStart)..<(stored + nonceEnd)])))
            }
        }
        for snapshot in listing.snapshots {
            let bytes = fileSystem.contents(of: snapshot.path)!
            var offset = SnapshotFormat.encryptedHeaderSize
            while offset < bytes.count - SnapshotFormat.trailerSize {
                let stored = offset + SnapshotFormat.chunkHeaderSize
                found.append(("\(snapshot.path)@\(offset)", Array(bytes[(stored + nonceStart)..<(stored + nonceEnd)])))
                offset = stored + Int(bytes[offset..<(offset + 4)].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            }
        }
        return found
    }

    @Test func encryptionKeyIsThirtyTwoBytesAndItsIDIsStable() throws {
        #expect(throws: EncryptionKeyError.wrongLength(31)) { try EncryptionKey(bytes: [UInt8](repeating: 1, count: 31)) }
        #expect(TestKeys.first.id == TestKeys.key(from: 0).id)
        #expect(TestKeys.first.id != TestKeys.second.id)
        #expect(EncryptionKey.random().id != EncryptionKey.random().id)
        // The id is a name, not the key: no run of the key's bytes is in it.
        #expect(TestKeys.first.id.rawValue != 0x0706050403020100)
    }
}

/// Whether `bytes` holds `run` anywhere.
func contains(_ bytes: [UInt8], _ run: [UInt8]) -> Bool {
    guard bytes.count >= run.count else { return false }
    return (0...(bytes.count - run.count)).contains { bytes[$0..<($0 + run.count)].elementsEqual(run) }
}
