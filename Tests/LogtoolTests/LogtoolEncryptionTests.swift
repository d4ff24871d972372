import Foundation
import LensDB
import LensTestSupport
import Testing

/// `logtool` on encrypted stores: `--key-file` on every command, a clear
/// refusal without it, and `compact --new-key-file` / `--decrypt`.
@Suite struct LogtoolEncryptionTests {
    /// An encrypted demo store and its key file, as 64 hex digits and a newline.
    func encryptedStore(_ stores: GoldenStores, key: EncryptionKey = TestKeys.first, keyStart: UInt8 = 0) throws -> (store: String, keyFile: String) {
        let store = "\(stores.directory.path)/secret.lensdb"
        try DemoStore.write(at: store, key: key)
        return (store, try keyFile(stores, start: keyStart, name: "secret.key"))
    }

    /// A key file of the key whose bytes run from `start`, written as hex.
    func keyFile(_ stores: GoldenStores, start: UInt8, name: String) throws -> String {
        let file = "\(stores.directory.path)/\(name)"
        let hex = (0..<32).map { String(format: "%02x", start &+ UInt8($0)) }.joined() + "\n"
        try Data(hex.utf8).write(to: URL(fileURLWithPath: file))
        return file
    }

    @Test func everyCommandRefusesAnEncryptedStoreWithoutItsKeyFileAndNamesTheKeyID() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let (store, _) = try encryptedStore(stores)
        for command in [["info"], ["dump"], ["dump", "--snapshot"], ["verify"], ["compact"], ["repair", "--output", "\(stores.directory.path)/out"]] {
            let run = try logtool([command[0], store] + command.dropFirst())
            #expect(run.status == 1, "\(command): \(run.out)\(run.err)")
            #expect(run.err.contains("is encrypted (key id \(TestKeys.first.id))"), "\(command): \(run.err)")
            #expect(run.err.contains("--key-file"), "\(command): \(run.err)")
        }
        let wrong = try keyFile(stores, start: 0x20, name: "wrong.key")
        let run = try logtool("verify", store, "--key-file", wrong)
        #expect(run.status == 1)
        #expect(run.err.contains("key id \(TestKeys.first.id), not with the key given (key id \(TestKeys.second.id))"), "\(run.err)")
    }

    @Test func infoShowsTheCipherAndKeyIDAndVerifyPassesWithTheKeyFile() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let (store, key) = try encryptedStore(stores)
        let info = try logtool("info", store, "--key-file", key)
        #expect(info.status == 0, "\(info.err)")
        #expect(info.out.contains("encryption: AES-256-GCM, key id \(TestKeys.first.id)"), "\(info.out)")
        #expect(info.out.contains("format v4"), "\(info.out)")
        #expect(info.out.contains("people: 3 entries"), "\(info.out)")
        let verify = try logtool("verify", store, "--key-file", key)
        #expect(verify.status == 0, "\(verify.out)\(verify.err)")
        #expect(verify.out.hasSuffix("OK\n"))
        let dump = try logtool("dump", store, "--key-file", key, "--table", "people", "--json")
        #expect(dump.status == 0)
        #expect(dump.out.contains("\"Chloé\""), "\(dump.out)")
    }

    @Test func aPlainStoreWithAKeyFileIsRefused() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try stores.healthy()
        let key = try keyFile(stores, start: 0, name: "k.key")
        let run = try logtool("info", store, "--key-file", key)
        #expect(run.status == 1)
        #expect(run.err.contains("is not encrypted, but a key was given"), "\(run.err)")
    }

    @Test func aKeyFileThatHoldsNoKeyIsRefusedWithoutPrintingIt() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let (store, _) = try encryptedStore(stores)
        let bad = "\(stores.directory.path)/bad.key"
        try Data("not a key at all".utf8).write(to: URL(fileURLWithPath: bad))
        let run = try logtool("info", store, "--key-file", bad)
        #expect(run.status == 1)
        #expect(run.err.contains("is not a key file"), "\(run.err)")
        #expect(!run.err.contains("not a key at all"))
        let raw = "\(stores.directory.path)/raw.key"
        try Data((0..<32).map { UInt8($0) }).write(to: URL(fileURLWithPath: raw))
        #expect(try logtool("info", store, "--key-file", raw).status == 0)
    }

    /// Re-keying offline: plain → encrypted → another key → plain, each
    /// step readable with the new key only, and the state kept.
    @Test func compactWithNewKeyFileRekeysAndDecryptWritesPlain() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let store = try stores.healthy()
        let first = try keyFile(stores, start: 0, name: "first.key"), second = try keyFile(stores, start: 0x20, name: "second.key")
        let encrypt = try logtool("compact", store, "--new-key-file", first)
        #expect(encrypt.status == 0, "\(encrypt.err)")
        #expect(encrypt.out.contains("encryption: AES-256-GCM, key id \(TestKeys.first.id)"), "\(encrypt.out)")
        #expect(try logtool("info", store).status == 1)
        let rekey = try logtool("compact", store, "--key-file", first, "--new-key-file", second)
        #expect(rekey.status == 0, "\(rekey.err)")
        #expect(try logtool("info", store, "--key-file", first).status == 1)
        #expect(try logtool("verify", store, "--key-file", second).status == 0)
        let decrypt = try logtool("compact", store, "--key-file", second, "--decrypt")
        #expect(decrypt.status == 0, "\(decrypt.err)")
        #expect(decrypt.out.contains("encryption: none"), "\(decrypt.out)")
        let info = try logtool("info", store)
        #expect(info.status == 0)
        #expect(info.out.contains("people: 3 entries"), "\(info.out)")
    }

    /// An encrypted store repaired: the copy is encrypted with the same key and verifies.
    @Test func repairOfAnEncryptedStoreWritesAnEncryptedStore() throws {
        let stores = try GoldenStores()
        defer { stores.directory.remove() }
        let (store, key) = try encryptedStore(stores)
        let output = "\(stores.directory.path)/repaired.lensdb"
        let repair = try logtool("repair", store, "--key-file", key, "--output", output)
        #expect(repair.status == 0, "\(repair.err)")
        #expect(try logtool("verify", output, "--key-file", key).status == 0)
        #expect(try logtool("verify", output).status == 1)
    }
}
