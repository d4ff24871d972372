@_spi(Testing) @testable import LensLog
import LensTestSupport
import Testing

/// The worked examples of the "Encryption at rest" article, byte for byte.
/// The ciphertexts, tags and the key id were also computed by a second,
/// independent implementation (OpenSSL, through Python's `cryptography`:
/// HKDF-SHA256 and AES-256-GCM), as the article shows.
@Suite struct EncryptionArticleTests {
    @Test func articleLogExampleIsWhatTheWriterSeals() throws {
        let expected = """
            0000  4c 45 4e 53 4c 4f 47 00 04 00 00 00 01 00 00 00
            0010  01 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00
            0020  bc de b6 58 dd 12 67 6a 9a 97 51 aa 29 00 00 00
            0030  01 02 00 00 01 00 00 00 00 00 00 00 00 00 00 00
            0040  00 00 00 00 9d e8 71 2f bc de b6 58 dd 12 67 6a
            0050  ef cd ab 89 67 45 23 01 00 00 00 00 24 4b 5e 8f
            0060  de 80 ab ca d8 f3 ae 62 58 87 65 d7 ef 6d 3b 9e
            0070  96
            """
        let bytes = EncryptionArticleBytes.log()
        #expect(EncryptionArticleBytes.hexRows(bytes) == expected)
        #expect(TestKeys.first.id == KeyID(rawValue: 0x6a67_12dd_58b6_debc))
        var reader = try LogReader(bytes: bytes, path: "example.log", policy: .strict, cipher: TestKeys.first)
        #expect(try reader.next()?.payload == Array("hello".utf8))
        #expect(try reader.next() == nil)
        #expect(reader.end == .clean(offset: Int64(bytes.count)))
    }

    @Test func articleSnapshotExampleIsWhatTheWriterSeals() throws {
        let expected = """
            0000  4c 45 4e 53 53 4e 41 50 04 00 00 00 01 00 00 00
            0010  02 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00
            0020  bc de b6 58 dd 12 67 6a 08 5a 46 0c 2e 00 00 00
            0030  0a 00 00 00 06 00 00 00 48 d4 08 39 bc de b6 58
            0040  dd 12 67 6a ef cd ab 89 67 45 23 01 00 00 00 00
            0050  4d 2e 33 97 b3 b9 e3 55 b8 3a 2f d1 59 5a 33 d8
            0060  23 e0 88 34 9b e1 b9 69 d4 0b 53 4e 41 50 45 4e
            0070  44 00 01 00 00 00 00 00 00 00 02 00 00 00 00 00
            0080  00 00 cf 48 dc 56
            """
        let bytes = try EncryptionArticleBytes.snapshot()
        #expect(EncryptionArticleBytes.hexRows(bytes) == expected)
        var items: [SnapshotItem] = []
        try SnapshotFile(bytes: bytes, path: "example.snap", cipher: TestKeys.first).forEachItem { items.append($0) }
        #expect(items == [.table(id: 0, name: "t"), .entry(table: 0, key: Array("k".utf8), value: Array("v".utf8))])
    }
}
