import Crypto
import Foundation
import LensLog

/// The key a store's files are encrypted with: 32 bytes the application
/// keeps (in the Keychain, say), never stored by LensDB.
///
/// ```swift
/// let key = try EncryptionKey(bytes: keyFromKeychain)
/// var options = StoreOptions()
/// options.encryptionKey = key
/// let store = try Store(at: path, options: options)
/// ```
///
/// Log records and snapshot chunks are sealed with AES-256-GCM under a key
/// derived from these bytes with HKDF-SHA256; a second HKDF output gives
/// the key's public name, ``id``, which every encrypted file carries so that
/// an open with the wrong key fails by name (`StoreError/wrongEncryptionKey(path:file:found:given:)`).
/// The "Encryption at rest" article has the details.
///
/// Thread-safety: an immutable value; seals and opens from any thread.
public struct EncryptionKey: PayloadCipher, Sendable {
    /// What encrypted files say about this key: AES-256-GCM and ``id``.
    public let encryption: FileEncryption
    private let cipherKey: SymmetricKey

    /// The key's public name: 8 bytes of HKDF-SHA256 output, safe to print
    /// and to store; it reveals nothing about the key.
    public var id: KeyID { encryption.keyID }

    /// The number of bytes a key has.
    public static let byteCount = 32

    /// A key from the application's 32 bytes.
    /// - Throws: ``EncryptionKeyError/wrongLength(_:)`` when `bytes` are not 32.
    public init(bytes: some Collection<UInt8>) throws(EncryptionKeyError) {
        guard bytes.count == Self.byteCount else { throw .wrongLength(bytes.count) }
        let material = SymmetricKey(data: Array(bytes))
        cipherKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: material, info: EncryptionFormat.cipherKeyInfo, outputByteCount: Self.byteCount)
        let name = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: material, info: EncryptionFormat.keyIDInfo, outputByteCount: EncryptionFormat.keyIDSize)
        let id = name.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        encryption = FileEncryption(algorithm: .aes256GCM, keyID: KeyID(rawValue: UInt64(littleEndian: id)))
    }

    /// A new random key, from the system's secure random source: what an
    /// application stores (in the Keychain) the first time it creates a store.
    public static func random() -> EncryptionKey {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<byteCount).map { _ in UInt8.random(in: 0...255, using: &generator) }
        // 32 bytes are always the right length.
        return try! EncryptionKey(bytes: bytes)
    }

    /// Appends `plaintext` sealed with AES-256-GCM — ciphertext, then the
    /// 16-byte tag — to `output`. LensLog calls it with a nonce of its own
    /// choosing (`NonceSequence`), never used before under this key.
    public func seal(
        _ plaintext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, associatedData: [UInt8],
        appendingTo output: inout [UInt8]
    ) {
        // A 12-byte nonce is always valid, and sealing cannot fail otherwise:
        // LensLog hands over exactly 12 (EncryptionFormat.nonceSize).
        let box = try! AES.GCM.seal(plaintext, using: cipherKey, nonce: AES.GCM.Nonce(data: nonce), authenticating: associatedData)
        output.append(contentsOf: box.ciphertext)
        output.append(contentsOf: box.tag)
    }

    /// The plaintext of `ciphertext` when `tag` authenticates it, with
    /// `nonce` and `associatedData`, under this key; nil otherwise.
    public func open(
        _ ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        associatedData: [UInt8]
    ) -> [UInt8]? {
        // Any failure — a malformed nonce or tag, or a tag that does not
        // authenticate — means the same to the reader: not these bytes.
        guard let nonce = try? AES.GCM.Nonce(data: nonce),
              let box = try? AES.GCM.SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag),
              let plaintext = try? AES.GCM.open(box, using: cipherKey, authenticating: associatedData)
        else { return nil }
        return Array(plaintext)
    }
}

/// Why bytes cannot be an ``EncryptionKey``.
public enum EncryptionKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A key is 32 bytes; these were not.
    case wrongLength(Int)

    public var description: String {
        switch self {
        case let .wrongLength(count):
            "an encryption key is \(EncryptionKey.byteCount) bytes, not \(count); use the 32 bytes the store was created with (EncryptionKey.random() makes a new one)"
        }
    }
}
