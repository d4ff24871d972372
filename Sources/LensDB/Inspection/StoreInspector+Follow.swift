import Foundation
import LensLog

/// `logtool dump --follow`: the transactions a program commits, as it commits them.
extension StoreInspector {
    /// Calls `body` with each transaction committed to the store from `from`
    /// on, in LSN order, each once, while another process writes and
    /// compacts the store; returns after `until`, or once `shouldStop`
    /// says so.
    ///
    /// Each transaction has the shape ``dump(from:to:table:progress:_:)``
    /// gives it, keys and values shown as their table's recorded encoding
    /// says (the encodings come from the snapshot following starts from and
    /// every declaration after it, whether shown or not).
    ///
    /// A transaction is passed on once the store has proven it durable, not
    /// merely once its record is in the log: a later record that says so, a
    /// snapshot that holds it, a clean close, or a sync of the log by the
    /// follower itself after the record has waited one `interval` for the
    /// others (see `LogFollower` in LensLog). So everything passed on survives any
    /// crash of the writer: after one, follow again from the last LSN passed
    /// on + 1. Across compactions, log swaps and reopens of the store it
    /// goes on without losing or repeating an LSN: it holds each log open
    /// from the moment it is listed, so a compaction that deletes a log
    /// does not take unread records with it.
    ///
    /// Takes no lock and changes no file.
    ///
    /// ```swift
    /// try StoreInspector(path: "state.lensdb").follow(until: 120) { print($0.lsn) }
    /// ```
    ///
    /// - Parameters:
    ///   - from: the first LSN to pass on; nil: the first one after what the
    ///     logs hold when following starts.
    ///   - until: the last LSN to pass on; following ends once it is proven.
    ///   - table: when set, only transactions touching this table, with only their operations on it.
    ///   - interval: how long to wait between two looks at the store.
    ///   - shouldStop: asked between looks (at least every 10 ms); true ends following.
    ///   - body: called with each transaction, in LSN order.
    /// - Throws: ``InspectionError/notAStore(path:reason:)``;
    ///   `FollowError.compactedAway` when `from` is
    ///   already in a snapshot, or when a log was created and compacted away between two looks;
    ///   `FollowError` for corruption or a transaction passed on that the
    ///   store lost; `LogError.unsupportedVersion` or `.unsupportedCipher`
    ///   once every transaction read is passed on and the store goes on in
    ///   a log a newer LensDB wrote; `StorageError`, `RecoveryError`; or
    ///   what `body` throws.
    public func follow(
        from: UInt64? = nil, until: UInt64 = .max, table: String? = nil, interval: Duration = .milliseconds(100),
        shouldStop: () -> Bool = { false }, _ body: (DumpedTransaction) throws -> Void
    ) throws {
        try requireFittingKey()
        var catalog = EncodingCatalog()
        var follower = try LogFollower(directory: directory, cipher: key) { snapshot in
            catalog = EncodingCatalog()
            try snapshot.forEachItem { catalog.note($0) }
        }
        defer { follower.close() }
        if let from, let base = follower.base, from <= base.lastLSN {
            throw FollowError.compactedAway(lsn: from, snapshot: base.path, snapshotLSN: base.lastLSN)
        }
        var first = from
        while true {
            let records = try follower.poll()
            // Without `from`, following starts after what the first look read.
            let start = first ?? follower.readLSN + 1
            first = start
            for followed in records {
                let dumped = Self.dumped(followed.record, file: followed.file, catalog: &catalog)
                guard followed.record.lsn >= start, followed.record.lsn <= until, let shown = dumped.only(table) else { continue }
                try body(shown)
            }
            if follower.deliveredLSN >= until || shouldStop() { return }
            Self.wait(interval, unless: shouldStop)
        }
    }

    /// Sleeps for `interval`, in steps of at most 10 ms so that a stop is seen soon.
    private static func wait(_ interval: Duration, unless shouldStop: () -> Bool) {
        let end = ContinuousClock.now + interval
        while !shouldStop(), case let left = end - ContinuousClock.now, left > .zero {
            Thread.sleep(forTimeInterval: min(left.seconds, 0.01))
        }
    }
}
