import Foundation
import HashTreeCollections

/// What the engine needs of a typed table's contents, without its type:
/// counting, writing snapshots, the byte-level reads tools make, and
/// removals replayed by key bytes.
protocol AnyTableContents: Sendable {
    /// Entities plus quarantined entries.
    var count: Int { get }
    var encoding: TableEncoding { get }
    /// The entity type's name, for errors.
    var entityTypeName: String { get }
    /// The stored form of the entry under `key`, if any.
    func storedValue(forKeyBytes key: [UInt8]) -> StoredValue?
    /// Calls `body` with every entry's key and value bytes, in key byte order.
    func forEachEncodedEntry(_ body: ([UInt8], [UInt8]) throws -> Void) throws
    /// A copy without the entry under `key`; nil when there is none.
    func removing(keyBytes key: [UInt8]) -> (any AnyTableContents)?
    /// Checks that rows, indexes and quarantine agree. For tests.
    func checkInvariants() throws
}

/// An entry that does not decode as the table's type, kept with its bytes
/// untouched until the program removes it (``UndecodablePolicy/quarantine``).
struct QuarantinedEntry: Sendable {
    var bytes: [UInt8]
    var reason: String
}

/// One version of a typed table: its entities in identifier order, its
/// indexes, and the entries it quarantined. A value type over persistent
/// trees: taking a version is O(1), a change O(log n) per index.
struct TableContents<T: Entity>: AnyTableContents {
    let name: String
    var rows = PersistentBTree<T.ID, Row<T>>()
    var indexes: [IndexState<T>]
    var quarantine: TreeDictionary<[UInt8], QuarantinedEntry> = [:]
    let keyEncoding: KeyEncoding

    init(name: String, indexes: [Index<T>]) {
        self.name = name
        self.indexes = indexes.map(IndexState.init)
        keyEncoding = OrderedKey.encoding(of: T.ID.self)
    }

    var count: Int { rows.count + quarantine.count }
    var encoding: TableEncoding { TableEncoding(key: keyEncoding, value: .valueFormat) }
    var entityTypeName: String { "\(T.self)" }

    func row(_ id: T.ID) -> Row<T>? { rows.value(for: id) }

    /// Inserts or replaces `entity`; returns the row it replaced.
    @discardableResult
    mutating func put(_ entity: T, lsn: UInt64) -> Row<T>? {
        let old = rows.updateValue(Row(value: entity, lsn: lsn), forKey: entity.id)
        for index in indexes.indices { indexes[index].update(old: old?.value, new: entity) }
        return old
    }

    /// Removes the entity `id`; returns its row.
    @discardableResult
    mutating func remove(_ id: T.ID) -> Row<T>? {
        guard let old = rows.removeValue(forKey: id) else { return nil }
        for index in indexes.indices { indexes[index].update(old: old.value, new: nil) }
        return old
    }

    /// The identifier's bytes in the table's key encoding.
    func keyBytes(of id: T.ID) throws -> [UInt8] {
        try OrderedKey.encode(id).1
    }

    /// The identifier stored as `key`, if the bytes are one.
    func id(fromKeyBytes key: [UInt8]) -> T.ID? {
        switch keyEncoding {
        case .valueFormat: return try? ValueDecoder().decode(T.ID.self, from: key)
        case .raw: return nil
        default:
            switch OrderedKey.decode(key, as: keyEncoding) {
            case let .int(value)?: return (value as? T.ID) ?? (Int(exactly: value) as? T.ID) ?? (UInt64(exactly: value) as? T.ID)
            case let .uint(value)?: return value as? T.ID
            case let .string(value)?: return value as? T.ID
            case let .uuid(value)?: return value as? T.ID
            default: return nil
            }
        }
    }

    func storedValue(forKeyBytes key: [UInt8]) -> StoredValue? {
        if let quarantined = quarantine[key] { return .encoded(quarantined.bytes) }
        return id(fromKeyBytes: key).flatMap(row).map { .decoded(EncodedEntity(value: $0.value)) }
    }

    func forEachEncodedEntry(_ body: ([UInt8], [UInt8]) throws -> Void) throws {
        let encoder = ValueEncoder()
        var quarantined = quarantine.keys.sorted { $0.lexicographicallyPrecedes($1) }[...]
        // Identifier order is key byte order for every ordered encoding; the
        // value-format fallback is sorted by bytes here.
        var entries: [([UInt8], [UInt8])] = []
        try rows.forEach { id, row in
            let key = try keyBytes(of: id)
            let value = try encoder.encode(row.value)
            if keyEncoding == .valueFormat {
                entries.append((key, value))
                return true
            }
            while let next = quarantined.first, next.lexicographicallyPrecedes(key) {
                try body(next, quarantine[next]!.bytes)
                quarantined.removeFirst()
            }
            try body(key, value)
            return true
        }
        entries += quarantined.map { ($0, quarantine[$0]!.bytes) }
        quarantined = []
        for (key, value) in entries.sorted(by: { $0.0.lexicographicallyPrecedes($1.0) }) { try body(key, value) }
        for key in quarantined { try body(key, quarantine[key]!.bytes) }
    }

    func removing(keyBytes key: [UInt8]) -> (any AnyTableContents)? {
        var copy = self
        if copy.quarantine.removeValue(forKey: key) != nil { return copy }
        guard let id = id(fromKeyBytes: key), copy.remove(id) != nil else { return nil }
        return copy
    }

    func checkInvariants() throws {
        func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
            if !condition { throw InvariantViolation(description: "table \(name): \(message())") }
        }
        try check(rows.checkInvariants() == nil, rows.checkInvariants() ?? "")
        for index in indexes {
            try check(index.entries.checkInvariants() == nil, "\(index.definition): \(index.entries.checkInvariants() ?? "")")
            try check(index.entries.count == rows.count, "\(index.definition) holds \(index.entries.count) entries for \(rows.count) rows")
            var consistent = true
            index.entries.forEach { entry, _ in
                consistent = rows.value(for: entry.id).map { index.definition.key($0.value) == entry.key } ?? false
                return consistent
            }
            try check(consistent, "\(index.definition) has an entry its row does not")
        }
        var keysMatch = true
        rows.forEach { id, row in
            keysMatch = row.value.id == id
            return keysMatch
        }
        try check(keysMatch, "a row is stored under another entity's identifier")
    }
}

/// An entity in the engine's untyped view: encodes itself when a tool asks.
struct EncodedEntity<T: Encodable & Sendable>: SelfEncodingValue {
    let value: T
    func encodedBytes() throws -> [UInt8] { try ValueEncoder().encode(value) }
}
