import CLensPrefetch

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
/// `@unchecked Sendable`: the tree holds only its root node, and a node is
/// sound to share between threads for the reason `Array`'s buffer is. A
/// node is mutated only through a tree that holds the one reference to it
/// (`isKnownUniquelyReferenced` checked on every path step), so no other
/// thread, and no other version, can see a node while it changes; every
/// node reachable from a shared version is only read. Its keys and values
/// are `Sendable`. (The node, a `ManagedBuffer`, cannot say so itself.)
///
/// - Complexity: lookup, insert and remove O(log n); iteration O(1) per element.
struct PersistentBTree<Key: BTreeKey, Value: Sendable>: @unchecked Sendable {
    /// The most entries a leaf holds before it splits. Stored nowhere;
    /// tuning only.
    static var leafCapacity: Int { 32 }
    /// The most children an internal node holds before it splits.
    ///
    /// Copying a node for a change retains each child it holds, and
    /// releasing the copy it replaced releases each: a change's path costs
    /// less with fewer, and a descent more, a level more in a larger tree.
    /// A tree whose values take no room is an index, changed on every put
    /// (several times when a key moves) and read by walks: 16. A tree of
    /// values is a table's rows, changed once a put and read by point
    /// reads, a descent each: 32. Stored nowhere; tuning only.
    static var branchCapacity: Int { MemoryLayout<Value>.size == 0 ? 16 : 32 }
    /// The most a node holds before it splits: a leaf's entries or an
    /// internal node's children.
    static func capacity(isLeaf: Bool) -> Int { isLeaf ? leafCapacity : branchCapacity }
    /// How many keys ahead of a walk `ahead` is called with: enough for
    /// the loads it starts to land before the walk gets there. Tuning only.
    static var lookahead: Int { 6 }
    /// A node emptier than this after a removal merges with a neighbour
    /// when the two fit in one node.
    static func mergeThreshold(isLeaf: Bool) -> Int { capacity(isLeaf: isLeaf) / 4 }

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
    ///
    /// The leaf being filled is held as an owned `Unmanaged` reference,
    /// the one `make` gave, which the builder releases or hands on by
    /// hand: appending an entry then neither retains nor releases the
    /// leaf. `leaves` takes that reference once the leaf is full, or
    /// ``tree()`` does; a builder dropped before ``tree()`` releases it.
    /// Not copyable: two copies would each hand on the one reference.
    struct Builder: ~Copyable {
        private var leaves: [Node] = []
        /// The leaf being filled, with room for `fill` entries, and the
        /// reference to it that the builder owns.
        private var leaf: Unmanaged<Node>?
        private static var fill: Int { PersistentBTree.leafCapacity * 3 / 4 }
        /// How many children an internal node built here takes.
        private static var branchFill: Int { PersistentBTree.branchCapacity * 3 / 4 }

        /// A builder for about `capacity` entries.
        init(capacity: Int) {
            leaves.reserveCapacity(capacity / Self.fill + 1)
        }

        deinit { leaf?.release() }

        /// The leaf being filled, for tests that check it is freed with
        /// the tree built.
        var openLeaf: AnyObject? { leaf?.takeUnretainedValue() }

        /// Adds the entry after every one added before: its key must be
        /// greater than theirs (a tree holds no key twice).
        mutating func append(_ key: consuming Key, _ value: consuming Value) {
            // Moved through an optional: a closure cannot consume its captures.
            var entry = Optional((key, value))
            appendToLeaf { node in
                let (key, value) = entry.take()!
                node.append(key, value)
            }
        }

        /// ``append(_:_:)`` of a copy of the key at `place`, made in its slot:
        /// a key passed by value would be copied to pass, copied again into
        /// the leaf and the first copy destroyed, each field of an index
        /// entry outlined.
        mutating func append(copying place: UnsafePointer<Key>, _ value: consuming Value) {
            var value = Optional(value)
            appendToLeaf { $0.append(copying: place, value.take()!) }
        }

        /// Calls `add`, which appends one entry, with the leaf being filled
        /// (made first when there is none), and hands the leaf on once full.
        private mutating func appendToLeaf(_ add: (Node) -> Void) {
            let leaf = leaf ?? .passRetained(Node.make(isLeaf: true, capacity: Self.fill))
            let full = leaf._withUnsafeGuaranteedRef { node in
                add(node)
                return node.count == Self.fill
            }
            if full {
                leaves.append(leaf.takeRetainedValue())
                self.leaf = nil
            } else {
                self.leaf = leaf
            }
        }

        /// The tree of the entries added.
        consuming func tree() -> PersistentBTree {
            if let open = leaf {
                // The last leaf, at its own size: a small tree is all of it.
                var last = open.takeRetainedValue()
                Node.shrink(&last)
                leaves.append(last)
                leaf = nil
            }
            var tree = PersistentBTree()
            guard !leaves.isEmpty else { return tree }
            var level = leaves
            while level.count > 1 {
                level = stride(from: 0, to: level.count, by: Self.branchFill).map { start in
                    Node.make(children: level[start..<Swift.min(start + Self.branchFill, level.count)])
                }
            }
            tree.root = level[0]
            return tree
        }
    }

    /// The number of entries.
    var count: Int { root?.total ?? 0 }

    /// The bytes the tree's nodes take on the heap, near enough: each node
    /// with all its slots, used or not. O(nodes), about O(count / 24).
    /// What the keys and values point to is not counted.
    var allocatedBytes: Int {
        func bytes(_ node: Node) -> Int { node.children.reduce(node.allocatedBytes) { $0 + bytes($1) } }
        return root.map(bytes) ?? 0
    }
    var isEmpty: Bool { count == 0 }

    /// The root node's identity: for tests that check a change was made in
    /// place, not on a copy.
    var rootIdentity: ObjectIdentifier? { root.map(ObjectIdentifier.init) }

    /// The value for `key`, if any.
    ///
    /// The descent holds each node unretained: the tree holds the root,
    /// and each node its children, for as long as this call reads them, so
    /// a point read retains and releases nothing but the value it returns.
    func value(for key: Key) -> Value? {
        guard let (leaf, index) = leafPlace(for: key) else { return nil }
        return withExtendedLifetime(root) { leaf._withUnsafeGuaranteedRef { $0.value(at: index) } }
    }

    /// The leaf entry's place for `key`, unretained, if the tree holds it:
    /// valid while the tree lives and holds that leaf.
    private func leafPlace(for key: Key) -> (leaf: Unmanaged<Node>, index: Int)? {
        guard let root else { return nil }
        return withExtendedLifetime(root) {
            var node = Unmanaged.passUnretained(root)
            while let child = node._withUnsafeGuaranteedRef({ $0.isLeaf ? nil : $0.unretainedChild(for: key) }) {
                node = child
            }
            let index = node._withUnsafeGuaranteedRef { leaf in
                let keys = leaf.keys
                let index = keys.lowerBound(of: key)
                return index < keys.count && keys[index] == key ? index : nil
            }
            return index.map { (node, $0) }
        }
    }

    /// Inserts or replaces the entry for `key`; returns the value replaced.
    @discardableResult
    mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        if root == nil { root = Node.make(isLeaf: true, capacity: 0) }
        let (old, split, _) = Node.insert(key, value, into: &root!)
        if let split {
            root = Node.make(children: [root!, split], capacity: Node.fullCapacity(isLeaf: false))
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
        let (old, _) = Node.remove(key, from: &root!)
        if root!.isLeaf {
            if root!.count == 0 { root = nil }
        } else if root!.count == 1 {
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
        try forEachValue(descending: false, from: isBefore, ahead: ahead, body)
    }

    /// ``forEach(from:ahead:_:)`` or its reverse, the entries lent by value.
    private func forEachValue(
        descending: Bool, from bound: (Key) -> Bool, ahead: ((Key, Value) -> Void)?, _ body: (Key, Value) throws -> Bool
    ) rethrows {
        let lent: ((Node, Int) -> Void)? = ahead == nil ? nil : { leaf, place in ahead?(leaf.keys[place], leaf.value(at: place)) }
        try walk(descending: descending, from: { bound($0.pointee) }, ahead: lent) { leaf, place in
            try body(leaf.keys[place], leaf.value(at: place))
        }
    }

    /// ``forEach(from:ahead:_:)`` (or, `descending`, ``forEachReversed(from:ahead:_:)``)
    /// by place: `bound`, `ahead` and `body` read each key where it lies,
    /// valid during the call. A key passed by value to a closure is copied
    /// first (each field of an index entry, its strings retained) and
    /// destroyed after, which for a walk that reads a field or two of each
    /// entry cost more than the reading.
    func forEachPlace(
        descending: Bool, from bound: (UnsafePointer<Key>) -> Bool, ahead: ((UnsafePointer<Key>) -> Void)? = nil,
        _ body: (UnsafePointer<Key>) throws -> Bool
    ) rethrows {
        let lent: ((Node, Int) -> Void)? = ahead == nil ? nil : { leaf, place in ahead?(leaf.keys.baseAddress! + place) }
        try walk(descending: descending, from: bound, ahead: lent) { leaf, place in
            try body(leaf.keys.baseAddress! + place)
        }
    }

    /// The walk behind ``forEach(from:ahead:_:)``,
    /// ``forEachReversed(from:ahead:_:)`` and
    /// ``forEachPlace(descending:from:ahead:_:)``: `body` and `ahead` get
    /// each entry's leaf and its place there. Ascending, it starts at the
    /// first key for which `bound` (true for a prefix of the keys) is
    /// false; descending, at the last key for which `bound` (true for a
    /// suffix) is false.
    private func walk(
        descending: Bool, from bound: (UnsafePointer<Key>) -> Bool, ahead: ((Node, Int) -> Void)?,
        _ body: (Node, Int) throws -> Bool
    ) rethrows {
        guard let root else { return }
        let step = descending ? -1 : 1
        // Where the walk starts among a node's keys: ascending, the first
        // not before the bound; descending, one past the last not after it.
        func split(_ node: Node) -> Int {
            descending ? Self.partition(node, where: bound) : Self.partition(node) { !bound($0) }
        }
        var stack: [(Node, Int)] = []
        if !root.isLeaf { stack.reserveCapacity(Cursor.depthReserved) }
        var node = root
        while !node.isLeaf {
            // Ascending: the last child whose first key comes before the
            // start (the start may lie in it; if not, the walk climbs on to
            // the next). Descending: the last child whose first key is not
            // after the start. The first child when there is none.
            let index = Swift.max(0, split(node) - 1)
            stack.append((node, index))
            node = node.children[index]
        }
        var index = descending ? split(node) - 1 : split(node)
        while true {
            let keys = node.keys.indices
            if let ahead {
                for place in stride(from: index, to: index + step * Self.lookahead, by: step) where keys.contains(place) { ahead(node, place) }
            }
            while keys.contains(index) {
                if let ahead, keys.contains(index + step * Self.lookahead) { ahead(node, index + step * Self.lookahead) }
                guard try body(node, index) else { return }
                index += step
            }
            // Climb to the nearest subtree beyond, then down its near edge to a leaf.
            var moved = false
            while let (parent, childIndex) = stack.popLast() {
                let next = childIndex + step
                guard parent.children.indices.contains(next) else { continue }
                stack.append((parent, next))
                node = parent.children[next]
                while !node.isLeaf {
                    let edge = descending ? node.children.count - 1 : 0
                    stack.append((node, edge))
                    node = node.children[edge]
                }
                index = descending ? node.keys.count - 1 : 0
                moved = true
                break
            }
            if !moved { return }
        }
    }

    /// The first place among `node`'s keys for which `predicate`, asked of
    /// the key's place, holds (it must hold for a suffix of them).
    private static func partition(_ node: Node, where predicate: (UnsafePointer<Key>) -> Bool) -> Int {
        let keys = node.keys
        return keys.indices.partitionIndex { predicate(keys.baseAddress! + $0) }
    }

    /// Calls `body` with the place of each entry, in ascending key order,
    /// until it returns false: a walk of the whole tree that reads each key
    /// where it lies (valid during the call) rather than copying it out. A
    /// leaf's next sibling starts loading as the walk enters it.
    func forEachPlace(_ body: (UnsafePointer<Key>) throws -> Bool) rethrows {
        guard let root else { return }
        _ = try Self.forEachPlace(in: root, body)
    }

    private static func forEachPlace(in node: Node, _ body: (UnsafePointer<Key>) throws -> Bool) rethrows -> Bool {
        let keys = node.keys
        if node.isLeaf {
            for place in keys.indices where try !body(keys.baseAddress! + place) { return false }
            return true
        }
        let children = node.children
        for child in children.indices {
            if child + 1 < children.count { lens_prefetch_object(Unmanaged.passUnretained(children[child + 1]).toOpaque()) }
            guard try forEachPlace(in: children[child], body) else { return false }
        }
        return true
    }

    /// Calls `body` with entries in descending key order, starting at the
    /// last key for which `isAfter` is false (`isAfter` must be true for a
    /// suffix of the keys, as `key > bound` is), until `body` returns false.
    /// `ahead` as for ``forEach(from:ahead:_:)``.
    func forEachReversed(
        from isAfter: (Key) -> Bool = { _ in false }, ahead: ((Key, Value) -> Void)? = nil, _ body: (Key, Value) throws -> Bool
    ) rethrows {
        try forEachValue(descending: true, from: isAfter, ahead: ahead, body)
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
        /// Room for the path of a tree of millions of entries, made once
        /// (a cursor's, or a walk's): appending level by level would grow
        /// the array two or three times.
        fileprivate static var depthReserved: Int { 8 }
        private(set) var descending: Bool

        /// Ascending: at the first entry for which `bound` is false (`bound`
        /// true for a prefix of the keys, as `key < x` is). Descending: at
        /// the last entry for which `bound` is false (`bound` true for a
        /// suffix, as `key > x` is). At the end when there is none.
        init(_ tree: PersistentBTree, descending: Bool, from bound: (Key) -> Bool) {
            self.descending = descending
            guard let root = tree.root else { return }
            path.reserveCapacity(Self.depthReserved)
            var node = Unmanaged.passUnretained(root)
            while true {
                let (index, child) = node._withUnsafeGuaranteedRef { node -> (Int, Unmanaged<BTreeNode<Key, Value>>?) in
                    let keys = node.keys
                    let split = descending ? keys.partitionIndex(where: bound) : keys.partitionIndex(where: { !bound($0) })
                    if node.isLeaf { return (descending ? split - 1 : split, nil) }
                    let index = Swift.max(0, split - 1)
                    return (index, .passUnretained(node.children[index]))
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
            path.reserveCapacity(Self.depthReserved)
            var node = Unmanaged.passUnretained(root)
            var rest = rank
            while true {
                let (index, child) = node._withUnsafeGuaranteedRef { node -> (Int, Unmanaged<BTreeNode<Key, Value>>?) in
                    if node.isLeaf { return (rest, nil) }
                    let children = node.children
                    var index = 0
                    while rest >= children[index].total {
                        rest -= children[index].total
                        index += 1
                    }
                    return (index, .passUnretained(children[index]))
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

        /// `body` of where the key at the cursor lies, valid during the
        /// call while the tree lives unchanged; nil once the cursor has
        /// passed the last entry. A key passed by value to a closure the
        /// compiler does not inline is copied first, and an index entry's
        /// copy copies each of its fields: read through the place, only the
        /// fields read are.
        func withPlace<Result>(_ body: (UnsafePointer<Key>) -> Result) -> Result? {
            guard let (leaf, index) = path.last else { return nil }
            return leaf._withUnsafeGuaranteedRef { leaf in body(leaf.keys.baseAddress! + index) }
        }

        /// A cursor at the same entry that moves the other way.
        func turned() -> Cursor {
            var turned = self
            turned.descending.toggle()
            return turned
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
        descend(to: { isBefore($0.pointee) }) { rank, _ in rank }
    }

    /// ``rank(of:)``, asking of each key where it lies in its node: a key
    /// passed by value to a closure the descent does not inline is copied
    /// first, and an index entry's copy retains what its fields hold.
    func rank(ofPlace isBefore: (UnsafePointer<Key>) -> Bool) -> Int {
        descend(to: isBefore) { rank, _ in rank }
    }

    /// ``rank(ofPlace:)``, with the key just before that rank (`before`)
    /// or the key at it, when it lies in the leaf the descent ends in (nil
    /// otherwise, or when there is none): an end of a range, without a
    /// descent of its own. One key, not both: the other, unused, would
    /// still be copied and destroyed whenever the optimizer does not see
    /// that it is unused.
    func rankAndNeighbor(ofPlace isBefore: (UnsafePointer<Key>) -> Bool, before: Bool) -> (rank: Int, key: Key?) {
        descend(to: isBefore) { rank, leaf in
            let place = before ? leaf.index - 1 : leaf.index
            return (rank, leaf.keys.indices.contains(place) ? leaf.keys[place] : nil)
        }
    }

    /// The descent of ``rank(of:)``: `body` gets the rank, and the keys of
    /// the leaf it ends in (lent, as ``BTreeNode/keys`` lends them) with
    /// the rank's place among them; no keys for an empty tree.
    private func descend<Result>(
        to isBefore: (UnsafePointer<Key>) -> Bool, _ body: (Int, (keys: UnsafeBufferPointer<Key>, index: Int)) -> Result
    ) -> Result {
        guard let root else { return body(0, (UnsafeBufferPointer(start: nil, count: 0), 0)) }
        return withExtendedLifetime(root) {
            var node = Unmanaged.passUnretained(root)
            var rank = 0
            while true {
                let (skipped, child) = node._withUnsafeGuaranteedRef { node -> (Int, Unmanaged<Node>?) in
                    let keys = node.keys
                    var index = 0, end = keys.count
                    while index < end {
                        let middle = (index + end) / 2
                        if isBefore(keys.baseAddress! + middle) { index = middle + 1 } else { end = middle }
                    }
                    guard !node.isLeaf else { return (index, nil) }
                    let children = node.children
                    let next = Swift.max(0, index - 1)
                    return (children[..<next].reduce(0) { $0 + $1.total }, .passUnretained(children[next]))
                }
                rank += skipped
                guard let child else { return node._withUnsafeGuaranteedRef { body(rank, ($0.keys, skipped)) } }
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

/// The fixed part of a node, ahead of its slots.
struct BTreeNodeHeader {
    /// Keys held: a leaf's entries, or an internal node's children.
    var count: Int
    /// Entries in the subtree.
    var total: Int
    /// Slots allocated for keys, and for as many values or children.
    let capacity: Int
    let isLeaf: Bool
}

/// One node: a leaf holds keys and values; an internal node holds children
/// and, for each, its first key, and counts the entries below it. A tree
/// whose values take no room (an index's, whose entries are its keys) keeps
/// no values: a leaf is its keys.
///
/// A node is one allocation: the header, then its keys' slots, then its
/// values' or children's. Copying a node for a change is one allocation
/// and one pass over its slots, and a descent reads each level's keys and
/// children from the node itself, not from arrays elsewhere. A node has
/// room for as many entries as it was made with: nodes built in bulk hold
/// theirs exactly, and one that takes an entry and lacks room is made
/// again with room for a full node and the entry that splits it.
///
/// Shared between threads only as ``PersistentBTree`` says. Its slots are
/// `count` initialized keys, and as many values (a leaf whose values take
/// room) or children (an internal node): every method below keeps that,
/// and `deinit` destroys exactly those.
final class BTreeNode<Key: BTreeKey, Value: Sendable>: ManagedBuffer<BTreeNodeHeader, UInt64> {
    /// The slots of a node that takes entries: a full node's, and one more
    /// for the entry that makes it split.
    static func fullCapacity(isLeaf: Bool) -> Int { PersistentBTree<Key, Value>.capacity(isLeaf: isLeaf) + 1 }

    /// Whether leaves store their values: not when a value takes no room,
    /// for then every value is the same, made when read.
    static var keepsValues: Bool { MemoryLayout<Value>.size != 0 }

    /// Where the values' or children's slots begin, in bytes after the keys':
    /// 8-aligned, as every slot type here is at most.
    private static func tailOffset(_ capacity: Int) -> Int { (capacity * MemoryLayout<Key>.stride + 7) & ~7 }

    /// A node with no entries and room for `capacity`.
    static func make(isLeaf: Bool, capacity: Int) -> BTreeNode {
        precondition(MemoryLayout<Key>.alignment <= 8 && MemoryLayout<Value>.alignment <= 8, "a tree's keys and values align to at most 8 bytes")
        let tail = isLeaf ? (keepsValues ? MemoryLayout<Value>.stride : 0) : MemoryLayout<BTreeNode>.stride
        let bytes = tailOffset(capacity) + capacity * tail
        let node = unsafeDowncast(
            create(minimumCapacity: (bytes + 7) / 8) { _ in BTreeNodeHeader(count: 0, total: 0, capacity: capacity, isLeaf: isLeaf) },
            to: BTreeNode.self)
        node.withUnsafeMutablePointerToElements { words in
            let base = UnsafeMutableRawPointer(words)
            base.bindMemory(to: Key.self, capacity: capacity)
            if !isLeaf {
                (base + tailOffset(capacity)).bindMemory(to: BTreeNode.self, capacity: capacity)
            } else if keepsValues {
                (base + tailOffset(capacity)).bindMemory(to: Value.self, capacity: capacity)
            }
        }
        return node
    }

    /// An internal node over `children`, which must be in key order, with
    /// room for `capacity` (at least their number).
    static func make(children: some Collection<BTreeNode>, capacity: Int? = nil) -> BTreeNode {
        let node = make(isLeaf: false, capacity: capacity ?? children.count)
        for child in children { node.append(child) }
        return node
    }

    deinit {
        Key.destroy(keySlots, count: count)
        if !isLeaf {
            // Released through their addresses: the children's type, a
            // generic class's, is then never looked up.
            forEachChildAddress { Unmanaged<AnyObject>.fromOpaque($0).release() }
        } else if Self.keepsValues {
            loadValueObjectsAhead()
            valueSlots.deinitialize(count: count)
        }
    }

    /// Starts loading the objects a leaf's values refer to, when values
    /// are references (a table's rows), before the whole leaf is copied
    /// for a change or freed, which retains or releases each. Rows are
    /// seldom in cache when a batch copies most leaves, or a replaced
    /// version frees them, and one retain at a time waits for its miss
    /// before the next begins: loaded together first, the misses overlap.
    /// A hint only. (A merge copies a small neighbour's few values without
    /// it.)
    private func loadValueObjectsAhead() {
        guard Value.self is AnyObject.Type else { return }
        forEachObjectAddress(in: UnsafeRawPointer(valueSlots), stride: MemoryLayout<Value>.stride, lens_prefetch_object)
    }

    /// Starts loading the children of an internal node before it is
    /// copied for a change, which retains each: a change's path copies
    /// nodes whose children, all but the one on the path, are seldom in cache.
    /// A hint only, as ``loadValueObjectsAhead()``.
    private func loadChildrenAhead() {
        forEachChildAddress(lens_prefetch_object)
    }

    /// Calls `body` with the address of each child of an internal node,
    /// read from its slot without retaining the child.
    private func forEachChildAddress(_ body: (UnsafeRawPointer) -> Void) {
        forEachObjectAddress(in: UnsafeRawPointer(childSlots), stride: MemoryLayout<BTreeNode>.stride, body)
    }

    /// Calls `body` with the address of the object each held slot refers
    /// to, read from the slot (`stride` bytes apart from `slots`) without
    /// retaining the object. The slots must hold references.
    private func forEachObjectAddress(in slots: UnsafeRawPointer, stride: Int, _ body: (UnsafeRawPointer) -> Void) {
        for slot in 0..<count {
            body(slots.load(fromByteOffset: slot * stride, as: UnsafeRawPointer.self))
        }
    }

    // MARK: Slots

    private var head: UnsafeMutablePointer<BTreeNodeHeader> { withUnsafeMutablePointerToHeader { $0 } }
    private var base: UnsafeMutableRawPointer { UnsafeMutableRawPointer(withUnsafeMutablePointerToElements { $0 }) }
    private var keySlots: UnsafeMutablePointer<Key> { base.assumingMemoryBound(to: Key.self) }
    private var valueSlots: UnsafeMutablePointer<Value> { (base + Self.tailOffset(slots)).assumingMemoryBound(to: Value.self) }
    private var childSlots: UnsafeMutablePointer<BTreeNode> { (base + Self.tailOffset(slots)).assumingMemoryBound(to: BTreeNode.self) }

    /// Keys held: a leaf's entries, or an internal node's children.
    var count: Int { head.pointee.count }
    /// Entries in the subtree.
    var total: Int {
        get { head.pointee.total }
        set { head.pointee.total = newValue }
    }
    /// Slots allocated: the most keys the node takes before it is made again.
    var slots: Int { head.pointee.capacity }
    var isLeaf: Bool { head.pointee.isLeaf }

    /// The keys, lent: valid while the node is alive and unchanged.
    var keys: UnsafeBufferPointer<Key> { UnsafeBufferPointer(start: keySlots, count: count) }
    /// The children (none for a leaf), lent as ``keys`` is.
    var children: UnsafeBufferPointer<BTreeNode> { UnsafeBufferPointer(start: childSlots, count: isLeaf ? 0 : count) }

    /// The value of the leaf's entry `index`.
    func value(at index: Int) -> Value {
        // A type of size 0 has one value and no bytes: any zero bytes are it.
        Self.keepsValues ? valueSlots[index] : unsafeBitCast((), to: Value.self)
    }

    /// The heap the node takes, near enough: its object header, its own
    /// header and its slots, in 16-byte allocation units.
    var allocatedBytes: Int {
        let tail = isLeaf ? (Self.keepsValues ? MemoryLayout<Value>.stride : 0) : MemoryLayout<BTreeNode>.stride
        return (16 + MemoryLayout<BTreeNodeHeader>.stride + Self.tailOffset(slots) + slots * tail + 15) / 16 * 16
    }

    // MARK: Changes, on a node only its tree holds

    /// Appends a leaf entry; there must be room.
    func append(_ key: consuming Key, _ value: consuming Value) {
        insert(key, value, at: count)
    }

    /// Appends a leaf entry whose key is a copy of the one at `place`, made
    /// in its slot; there must be room.
    func append(copying place: UnsafePointer<Key>, _ value: consuming Value) {
        // `initialize(to:)` of the place's pointee copies it directly;
        // `initialize(from:count:)` goes through the runtime's array copy,
        // which looks up the key's metadata every time.
        (keySlots + count).initialize(to: place.pointee)
        if Self.keepsValues { (valueSlots + count).initialize(to: value) }
        head.pointee.count += 1
        total += 1
    }

    /// Appends a child and its first key; there must be room. Counts its entries.
    func append(_ child: BTreeNode) {
        insert(child: child, at: count)
    }

    /// Inserts a leaf entry at `index`; there must be room. Counts it.
    private func insert(_ key: consuming Key, _ value: consuming Value, at index: Int) {
        let moved = count - index
        (keySlots + index + 1).moveInitialize(from: keySlots + index, count: moved)
        (keySlots + index).initialize(to: key)
        if Self.keepsValues {
            (valueSlots + index + 1).moveInitialize(from: valueSlots + index, count: moved)
            (valueSlots + index).initialize(to: value)
        }
        head.pointee.count += 1
        total += 1
    }

    /// Inserts a child and its first key at `index`; there must be room.
    /// Counts its entries.
    private func insert(child: BTreeNode, at index: Int) {
        let moved = count - index
        (keySlots + index + 1).moveInitialize(from: keySlots + index, count: moved)
        (keySlots + index).initialize(to: child.keySlots[0])
        (childSlots + index + 1).moveInitialize(from: childSlots + index, count: moved)
        (childSlots + index).initialize(to: child)
        head.pointee.count += 1
        total += child.total
    }

    /// Removes the leaf entry at `index`; returns its value. Uncounts it.
    private func removeEntry(at index: Int) -> Value {
        let moved = count - index - 1
        (keySlots + index).deinitialize(count: 1)
        (keySlots + index).moveInitialize(from: keySlots + index + 1, count: moved)
        let value: Value
        if Self.keepsValues {
            value = (valueSlots + index).move()
            (valueSlots + index).moveInitialize(from: valueSlots + index + 1, count: moved)
        } else {
            value = unsafeBitCast((), to: Value.self)
        }
        head.pointee.count -= 1
        total -= 1
        return value
    }

    /// Removes the child at `index` and its key, without uncounting its entries.
    private func removeChild(at index: Int) {
        (keySlots + index).deinitialize(count: 1)
        (keySlots + index).moveInitialize(from: keySlots + index + 1, count: count - index - 1)
        (childSlots + index).deinitialize(count: 1)
        (childSlots + index).moveInitialize(from: childSlots + index + 1, count: count - index - 1)
        head.pointee.count -= 1
    }

    /// A node like this one with room for `capacity`: its keys and values
    /// or children copied (retained), or moved when `moving`, which leaves
    /// this node empty.
    private func remade(capacity: Int, moving: Bool) -> BTreeNode {
        // A copy retains each child or row: their loads start first, to
        // overlap the new node's allocation and the keys' copy.
        if !moving {
            if isLeaf { loadValueObjectsAhead() } else { loadChildrenAhead() }
        }
        let node = Self.make(isLeaf: isLeaf, capacity: capacity)
        let count = count
        if moving {
            node.keySlots.moveInitialize(from: keySlots, count: count)
            if !isLeaf {
                node.childSlots.moveInitialize(from: childSlots, count: count)
            } else if Self.keepsValues {
                node.valueSlots.moveInitialize(from: valueSlots, count: count)
            }
            head.pointee.count = 0
        } else {
            node.keySlots.copyInitialize(from: keySlots, count: count)
            if !isLeaf {
                node.childSlots.copyInitialize(from: childSlots, count: count)
            } else if Self.keepsValues {
                node.valueSlots.copyInitialize(from: valueSlots, count: count)
            }
        }
        node.head.pointee.count = count
        node.total = total
        return node
    }

    /// Makes `node` one only its tree holds, with room for `room` more
    /// entries: a node another version shares is copied (its entries
    /// retained), and one without the room is made again with more, its
    /// entries moved when it is not shared. Room grows by doubling, from 4
    /// up to a full node's, so a small tree stays small.
    static func makeUnique(_ node: inout BTreeNode, room: Int) {
        let needed = node.count + room
        let grown = Swift.min(fullCapacity(isLeaf: node.isLeaf), Swift.max(4, 2 * node.slots))
        let capacity = needed <= node.slots ? node.slots : Swift.max(needed, grown)
        if isKnownUniquelyReferenced(&node) {
            if capacity != node.slots { node = node.remade(capacity: capacity, moving: true) }
        } else {
            node = node.remade(capacity: capacity, moving: false)
        }
    }

    /// Makes `node`, which only its builder holds, take no more room than
    /// its entries.
    static func shrink(_ node: inout BTreeNode) {
        if node.count < node.slots { node = node.remade(capacity: node.count, moving: true) }
    }

    /// The child whose range holds `key`.
    func childIndex(for key: Key) -> Int {
        Swift.max(0, keys.upperBound(of: key) - 1)
    }

    /// The child whose range holds `key`, unretained: valid while this node
    /// is, and holds it.
    func unretainedChild(for key: Key) -> Unmanaged<BTreeNode> {
        .passUnretained(childSlots[childIndex(for: key)])
    }

    /// Inserts into the subtree at `node`, made unique on the way down;
    /// returns the value replaced, the node's new right sibling when it
    /// split, and whether its first key changed.
    static func insert(_ key: Key, _ value: Value, into node: inout BTreeNode) -> (Value?, BTreeNode?, firstChanged: Bool) {
        let capacity = PersistentBTree<Key, Value>.capacity(isLeaf: node.isLeaf)
        if node.isLeaf {
            let index = node.keys.lowerBound(of: key)
            if index < node.count && node.keySlots[index] == key {
                makeUnique(&node, room: 0)
                if Key.isWholeEntry { node.keySlots[index] = key }
                let old = node.value(at: index)
                if keepsValues { node.valueSlots[index] = value }
                return (old, nil, Key.isWholeEntry && index == 0)
            }
            makeUnique(&node, room: 1)
            node.insert(key, value, at: index)
            return (nil, node.count > capacity ? node.split() : nil, index == 0)
        }
        makeUnique(&node, room: 0)
        let index = node.childIndex(for: key)
        let (old, split, childFirstChanged) = insert(key, value, into: &node.childSlots[index])
        if old == nil { node.total += 1 }
        if childFirstChanged { node.keySlots[index] = node.childSlots[index].keySlots[0] }
        if let split {
            makeUnique(&node, room: 1)
            node.total -= split.total
            node.insert(child: split, at: index + 1)
        }
        return (old, node.count > capacity ? node.split() : nil, childFirstChanged && index == 0)
    }

    /// Moves the upper half of this node's slots into a new right sibling,
    /// with room to take entries; returns it.
    private func split() -> BTreeNode {
        let half = count / 2, moved = count - half
        let right = Self.make(isLeaf: isLeaf, capacity: Self.fullCapacity(isLeaf: isLeaf))
        right.keySlots.moveInitialize(from: keySlots + half, count: moved)
        right.head.pointee.count = moved
        head.pointee.count = half
        if !isLeaf {
            right.childSlots.moveInitialize(from: childSlots + half, count: moved)
            right.total = right.children.reduce(0) { $0 + $1.total }
        } else {
            if Self.keepsValues { right.valueSlots.moveInitialize(from: valueSlots + half, count: moved) }
            right.total = moved
        }
        total -= right.total
        return right
    }

    /// Removes `key` from the subtree at `node`, made unique on the way
    /// down; returns its value (nil when the subtree does not hold it, and
    /// then nothing changed but the copies) and whether the node's first key
    /// changed. The caller fixes the node's own separator in its parent and
    /// merges it when it became too small.
    static func remove(_ key: Key, from node: inout BTreeNode) -> (Value?, firstChanged: Bool) {
        if node.isLeaf {
            let index = node.keys.lowerBound(of: key)
            guard index < node.count && node.keySlots[index] == key else { return (nil, false) }
            makeUnique(&node, room: 0)
            return (node.removeEntry(at: index), index == 0)
        }
        makeUnique(&node, room: 0)
        let index = node.childIndex(for: key)
        let (old, childFirstChanged) = remove(key, from: &node.childSlots[index])
        guard old != nil else { return (nil, false) }
        node.total -= 1
        if node.childSlots[index].total == 0 {
            node.removeChild(at: index)
            return (old, index == 0)
        }
        if childFirstChanged { node.keySlots[index] = node.childSlots[index].keySlots[0] }
        // A merge appends the right node to the left one, whose first key
        // (and separator, updated above when it is this child's) stays.
        node.mergeIfSmall(index)
        return (old, childFirstChanged && index == 0)
    }

    /// Whether the subtree holds `key`. Descends without retaining nodes.
    func contains(_ key: Key) -> Bool {
        var node = Unmanaged.passUnretained(self)
        while !node._withUnsafeGuaranteedRef(\.isLeaf) { node = node._withUnsafeGuaranteedRef { $0.unretainedChild(for: key) } }
        return node._withUnsafeGuaranteedRef { leaf in
            let index = leaf.keys.lowerBound(of: key)
            return index < leaf.count && leaf.keySlots[index] == key
        }
    }

    /// Merges child `index` into a neighbour when it is under the merge
    /// threshold and the two fit in one node.
    private func mergeIfSmall(_ index: Int) {
        let childrenAreLeaves = childSlots[index].isLeaf
        let threshold = PersistentBTree<Key, Value>.mergeThreshold(isLeaf: childrenAreLeaves)
        let capacity = PersistentBTree<Key, Value>.capacity(isLeaf: childrenAreLeaves)
        guard childSlots[index].count < threshold, count > 1 else { return }
        let left = index > 0 ? index - 1 : index
        let rightCount = childSlots[left + 1].count
        guard childSlots[left].count + rightCount <= capacity else { return }
        Self.makeUnique(&childSlots[left], room: rightCount)
        let merged = childSlots[left], right = childSlots[left + 1]
        // The right node may be shared with older versions: its slots are
        // copied, not moved.
        let start = merged.count
        (merged.keySlots + start).copyInitialize(from: right.keySlots, count: rightCount)
        if !merged.isLeaf {
            (merged.childSlots + start).copyInitialize(from: right.childSlots, count: rightCount)
        } else if Self.keepsValues {
            (merged.valueSlots + start).copyInitialize(from: right.valueSlots, count: rightCount)
        }
        merged.head.pointee.count += rightCount
        merged.total += right.total
        removeChild(at: left + 1)
    }

    func check(depth: Int, leafDepth: inout Int?, identical: (Key, Key) -> Bool) -> String? {
        let capacity = PersistentBTree<Key, Value>.capacity(isLeaf: isLeaf)
        guard count <= slots else { return "more keys than slots at depth \(depth)" }
        guard zip(keys, keys.dropFirst()).allSatisfy({ $0 < $1 }) else { return "keys out of order at depth \(depth)" }
        if isLeaf {
            if let leafDepth, leafDepth != depth { return "leaves at depths \(leafDepth) and \(depth)" }
            leafDepth = depth
            guard total == count, count <= capacity else { return "leaf counts wrong" }
            return nil
        }
        guard count <= capacity, count > 0 else { return "internal shape wrong" }
        guard total == children.reduce(0, { $0 + $1.total }) else { return "subtree count wrong at depth \(depth)" }
        for (key, child) in zip(keys, children) {
            guard child.count > 0, identical(child.keySlots[0], key) else { return "separator is not the child's first key" }
            if let problem = child.check(depth: depth + 1, leafDepth: &leafDepth, identical: identical) { return problem }
        }
        return nil
    }
}

extension UnsafeMutablePointer {
    /// Initializes `count` slots with copies of `source`'s, one at a time:
    /// compiled for the slots' type, where `initialize(from:count:)` copies
    /// through the runtime, which calls the type's copy function for each.
    /// A node copied for a change copies its slots with this.
    @inline(__always)
    fileprivate func copyInitialize(from source: UnsafeMutablePointer<Pointee>, count: Int) {
        for index in 0..<count { (self + index).initialize(to: source[index]) }
    }
}

/// What a ``PersistentBTree`` is keyed by.
///
/// A node's `deinit`, as any generic class's, runs unspecialized: there,
/// destroying its keys one by one would go through the key type's value
/// witnesses, a call and a lookup per key, and freeing the nodes a commit
/// replaced is mostly that. ``destroy(_:count:)`` is dispatched once a node
/// and, for the conformances in this module, runs code compiled for the
/// key type.
protocol BTreeKey: Comparable, Sendable {
    /// Deinitializes the `count` keys at `keys`: initialized on entry,
    /// each destroyed exactly once, and left uninitialized, as
    /// `keys.deinitialize(count: count)` would leave them.
    static func destroy(_ keys: UnsafeMutablePointer<Self>, count: Int)

    /// Whether the key is a whole entry (``WholeEntryKey``). A requirement,
    /// not a cast: code compiled for the key type reads a constant, where
    /// `is any WholeEntryKey.Type` asked the runtime's conformance table on
    /// every put that replaced an equal key.
    static var isWholeEntry: Bool { get }
}

extension BTreeKey {
    static var isWholeEntry: Bool { false }

    // One key at a time: `deinitialize(count:)` hands the whole run to the
    // runtime, which destroys each key through its value witness.
    static func destroy(_ keys: UnsafeMutablePointer<Self>, count: Int) {
        for slot in 0..<count { _ = (keys + slot).move() }
    }
}

extension Int64: BTreeKey {}
extension IndexValue: BTreeKey {}

/// A tree key that is a whole entry: two keys equal by `==` may still
/// differ in what they carry, as two index entries with one key and one
/// identifier may point at different versions of the row. A tree of such
/// keys stores a replacing key in place of the equal one it holds, and
/// every separator is the very key of its child's first entry. A tree of
/// other keys keeps the key it holds, so that a copied leaf goes on
/// sharing its keys with the version it came from.
protocol WholeEntryKey: BTreeKey {}

extension WholeEntryKey {
    static var isWholeEntry: Bool { true }
}

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

extension PersistentBTree where Value: AnyObject {
    /// ``value(for:)``, lent rather than returned: the value unretained,
    /// valid while this tree lives unchanged (or anything else holds the
    /// value); a change made in place may free it. A
    /// point read that only looks at the value then touches neither its
    /// reference count nor the cache line that count is in.
    func unretainedValue(for key: Key) -> Unmanaged<Value>? {
        guard let (leaf, index) = leafPlace(for: key) else { return nil }
        return withExtendedLifetime(root) { leaf._withUnsafeGuaranteedRef { $0.unretainedValue(at: index) } }
    }

    /// ``forEach(from:ahead:_:)`` of the whole tree, each value lent
    /// unretained: valid during the call, while this tree holds it.
    func forEachUnretained(_ body: (Key, Unmanaged<Value>) throws -> Bool) rethrows {
        try walk(descending: false, from: { _ in false }, ahead: nil) { leaf, place in
            try body(leaf.keys[place], leaf.unretainedValue(at: place))
        }
    }
}

extension BTreeNode where Value: AnyObject {
    /// The value at `index` of a leaf, unretained: valid while the leaf is,
    /// and holds it.
    func unretainedValue(at index: Int) -> Unmanaged<Value> {
        .passUnretained(valueSlots[index])
    }
}
