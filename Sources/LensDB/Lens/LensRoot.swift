/// A root document held decoded as the type a program opened it with, so a
/// lens read is a copy and a key-path read, never a decode. Encoded when a
/// snapshot, a whole-root write or a tool asks for its bytes.
struct TypedRoot<R: Encodable & Sendable>: SelfEncodingValue {
    let value: R
    func encodedBytes() throws -> [UInt8] { try ValueEncoder().encode(value) }
}

/// The type a root was opened with (``Store/root(_:named:default:)``),
/// recorded in the state, so that a dynamic lens writing the root keeps it
/// decoded as that type, and the byte-level API cannot write it.
protocol AnyRootType: Sendable {
    var typeName: String { get }
    /// The document as this type, held decoded.
    func decode(_ document: Document) throws -> StoredValue
}

struct RootType<R: Codable & Sendable>: AnyRootType {
    var typeName: String { "\(R.self)" }
    func decode(_ document: Document) throws -> StoredValue {
        .decoded(TypedRoot(value: try DocumentDecoder().decode(R.self, from: document)))
    }
}

/// How the lenses of one root find its value in a state and put a new one
/// in a transaction: as its type (`R`), or as a ``Document``.
struct LensRoot<Root: Codable & Sendable>: Sendable {
    let name: String
    /// What the root lens reads while the root does not exist.
    let `default`: Root

    /// The root as stored in `state`; nil when it does not exist.
    func load(_ state: StoreState) -> Root? { load(state.roots[name]) }

    /// The root from its slot in a state; nil when it does not exist.
    func load(_ slot: StoredValue?) -> Root? {
        guard let stored = slot else { return nil }
        if case let .decoded(typed as TypedRoot<Root>) = stored { return typed.value }
        if Root.self == Document.self { return Self.document(of: stored) as? Root }
        // Opening the root with its type made it a TypedRoot, and every later
        // write keeps it one: only a version from before that open holds a
        // document here, decoded at each read. One that does not decode
        // (written before, and refused by the open) reads as absent.
        return try? DocumentDecoder().decode(Root.self, from: Self.document(of: stored))
    }

    /// A stored root as a document. A typed root that does not encode
    /// (nests deeper than the format allows) can be neither committed whole
    /// nor snapshotted, and those report it; a dynamic read sees `.null`.
    private static func document(of stored: StoredValue) -> Document {
        (try? StoreState.document(of: stored)) ?? .null
    }

    /// Puts `root` into the transaction's state, declaring the root a
    /// document in the value format if it was not. A document written to a
    /// root opened with a type is held as that type.
    /// - Throws: ``LensError/undecodable(path:reason:)`` when it does not
    ///   decode as the root's type; the transaction is unchanged.
    func store(_ root: Root, in transaction: inout Transaction) throws -> StoredValue {
        var value: StoredValue = .decoded(TypedRoot(value: root))
        if let document = root as? Document {
            value = .decoded(document)
            if let type = transaction.state.lensRootTypes[name] {
                do { value = try type.decode(document) } catch { throw Store.undecodable(name, error) }
            }
        }
        transaction.declareValueFormat(root: name)
        transaction.state.roots[name] = value
        return value
    }

    /// `app.protection.enabled` from a root name and a decoding error's path.
    static func path(_ root: String, _ codingPath: String) -> String {
        guard !codingPath.isEmpty else { return root }
        return codingPath.hasPrefix("[") ? root + codingPath : "\(root).\(codingPath)"
    }
}
