// The examples of the "Encryption at rest" article and the README, which
// quote the lines between the markers verbatim (ArticleExampleTests checks
// that they do): opening an encrypted store, what a wrong key says, and
// changing the key.
import LensDB
import LensLog
import LensTestSupport
import Testing

@Suite struct EncryptionExample {
    @Test func encryptedStoreOpensOnlyWithItsKey() throws {
        let directory = try TemporaryDirectory("encryption-example")
        defer { directory.remove() }
        let path = "\(directory.path)/secrets.lensdb"
        let keychainBytes = (0..<32).map { UInt8($0) }
        // article:begin EncryptionAtRest.md README.md
        // 32 bytes the app keeps in the Keychain (EncryptionKey.random() makes new ones).
        let key = try EncryptionKey(bytes: keychainBytes)
        let store = try Store(at: path, options: StoreOptions(encryptionKey: key))
        // article:end
        let encoder = ValueEncoder()
        try store.write { tx in tx.put(try encoder.encode("s3cret"), for: try encoder.encode("token"), in: "credentials") }
        store.close()

        // article:begin EncryptionAtRest.md
        do {
            _ = try Store(at: path, options: StoreOptions(encryptionKey: EncryptionKey.random()))
        } catch StoreError.wrongEncryptionKey(let store, let file, let found, let given) {
            print("\(store) needs key \(found), not \(given) (\(file))")
        }
        // article:end
        #expect(throws: StoreError.self) { try Store(at: path) }

        let reopened = try Store(at: path, options: StoreOptions(encryptionKey: key))
        defer { reopened.close() }
        let newKey = EncryptionKey.random()
        // article:begin EncryptionAtRest.md
        try reopened.changeEncryptionKey(to: newKey)  // next open: StoreOptions(encryptionKey: newKey)
        // article:end
        #expect(reopened.current.count(in: "credentials") == 1)
    }
}
