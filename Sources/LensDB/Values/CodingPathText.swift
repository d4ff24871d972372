/// A path inside a root document as people read it: `app.protection.enabled`,
/// with a key that is not a plain identifier quoted as a subscript:
/// `app.flags["beta-2"]`. Used by lens errors and by `logtool dump`.
struct CodingPathText: CustomStringConvertible, Sendable {
    let root: String
    let path: [String]

    init(root: String, path: some Sequence<String>) {
        self.root = root
        self.path = Array(path)
    }

    var description: String {
        path.reduce(root) { text, key in
            Self.isPlain(key) ? "\(text).\(key)" : "\(text)[\(Document.string(key).jsonString())]"
        }
    }

    /// Letters, digits and underscores, not starting with a digit.
    private static func isPlain(_ key: String) -> Bool {
        guard let first = key.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return key.unicodeScalars.allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
    }
}
