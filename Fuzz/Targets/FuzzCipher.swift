// Compiled into every libFuzzer target (Fuzz/Targets/run) and into the
// seed maker (Fuzz/Targets/make-encrypted-seeds): a stand-in for the
// AES-256-GCM of LensDB's EncryptionKey, which the targets cannot link (they
// compile LensLog's sources with swiftc, without swift-crypto).
//
// It is NOT encryption: a keystream from the nonce, and a 16-byte tag of
// four CRC32C values over the associated data, nonce and ciphertext. What
// the targets fuzz is LensLog's side of encryption — header fields, the
// envelope's bounds, the associated data, the final-chunk rule, salvage —
// and for that a cipher only has to be deterministic and to reject any
// changed byte, as an AEAD does. BoringSSL's AES-GCM has fuzzers of its own.

/// The fuzz targets' deterministic AEAD stand-in.
struct FuzzCipher: PayloadCipher {
    /// "!YEKZZUF": a key id no HKDF output is likely to meet.
    let encryption = FileEncryption(algorithm: .aes256GCM, keyID: KeyID(rawValue: 0x4655_5A5A_4B45_5921))

    func seal(
        _ plaintext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, associatedData: [UInt8],
        appendingTo output: inout [UInt8]
    ) {
        let start = output.count
        let stream = Self.stream(nonce)
        for (index, byte) in plaintext.enumerated() { output.append(byte ^ Self.keystream(stream, index)) }
        let ciphertext = Array(output[start...])
        output += Self.tag(ciphertext, nonce: nonce, associatedData: associatedData)
    }

    func open(
        _ ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        associatedData: [UInt8]
    ) -> [UInt8]? {
        guard tag.count == 16, Self.tag(Array(ciphertext), nonce: nonce, associatedData: associatedData).elementsEqual(tag) else {
            return nil
        }
        let stream = Self.stream(nonce)
        return ciphertext.enumerated().map { $0.element ^ Self.keystream(stream, $0.offset) }
    }

    private static func stream(_ nonce: UnsafeRawBufferPointer) -> UInt32 {
        CRC32C.checksum(nonce, continuing: 0x5EED)
    }

    private static func keystream(_ stream: UInt32, _ index: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: (UInt32(truncatingIfNeeded: index) &* 0x9E37_79B1 ^ stream) >> 11)
    }

    private static func tag(_ ciphertext: [UInt8], nonce: UnsafeRawBufferPointer, associatedData: [UInt8]) -> [UInt8] {
        var tag: [UInt8] = []
        for seed: UInt32 in [1, 2, 3, 4] {
            var crc = CRC32C.checksum(associatedData, continuing: seed)
            crc = CRC32C.checksum(nonce, continuing: crc)
            crc = CRC32C.checksum(ciphertext, continuing: crc)
            for shift in stride(from: 0, to: 32, by: 8) { tag.append(UInt8(truncatingIfNeeded: crc >> UInt32(shift))) }
        }
        return tag
    }
}
