/// The watched lenses of one root, filed by their object keys, so that a
/// commit visits only the lenses whose value it may have changed: those on
/// the path of a changed member (its ancestors, whose values contain it,
/// and itself) and those below it (a member created or removed whole
/// changes every lens under it). Siblings are never visited.
///
/// A lens whose keys are known only in part (a key path no write has
/// taught yet) is filed at the deepest known node, and so is visited a
/// little more often than it needs; every visit compares values, so that
/// costs time, never a wrong notification.
///
/// Not thread-safe: the notifier keeps it behind its lock.
struct LensTrie {
    final class Node {
        var children: [String: Node] = [:]
        var watchers: [Int: any LensWatcher] = [:]
        var isEmpty: Bool { children.isEmpty && watchers.isEmpty }
    }

    private let root = Node()
    /// Where each watcher is filed, for removal.
    private var places: [Int: [String]] = [:]

    var isEmpty: Bool { places.isEmpty }
    var count: Int { places.count }

    mutating func insert(_ watcher: any LensWatcher, id: Int, at keys: [String]) {
        var node = root
        for key in keys {
            if let child = node.children[key] {
                node = child
            } else {
                let child = Node()
                node.children[key] = child
                node = child
            }
        }
        node.watchers[id] = watcher
        places[id] = keys
    }

    /// Removes the watcher `id` and the nodes left empty.
    mutating func remove(_ id: Int) {
        guard let keys = places.removeValue(forKey: id) else { return }
        var path = [root]
        for key in keys {
            guard let child = path.last!.children[key] else { return }
            path.append(child)
        }
        path.last!.watchers[id] = nil
        for (node, key) in zip(path.dropLast(), keys).reversed() where node.children[key]!.isEmpty {
            node.children[key] = nil
        }
    }

    /// Calls `body` once with each watcher on the path of a member in
    /// `changed` (object keys; `[]` is the whole root) or below it.
    /// - Complexity: O(depth of each path + watchers visited).
    func visit(_ changed: [[String]], _ body: (any LensWatcher) -> Void) {
        var visited = Set<ObjectIdentifier>()
        func evaluate(_ node: Node) {
            guard visited.insert(ObjectIdentifier(node)).inserted else { return }
            for watcher in node.watchers.values { body(watcher) }
        }
        func evaluateSubtree(_ node: Node) {
            evaluate(node)
            for child in node.children.values { evaluateSubtree(child) }
        }
        for keys in changed {
            var node = root
            var reached = true
            evaluate(node)
            for key in keys {
                guard let child = node.children[key] else { reached = false; break }
                node = child
                evaluate(node)
            }
            if reached { evaluateSubtree(node) }
        }
    }
}
