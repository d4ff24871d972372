/// Errors of typed tables. Each says which table and what to do.
public enum TableError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A put would give two entities the same key in a `.unique` index; the
    /// transaction changes nothing.
    case uniqueViolation(index: String, value: String)
    /// Stored values no longer decode as the type (a non-optional field
    /// added, a type changed): the table did not open. `id`, `codingPath`
    /// and `reason` describe the first; `missingField` names the field it
    /// lacks when that is why (a key the stored value never had), nil
    /// otherwise; `count` says how many there are. Nothing on disk changed.
    ///
    /// The description says what works: for a missing field, make it
    /// optional, declare it ``Defaulted``, or decode it with
    /// `decodeIfPresent(_:forKey:) ?? default` in a hand-written
    /// `init(from:)` (a default value in the declaration alone does nothing:
    /// synthesized `Codable` ignores it); for anything, open the table with
    /// ``UndecodablePolicy/quarantine`` and repair the entries
    /// (``Quarantined/document()``).
    case undecodable(table: String, id: String, codingPath: String, missingField: String?, reason: String, count: Int)
    /// The table is already open with another entity type in this store.
    case typeMismatch(table: String, openedAs: String, requested: String)
    /// The table was written with another encoding, so its entries are not
    /// entities of this type: through the byte-level API (values of raw
    /// bytes, or keys of another encoding), or by an entity whose
    /// identifier type stores its keys otherwise (the identifier type
    /// changed). When only the keys differ, the store cannot tell the two
    /// apart, and the description gives the advice for each. Nothing was
    /// read or changed.
    case encodingMismatch(table: String, stored: TableEncoding, expected: TableEncoding)
    /// The table is already open with other index definitions.
    case indexMismatch(table: String, opened: [String], requested: [String])
    /// A `String` identifier that is not in Unicode NFC.
    case identifierNotNormalized(table: String, id: String)
    /// A put of an identifier whose stored value is quarantined: the put
    /// would overwrite bytes that did not decode. Remove the entry and put
    /// the new value in one transaction to replace it.
    case quarantined(table: String, id: String)
    /// A change through a table handle of another store, or of an earlier
    /// open of this one, in this store's transaction: it would have written
    /// the table as that handle holds it, hiding what this store holds.
    /// Nothing changed; open the table on the store the transaction writes,
    /// with ``Store/table(_:named:indexes:onUndecodable:)``, and use that handle.
    case storeMismatch(table: String)

    public var description: String {
        switch self {
        case let .uniqueViolation(index, value):
            "another entity already has \(value) in unique index \(index); nothing was written"
        case let .undecodable(table, id, codingPath, missingField, reason, count):
            "table \(table): \(count) stored value(s) no longer decode as the type; the first is \(id) at \(codingPath.isEmpty ? "the top level" : codingPath): \(reason). "
                + Self.advice(missingField: missingField)
        case let .typeMismatch(table, openedAs, requested):
            "table \(table) is open as \(openedAs) in this store, not as \(requested); use one entity type per table"
        case let .encodingMismatch(table, stored, expected) where stored.value == expected.value:
            "table \(table) holds entries whose keys are stored as \(stored.key), but this entity's identifier type stores them as \(expected.key). Nothing was read or changed. If the identifier type changed since they were written, open the table with the identifier type it was written with (a migration cannot change a table's keys); if they were written through the byte-level API, read them with it (store.current.value(in:key:)), or keep the entities under another table name"
        case let .encodingMismatch(table, stored, expected):
            "table \(table) holds entries with \(stored), not entities (\(expected)): it was written through the byte-level API. Nothing was read or changed; read it with the byte-level API (store.current.value(in:key:)), or keep the entities under another table name"
        case let .indexMismatch(table, opened, requested):
            "table \(table) is open with indexes [\(opened.joined(separator: ", "))], not [\(requested.joined(separator: ", "))]; open it once with one set of indexes"
        case let .identifierNotNormalized(table, id):
            "table \(table): the identifier \(id) is not in Unicode NFC; normalize it with precomposedStringWithCanonicalMapping"
        case let .quarantined(table, id):
            "table \(table): the stored value of \(id) is quarantined, and a put would overwrite it; to replace it, remove it and put the new value in one transaction (tx[table].remove(id), then tx[table].put(value))"
        case let .storeMismatch(table):
            "table \(table): this handle was opened on another store, or on an earlier open of this one, so nothing was written; open the table on the store whose transaction this is (store.table(...)) and use that handle"
        }
    }

    /// What makes undecodable values open, for a missing field and otherwise.
    private static func advice(missingField field: String?) -> String {
        let repair = "open the table with onUndecodable: .quarantine, read each entry of its quarantined list as a Document, and replace it"
        guard let field else { return "Decode the stored form in a hand-written init(from:), or \(repair)" }
        return "A default value in the declaration (var \(field) = …) does not help, since synthesized Codable ignores it; "
            + "make \(field) optional, declare it @Defaulted<Provider>, or decode it in a hand-written init(from:) "
            + "with decodeIfPresent(_:forKey: .\(field)) ?? default; or \(repair)"
    }
}

/// What opening a table does with stored values that no longer decode as its type.
public enum UndecodablePolicy: Sendable, Equatable {
    /// Throw ``TableError/undecodable(table:id:codingPath:missingField:reason:count:)``; nothing opens.
    case fail
    /// Open without them: each keeps its bytes, untouched and durable, and
    /// is listed in ``Table/quarantined`` until removed.
    case quarantine
}

/// A stored value that did not decode, kept as it was: an entry of
/// ``Table/quarantined`` (or of a transaction's
/// ``TableTransaction/quarantined``).
///
/// To repair one, read it as a ``Document`` (``document()``), build the
/// entity from it, and replace the entry in one transaction:
///
/// ```swift
/// try store.write { tx in
///     for entry in tx[notes].quarantined {
///         guard let id = entry.id else { continue }
///         var document = try entry.document()
///         document["priority"] = 0
///         let note = try DocumentDecoder().decode(Note.self, from: document)
///         try tx[notes].remove(id)     // the quarantined bytes go…
///         try tx[notes].put(note)      // …and the entity takes their place
///     }
/// }
/// ```
///
/// A value: it keeps the bytes it was read with, whatever happens to the
/// table afterwards.
public struct Quarantined<ID: Sendable>: Sendable {
    /// The identifier, when the key bytes decode as one.
    public let id: ID?
    /// The key as stored.
    public let key: [UInt8]
    /// Why the value did not decode, with its coding path.
    public let reason: String
    /// The value as stored, in LensDB's value format (<doc:ValueFormatSpecification>).
    public let bytes: [UInt8]

    /// The stored value as a self-describing document: every field it was
    /// written with, by name, whatever the table's type is now. `logtool
    /// dump` shows the same document as JSON.
    /// - Throws: `DecodingError` when the bytes are not in the value format
    ///   at all: an entry that is damaged, not one whose type changed.
    /// - Complexity: O(n) in the size of the value.
    public func document() throws -> Document {
        try Document(decodingBinary: bytes)
    }
}
