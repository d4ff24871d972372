extension Document {
    /// The members to set (or remove: nil) to turn this object into
    /// `other`, each as the object keys down to it: where both hold an
    /// object under a key, its members are compared in turn, so a change
    /// deep inside a large object is one small member. Keys in UTF-8 order,
    /// so equal inputs give equal lists.
    ///
    /// Nil when either is not an object, or more than `limit` members
    /// differ: a change that large is logged whole.
    /// - Complexity: O(*n*) comparisons of the members on the way, for
    ///   documents of *n* members.
    func differences(to other: Document, limit: Int) -> [(keys: [String], value: Document?)]? {
        guard case let .object(from) = self, case let .object(to) = other else { return nil }
        var found: [(keys: [String], value: Document?)] = []
        func walk(_ from: [String: Document], _ to: [String: Document], _ prefix: [String]) -> Bool {
            let keys = Set(from.keys).union(to.keys).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for key in keys where from[key] != to[key] {
                if case let .object(a)? = from[key], case let .object(b)? = to[key] {
                    guard walk(a, b, prefix + [key]) else { return false }
                    continue
                }
                found.append((prefix + [key], to[key]))
                if found.count > limit { return false }
            }
            return true
        }
        return walk(from, to, []) ? found : nil
    }
}
