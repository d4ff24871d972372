/// Sealing and opening of one envelope, `keyID(8) nonce(12) ciphertext tag(16)`,
/// and the associated data that binds it to its place (``EncryptionFormat``).
enum Envelope {
    /// Appends the envelope of `plaintext` to `output`.
    static func seal(
        _ plaintext: UnsafeRawBufferPointer, cipher: any PayloadCipher, nonce: (salt: UInt64, counter: UInt32),
        associatedData: [UInt8], appendingTo output: inout [UInt8]
    ) {
        output.appendLittleEndian(cipher.encryption.keyID.rawValue)
        let nonceStart = output.count
        output.appendLittleEndian(nonce.salt)
        output.appendLittleEndian(nonce.counter)
        let nonceBytes = Array(output[nonceStart...])
        nonceBytes.withUnsafeBytes { nonceBytes in
            cipher.seal(plaintext, nonce: nonceBytes, associatedData: associatedData, appendingTo: &output)
        }
    }

    /// The plaintext of the envelope `stored`, or nil when it is too short,
    /// names another key, or does not authenticate.
    static func open(_ stored: UnsafeRawBufferPointer, cipher: any PayloadCipher, associatedData: [UInt8]) -> [UInt8]? {
        guard stored.count >= EncryptionFormat.envelopeOverhead,
              stored.littleEndian(at: 0, as: UInt64.self) == cipher.encryption.keyID.rawValue else { return nil }
        let nonceEnd = EncryptionFormat.keyIDSize + EncryptionFormat.nonceSize
        let tagStart = stored.count - EncryptionFormat.tagSize
        return cipher.open(
            UnsafeRawBufferPointer(rebasing: stored[nonceEnd..<tagStart]),
            tag: UnsafeRawBufferPointer(rebasing: stored[tagStart...]),
            nonce: UnsafeRawBufferPointer(rebasing: stored[EncryptionFormat.keyIDSize..<nonceEnd]),
            associatedData: associatedData)
    }

    /// The counter half of an envelope's nonce: a snapshot chunk's index,
    /// which salvage needs once damage has hidden how many chunks came before.
    static func nonceCounter(of stored: UnsafeRawBufferPointer) -> UInt32? {
        guard stored.count >= EncryptionFormat.envelopeOverhead else { return nil }
        return stored.littleEndian(at: EncryptionFormat.keyIDSize + 8, as: UInt32.self)
    }

    /// A log record's associated data: the log magic, the file's
    /// generation, and the frame header's bytes 4..<24 (type, flags,
    /// reserved, LSN, synced LSN). The length and checksum are left out:
    /// the tag covers the ciphertext's length itself, and the checksum is
    /// computed over the envelope.
    static func recordAssociatedData(generation: UInt64, frameHeader: UnsafeRawBufferPointer) -> [UInt8] {
        var data = LogFormat.magic
        data.reserveCapacity(EncryptionFormat.recordAssociatedDataSize)
        data.appendLittleEndian(generation)
        data.append(contentsOf: frameHeader[4..<24])
        return data
    }

    /// A snapshot chunk's associated data: the snapshot magic, generation,
    /// last LSN, the chunk's index from 0, and the chunk header's bytes
    /// 4..<12 (raw length, flags with ``ChunkFlags/final``, reserved).
    static func chunkAssociatedData(generation: UInt64, lastLSN: UInt64, index: UInt64, chunkHeader: UnsafeRawBufferPointer) -> [UInt8] {
        var data = SnapshotFormat.magic
        data.reserveCapacity(EncryptionFormat.chunkAssociatedDataSize)
        data.appendLittleEndian(generation)
        data.appendLittleEndian(lastLSN)
        data.appendLittleEndian(index)
        data.append(contentsOf: chunkHeader[4..<12])
        return data
    }
}
