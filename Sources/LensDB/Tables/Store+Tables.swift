#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Store {
    /// Opens the typed table `name`, whose entries are entities of type `T`,
    /// with these secondary indexes.
    ///
    /// The first open in a process decodes each stored value once; from then
    /// on the table's entities live decoded in memory (never bytes and value
    /// both), with their indexes rebuilt from them. It writes nothing. Opening
    /// it again with the same type returns an equal table.
    ///
    /// ```swift
    /// let people = try store.table(Person.self, named: "people",
    ///                              indexes: [.on(\.city), .on(\.age), .on(\.city, \.age), .unique(\.email)])
    /// ```
    ///
    /// Thread-safety: any thread; serialized with writers while it decodes.
    /// - Throws: ``TableError/undecodable(table:id:codingPath:reason:count:)``
    ///   when stored values no longer decode as `T` (unless `onUndecodable`
    ///   is ``UndecodablePolicy/quarantine``); ``TableError/typeMismatch(table:openedAs:requested:)``,
    ///   ``TableError/indexMismatch(table:opened:requested:)``,
    ///   ``TableError/encodingMismatch(table:stored:expected:)``,
    ///   ``TableError/uniqueViolation(index:value:)`` when stored entities
    ///   break a unique index. A throw changes nothing.
    /// - Complexity: O(n log n) for the first open (decode and index), O(1) after.
    public func table<T: Entity>(
        _ type: T.Type, named name: String, indexes: [Index<T>] = [], onUndecodable: UndecodablePolicy = .fail
    ) throws -> Table<T> {
        try writer.withLock { side throws -> Table<T> in
            if let opened = side.head.typed[name] {
                guard let contents = opened as? TableContents<T> else {
                    throw TableError.typeMismatch(table: name, openedAs: opened.entityTypeName, requested: "\(T.self)")
                }
                let definitions = contents.indexes.map(\.definition)
                guard definitions.count == indexes.count, zip(definitions, indexes).allSatisfy({ $0.sameDefinition(as: $1) }) else {
                    throw TableError.indexMismatch(table: name, opened: definitions.map(\.description), requested: indexes.map(\.description))
                }
                return Table(store: self, name: name, indexes: indexes)
            }
            try waitForInFlightCommits(side)
            let contents = try TableLoader<T>(name: name, indexes: indexes, policy: onUndecodable).load(from: side.head)
            side.head.typed[name] = contents
            side.head.tables[name] = nil
            // The same state, held decoded: readers cannot tell the difference.
            published.withLock { $0 = side.head }
            return Table(store: self, name: name, indexes: indexes)
        }
    }

    /// Waits, holding the writers' lock, until every commit already queued
    /// is published, so that the version readers see and the head are one
    /// and both can take the decoded table.
    func waitForInFlightCommits(_ side: WriterSide) throws {
        while current.lsn < side.head.lsn {
            if let failure = side.log?.failure { throw StoreError.failed(path: path ?? ":memory:", cause: "\(failure)") }
            var pause = timespec(tv_sec: 0, tv_nsec: 100_000)
            nanosleep(&pause, nil)
        }
    }
}

/// Decodes a table's stored entries into entities and builds its indexes.
struct TableLoader<T: Entity> {
    let name: String
    let indexes: [Index<T>]
    let policy: UndecodablePolicy

    func load(from state: StoreState) throws -> TableContents<T> {
        var contents = TableContents<T>(name: name, indexes: indexes)
        let entries = state.tables[name] ?? [:]
        if let declared = state.encoding(ofTable: name), declared != contents.encoding, !entries.isEmpty {
            throw TableError.encodingMismatch(table: name, stored: declared, expected: contents.encoding)
        }
        let decoder = ValueDecoder()
        var failures: [(key: [UInt8], error: Error)] = []
        for (key, value) in entries {
            // Stored values are bytes until a table decodes them; `.decoded`
            // cannot occur in a table no program has opened.
            let bytes = (try? value.bytes()) ?? []
            do {
                let entity = try decoder.decode(T.self, from: bytes)
                guard let id = contents.id(fromKeyBytes: key), id == entity.id else {
                    throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "stored under a key that is not its identifier \(entity.id)"))
                }
                contents.rows.updateValue(Row(value: entity, lsn: state.lsn), forKey: id)
            } catch {
                failures.append((key, error))
                if policy == .quarantine { contents.quarantine[key] = QuarantinedEntry(bytes: bytes, reason: Self.reason(error)) }
            }
        }
        if policy == .fail, let first = failures.min(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let id = contents.id(fromKeyBytes: first.key).map { "\($0)" } ?? RenderedValue(key: first.key, encoding: contents.keyEncoding).text
            throw TableError.undecodable(table: name, id: id, codingPath: Self.codingPath(first.error),
                                         reason: Self.reason(first.error), count: failures.count)
        }
        try buildIndexes(&contents)
        return contents
    }

    /// Fills every index from the rows, checking unique ones.
    private func buildIndexes(_ contents: inout TableContents<T>) throws {
        for position in contents.indexes.indices {
            var index = contents.indexes[position]
            var keys: [IndexEntry<T.ID>] = []
            keys.reserveCapacity(contents.rows.count)
            contents.rows.forEach { id, row in keys.append(IndexEntry(key: index.definition.key(row.value), id: id)); return true }
            keys.sort()
            if index.definition.isUnique {
                for (a, b) in zip(keys, keys.dropFirst()) where a.key == b.key && a.key.first != .null {
                    throw TableError.uniqueViolation(index: "\(name).\(index.definition.name)", value: a.key.description)
                }
            }
            for key in keys { index.entries.updateValue((), forKey: key) }
            contents.indexes[position] = index
        }
    }

    static func codingPath(_ error: Error) -> String { DecodingFailure.codingPath(error) }

    static func reason(_ error: Error) -> String { DecodingFailure.reason(error) }
}
