extension ConsistencyManager {
    /// Registers `holder`, held weakly: from now on every push updates the
    /// entities nested in its ``ConsistentHolder/consistentValue``, on the
    /// pushing thread. The registration ends when the program releases the
    /// holder (the manager prunes it) or on ``unregister(_:)``. Registering
    /// a holder twice registers it once.
    ///
    /// Reads the value once, to learn which entity types values of its type
    /// contain (see <doc:Consistency> on how a push skips holders).
    /// - Complexity: one walk of the value's encoding.
    public func register<H: ConsistentHolder>(_ holder: H) {
        add(NonisolatedRegistration(holder), for: holder, learning: holder.consistentValue)
    }

    /// Registers a holder isolated to the main actor, held weakly: pushes
    /// update its value in tasks on the main actor. As ``register(_:)-(H)``.
    @MainActor
    public func register<H: MainActorConsistentHolder>(_ holder: H) {
        add(MainActorRegistration(holder), for: holder, learning: holder.consistentValue)
    }

    /// Registers an actor as a holder, held weakly: pushes update its value
    /// in tasks on the actor. As ``register(_:)-(H)``; waits on the actor
    /// for the value to learn from.
    public func register<H: ActorConsistentHolder>(_ holder: H) async {
        let value = await holder.consistentValue
        add(ActorRegistration(holder), for: holder, learning: value)
    }

    /// Ends `holder`'s registration; nothing happens when it has none.
    public func unregister(_ holder: AnyObject) {
        state.withLock { state in
            guard let (group, slot) = state.registered[ObjectIdentifier(holder)],
                  state.groups[group]?.holders[slot]?.registers(holder) == true else { return }
            state.groups[group]?.holders[slot] = nil
            state.registered[ObjectIdentifier(holder)] = nil
        }
    }

    private func add<Value: Encodable>(_ registration: any HolderRegistration, for holder: AnyObject, learning value: Value) {
        let scan = EntityScan(collectingEntities: false, buildingTree: false)
        // A value that does not encode teaches nothing; the holder is still
        // registered and visited once a push finds its type can hold the entity.
        _ = try? scan.scan(value)
        let group = ObjectIdentifier(Value.self), identity = ObjectIdentifier(holder)
        state.withLock { state in
            if let (existing, slot) = state.registered[identity], let old = state.groups[existing]?.holders[slot] {
                // The same holder again; or a released one whose address was reused.
                if old.registers(holder) { return }
                state.groups[existing]?.holders[slot] = nil
            }
            let slot = state.nextID
            state.nextID += 1
            state.groups[group, default: Group()].holders[slot] = registration
            state.groups[group]!.entityTypes.formUnion(scan.entityTypes)
            state.registered[identity] = (group, slot)
            state.registrationsSinceSweep += 1
            // Amortized: a sweep costs the registrations there are, and runs
            // once that many more have been made.
            if state.registrationsSinceSweep > max(64, state.registered.count / 2) { Self.sweep(&state) }
        }
    }

    /// Drops the registrations of released holders.
    static func sweep(_ state: inout State) {
        state.registrationsSinceSweep = 0
        for (type, group) in state.groups {
            for (slot, registration) in group.holders where !registration.isAlive {
                state.groups[type]!.holders[slot] = nil
            }
        }
        state.registered = state.registered.filter { state.groups[$0.value.group]?.holders[$0.value.slot] != nil }
    }
}
