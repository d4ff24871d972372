/// Where a key path's value sits in its root's encoding, learnt from the
/// encoding itself.
///
/// A key path says nothing of the coding keys its properties encode under,
/// and a custom `CodingKeys` may rename them. So the first write through a
/// key path encodes the parent value before and after the write and finds
/// the one member that changed: the deepest member on the way to the first
/// difference whose old and new values are the child's old and new values.
/// The answer is kept per key path for the process's life, so each key
/// path pays two encodings of its parent once; until then, a write through
/// it logs its parent's member whole, which is correct, only larger.
///
/// This assumes what synthesized `Codable` guarantees: a property is
/// encoded under the same keys whatever its value. A hand-written
/// `encode(to:)` that moves a property between keys depending on its value
/// must not be used through a key-path lens; stores opened with
/// ``StoreOptions/checksInvariants`` check every lens write against what
/// replay would make of it.
enum CodingPathLearning {
    /// What is known of a key path.
    enum Resolution: Sendable, Equatable {
        /// The object keys from the parent's top to the property.
        case keys([String])
        /// A write changed the parent's encoding, but no member on the way
        /// held the child (a computed property that sets two fields, say):
        /// writes through it log the parent's member.
        case unresolvable
    }

    private static let learnt = Locked<[AnyKeyPath: Resolution]>([:])

    /// What earlier writes learnt of `keyPath`, if anything.
    static func resolution(of keyPath: AnyKeyPath) -> Resolution? {
        learnt.withLock { $0[keyPath] }
    }

    /// Learns where `keyPath`'s child sits from its parent's documents before
    /// and after a write, and the child's own (nil: absent); keeps and
    /// returns the answer. Nil, and nothing kept, when the parent's
    /// encoding did not change.
    static func learn(
        _ keyPath: AnyKeyPath, parentBefore: Document, parentAfter: Document, childBefore: Document?, childAfter: Document?
    ) -> Resolution? {
        guard let difference = firstDifference(parentBefore, parentAfter) else { return nil }
        var resolution = Resolution.unresolvable
        for length in stride(from: difference.count, through: 1, by: -1) {
            let keys = Array(difference.prefix(length))
            if parentAfter.member(at: keys) == childAfter && parentBefore.member(at: keys) == childBefore {
                resolution = .keys(keys)
                break
            }
        }
        learnt.withLock { $0[keyPath] = resolution }
        return resolution
    }

    /// The object keys down to where `a` and `b` first differ: it descends
    /// while both are objects and exactly one member differs (present in
    /// one and not the other counts). Nil when they are equal.
    static func firstDifference(_ a: Document, _ b: Document) -> [String]? {
        guard a != b else { return nil }
        var keys: [String] = []
        var (left, right): (Document?, Document?) = (a, b)
        while case let (.object(l)?, .object(r)?) = (left, right) {
            let differing = Set(l.keys).union(r.keys).filter { l[$0] != r[$0] }
            guard differing.count == 1, let key = differing.first else { break }
            keys.append(key)
            (left, right) = (l[key], r[key])
        }
        return keys
    }
}
