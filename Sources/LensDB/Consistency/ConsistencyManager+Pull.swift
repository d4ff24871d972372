extension ConsistencyManager {
    /// `stale` with every entity nested in it replaced by the freshest
    /// version known: the store's current version where the entity's type
    /// lives in a followed table (``follow(_:options:)``), otherwise the
    /// newest version pushed. An entity with no known version stays as it
    /// is; so does `stale` when its type does not decode what it encodes.
    ///
    /// An entity a followed table no longer holds stays as it is, or, when
    /// the table is followed with ``FollowOptions/dropRemoved`` and the
    /// removal was pushed, leaves arrays and dictionaries and turns
    /// optionals to nil.
    ///
    /// ```swift
    /// screen.person = store.consistency.pull(screen.person)
    /// ```
    ///
    /// Thread-safety: any thread; it reads, and changes nothing.
    /// - Complexity: one walk of the value's encoding, one lookup per
    ///   entity in it, and decoding along the paths to replaced entities.
    public func pull<T: Codable>(_ stale: T) -> T {
        let scan = EntityScan(collectingEntities: false, buildingTree: true)
        // A value that does not encode cannot be rebuilt: it is returned as it is.
        guard let root = try? scan.scan(stale) else { return stale }
        let (known, followed) = state.withLock { state in
            (scan.keys.compactMap { key in state.known[key].map { (key, $0) } }, state.followed)
        }
        let knownByKey = Dictionary(known, uniquingKeysWith: { first, _ in first })
        var substitutions: [EntityKey: Substitution] = [:]
        for key in scan.keys {
            if let substitution = Self.freshest(key, known: knownByKey[key], followed: followed[key.type]) {
                substitutions[key] = substitution
            }
        }
        // A value its own type will not decode again is returned as it was.
        return (try? EntityRebuild(substitutions).rebuild(T.self, root: root, keys: scan.keys)) ?? stale
    }

    /// The freshest version of `key`: the followed table's, unless a push
    /// recorded a version at least as new.
    static func freshest(_ key: EntityKey, known: Known?, followed: FollowedTable?) -> Substitution? {
        guard let followed else { return known?.substitution }
        switch followed.current(key.id) {
        case let .found(entity, lsn):
            if let known, !known.removed, let pushed = known.entity, (known.version ?? 0) >= lsn { return .replace(pushed) }
            return .replace(entity)
        case .absent:
            // Dropped only when a followed commit removed it: an entity the
            // table never held (a draft) is not a removed one.
            return known?.removed == true ? .drop : nil
        case .unavailable:
            return known?.substitution
        }
    }
}
