/// Errors of root lenses. Each names the root document and the path inside
/// it (`app.protection.enabled`), and says what to do. A lens operation that
/// throws one has changed nothing: not the memory, not the log.
public enum LensError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A write below a member that has no value, with no default on the way
    /// to promote: `path` is the missing member.
    case missingParent(path: String)
    /// The stored document (or a document a dynamic lens would write) does
    /// not decode as the root's type: `path` is where decoding failed,
    /// `reason` why. The stored bytes are untouched.
    case undecodable(path: String, reason: String)
    /// ``Lens/remove()`` on a lens whose value cannot be absent: a
    /// non-optional property.
    case notRemovable(path: String)
    /// A dynamic lens writes a member of a value that is not an object.
    case notAnObject(path: String)
    /// The root is already open with another type in this store.
    case typeMismatch(root: String, openedAs: String, requested: String)
    /// The root holds bytes of the program's own (written by
    /// ``Transaction/setRoot(_:named:)-([UInt8],String)``), not a document.
    case rawRoot(root: String)

    /// One sentence: the path, what happened, and what to do.
    public var description: String {
        switch self {
        case let .missingParent(path):
            "\(path) has no value, so nothing can be written below it, and nothing was written; set it first, or give its lens a default, which a write below it stores"
        case let .undecodable(path, reason):
            "\(path) does not decode as the root's type: \(reason); the stored document is untouched. Make a new field optional, declare it @Defaulted<Provider>, or decode it in a hand-written init(from:) with decodeIfPresent(_:forKey:) ?? default (a default value in the declaration alone does nothing: synthesized Codable ignores it); or read the root as a Document (store.root(named:)) to repair it"
        case let .notRemovable(path):
            "\(path) is not optional, so it cannot be removed, and nothing changed; set another value instead"
        case let .notAnObject(path):
            "\(path) is not an object, so it has no members to write, and nothing was written; set it to an object first"
        case let .typeMismatch(root, openedAs, requested):
            "root \(root) is open as \(openedAs) in this store, not as \(requested); use one type per root (a Document lens reads any of them)"
        case let .rawRoot(root):
            "root \(root) holds raw bytes written by setRoot(_:named:), not a document; open a lens on another root name"
        }
    }
}
