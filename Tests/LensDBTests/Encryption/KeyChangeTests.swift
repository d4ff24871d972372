import LensTestSupport
import Testing
@testable import LensDB

/// `changeEncryptionKey(to:)`: encrypting, re-keying and decrypting run
/// through a compaction, and a crash at any step leaves a store that
/// exactly one of the two keys opens, with everything committed.
@Suite struct KeyChangeTests {
    let path = "/secret.lensdb"

    func options(_ fileSystem: SimulatedFileSystem, key: EncryptionKey?) -> StoreOptions {
        var options = CrashCheck.options(fileSystem)
        options.encryptionKey = key
        return options
    }

    /// A store under `key` with a snapshot and commits on both sides of it, left open.
    func openStore(_ fileSystem: SimulatedFileSystem, key: EncryptionKey?) throws -> Store {
        let store = try Store(at: path, options: options(fileSystem, key: key))
        for index in 0..<6 {
            try store.write { tx in tx.put(bytes("value \(index)"), for: bytes("k\(index)"), in: "t") }
            if index == 2 { try store.compact() }
        }
        return store
    }

    @Test(arguments: [(nil, TestKeys.first), (TestKeys.first, TestKeys.second), (TestKeys.first, nil)] as [(EncryptionKey?, EncryptionKey?)])
    func keyChangeRewritesEveryFileUnderTheNewKey(from old: EncryptionKey?, to new: EncryptionKey?) throws {
        let fileSystem = SimulatedFileSystem()
        let store = try openStore(fileSystem, key: old)
        let before = try store.current.everything()
        try store.changeEncryptionKey(to: new)
        try store.write { tx in tx.put(bytes("after"), for: bytes("later"), in: "t") }
        store.close()
        let listing = try StoreDirectory(path: path, fileSystem: fileSystem).list()
        for file in listing.snapshots.map(\.path) {
            #expect(try SnapshotFile(fileSystem: fileSystem, path: file).encryption == new?.encryption, "\(file)")
        }
        for file in listing.logs.map(\.path) {
            #expect(try LogReader(fileSystem: fileSystem, path: file, policy: .strict, cipher: new).header.encryption == new?.encryption)
        }
        if old?.id != new?.id {
            #expect(throws: StoreError.self) { try Store(at: path, options: options(fileSystem, key: old)) }
        }
        let reopened = try Store(at: path, options: options(fileSystem, key: new))
        defer { reopened.close() }
        var expected = before
        expected["table t", default: [:]][bytes("later")] = bytes("after")
        #expect(try reopened.current.everything() == expected)
    }

    /// Encrypting, re-keying and decrypting across a crash: the power is
    /// cut after every mutating call of the key change in turn, under every
    /// crash model. Each time, the store opens with the old key until the
    /// new log has its name, with the new key from then on — never with
    /// both, never with none — and holds every commit. `logtool` judges the
    /// key as the open does: the key that opens passes its check, and the
    /// other is refused naming it, so its advice never sends the user round
    /// in a circle.
    @Test(arguments: [(TestKeys.first, TestKeys.second), (nil, TestKeys.first), (TestKeys.first, nil)] as [(EncryptionKey?, EncryptionKey?)])
    func keyChangeCutAtEveryCallLeavesAStoreExactlyOneKeyOpens(from oldKey: EncryptionKey?, to newKey: EncryptionKey?) throws {
        let plan = SimulatedFileSystem()
        let store = try openStore(plan, key: oldKey)
        let expected = try store.current.everything()
        let callsBefore = plan.mutatingCallCount
        try store.changeEncryptionKey(to: newKey)
        let callsOfChange = plan.mutatingCallCount - callsBefore
        store.close()
        #expect(callsOfChange > 6)
        var sawOld = false, sawNew = false
        for cut in 0...callsOfChange {
            for (index, model) in [CrashModel.default, .tearAll, .keepAll].enumerated() {
                let fileSystem = SimulatedFileSystem()
                let store = try openStore(fileSystem, key: oldKey)
                fileSystem.powerCut(afterMutatingCalls: cut)
                // The cut may or may not meet the change; either is a case to check.
                try? store.changeEncryptionKey(to: newKey)
                store.close()
                fileSystem.crash(seed: UInt64(cut * 3 + index), model: model)
                // Each open closes before the next: the second must not meet the first's lock.
                let old = Result { try reopened(fileSystem, key: oldKey) }
                let new = Result { try reopened(fileSystem, key: newKey) }
                let opener: EncryptionKey?
                switch (old, new) {
                case (.success(let state), .failure):
                    sawOld = true
                    opener = oldKey
                    #expect(state == expected, "cut \(cut): the old key's state lost a commit")
                case (.failure, .success(let state)):
                    sawNew = true
                    opener = newKey
                    #expect(state == expected, "cut \(cut): the new key's state lost a commit")
                case (.success, .success):
                    Issue.record("cut \(cut), model \(index): both keys open the store")
                    continue
                case let (.failure(first), .failure(second)):
                    Issue.record("cut \(cut), model \(index): neither key opens the store: \(first); \(second)")
                    continue
                }
                let refused = try #require([old, new].compactMap { result -> (any Error)? in
                    if case .failure(let error) = result { error } else { nil }
                }.first)
                #expect(Self.isKeyMismatch(refused), "cut \(cut): \(refused)")
                let other = opener?.id == oldKey?.id ? newKey : oldKey
                #expect(throws: Never.self, "cut \(cut), model \(index)") {
                    try StoreInspector(path: path, fileSystem: fileSystem, key: opener).requireFittingKey()
                }
                #expect("cut \(cut), model \(index)") {
                    try StoreInspector(path: path, fileSystem: fileSystem, key: other).requireFittingKey()
                } throws: { error in
                    switch error as? InspectionError {
                    case let .keyRequired(_, keyID)?: opener?.id == keyID
                    case let .wrongKey(_, found, _)?: found == [opener?.id].compactMap { $0 }
                    case .notEncrypted?: opener == nil
                    default: false
                    }
                }
            }
        }
        #expect(sawOld && sawNew, "the cuts never reached one side of the switch")
    }

    /// Whether `error` is an open refusing a key that does not fit.
    static func isKeyMismatch(_ error: any Error) -> Bool {
        switch error as? StoreError {
        case .wrongEncryptionKey?, .encryptionKeyRequired?, .notEncrypted?: true
        default: false
        }
    }

    /// The state an open with `key` finds, read-only so that it changes no file; the store is closed again.
    func reopened(_ fileSystem: SimulatedFileSystem, key: EncryptionKey?) throws -> [String: [[UInt8]: [UInt8]]] {
        var options = options(fileSystem, key: key)
        options.readOnly = true
        let store = try Store(at: path, options: options)
        defer { store.close() }
        return try store.current.everything()
    }

    @Test func keyChangeFromInsideAWriteBlockThrowsAndChangesNothing() throws {
        let fileSystem = SimulatedFileSystem()
        let store = try openStore(fileSystem, key: TestKeys.first)
        defer { store.close() }
        #expect(throws: StoreError.reentrantWrite(path: path)) {
            try store.write { _ in try store.changeEncryptionKey(to: TestKeys.second) }
        }
        store.close()
        let reopened = try Store(at: path, options: options(fileSystem, key: TestKeys.first))
        reopened.close()
    }
}
