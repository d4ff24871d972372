/// Why a patch of a root document (``Operation/patchRoot(name:path:value:)``)
/// does not apply. LensDB never logs such a patch, so meeting one on replay
/// means the record is not what LensDB wrote.
struct PatchFailure: Error, Sendable, CustomStringConvertible {
    var description: String
}

extension StoreState {
    /// Applies a patch to the root document `name`.
    ///
    /// The document is patched as a ``Document``: the first patch of a
    /// stored root decodes it once, and the root stays a document in memory,
    /// so each later patch costs O(depth of its path) however large the root
    /// is. Splicing the encoded bytes instead would copy the whole root on
    /// every patch, which a replay of thousands of one-field updates of a
    /// large root cannot afford. The document is encoded again (keys sorted)
    /// only when a snapshot or a reader asks for its bytes.
    mutating func patchRoot(_ name: String, at path: [String], to value: StoredValue?) throws(PatchFailure) {
        guard !path.isEmpty else { throw PatchFailure(description: "a patch of root \(name) with an empty path") }
        guard rootEncodings[name] == .valueFormat else {
            throw PatchFailure(description: "a patch of root \(name), which is not a document in the value format")
        }
        // Taken out of the map while it changes, so the document is not shared.
        guard let stored = roots.removeValue(forKey: name) else {
            throw PatchFailure(description: "a patch of root \(name), which does not exist")
        }
        do {
            var document = try Self.document(of: stored)
            let member = try value.map { try Self.document(of: $0) }
            guard document.patch(at: path[...], to: member) else {
                throw PatchFailure(description: "a patch of root \(name) at \(CodingPathText(root: name, path: path)), whose parent is not an object")
            }
            roots[name] = .decoded(document)
        } catch {
            roots[name] = stored
            throw error as? PatchFailure ?? PatchFailure(description: "a patch of root \(name): \(error)")
        }
    }

    /// A stored value as a document: as it is, or decoded from its bytes.
    static func document(of value: StoredValue) throws -> Document {
        if case let .decoded(document as Document) = value { return document }
        return try Document(decodingBinary: value.bytes())
    }
}
