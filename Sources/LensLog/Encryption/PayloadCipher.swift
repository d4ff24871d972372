/// An authenticated cipher (an AEAD) that seals log records and snapshot
/// chunks: LensDB's `EncryptionKey` (AES-256-GCM from swift-crypto) is the
/// one a store uses.
///
/// LensLog frames, checks and streams encrypted files without knowing how
/// they are sealed, so `logtool`, the fuzzers and the tests of the log layer
/// need no cryptography library; what it asks of a cipher is only this.
/// Nonces are LensLog's to choose (``NonceSequence``): a cipher never picks one.
///
/// Implementations must be thread-safe: one cipher seals the batches of a
/// log writer while readers open records with it on other threads.
public protocol PayloadCipher: Sendable {
    /// What the headers of the files this cipher seals say: the algorithm and
    /// the key's public id.
    var encryption: FileEncryption { get }

    /// Appends `plaintext`, encrypted, and then its 16-byte tag to `output`.
    /// - Parameters:
    ///   - nonce: 12 bytes, never used before with this key.
    ///   - associatedData: bytes the tag authenticates without encrypting.
    func seal(
        _ plaintext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, associatedData: [UInt8],
        appendingTo output: inout [UInt8])

    /// The plaintext of `ciphertext` when `tag` authenticates it with `nonce`
    /// and `associatedData` under this key; nil when it does not, whatever
    /// the reason (another key, a changed byte, another position).
    func open(
        _ ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        associatedData: [UInt8]) -> [UInt8]?
}
