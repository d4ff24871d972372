/// One walk of a value's `Encodable` conformance that records the value as
/// a tree (``ScanNode``) with every ``Entity`` in it marked by type and
/// identifier: what a merge rebuilds from (``EntityRebuild``) and how a
/// push flattens the entities it is given.
///
/// It needs no code of the value's type beyond its `Codable` conformance:
/// an entity is recognised when its encoding starts (`value as? any
/// Entity`), which is why the values of holders and of pushes are walked
/// through `encode(to:)` and never through reflection.
///
/// Not thread-safe: one scan belongs to one call.
final class EntityScan {
    /// Every entity met, in pre-order (an entity before the ones nested in
    /// it), when `collectsEntities`.
    private(set) var entities: [(key: EntityKey, entity: any Entity)] = []
    /// The identities met, in any order (only the targets, when looking for some).
    private(set) var keys: Set<EntityKey> = []
    /// The entity types the value can contain, as far as this walk shows:
    /// those met and those named by the static types of its fields,
    /// including empty arrays and nil optionals (``EntityTypeCarrier``).
    private(set) var entityTypes: Set<ObjectIdentifier> = []
    private let collectsEntities: Bool
    /// Whether the walk records the tree; without it, it only finds the
    /// entities and the entity types, writing every value into one sink.
    private let buildsTree: Bool
    private let sink = ScanNode(original: (), records: false)
    /// What the walk found out about each type it met, so a value of a type
    /// met before costs no dynamic conformance check.
    private var types: [ObjectIdentifier: TypeInfo] = [:]

    struct TypeInfo {
        /// For an entity type: how to read a value's identity.
        let opener: (any EntityOpener)?
        let namedEntityTypes: [ObjectIdentifier]
    }

    /// One value met by a walk that looks for `targets`, in the order met:
    /// its type, whether a target is in it, and how many values are nested
    /// in it. A tree-building walk of the same value follows these, and
    /// keeps a value with no target in it whole instead of walking it.
    struct Visit {
        let type: ObjectIdentifier
        var hit = false
        var size = 0
    }

    /// The values met, when looking for `targets`.
    private(set) var visits: [Visit] = []
    private let targets: Set<EntityKey>?
    private var subtreeHit = false
    /// The visits of an earlier walk of the same value to follow, if any.
    private let plan: [Visit]?
    private var cursor = 0

    /// A walk; `targets` (without a tree) records ``visits`` for a later
    /// walk that builds the tree along `plan` only where a target is.
    init(collectingEntities: Bool, buildingTree: Bool, targets: Set<EntityKey>? = nil, plan: [Visit]? = nil) {
        collectsEntities = collectingEntities
        buildsTree = buildingTree
        self.targets = buildingTree ? nil : targets
        self.plan = buildingTree ? plan : nil
    }

    /// Walks `value`; the root of its tree (`.null` when not building one).
    func scan<T: Encodable>(_ value: T) throws -> ScanChild {
        try child(value)
    }

    /// The tree of one value met during the walk.
    func child<T: Encodable>(_ value: T) throws -> ScanChild {
        if isScalar(T.self) { return buildsTree ? .scalar(value) : .null }
        if let plan {
            // The same value walked again meets the same values in the same
            // order; anything else is a value that encodes differently each
            // time, and the merge gives up on it.
            guard cursor < plan.count, plan[cursor].type == ObjectIdentifier(T.self) else { throw PlanMismatch() }
            let visit = plan[cursor]
            cursor += 1
            if !visit.hit {
                cursor += visit.size
                return .value(value)
            }
        }
        let info = self.info(T.self)
        let node = buildsTree ? ScanNode(original: value) : sink
        let visit = visits.count, outerHit = subtreeHit
        if targets != nil {
            visits.append(Visit(type: ObjectIdentifier(T.self)))
            subtreeHit = false
        }
        // Asked of the static type, so an optional or an array of entities is
        // not taken for the entity it wraps (a dynamic cast would unwrap it).
        if let opener = info.opener {
            let key = opener.key(of: value)
            if buildsTree { node.entity = key }
            // The dynamic type: a subclass of the static one, say.
            if key.type != ObjectIdentifier(T.self) { entityTypes.insert(key.type) }
            // A walk looking for targets needs only the ones it finds.
            if targets?.contains(key) ?? true { keys.insert(key) }
            if collectsEntities { entities.append((key, opener.entity(value))) }
            if targets?.contains(key) == true { subtreeHit = true }
        }
        try value.encode(to: ScanEncoder(scan: self, node: node))
        if targets != nil {
            visits[visit].hit = subtreeHit
            visits[visit].size = visits.count - visit - 1
            subtreeHit = outerHit || subtreeHit
        }
        return buildsTree ? .node(node) : .null
    }

    private static func opener<E: Entity>(_ type: E.Type) -> any EntityOpener {
        TypedEntityOpener<E>()
    }

    /// A second walk of a value met other values than the first.
    struct PlanMismatch: Error {}

    /// A node for a nested container: the sink when not building a tree.
    func nestedNode() -> ScanNode {
        buildsTree ? ScanNode(original: ()) : sink
    }

    private func info(_ type: Any.Type) -> TypeInfo {
        let id = ObjectIdentifier(type)
        if let known = types[id] { return known }
        var named = Set<ObjectIdentifier>()
        LensDB.entityTypes(namedBy: type, into: &named)
        let entityType = type as? any Entity.Type
        let info = TypeInfo(opener: entityType.map { Self.opener($0) }, namedEntityTypes: Array(named))
        types[id] = info
        // Once per type and walk is enough: the walk's answer is a union.
        entityTypes.formUnion(named)
        return info
    }

    /// Also records that the holder's value type names `T` in a field that
    /// is nil (`encodeIfPresent`), so its entity types are known before one appears.
    func learn<T>(_ type: T.Type) {
        if !isScalar(T.self) { _ = info(T.self) }
    }

    /// Whether values of `type` are leaves of the tree, kept as they are.
    @inline(__always)
    private func isScalar(_ type: Any.Type) -> Bool {
        type == String.self || type == Int.self || type == Int64.self || type == Double.self || type == Bool.self
            || type == UInt64.self || type == Int32.self || type == UInt32.self || type == Float.self || type == UInt.self
            || type == Int16.self || type == UInt16.self || type == Int8.self || type == UInt8.self
    }
}

/// Reads the identity of a value whose static type `T` is the entity type
/// `E`: a cast from `T` to `E` is an identity, where a cast to `any Entity`
/// would look the conformance up for every value.
protocol EntityOpener {
    func key<T>(of value: T) -> EntityKey
    func entity<T>(_ value: T) -> any Entity
}

struct TypedEntityOpener<E: Entity>: EntityOpener {
    func key<T>(of value: T) -> EntityKey { EntityKey(value as! E) }
    func entity<T>(_ value: T) -> any Entity { value as! E }
}

/// One position in a scanned value: a leaf, an explicit nil, or a node.
enum ScanChild {
    case scalar(Any)
    /// A value kept whole: nothing it holds is substituted.
    case value(Any)
    case null
    case node(ScanNode)
}

/// A non-leaf value in a scan: what its encoding wrote, and the value
/// itself, which a merge returns untouched when nothing below it changes.
final class ScanNode {
    enum Shape { case empty, keyed, unkeyed, single }

    var shape = Shape.empty
    /// The value this node is the encoding of.
    let original: Any
    /// The entity's identity, when the value is an entity.
    var entity: EntityKey?
    /// Whether a substitution applies here or below (``EntityRebuild/mark(_:)``).
    var affected = false
    /// Keyed: the entries in the order written.
    var entries: [(key: StoredKey, child: ScanChild)] = []
    /// Unkeyed: the elements; single: the one value.
    var elements: [ScanChild] = []
    /// Where each key is in `entries`, for a keyed node too large to search.
    private var positions: [String: Int]?
    /// Whether this node records what is written into it (not a scan's sink).
    private let records: Bool

    init(original: Any, records: Bool = true) {
        self.original = original
        self.records = records
    }

    func set(_ child: ScanChild, forKey key: some CodingKey) {
        guard records else { return }
        entries.append((StoredKey(string: key.stringValue, int: key.intValue), child))
    }

    func append(_ child: ScanChild) {
        guard records else { return }
        elements.append(child)
    }

    func setSingle(_ child: ScanChild) {
        guard records else { return }
        elements = [child]
    }

    /// The value written last under `key`.
    func child(forKey key: String) -> ScanChild? {
        if entries.count <= 16 {
            return entries.last { $0.key.string == key }?.child
        }
        if positions == nil {
            var positions: [String: Int] = [:]
            for (position, entry) in entries.enumerated() { positions[entry.key.string] = position }
            self.positions = positions
        }
        return positions![key].map { entries[$0].child }
    }
}

/// A coding key as written, to rebuild the decoding side's own key type.
struct StoredKey {
    let string: String
    let int: Int?

    func key<Key: CodingKey>(_ type: Key.Type) -> Key? {
        Key(stringValue: string) ?? int.flatMap(Key.init(intValue:))
    }
}

/// The `Encoder` of a scan: writes into one node.
struct ScanEncoder: Encoder {
    let scan: EntityScan
    let node: ScanNode
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.shape = .keyed
        return KeyedEncodingContainer(ScanKeyedContainer<Key>(scan: scan, node: node))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.shape = .unkeyed
        return ScanUnkeyedContainer(scan: scan, node: node)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        node.shape = .single
        return ScanSingleContainer(scan: scan, node: node)
    }
}

struct ScanKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let scan: EntityScan
    let node: ScanNode
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws { node.set(.null, forKey: key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { node.set(.scalar(value), forKey: key) }
    mutating func encode(_ value: String, forKey key: Key) throws { node.set(.scalar(value), forKey: key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { node.set(.scalar(value), forKey: key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { node.set(.scalar(value), forKey: key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { node.set(.scalar(value), forKey: key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { node.set(.scalar(value), forKey: key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { node.set(.scalar(value), forKey: key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { node.set(.scalar(value), forKey: key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { node.set(.scalar(value), forKey: key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { node.set(.scalar(value), forKey: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { node.set(.scalar(value), forKey: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { node.set(.scalar(value), forKey: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { node.set(.scalar(value), forKey: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { node.set(.scalar(value), forKey: key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        node.set(try scan.child(value), forKey: key)
    }

    // Written out so that a nil field still tells the scan its type.
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        guard let value else { return scan.learn(T.self) }
        try encode(value, forKey: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested = scan.nestedNode()
        node.set(.node(nested), forKey: key)
        return ScanEncoder(scan: scan, node: nested).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = scan.nestedNode()
        node.set(.node(nested), forKey: key)
        return ScanEncoder(scan: scan, node: nested).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { superEncoder(named: "super", int: nil) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(named: key.stringValue, int: key.intValue) }

    private func superEncoder(named name: String, int: Int?) -> any Encoder {
        let nested = scan.nestedNode()
        node.set(.node(nested), forKey: ScanKey(stringValue: name, intValue: int))
        return ScanEncoder(scan: scan, node: nested)
    }
}

struct ScanUnkeyedContainer: UnkeyedEncodingContainer {
    let scan: EntityScan
    let node: ScanNode
    var codingPath: [any CodingKey] { [] }
    var count: Int { node.elements.count }

    mutating func encodeNil() throws { node.append(.null) }
    mutating func encode(_ value: Bool) throws { node.append(.scalar(value)) }
    mutating func encode(_ value: String) throws { node.append(.scalar(value)) }
    mutating func encode(_ value: Double) throws { node.append(.scalar(value)) }
    mutating func encode(_ value: Int) throws { node.append(.scalar(value)) }
    mutating func encode(_ value: Int64) throws { node.append(.scalar(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        node.append(try scan.child(value))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = scan.nestedNode()
        node.append(.node(nested))
        return ScanEncoder(scan: scan, node: nested).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = scan.nestedNode()
        node.append(.node(nested))
        return ScanEncoder(scan: scan, node: nested).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let nested = scan.nestedNode()
        node.append(.node(nested))
        return ScanEncoder(scan: scan, node: nested)
    }
}

struct ScanSingleContainer: SingleValueEncodingContainer {
    let scan: EntityScan
    let node: ScanNode
    var codingPath: [any CodingKey] { [] }

    private func set(_ child: ScanChild) { node.setSingle(child) }

    mutating func encodeNil() throws { set(.null) }
    mutating func encode(_ value: Bool) throws { set(.scalar(value)) }
    mutating func encode(_ value: String) throws { set(.scalar(value)) }
    mutating func encode(_ value: Double) throws { set(.scalar(value)) }
    mutating func encode(_ value: Int) throws { set(.scalar(value)) }
    mutating func encode(_ value: Int64) throws { set(.scalar(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws { set(try scan.child(value)) }
}

/// A key written by name (`superEncoder()`).
struct ScanKey: CodingKey {
    let stringValue: String
    let intValue: Int?
    init(stringValue: String, intValue: Int?) {
        self.stringValue = stringValue
        self.intValue = intValue
    }
    init?(stringValue: String) { self.init(stringValue: stringValue, intValue: nil) }
    init?(intValue: Int) { self.init(stringValue: "\(intValue)", intValue: intValue) }
}
