/// The key an open was given does not fit a file: a store is encrypted as a
/// whole under one key, or not at all, and every file read must agree.
///
/// Thrown before any record or chunk is decrypted, from what the file's
/// header says, so a wrong key is never mistaken for damage: nothing is cut,
/// set aside or repaired because of it. LensDB's `Store` reports these as
/// `StoreError` cases that name the store.
public enum EncryptionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file is encrypted (`found`) and no key was given.
    case keyRequired(file: String, found: FileEncryption)
    /// The file is encrypted under the key named `found`; the key given is `given`.
    case wrongKey(file: String, found: KeyID, given: KeyID)
    /// The file is not encrypted, yet a key (`given`) was: reading it would
    /// accept data no key protects.
    case notEncrypted(file: String, given: KeyID)

    /// The file the error is about.
    public var file: String {
        switch self {
        case let .keyRequired(file, _), let .wrongKey(file, _, _), let .notEncrypted(file, _): file
        }
    }

    public var description: String {
        switch self {
        case let .keyRequired(file, found):
            "\(file) is encrypted (\(found)) and no key was given; open it with the key whose id is \(found.keyID)"
        case let .wrongKey(file, found, given):
            "\(file) is encrypted with key id \(found), not with the key given (key id \(given)); open it with the key whose id is \(found)"
        case let .notEncrypted(file, given):
            "\(file) is not encrypted, but a key was given (key id \(given)); open it without a key, then change its key to encrypt it"
        }
    }

    /// Checks that a file whose header says `found` can be read with `cipher`.
    /// - Throws: the case that says why not.
    public static func check(_ found: FileEncryption?, against cipher: (any PayloadCipher)?, file: String) throws(EncryptionError) {
        switch (found, cipher) {
        case (nil, nil): return
        case let (found?, nil): throw .keyRequired(file: file, found: found)
        case let (nil, cipher?): throw .notEncrypted(file: file, given: cipher.encryption.keyID)
        case let (found?, cipher?):
            guard found == cipher.encryption else {
                throw .wrongKey(file: file, found: found.keyID, given: cipher.encryption.keyID)
            }
        }
    }
}
