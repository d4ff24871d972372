/// Rebuilds a scanned value (``EntityScan``) with entities substituted by
/// identity: the `Decoder` half of a merge.
///
/// It decodes the value's type from the scan's tree, and wherever the tree
/// holds an entity with a substitution, hands out the substitute instead.
/// A subtree that holds no substituted entity is not decoded at all: the
/// value the scan met there is returned as it is, so a merge costs decoding
/// only along the paths that lead to a changed entity.
///
/// A rebuild that fails (a type whose decoding does not accept what its own
/// encoding wrote, or a dropped element a custom decoding cannot do
/// without) throws, and the caller leaves the holder's value as it was.
///
/// Not thread-safe: one rebuild belongs to one call.
final class EntityRebuild {
    private let substitutions: [EntityKey: Substitution]
    /// Substitutes with the substitutions applied inside them too, so a
    /// pushed `Order` never brings back an older copy of a `Person` pushed
    /// with it or after it.
    private var normalized: [EntityKey: any Entity] = [:]
    private var normalizing: Set<EntityKey> = []

    init(_ substitutions: [EntityKey: Substitution]) {
        self.substitutions = substitutions
    }

    /// `value` with every substitution applied, or nil when none applies.
    /// With `plan`, the visits of a walk of `value` that looked for the
    /// substituted entities, only the values that hold one are walked again.
    func rebuild<T: Codable>(_ value: T, plan: [EntityScan.Visit]? = nil) throws -> T? {
        let scan = EntityScan(collectingEntities: false, buildingTree: true, plan: plan)
        return try rebuild(T.self, root: try scan.scan(value), keys: scan.keys)
    }

    /// The value scanned as `root` (whose entities are `keys`) with every
    /// substitution applied, or nil when none applies.
    func rebuild<T: Decodable>(_ type: T.Type, root: ScanChild, keys: Set<EntityKey>) throws -> T? {
        guard !keys.isDisjoint(with: substitutions.keys) else { return nil }
        mark(root, except: nil)
        return try value(T.self, root)
    }

    /// Sets `affected` on every node at or above a substituted entity;
    /// returns whether `child` is affected.
    @discardableResult
    func mark(_ child: ScanChild, except skipped: EntityKey?) -> Bool {
        guard case let .node(node) = child else { return false }
        var affected = false
        if let key = node.entity, key != skipped, substitutions[key] != nil { affected = true }
        switch node.shape {
        case .keyed: for entry in node.entries where mark(entry.child, except: skipped) { affected = true }
        case .unkeyed, .single: for element in node.elements where mark(element, except: skipped) { affected = true }
        case .empty: break
        }
        node.affected = affected
        return affected
    }

    /// Whether `child` is an entity to drop, or an optional wrapping one.
    func isDropped(_ child: ScanChild) -> Bool {
        guard case let .node(node) = child else { return false }
        if let key = node.entity {
            if case .drop? = substitutions[key] { return true }
            return false
        }
        return node.shape == .single && node.elements.count == 1 && isDropped(node.elements[0])
    }

    /// The value of type `T` at `child`, substitutions applied.
    func value<T: Decodable>(_ type: T.Type, _ child: ScanChild) throws -> T {
        switch child {
        case let .scalar(scalar), let .value(scalar):
            if let scalar = scalar as? T { return scalar }
            throw DecodingError.typeMismatch(T.self, .init(codingPath: [], debugDescription: "the value's encoding wrote \(Swift.type(of: scalar)) here"))
        case .null:
            throw DecodingError.valueNotFound(T.self, .init(codingPath: [], debugDescription: "the value's encoding wrote nil here"))
        case let .node(node):
            if !node.affected, let original = node.original as? T { return original }
            if let key = node.entity, let substitution = substitutions[key] {
                switch substitution {
                case let .replace(entity):
                    if let replaced = normalize(entity, key) as? T { return replaced }
                case .drop:
                    // A position that cannot be empty keeps its copy, with
                    // the entities nested in it brought up to date below.
                    break
                }
            }
            return try T(from: RebuildDecoder(rebuild: self, node: node))
        }
    }

    /// `entity` with the other substitutions applied inside it.
    private func normalize(_ entity: any Entity, _ key: EntityKey) -> any Entity {
        if let done = normalized[key] { return done }
        // A cycle of entities nested in each other: the substitute as pushed.
        guard normalizing.insert(key).inserted else { return entity }
        defer { normalizing.remove(key) }
        let result = (try? normalizeNested(entity, key)) ?? entity
        normalized[key] = result
        return result
    }

    private func normalizeNested<E: Entity>(_ entity: E, _ key: EntityKey) throws -> any Entity {
        let scan = EntityScan(collectingEntities: false, buildingTree: true)
        let root = try scan.scan(entity)
        var nested = scan.keys
        nested.remove(key)
        guard !nested.isDisjoint(with: substitutions.keys), mark(root, except: key) else { return entity }
        guard case let .node(node) = root else { return entity }
        return try E(from: RebuildDecoder(rebuild: self, node: node))
    }
}

/// The `Decoder` of a rebuild: reads one node of the scan's tree.
struct RebuildDecoder: Decoder {
    let rebuild: EntityRebuild
    let node: ScanNode
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard node.shape == .keyed || node.shape == .empty else { throw mismatch("a keyed container") }
        return KeyedDecodingContainer(RebuildKeyedContainer<Key>(rebuild: rebuild, node: node))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard node.shape == .unkeyed || node.shape == .empty else { throw mismatch("an unkeyed container") }
        // A dropped entity leaves the array: it keeps the order of the rest.
        return RebuildUnkeyedContainer(rebuild: rebuild, elements: node.elements.filter { !rebuild.isDropped($0) })
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        guard node.shape == .single, node.elements.count == 1 else { throw mismatch("a single value") }
        return RebuildSingleContainer(rebuild: rebuild, child: node.elements[0])
    }

    private func mismatch(_ asked: String) -> DecodingError {
        .typeMismatch(Any.self, .init(codingPath: [], debugDescription: "decoding asked for \(asked) where the encoding wrote \(node.shape)"))
    }
}

struct RebuildKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let rebuild: EntityRebuild
    let node: ScanNode
    var codingPath: [any CodingKey] { [] }

    /// Dictionaries decode from these: a dropped entity leaves the dictionary.
    var allKeys: [Key] {
        node.entries.compactMap { entry in
            rebuild.isDropped(entry.child) ? nil : entry.key.key(Key.self)
        }
    }

    func contains(_ key: Key) -> Bool { node.child(forKey: key.stringValue) != nil }

    private func child(_ key: Key) throws -> ScanChild {
        guard let child = node.child(forKey: key.stringValue) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: [], debugDescription: "the value's encoding wrote no \(key.stringValue)"))
        }
        return child
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let child = node.child(forKey: key.stringValue) else { return true }
        if case .null = child { return true }
        return rebuild.isDropped(child)
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try rebuild.value(T.self, try child(key)) }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        if try decodeNil(forKey: key) { return nil }
        return try rebuild.value(T.self, try child(key))
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try rebuild.value(type, try child(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try rebuild.value(type, try child(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try rebuild.value(type, try child(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try rebuild.value(type, try child(key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try rebuild.value(type, try child(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try rebuild.value(type, try child(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try rebuild.value(type, try child(key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try rebuild.value(type, try child(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try rebuild.value(type, try child(key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try rebuild.value(type, try child(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try rebuild.value(type, try child(key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try rebuild.value(type, try child(key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try rebuild.value(type, try child(key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try rebuild.value(type, try child(key)) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder(try child(key)).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder(try child(key)).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { try decoder(try child(Key(stringValue: "super")!)) }
    func superDecoder(forKey key: Key) throws -> any Decoder { try decoder(try child(key)) }

    private func decoder(_ child: ScanChild) throws -> RebuildDecoder {
        guard case let .node(node) = child else {
            throw DecodingError.typeMismatch(Any.self, .init(codingPath: [], debugDescription: "a container was asked of a leaf"))
        }
        return RebuildDecoder(rebuild: rebuild, node: node)
    }
}

struct RebuildUnkeyedContainer: UnkeyedDecodingContainer {
    let rebuild: EntityRebuild
    let elements: [ScanChild]
    var currentIndex = 0
    var codingPath: [any CodingKey] { [] }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    init(rebuild: EntityRebuild, elements: [ScanChild]) {
        self.rebuild = rebuild
        self.elements = elements
    }

    private mutating func next() throws -> ScanChild {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: [], debugDescription: "past the end of an array"))
        }
        defer { currentIndex += 1 }
        return elements[currentIndex]
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, case .null = elements[currentIndex] else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try rebuild.value(T.self, try next()) }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try rebuild.value(type, try next()) }
    mutating func decode(_ type: String.Type) throws -> String { try rebuild.value(type, try next()) }
    mutating func decode(_ type: Double.Type) throws -> Double { try rebuild.value(type, try next()) }
    mutating func decode(_ type: Int.Type) throws -> Int { try rebuild.value(type, try next()) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try rebuild.value(type, try next()) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder(try next()).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try decoder(try next()).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { try decoder(try next()) }

    private func decoder(_ child: ScanChild) throws -> RebuildDecoder {
        guard case let .node(node) = child else {
            throw DecodingError.typeMismatch(Any.self, .init(codingPath: [], debugDescription: "a container was asked of a leaf"))
        }
        return RebuildDecoder(rebuild: rebuild, node: node)
    }
}

struct RebuildSingleContainer: SingleValueDecodingContainer {
    let rebuild: EntityRebuild
    let child: ScanChild
    var codingPath: [any CodingKey] { [] }

    func decodeNil() -> Bool {
        if case .null = child { return true }
        return rebuild.isDropped(child)
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try rebuild.value(T.self, child) }
    func decode(_ type: Bool.Type) throws -> Bool { try rebuild.value(type, child) }
    func decode(_ type: String.Type) throws -> String { try rebuild.value(type, child) }
    func decode(_ type: Double.Type) throws -> Double { try rebuild.value(type, child) }
    func decode(_ type: Float.Type) throws -> Float { try rebuild.value(type, child) }
    func decode(_ type: Int.Type) throws -> Int { try rebuild.value(type, child) }
    func decode(_ type: Int8.Type) throws -> Int8 { try rebuild.value(type, child) }
    func decode(_ type: Int16.Type) throws -> Int16 { try rebuild.value(type, child) }
    func decode(_ type: Int32.Type) throws -> Int32 { try rebuild.value(type, child) }
    func decode(_ type: Int64.Type) throws -> Int64 { try rebuild.value(type, child) }
    func decode(_ type: UInt.Type) throws -> UInt { try rebuild.value(type, child) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try rebuild.value(type, child) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try rebuild.value(type, child) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try rebuild.value(type, child) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try rebuild.value(type, child) }
}
