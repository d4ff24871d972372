/// An ordered map that is persistent: every copy is a version of its own,
/// and a change copies only the nodes on its path, sharing the rest with
/// the versions before it. Indexes and typed tables keep one per committed
/// version, so a reader holding an old version sees that version's order
/// while commits go on, and a commit costs O(log n) per changed entry.
///
/// Why not swift-collections: its sorted collections are not released, and
/// `TreeDictionary` is unordered. Why a B+tree: wide nodes keep the tree
/// shallow (three levels hold a quarter million entries), binary search
/// within a node is cache-friendly, and counting each subtree gives
/// offset paging in O(log n).
///
/// Copy-on-write by node: a change first makes each node on its path unique
/// (`isKnownUniquelyReferenced`), copying only the shared ones; so a run of
/// changes inside one transaction copies each node once, then mutates it in
/// place. Not thread-safe to mutate one value from two threads (like `Array`);
/// copies may be read and changed on any threads.
///
/// - Complexity: lookup, insert and remove O(log n); iteration O(1) per element.
struct PersistentBTree<Key: Comparable & Sendable, Value: Sendable>: Sendable {
    /// The most entries a node holds before it splits. Stored nowhere;
    /// tuning only.
    static var nodeCapacity: Int { 32 }
    /// How many keys ahead of a walk `ahead` is called with: enough for
    /// the loads it starts to land before the walk gets there. Tuning only.
    static var lookahead: Int { 6 }
    /// A node emptier than this after a removal merges with a neighbour
    /// when the two fit in one node.
    static var mergeThreshold: Int { nodeCapacity / 4 }

    fileprivate typealias Node = BTreeNode<Key, Value>
    private var root: Node?

    init() {}

    /// A tree of `entries`, which must be sorted by key with no key twice:
    /// built bottom-up in O(n), with nodes three quarters full, so the
    /// inserts that follow rarely split.
    init(sorted entries: [(key: Key, value: Value)]) {
        var builder = Builder(capacity: entries.count)
        for (key, value) in entries { builder.append(key, value) }
        self = builder.tree()
    }

    /// Builds a tree from entries given one at a time in ascending key
    /// order, without an array of them all first: each goes straight into
    /// a leaf, and leaves are filled to three quarters, leaving room for
    /// inserts before a split.
    struct Builder {
        private var leaves: [Node] = []
        private var keys: [Key] = []
        private var values: [Value] = []
        private static var fill: Int { PersistentBTree.nodeCapacity * 3 / 4 }

        /// A builder for about `capacity` entries.
        init(capacity: Int) {
            leaves.reserveCapacity(capacity / Self.fill + 1)
        }

        /// Adds the entry after every one added before: its key must be
        /// greater than theirs (a tree holds no key twice).
        mutating func append(_ key: Key, _ value: Value) {
            if keys.isEmpty {
                keys.reserveCapacity(Self.fill)
                if Node.keepsValues { values.reserveCapacity(Self.fill) }
            }
            keys.append(key)
            if Node.keepsValues { values.append(value) }
            if keys.count == Self.fill {
                // The leaf holds these arrays alone from here: none is copied.
                leaves.append(Node(leafKeys: keys, values: values))
                keys = []
                values = []
            }
        }

        /// The tree of the entries added.
        consuming func tree() -> PersistentBTree {
            if !keys.isEmpty {
                // The last leaf, at its own size: a small tree is all of it.
                let exact = keys.withUnsafeBufferPointer { Array($0) }
                leaves.append(Node(leafKeys: exact, values: values.withUnsafeBufferPointer { Array($0) }))
            }
            var tree = PersistentBTree()
            guard !leaves.isEmpty else { return tree }
            var level = leaves
            while level.count > 1 {
                level = stride(from: 0, to: level.count, by: Self.fill).map { start in
                    Node(children: Array(level[start..<Swift.min(start + Self.fill, level.count)]))
                }
            }
            tree.root = level[0]
            return tree
        }
    }

    /// The number of entries.
    var count: Int { root?.total ?? 0 }

    /// The bytes the tree's nodes take on the heap, near enough: each node
    /// object and its arrays' buffers at their capacity. O(nodes), about
    /// O(count / 24). What the keys and values point to is not counted.
    var allocatedBytes: Int {
        func bytes(_ node: Node) -> Int {
            // An object header, three array references and a count; a
            // header for each array that has a buffer of its own.
            let buffers = [node.keys.capacity, node.values.capacity, node.children.capacity].filter { $0 > 0 }.count
            var total = 16 + 3 * 8 + MemoryLayout<Int>.size + buffers * 32
            total += node.keys.capacity * MemoryLayout<Key>.stride + node.values.capacity * MemoryLayout<Value>.stride
            total += node.children.capacity * MemoryLayout<Node>.stride
            return node.children.reduce(total) { $0 + bytes($1) }
        }
        return root.map(bytes) ?? 0
    }
    var isEmpty: Bool { count == 0 }

    /// The value for `key`, if any.
    ///
    /// The descent holds each node unretained: the tree holds the root,
    /// and each node its children, for as long as this call reads them, so
    /// a point read retains and releases nothing but the value it returns.
    func value(for key: Key) -> Value? {
        guard let root else { return nil }
        return withExtendedLifetime(root) {
            var node = Unmanaged.passUnretained(root)
            while let child = node._withUnsafeGuaranteedRef({ $0.isLeaf ? nil : $0.unretainedChild(for: key) }) {
                node = child
            }
            return node._withUnsafeGuaranteedRef { leaf in
                leaf.keys.withUnsafeBufferPointer { keys in
                    let index = keys.lowerBound(of: key)
                    return index < keys.count && keys[index] == key ? leaf.value(at: index) : nil
                }
            }
        }
    }

    /// Inserts or replaces the entry for `key`; returns the value replaced.
    @discardableResult
    mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        if root == nil { root = Node(leafKeys: [], values: []) }
        if !isKnownUniquelyReferenced(&root!) { root = root!.copy() }
        let (old, split, _) = root!.insert(key, value)
        if let split {
            root = Node(children: [root!, split])
        }
        return old
    }

    /// Removes the entry for `key`; returns its value.
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        // Checked once, here, so a miss copies nothing.
        guard root?.contains(key) == true else { return nil }
        return removeValue(forPresentKey: key)
    }

    /// ``removeValue(forKey:)`` in one descent where it takes two, for a
    /// caller that knows the entry is there, as an index knows the entry of
    /// a row it holds: a miss changes nothing either, but copies the nodes
    /// on the key's path first.
    @discardableResult
    mutating func removeValue(forPresentKey key: Key) -> Value? {
        guard root != nil else { return nil }
        if !isKnownUniquelyReferenced(&root!) { root = root!.copy() }
        let (old, _) = root!.remove(key)
        if root!.isLeaf {
            if root!.keys.isEmpty { root = nil }
        } else if root!.children.count == 1 {
            root = root!.children[0]
        }
        return old
    }

    /// Calls `body` with entries in ascending key order, starting at the
    /// first key for which `isBefore` is false (`isBefore` must be true for
    /// a prefix of the keys, as `key < bound` is), until `body` returns false.
    ///
    /// `ahead`, when given, is called with entries a few places before
    /// `body` reaches them, within their leaf, and in the walk's order: a
    /// walk that follows each entry to memory elsewhere (a row) starts
    /// those loads early. It may see entries past the one `body` stops at.
    func forEach(
        from isBefore: (Key) -> Bool = { _ in false }, ahead: ((Key, Value) -> Void)? = nil, _ body: (Key, Value) throws -> Bool
    ) rethrows {
        guard let root else { return }
        var stack: [(Node, Int)] = []
        var node = root
        while !node.isLeaf {
            let index = Swift.max(0, node.keys.partitionIndex(where: { !isBefore($0) }) - 1)
            stack.append((node, index))
            node = node.children[index]
        }
        var index = node.keys.partitionIndex(where: { !isBefore($0) })
        while true {
            if let ahead {
                for place in index..<Swift.min(index + Self.lookahead, node.keys.count) { ahead(node.keys[place], node.value(at: place)) }
            }
            while index < node.keys.count {
                if let ahead, index + Self.lookahead < node.keys.count { ahead(node.keys[index + Self.lookahead], node.value(at: index + Self.lookahead)) }
                guard try body(node.keys[index], node.value(at: index)) else { return }
                index += 1
            }
            // Climb to the next subtree to the right, then down to its first leaf.
            while let (parent, childIndex) = stack.popLast() {
                if childIndex + 1 < parent.children.count {
                    stack.append((parent, childIndex + 1))
                    node = parent.children[childIndex + 1]
                    while !node.isLeaf {
                        stack.append((node, 0))
                        node = node.children[0]
                    }
                    index = 0
                    break
                }
            }
            if index != 0 || node.keys.isEmpty { return }
        }
    }

    /// Calls `body` with entries in descending key order, starting at the
    /// last key for which `isAfter` is false (`isAfter` must be true for a
    /// suffix of the keys, as `key > bound` is), until `body` returns false.
    /// `ahead` as for ``forEach(from:ahead:_:)``.
    func forEachReversed(
        from isAfter: (Key) -> Bool = { _ in false }, ahead: ((Key, Value) -> Void)? = nil, _ body: (Key, Value) throws -> Bool
    ) rethrows {
        guard let root else { return }
        var stack: [(Node, Int)] = []
        var node = root
        while !node.isLeaf {
            // The last child whose first key is not after the bound.
            let index = Swift.max(0, node.keys.partitionIndex(where: { isAfter($0) }) - 1)
            stack.append((node, index))
            node = node.children[index]
        }
        var index = node.keys.partitionIndex(where: { isAfter($0) }) - 1
        while true {
            if let ahead, index >= 0 {
                for place in stride(from: index, to: Swift.max(-1, index - Self.lookahead), by: -1) { ahead(node.keys[place], node.value(at: place)) }
            }
            while index >= 0 {
                if let ahead, index >= Self.lookahead { ahead(node.keys[index - Self.lookahead], node.value(at: index - Self.lookahead)) }
                guard try body(node.keys[index], node.value(at: index)) else { return }
                index -= 1
            }
            var moved = false
            while let (parent, childIndex) = stack.popLast() {
                if childIndex > 0 {
                    stack.append((parent, childIndex - 1))
                    node = parent.children[childIndex - 1]
                    while !node.isLeaf {
                        stack.append((node, node.children.count - 1))
                        node = node.children[node.children.count - 1]
                    }
                    index = node.keys.count - 1
                    moved = true
                    break
                }
            }
            if !moved { return }
        }
    }

    /// A position in a tree that moves one entry at a time in one
    /// direction: what a walk needs when it interleaves several stretches
    /// of one tree (a merge), which ``forEach(from:ahead:_:)`` cannot.
    ///
    /// Holds its path of nodes unretained, so moving retains nothing: it is
    /// valid only while the tree it was made from is alive and unchanged
    /// (keep the tree in a `let`, or under `withExtendedLifetime`).
    struct Cursor {
        private var path: [(node: Unmanaged<BTreeNode<Key, Value>>, index: Int)] = []
        let descending: Bool

        /// Ascending: at the first entry for which `bound` is false (`bound`
        /// true for a prefix of the keys, as `key < x` is). Descending: at
        /// the last entry for which `bound` is false (`bound` true for a
        /// suffix, as `key > x` is). At the end when there is none.
        init(_ tree: PersistentBTree, descending: Bool, from bound: (Key) -> Bool) {
            self.descending = descending
            guard let root = tree.root else { return }
            var node = Unmanaged.passUnretained(root)
            while true {
                let (index, child) = node._withUnsafeGuaranteedRef { node -> (Int, Unmanaged<BTreeNode<Key, Value>>?) in
                    let split = node.keys.withUnsafeBufferPointer { keys in
                        descending ? keys.partitionIndex(where: bound) : keys.partitionIndex(where: { !bound($0) })
                    }
                    if node.isLeaf { return (descending ? split - 1 : split, nil) }
                    let index = Swift.max(0, split - 1)
                    return (index, node.children.withUnsafeBufferPointer { .passUnretained($0[index]) })
                }
                path.append((node, index))
                guard let child else { break }
                node = child
            }
            settle()
        }

        /// Ascending, at the entry of rank `rank` (0 is the smallest): one
        /// descent by the subtree counts, comparing no keys. At the end
        /// when there is none.
        init(_ tree: PersistentBTree, atRank rank: Int) {
            descending = false
            guard let root = tree.root, rank >= 0, rank < root.total else { return }
            var node = Unmanaged.passUnretained(root)
            var rest = rank
            while true {
                let (index, child) = node._withUnsafeGuaranteedRef { node -> (Int, Unmanaged<BTreeNode<Key, Value>>?) in
                    if node.isLeaf { return (rest, nil) }
                    return node.children.withUnsafeBufferPointer { children in
                        var index = 0
                        while rest >= children[index].total {
                            rest -= children[index].total
                            index += 1
                        }
                        return (index, .passUnretained(children[index]))
                    }
                }
                path.append((node, index))
                guard let child else { return }
                node = child
            }
        }

        /// The entry at the cursor; nil once it has passed the last one.
        var entry: (key: Key, value: Value)? {
            guard let (leaf, index) = path.last else { return nil }
            return leaf._withUnsafeGuaranteedRef { ($0.keys[index], $0.value(at: index)) }
        }

        /// `body` of the key at the cursor, lent (not copied); nil once the
        /// cursor has passed the last entry.
        func withKey<Result>(_ body: (Key) -> Result) -> Result? {
            guard let (leaf, index) = path.last else { return nil }
            return leaf._withUnsafeGuaranteedRef { leaf in leaf.keys.withUnsafeBufferPointer { body($0[index]) } }
        }

        /// Moves to the next entry in the cursor's direction.
        mutating func advance() {
            guard !path.isEmpty else { return }
            path[path.count - 1].index += descending ? -1 : 1
            settle()
        }

        /// From a place past its leaf's ends, climbs to the nearest ancestor
        /// with a child beyond and goes down that child's near edge; empties
        /// the path at the tree's end.
        private mutating func settle() {
            guard let (leaf, index) = path.last else { return }
            if index >= 0 && index < leaf._withUnsafeGuaranteedRef({ $0.keys.count }) { return }
            path.removeLast()
            while let (parent, childIndex) = path.popLast() {
                let next = childIndex + (descending ? -1 : 1)
                var node = parent._withUnsafeGuaranteedRef { parent -> Unmanaged<BTreeNode<Key, Value>>? in
                    next >= 0 && next < parent.children.count ? .passUnretained(parent.children[next]) : nil
                }
                guard node != nil else { continue }
                path.append((parent, next))
                while let current = node {
                    let (count, isLeaf) = current._withUnsafeGuaranteedRef { ($0.isLeaf ? $0.keys.count : $0.children.count, $0.isLeaf) }
                    let edge = descending ? count - 1 : 0
                    path.append((current, edge))
                    node = isLeaf ? nil : current._withUnsafeGuaranteedRef { .passUnretained($0.children[edge]) }
                }
                return
            }
        }
    }

    /// How many keys come before the first key for which `isBefore` is false.
    /// Descends unretained, as ``value(for:)`` does.
    func rank(of isBefore: (Key) -> Bool) -> Int {
        guard let root else { return 0 }
        return withExtendedLifetime(root) {
            var node = Unmanaged.passUnretained(root)
            var rank = 0
            while true {
                let (skipped, child) = node._withUnsafeGuaranteedRef { node -> (Int, Unmanaged<Node>?) in
                    let index = node.keys.withUnsafeBufferPointer { $0.partitionIndex(where: { !isBefore($0) }) }
                    guard !node.isLeaf else { return (index, nil) }
                    return node.children.withUnsafeBufferPointer { children in
                        let next = Swift.max(0, index - 1)
                        return (children[..<next].reduce(0) { $0 + $1.total }, .passUnretained(children[next]))
                    }
                }
                rank += skipped
                guard let child else { return rank }
                node = child
            }
        }
    }

    /// The entry at `rank` in ascending order (0 is the smallest): the
    /// descent by subtree counts that places a ``Cursor``.
    func entry(atRank rank: Int) -> (key: Key, value: Value)? {
        withExtendedLifetime(self) { Cursor(self, atRank: rank).entry }
    }

    /// The smallest and the largest key.
    var first: (key: Key, value: Value)? { entry(atRank: 0) }
    var last: (key: Key, value: Value)? { entry(atRank: count - 1) }

    /// Checks the tree's shape: keys in order, separators equal to each
    /// child's first key, counts right, every leaf at one depth, no node
    /// over capacity. `identical` tells whether a separator is its child's
    /// first key itself, beyond `==` (an index entry must point at the same
    /// row). For tests.
    func checkInvariants(identical: (Key, Key) -> Bool = { $0 == $1 }) -> String? {
        guard let root else { return nil }
        var leafDepth: Int?
        return root.check(depth: 0, leafDepth: &leafDepth, identical: identical)
    }
}

/// One node: a leaf holds keys and values; an internal node holds children
/// and, for each, its first key and its number of entries. A tree whose
/// values take no room (an index's, whose entries are its keys) keeps no
/// values array: a leaf is its keys, and copying one copies one array.
///
/// `@unchecked Sendable` is sound for the same reason `Array`'s buffer is:
/// a node is mutated only through a tree that holds the one reference to it
/// (`isKnownUniquelyReferenced` checked on every path step), so no other
/// thread, and no other version, can see a node while it changes.
///
/// The properties skip the runtime's dynamic exclusivity checks, which cost
/// more than the rest of a commit's tree work: a node is only mutated
/// through the one tree that holds it, on that tree's thread, and never
/// while another access to it is under way (the reasoning above).
final class BTreeNode<Key: Comparable & Sendable, Value: Sendable>: @unchecked Sendable {
    @exclusivity(unchecked) var keys: [Key]
    @exclusivity(unchecked) var values: [Value]
    @exclusivity(unchecked) var children: [BTreeNode]
    @exclusivity(unchecked) var total: Int
    var isLeaf: Bool { children.isEmpty }

    init(leafKeys: [Key], values: [Value]) {
        keys = leafKeys
        self.values = Self.keepsValues ? values : []
        children = []
        total = leafKeys.count
    }

    init(children: [BTreeNode]) {
        self.children = children
        keys = children.map { $0.keys[0] }
        values = []
        total = children.reduce(0) { $0 + $1.total }
    }

    private init(copying node: BTreeNode) {
        keys = node.keys
        values = node.values
        children = node.children
        total = node.total
    }

    func copy() -> BTreeNode { BTreeNode(copying: self) }

    /// Whether leaves store their values: not when a value takes no room,
    /// for then every value is the same, made when read.
    static var keepsValues: Bool { MemoryLayout<Value>.size != 0 }

    /// The value of the leaf's entry `index`.
    func value(at index: Int) -> Value {
        // A type of size 0 has one value and no bytes: any zero bytes are it.
        Self.keepsValues ? values[index] : unsafeBitCast((), to: Value.self)
    }

    /// The child whose range holds `key`.
    func childIndex(for key: Key) -> Int {
        Swift.max(0, keys.upperBound(of: key) - 1)
    }

    /// The child whose range holds `key`, unretained: valid while this node
    /// is, and holds it.
    func unretainedChild(for key: Key) -> Unmanaged<BTreeNode> {
        let index = childIndex(for: key)
        return children.withUnsafeBufferPointer { .passUnretained($0[index]) }
    }

    private func uniqueChild(_ index: Int) -> BTreeNode {
        if !isKnownUniquelyReferenced(&children[index]) { children[index] = children[index].copy() }
        return children[index]
    }

    /// Whether a replacing key is stored in place of the equal one there
    /// (see ``WholeEntryKey``).
    private static var keyIsEntry: Bool { Key.self is any WholeEntryKey.Type }

    /// Inserts; returns the value replaced, this node's new right sibling
    /// when it split, and whether its first key changed.
    ///
    /// A node writes only the arrays that change: a copied node shares its
    /// arrays' buffers with the node it came from until one is written, so
    /// a separator left alone costs neither a copy now nor a free when the
    /// older version goes.
    func insert(_ key: Key, _ value: Value) -> (Value?, BTreeNode?, firstChanged: Bool) {
        let capacity = PersistentBTree<Key, Value>.nodeCapacity
        if isLeaf {
            let index = keys.lowerBound(of: key)
            if index < keys.count && keys[index] == key {
                if Self.keyIsEntry { keys[index] = key }
                let old = self.value(at: index)
                if Self.keepsValues { values[index] = value }
                return (old, nil, Self.keyIsEntry && index == 0)
            }
            keys.insert(key, at: index)
            if Self.keepsValues { values.insert(value, at: index) }
            total += 1
            return (nil, keys.count > capacity ? splitLeaf() : nil, index == 0)
        }
        let index = childIndex(for: key)
        let child = uniqueChild(index)
        let (old, split, childFirstChanged) = child.insert(key, value)
        if old == nil { total += 1 }
        if childFirstChanged { keys[index] = child.keys[0] }
        if let split {
            children.insert(split, at: index + 1)
            keys.insert(split.keys[0], at: index + 1)
        }
        return (old, children.count > capacity ? splitInternal() : nil, childFirstChanged && index == 0)
    }

    private func splitLeaf() -> BTreeNode {
        let half = keys.count / 2
        let right = BTreeNode(leafKeys: Array(keys[half...]), values: Self.keepsValues ? Array(values[half...]) : [])
        keys.removeSubrange(half...)
        if Self.keepsValues { values.removeSubrange(half...) }
        total = keys.count
        return right
    }

    private func splitInternal() -> BTreeNode {
        let half = children.count / 2
        let right = BTreeNode(children: Array(children[half...]))
        children.removeSubrange(half...)
        keys.removeSubrange(half...)
        total -= right.total
        return right
    }

    /// Removes `key`; returns its value (nil when the subtree does not hold
    /// it, and then nothing changed) and whether this node's first key
    /// changed. The caller fixes this node's own separator in its parent
    /// and merges it when it became too small.
    func remove(_ key: Key) -> (Value?, firstChanged: Bool) {
        if isLeaf {
            let index = keys.lowerBound(of: key)
            guard index < keys.count && keys[index] == key else { return (nil, false) }
            keys.remove(at: index)
            total -= 1
            let old = value(at: index)
            if Self.keepsValues { values.remove(at: index) }
            return (old, index == 0)
        }
        let index = childIndex(for: key)
        let child = uniqueChild(index)
        let (old, childFirstChanged) = child.remove(key)
        guard old != nil else { return (nil, false) }
        total -= 1
        if child.total == 0 {
            children.remove(at: index)
            keys.remove(at: index)
            return (old, index == 0)
        }
        if childFirstChanged { keys[index] = child.keys[0] }
        // A merge appends the right node to the left one, whose first key
        // (and separator, updated above when it is this child's) stays.
        mergeIfSmall(index)
        return (old, childFirstChanged && index == 0)
    }

    /// Whether the subtree holds `key`. Descends without retaining nodes.
    func contains(_ key: Key) -> Bool {
        var node = Unmanaged.passUnretained(self)
        while !node._withUnsafeGuaranteedRef(\.isLeaf) { node = node._withUnsafeGuaranteedRef { $0.unretainedChild(for: key) } }
        return node._withUnsafeGuaranteedRef { leaf in
            let index = leaf.keys.lowerBound(of: key)
            return index < leaf.keys.count && leaf.keys[index] == key
        }
    }

    /// Merges child `index` into a neighbour when it is under the merge
    /// threshold and the two fit in one node.
    private func mergeIfSmall(_ index: Int) {
        let threshold = PersistentBTree<Key, Value>.mergeThreshold
        let capacity = PersistentBTree<Key, Value>.nodeCapacity
        let size = { (node: BTreeNode) in node.isLeaf ? node.keys.count : node.children.count }
        guard size(children[index]) < threshold, children.count > 1 else { return }
        let left = index > 0 ? index - 1 : index
        guard size(children[left]) + size(children[left + 1]) <= capacity else { return }
        let merged = uniqueChild(left)
        let right = children[left + 1]
        if merged.isLeaf {
            merged.keys += right.keys
            merged.values += right.values
        } else {
            merged.children += right.children
            merged.keys += right.keys
        }
        merged.total += right.total
        children.remove(at: left + 1)
        keys.remove(at: left + 1)
    }

    func check(depth: Int, leafDepth: inout Int?, identical: (Key, Key) -> Bool) -> String? {
        let capacity = PersistentBTree<Key, Value>.nodeCapacity
        guard zip(keys, keys.dropFirst()).allSatisfy({ $0 < $1 }) else { return "keys out of order at depth \(depth)" }
        if isLeaf {
            if let leafDepth, leafDepth != depth { return "leaves at depths \(leafDepth) and \(depth)" }
            leafDepth = depth
            guard keys.count == (Self.keepsValues ? values.count : keys.count), total == keys.count, keys.count <= capacity,
                  Self.keepsValues || values.isEmpty else { return "leaf counts wrong" }
            return nil
        }
        guard keys.count == children.count, children.count <= capacity, !children.isEmpty else { return "internal shape wrong" }
        guard total == children.reduce(0, { $0 + $1.total }) else { return "subtree count wrong at depth \(depth)" }
        for (key, child) in zip(keys, children) {
            guard !child.keys.isEmpty, identical(child.keys[0], key) else { return "separator is not the child's first key" }
            if let problem = child.check(depth: depth + 1, leafDepth: &leafDepth, identical: identical) { return problem }
        }
        return nil
    }
}

/// A tree key that is a whole entry: two keys equal by `==` may still
/// differ in what they carry, as two index entries with one key and one
/// identifier may point at different versions of the row. A tree of such
/// keys stores a replacing key in place of the equal one it holds, and
/// every separator is the very key of its child's first entry. A tree of
/// other keys keeps the key it holds, so that a copied leaf goes on
/// sharing its keys with the version it came from.
protocol WholeEntryKey {}

extension RandomAccessCollection where Index == Int, Element: Comparable {
    /// The first index whose element is not less than `key`.
    func lowerBound(of key: Element) -> Int { partitionIndex { !($0 < key) } }
    /// The first index whose element is greater than `key`.
    func upperBound(of key: Element) -> Int { partitionIndex { key < $0 } }
}

extension RandomAccessCollection where Index == Int {
    /// The first index for which `predicate` holds, given that it holds for
    /// a suffix of the elements (from `startIndex`). Binary search.
    func partitionIndex(where predicate: (Element) -> Bool) -> Int {
        var low = startIndex, high = endIndex
        while low < high {
            let middle = (low + high) / 2
            if predicate(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
