extension Document {
    /// The member at `path` (object keys from this value down), or nil when
    /// a key on the way is missing or a value on the way is not an object.
    ///
    /// Unlike the subscript, which reads a missing member as `.null`, this
    /// tells a missing member from a stored null.
    /// - Complexity: O(*d*) dictionary lookups for a path of *d* keys.
    public func member(at path: some Sequence<String>) -> Document? {
        var current = self
        for key in path {
            guard case let .object(entries) = current, let next = entries[key] else { return nil }
            current = next
        }
        return current
    }

    /// Sets the member at `path` to `value`, or removes it when `value` is
    /// nil: what a patch of a root document (log operation 7) does.
    ///
    /// Every key but the last must name an existing object member, and this
    /// value must be an object; a patch never creates the objects on its way,
    /// so that it applies the same on every replay or not at all. Removing a
    /// member that is absent changes nothing and succeeds.
    /// - Returns: false, with nothing changed, when the path does not lead
    ///   to a member of an object (or is empty).
    /// - Complexity: O(*d*) for a path of *d* keys when this document is not
    ///   shared: each level is changed in place.
    @discardableResult
    mutating func patch(at path: ArraySlice<String>, to value: Document?) -> Bool {
        guard let key = path.first, case var .object(entries) = self else { return false }
        // Drop this reference, so the dictionary below is changed in place.
        self = .null
        defer { self = .object(entries) }
        guard path.count > 1 else {
            if let value { entries[key] = value } else { entries.removeValue(forKey: key) }
            return true
        }
        // Taken out and put back, so the child is not shared either.
        guard var child = entries.removeValue(forKey: key) else { return false }
        defer { entries[key] = child }
        return child.patch(at: path.dropFirst(), to: value)
    }
}
