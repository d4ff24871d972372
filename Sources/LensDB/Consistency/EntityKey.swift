/// An entity's identity across types: its type and its identifier. Two
/// entities with the same key are versions of one thing, and a push of one
/// replaces the other wherever a holder keeps it.
struct EntityKey: Hashable, Sendable {
    let type: ObjectIdentifier
    let id: any Hashable & Sendable

    init(_ entity: some Entity) {
        type = ObjectIdentifier(Swift.type(of: entity))
        id = entity.id
    }

    static func == (a: EntityKey, b: EntityKey) -> Bool {
        a.type == b.type && Self.equal(a.id, b.id)
    }

    private static func equal<A: Hashable>(_ a: A, _ b: any Hashable) -> Bool {
        (b as? A) == a
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(type)
        id.hash(into: &hasher)
    }
}

/// What a merge does to the entity under one key.
enum Substitution: Sendable {
    /// Put this version in place of every copy.
    case replace(any Entity)
    /// Remove copies from arrays and dictionaries, and set optionals to nil
    /// (``FollowOptions/dropRemoved``); a copy in a non-optional position stays.
    case drop
}

/// Stdlib containers whose element types a holder's value type can reveal
/// even when it holds no element: an empty `[Person]` or a nil `Person?`
/// still says that the type can contain a `Person`.
protocol EntityTypeCarrier {
    static var carriedTypes: [Any.Type] { get }
}

extension Optional: EntityTypeCarrier {
    static var carriedTypes: [Any.Type] { [Wrapped.self] }
}

extension Array: EntityTypeCarrier {
    static var carriedTypes: [Any.Type] { [Element.self] }
}

extension ContiguousArray: EntityTypeCarrier {
    static var carriedTypes: [Any.Type] { [Element.self] }
}

extension Set: EntityTypeCarrier {
    static var carriedTypes: [Any.Type] { [Element.self] }
}

extension Dictionary: EntityTypeCarrier {
    static var carriedTypes: [Any.Type] { [Key.self, Value.self] }
}

/// The entity types `type` names through stdlib containers (nested to any
/// depth), itself included when it is an entity type. Types inside an
/// entity or another struct are found when its encoding is walked.
func entityTypes(namedBy type: Any.Type, into found: inout Set<ObjectIdentifier>) {
    if type is any Entity.Type {
        found.insert(ObjectIdentifier(type))
    } else if let carrier = type as? any EntityTypeCarrier.Type {
        for carried in carrier.carriedTypes { entityTypes(namedBy: carried, into: &found) }
    }
}
