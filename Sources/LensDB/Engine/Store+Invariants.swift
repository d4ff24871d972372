import LensLog

/// An internal consistency check failed: a LensDB bug, never bad input.
public struct InvariantViolation: Error, Sendable, CustomStringConvertible {
    public var description: String
}

extension Store {
    /// Checks the store's internal invariants; tests call it after every
    /// commit, compaction and open (``StoreOptions/checksInvariants``).
    ///
    /// - the published version is never ahead of the writers' head;
    /// - the log's next LSN follows the head;
    /// - the log's generation is the store's;
    /// - every value encodes, and no table is kept empty;
    /// - a table held as its snapshot stored it is held no other way, in
    ///   key order.
    /// - Throws: ``InvariantViolation`` naming the broken one.
    public func checkInvariants() throws {
        let visible = current
        // Read together under the writers' lock: a commit in between would
        // move the log ahead of a head read earlier.
        let (head, log, generation, nextLSN, failed) = writer.withLock {
            ($0.head, $0.log, $0.generation, $0.log?.nextLSN, $0.failure != nil)
        }
        func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
            if !condition { throw InvariantViolation(description: message()) }
        }
        try check(visible.lsn <= head.lsn, "published LSN \(visible.lsn) ahead of head \(head.lsn)")
        if let log {
            // A store that failed while logging several records may have
            // queued some of them past its head: recovery judges those.
            if !failed { try check(nextLSN == head.lsn + 1, "log next LSN \(nextLSN ?? 0) does not follow head \(head.lsn)") }
            try check(log.header.generation == generation, "log generation \(log.header.generation) is not the store's \(generation)")
        }
        for contents in visible.typed.values { try contents.checkInvariants() }
        // Held as bytes, in their chunks: checked here, not turned into a hash map below.
        for (name, loaded) in visible.snapshotTables {
            try check(visible.tables[name] == nil && visible.typed[name] == nil, "table \(name) is held two ways")
            try check(loaded.count > 0, "table \(name) kept empty")
            try check(loaded.keysAscend, "table \(name) is held out of key order")
        }
        for name in visible.tableNames where visible.typed[name] == nil && visible.snapshotTables[name] == nil {
            let entries = visible.entries(in: name)
            try check(!entries.isEmpty, "table \(name) kept empty")
            for (_, value) in entries { _ = try value.bytes() }
        }
        for name in visible.rootNames { _ = try visible.root(named: name)!.bytes() }
    }

    func assertInvariants() {
        do { try checkInvariants() } catch { preconditionFailure("LensDB invariant violated: \(error)") }
    }
}
