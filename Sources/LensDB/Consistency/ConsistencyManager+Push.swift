extension ConsistencyManager {
    /// Pushes new versions of entities to every registered holder: each
    /// entity nested anywhere in a holder's value with the same type and id
    /// as a pushed one is replaced by it.
    ///
    /// - The pushed entities are flattened first: each one, then the
    ///   entities nested in it, in pre-order; so pushing an `Order` that
    ///   contains a `Person` also updates holders that hold only that
    ///   `Person`. When an identity occurs more than once, the last
    ///   occurrence wins.
    /// - Arrays keep their length and order; nothing but the matching
    ///   entities changes, and a holder whose value holds none of them is
    ///   not written.
    /// - **Versions**: with a `version` (the store's LSN for an entity read
    ///   from it), the push applies to the entities whose recorded version
    ///   is lower; an older or equal version is ignored, so a late arrival
    ///   never overwrites a newer copy. Without one, the push counts as the
    ///   newest version known: it applies, and records no version of its own,
    ///   so any later push whose version is higher than the last one recorded
    ///   replaces it (a commit the store makes after a copy arrived from the
    ///   network, say).
    ///
    /// When it returns, every ``ConsistentHolder`` (not isolated to an actor)
    /// has been updated, on the calling thread; holders isolated to an actor
    /// have their merge enqueued on it (``waitForUpdates()`` waits for those).
    /// An enqueued merge applies the newest version known when it runs.
    ///
    /// A holder whose value cannot be rebuilt (its decoding refuses what its
    /// encoding wrote) is left as it was.
    ///
    /// ```swift
    /// manager.push(personFromNetwork)                    // newest known
    /// manager.push(order, version: lsnOfTheOrderCommit)   // the order and the people in it
    /// ```
    ///
    /// Thread-safety: any thread. Merges into one nonisolated holder are
    /// serialized, so two pushes racing never lose each other's changes.
    ///
    /// - Complexity: one walk of each pushed entity's encoding, then, for
    ///   each holder whose value type has been seen to contain a pushed
    ///   type, one walk of its value's encoding, plus decoding along the
    ///   paths that lead to a replaced entity. Holders of other value types
    ///   cost nothing.
    public func push(_ entities: any Entity..., version: UInt64? = nil) {
        push(entities, version: version)
    }

    /// Pushes every entity of `entities`, in order, as one push: see
    /// ``push(_:version:)-(Entity...,_)``.
    public func push<S: Sequence>(_ entities: S, version: UInt64? = nil) where S.Element: Entity {
        publish(flatten(entities.map { $0 as any Entity }, skippingNestedFollowed: false), removed: [], version: version, dropsRemoved: false)
    }

    /// Pushes entities of several types, in order, as one push: see
    /// ``push(_:version:)-(Entity...,_)``.
    public func push(_ entities: some Sequence<any Entity>, version: UInt64? = nil) {
        publish(flatten(Array(entities), skippingNestedFollowed: false), removed: [], version: version, dropsRemoved: false)
    }

    /// The entities and those nested in them, in pre-order, each identity
    /// once, at the place of its first occurrence, with its last occurrence's value.
    func flatten(_ entities: [any Entity], skippingNestedFollowed: Bool) -> [(key: EntityKey, entity: any Entity)] {
        var order: [EntityKey] = [], values: [EntityKey: any Entity] = [:]
        let followed = skippingNestedFollowed ? state.withLock { Set($0.followed.keys) } : []
        for entity in entities {
            let scan = EntityScan(collectingEntities: true, buildingTree: false)
            // An entity that does not encode is pushed as itself, without
            // the ones nested in it.
            let found = (try? scan.scan(entity)) != nil ? scan.entities : [(EntityKey(entity), entity)]
            for (position, (key, nested)) in found.enumerated() {
                // A followed table's own commits are the authority on its
                // entities: a copy nested in another table's entity may be older.
                if position > 0 && followed.contains(key.type) { continue }
                if values.updateValue(nested, forKey: key) == nil { order.append(key) }
            }
        }
        return order.map { ($0, values[$0]!) }
    }

    /// Records the pushed versions and removals that are newer than what is
    /// known, then merges them into every holder whose type can contain them.
    func publish(_ entities: [(key: EntityKey, entity: any Entity)], removed: [EntityKey], version: UInt64?, dropsRemoved: Bool) {
        let (keys, registrations) = state.withLock { state -> (Set<EntityKey>, [any HolderRegistration]) in
            var keys = Set<EntityKey>()
            for (key, entity) in entities where Self.isNewer(version, than: state.known[key]) {
                state.known[key] = Known(entity: entity, version: version ?? state.known[key]?.version)
                keys.insert(key)
            }
            for key in removed where Self.isNewer(version, than: state.known[key]) {
                if dropsRemoved {
                    state.known[key] = Known(entity: nil, version: version, removed: true)
                    keys.insert(key)
                } else {
                    state.known[key, default: Known()].version = version
                }
            }
            return (keys, Self.registrations(containing: Set(keys.map(\.type)), &state))
        }
        guard !keys.isEmpty else { return }
        for registration in registrations { registration.deliver(keys, from: self) }
    }

    static func isNewer(_ version: UInt64?, than known: Known?) -> Bool {
        guard let version, let recorded = known?.version else { return true }
        return version > recorded
    }

    /// The live registrations of every holder whose value type has been
    /// seen to contain one of `types`; prunes released ones on the way.
    static func registrations(containing types: Set<ObjectIdentifier>, _ state: inout State) -> [any HolderRegistration] {
        var found: [any HolderRegistration] = []
        for (valueType, group) in state.groups where !group.entityTypes.isDisjoint(with: types) {
            for (slot, registration) in group.holders {
                if registration.isAlive { found.append(registration) } else { state.groups[valueType]!.holders[slot] = nil }
            }
        }
        return found
    }

    /// `value` with the newest known version of each of `keys` it holds
    /// merged in, or nil when it holds none. Learns the entity types values
    /// of its type contain.
    func merge<Value: Codable>(_ value: Value, _ keys: Set<EntityKey>) -> Value? {
        // First a walk that builds nothing: most values a push visits hold
        // the pushed type but not the pushed entity.
        let finder = EntityScan(collectingEntities: false, buildingTree: false, targets: keys)
        // A value that does not encode cannot be rebuilt: it stays as it is.
        guard (try? finder.scan(value)) != nil else { return nil }
        let held = finder.keys.intersection(keys)
        let group = ObjectIdentifier(Value.self)
        let substitutions = state.withLock { state -> [EntityKey: Substitution] in
            if state.groups[group]?.entityTypes.isSuperset(of: finder.entityTypes) == false {
                state.groups[group]!.entityTypes.formUnion(finder.entityTypes)
            }
            var substitutions: [EntityKey: Substitution] = [:]
            for key in held { substitutions[key] = state.known[key]?.substitution }
            return substitutions
        }
        guard !substitutions.isEmpty else { return nil }
        // A value its own type will not decode again stays as it was.
        return try? EntityRebuild(substitutions).rebuild(value, plan: finder.visits)
    }
}
