/// A reference to an entity of type `T` by its identifier: to-one
/// (`var manager: Ref<Person>?`) or to-many (`var tags: [Ref<Tag>]`).
///
/// Encodes as the bare identifier, so a stored reference is the id and
/// nothing more, and an index on a reference field (`.on(\.manager)`)
/// serves reverse lookups: `people.query.filter(\.manager == Ref(42))`.
/// Queries follow references with `including(_:from:_:)`.
public struct Ref<T: Entity>: Codable, Hashable, Sendable, CustomStringConvertible {
    /// The referenced entity's identifier.
    public let id: T.ID

    public init(_ id: T.ID) { self.id = id }

    /// A reference to `entity`.
    public init(_ entity: T) { self.id = entity.id }

    public init(from decoder: any Decoder) throws {
        id = try decoder.singleValueContainer().decode(T.ID.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(id)
    }

    public var description: String { "Ref<\(T.self)>(\(id))" }
}

extension Ref: IndexableValue {
    /// The identifier as its table orders it.
    public var indexValue: IndexValue {
        // Only a value-format identifier can fail to encode; such a
        // reference indexes as nil and matches no entity.
        (try? identifierValue(id)) ?? .null
    }
}

extension Store {
    /// Remembers which table holds entities of type `T`, so that references
    /// to them can be followed without naming it; a type held by two
    /// tables is ambiguous and must be named (`from:`).
    func register<T: Entity>(table: String, for type: T.Type) {
        entityTables.withLock { tables in
            let key = ObjectIdentifier(T.self)
            switch tables[key] {
            case nil: tables[key] = table
            case table?: break
            default: tables[key] = ""
            }
        }
    }

    /// The one table holding entities of `type`, when there is one.
    func tableName(forEntity type: ObjectIdentifier) -> String? {
        entityTables.withLock { $0[type] }.flatMap { $0.isEmpty ? nil : $0 }
    }
}
