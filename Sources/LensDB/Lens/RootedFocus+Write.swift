extension RootedFocus {
    /// The write of every lens: computes the new root from the transaction's
    /// state, changes the state, and logs the smallest member that covers
    /// the change.
    ///
    /// 1. Nothing happens when the new value encodes as the current one
    ///    (semantic 3), or a remove finds nothing stored.
    /// 2. The change is made on a copy of the root, promoting defaults on
    ///    the way; a throw (a missing parent, `edit` itself) leaves the
    ///    transaction as it was (semantic 4).
    /// 3. The member logged is the highest one a default was promoted at,
    ///    else the lens's own, else, when a key path's coding keys cannot
    ///    be learnt, the nearest member above it whose keys are known.
    ///    When that member is an object before and after, the members that
    ///    differ inside it are logged instead, each as a patch (operation
    ///    7); else the member is one patch, or the root is set whole
    ///    (operation 3) when it is the root that did not exist.
    func write(in transaction: inout Transaction, verifying: Bool, _ edit: (Value) throws -> LensEdit<Value>) throws {
        let stored = root.load(transaction.state)
        let before = stored ?? root.default
        let current = read(before)
        var after = before
        let trace = WriteTrace()
        if stored == nil { trace.promote(0) }
        switch try edit(current) {
        case let .set(value):
            let encoder = ValueEncoder()
            guard try encoder.encode(value) != encoder.encode(current) else { return }
            try update(&after, trace) { $0 = value }
        case .remove where levels.count == 1:
            transaction.removeRoot(named: root.name)
            return
        case .remove:
            guard try levels[levels.count - 1].storedBytes(before) != nil else { return }
            try removal(&after, trace)
        }
        let (level, keys) = try loggedMember(below: trace.promoted ?? levels.count - 1, before: before, after: after)
        let value = try root.store(after, in: &transaction)
        let memberAfter = try levels[level].storedBytes(after)
        // Only an object is compared member by member; a scalar is logged as it is.
        let comparable = trace.promoted != level && memberAfter?.first == ValueTag.map.rawValue
        let memberBefore = comparable ? try levels[level].storedBytes(before) : nil
        guard let patches = try Self.patches(keys, from: memberBefore, to: memberAfter, whole: level > 0) else {
            transaction.append(.setRoot(name: root.name, value: value))
            return
        }
        for (keys, bytes) in patches {
            transaction.append(.patchRoot(name: root.name, path: keys, value: bytes.map(StoredValue.encoded)))
        }
        if verifying { try verifyPatches(patches, before: before, after: after) }
    }

    /// The most members one write logs one by one; a write that changes
    /// more of an object logs the object.
    static var patchLimit: Int { 64 }

    /// What to log for the member at `keys` that changed from `before`
    /// (nil: absent, or created by this write) to `after` (nil: removed):
    /// the members that differ inside it, when it is an object both before
    /// and after (an update of a lens on a large object logs what changed
    /// in it), else the member itself when `whole` allows it. Nil means
    /// the root itself, whole.
    static func patches(_ keys: [String], from before: [UInt8]?, to after: [UInt8]?, whole: Bool) throws -> [([String], [UInt8]?)]? {
        let isObject = { (bytes: [UInt8]?) in bytes?.first == ValueTag.map.rawValue }
        if isObject(before), isObject(after),
           let differences = try Document(decodingBinary: before!).differences(to: Document(decodingBinary: after!), limit: patchLimit) {
            return try differences.map { (keys + $0.keys, try $0.value.map { try ValueEncoder().encode($0) }) }
        }
        return whole ? [(keys, after)] : nil
    }

    /// The deepest level at or above `limit` whose object keys are known or
    /// can be learnt from this write, and those keys.
    func loggedMember(below limit: Int, before: Root, after: Root) throws -> (Int, [String]) {
        var (level, keys) = (0, [String]())
        while level < limit, let next = try learntKeys(of: level + 1, before: before, after: after) {
            keys += next
            level += 1
        }
        return (level, keys)
    }

    /// The object keys of `level` in its parent: known, or learnt now from
    /// the parent's encodings before and after the write (which exist both:
    /// the parent is above any promoted level).
    private func learntKeys(of level: Int, before: Root, after: Root) throws -> [String]? {
        if let known = Self.knownKeys(of: levels[level].component) { return known }
        guard case let .keyPath(keyPath)? = levels[level].component,
              CodingPathLearning.resolution(of: keyPath) == nil,
              let parentBefore = try levels[level - 1].storedBytes(before),
              let parentAfter = try levels[level - 1].storedBytes(after) else { return nil }
        let document = { (bytes: [UInt8]?) in try bytes.map { try Document(decodingBinary: $0) } }
        let learnt = CodingPathLearning.learn(
            keyPath, parentBefore: try Document(decodingBinary: parentBefore), parentAfter: try Document(decodingBinary: parentAfter),
            childBefore: try document(levels[level].storedBytes(before)), childAfter: try document(levels[level].storedBytes(after)))
        if case let .keys(keys)? = learnt { return keys }
        return nil
    }

    /// Checks that replay, which applies the patches to the root's
    /// document, makes what the lens holds in memory. Stores with
    /// ``StoreOptions/checksInvariants`` (tests, the crash fuzzer) run it
    /// after every write a lens logs as patches.
    private func verifyPatches(_ patches: [([String], [UInt8]?)], before: Root, after: Root) throws {
        var replayed = try Document(decodingBinary: ValueEncoder().encode(before))
        var applied = true
        for (keys, bytes) in patches {
            applied = try applied && replayed.patch(at: keys[...], to: bytes.map { try Document(decodingBinary: $0) })
        }
        let expected = try Document(decodingBinary: ValueEncoder().encode(after))
        let normalized = try applied ? Document(decodingBinary: ValueEncoder().encode(DocumentDecoder().decode(Root.self, from: replayed))) : nil
        precondition(normalized == expected,
                     "LensDB invariant violated: the patches of root \(root.name) at \(patches.map { CodingPathText(root: root.name, path: $0.0).description }) would replay to another value than the lens holds; does its type encode a property under keys that depend on its value?")
    }
}
