import LensLog

// The payload of a transaction record (record type 1). Specified in the
// article "Log format" (section "Transaction payload"). Stored on disk —
// never renumber.
//
//   payload   := opCount(varint) op*
//   op        := kind(u8) fields
//   put       := 1 table(string) key(bytes) value(bytes)
//   remove    := 2 table(string) key(bytes)
//   setRoot   := 3 name(string) value(bytes)
//   removeRoot:= 4 name(string)
//   declareTable := 5 table(string) keyEncoding(u8) valueEncoding(u8)   (log format v2)
//   declareRoot  := 6 name(string) valueEncoding(u8)                    (log format v2)
//   patchRoot    := 7 name(string) keyCount(varint) key(string)* change  (log format v3)
//   change       := 1 value(bytes)   (set the member)  |  2   (remove it)
//   string, bytes := length(varint) raw

/// The kind of an operation in a transaction payload. Stored on disk — never renumber.
enum OperationKind: UInt8 {
    case put = 1
    case remove = 2
    case setRoot = 3
    case removeRoot = 4
    /// Since log format v2: a table's key and value encodings.
    case declareTable = 5
    /// Since log format v2: a root document's value encoding.
    case declareRoot = 6
    /// Since log format v3: one member of a root document set or removed.
    case patchRoot = 7
}

/// What a patch (operation 7) does to its member. Stored on disk — never renumber.
enum PatchChange: UInt8 {
    /// The member is set to the value that follows.
    case set = 1
    /// The member is removed.
    case remove = 2
}

enum TransactionFormat {
    /// The payload of `operations`. Decoded values are encoded here, once.
    /// `operationBytes`, when given, is what the operations take without
    /// their count (``Transaction/operationBytes``): the payload is then
    /// reserved without a pass over them.
    ///
    /// `earlier`, when given, is the payload of the first `earlier.count`
    /// of `operations`, made before the rest were added: its operations'
    /// bytes are copied from it, not made again, and the bytes are the same.
    static func encode(
        _ operations: [Operation], continuing earlier: (count: Int, payload: [UInt8])? = nil, operationBytes: Int? = nil
    ) throws -> [UInt8] {
        let made = earlier?.count ?? 0
        precondition(made <= operations.count, "an earlier payload of \(made) operations cannot start \(operations.count)")
        var bytes: [UInt8] = []
        bytes.reserveCapacity(reservation(for: operations, operationBytes: operationBytes))
        bytes.appendVarint(UInt64(operations.count))
        if let earlier { bytes.append(contentsOf: earlier.payload[varintSize(UInt64(earlier.count))...]) }
        // By place: iterating would copy each operation out, retaining its
        // key and value, an atomic write to memory another thread made.
        for place in made..<operations.count { try append(operations[place], to: &bytes) }
        return bytes
    }

    /// ``encode(_:)``, emptying `operations` as it goes: each operation is
    /// released once its bytes are in the payload, so a large transaction's
    /// values are not held beside the whole payload they were copied into
    /// (a bulk put's peak memory). The bytes are the same. On a throw,
    /// `operations` holds an unspecified part of what it held.
    static func encode(draining operations: inout [Operation], operationBytes: Int? = nil) throws -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(reservation(for: operations, operationBytes: operationBytes))
        bytes.appendVarint(UInt64(operations.count))
        // The last reference to a value goes with the operation swapped out
        // here; an empty name takes no allocation.
        for index in operations.indices {
            var operation = Operation.removeRoot(name: "")
            swap(&operation, &operations[index])
            try append(operation, to: &bytes)
        }
        operations = []
        return bytes
    }

    /// Appends `operation`'s bytes to a payload.
    private static func append(_ operation: Operation, to bytes: inout [UInt8]) throws {
        switch operation {
        case let .put(table, key, value):
            bytes.append(OperationKind.put.rawValue)
            bytes.appendLengthPrefixed(table)
            bytes.appendLengthPrefixed(key)
            bytes.appendLengthPrefixed(try value.bytes())
        case let .remove(table, key):
            bytes.append(OperationKind.remove.rawValue)
            bytes.appendLengthPrefixed(table)
            bytes.appendLengthPrefixed(key)
        case let .setRoot(name, value):
            bytes.append(OperationKind.setRoot.rawValue)
            bytes.appendLengthPrefixed(name)
            bytes.appendLengthPrefixed(try value.bytes())
        case let .removeRoot(name):
            bytes.append(OperationKind.removeRoot.rawValue)
            bytes.appendLengthPrefixed(name)
        case let .declareTable(table, encoding):
            bytes.append(OperationKind.declareTable.rawValue)
            bytes.appendLengthPrefixed(table)
            bytes.append(encoding.key.rawValue)
            bytes.append(encoding.value.rawValue)
        case let .declareRoot(name, encoding):
            bytes.append(OperationKind.declareRoot.rawValue)
            bytes.appendLengthPrefixed(name)
            bytes.append(encoding.rawValue)
        case let .patchRoot(name, path, value):
            bytes.append(OperationKind.patchRoot.rawValue)
            bytes.appendLengthPrefixed(name)
            bytes.appendVarint(UInt64(path.count))
            for key in path { bytes.appendLengthPrefixed(key) }
            if let value {
                bytes.append(PatchChange.set.rawValue)
                bytes.appendLengthPrefixed(try value.bytes())
            } else {
                bytes.append(PatchChange.remove.rawValue)
            }
        }
    }

    /// The bytes ``encode(_:)`` makes of `operations`, exactly when their
    /// values are stored encoded (a value still to encode counts for
    /// nothing, its length included):
    /// reserved before encoding, so a large record is neither copied as it
    /// grows nor left with up to twice its bytes allocated while it is
    /// compressed and written.
    static func encodedSize(of operations: [Operation]) -> Int {
        operations.reduce(varintSize(UInt64(operations.count))) { $0 + encodedSize(of: $1) }
    }

    /// The room a payload of `operations` is made with: their size, from
    /// `operationBytes` when the caller summed it, else counted now.
    private static func reservation(for operations: [Operation], operationBytes: Int?) -> Int {
        operationBytes.map { varintSize(UInt64(operations.count)) + $0 } ?? encodedSize(of: operations)
    }

    /// The bytes `operation` takes in a payload.
    static func encodedSize(of operation: Operation) -> Int {
        let prefixed = lengthPrefixedSize
        func value(_ value: StoredValue) -> Int {
            if case let .encoded(bytes) = value { prefixed(bytes.count) } else { 0 }
        }
        switch operation {
        case let .put(table, key, stored): return putSize(table: table, key: key.count) + value(stored)
        case let .remove(table, key): return 1 + prefixed(table.utf8.count) + prefixed(key.count)
        case let .setRoot(name, stored): return 1 + prefixed(name.utf8.count) + value(stored)
        case let .removeRoot(name): return 1 + prefixed(name.utf8.count)
        case let .declareTable(table, _): return 3 + prefixed(table.utf8.count)
        case let .declareRoot(name, _): return 2 + prefixed(name.utf8.count)
        case let .patchRoot(name, path, stored):
            return path.reduce(2 + prefixed(name.utf8.count) + varintSize(UInt64(path.count)) + (stored.map(value) ?? 0)) {
                $0 + prefixed($1.utf8.count)
            }
        }
    }

    /// The bytes a put into `table` of a key of `key` bytes takes in a
    /// payload, its value's length and bytes aside.
    static func putSize(table: String, key: Int) -> Int {
        1 + lengthPrefixedSize(table.utf8.count) + lengthPrefixedSize(key)
    }

    /// The bytes `count` bytes take with their length before them.
    static func lengthPrefixedSize(_ count: Int) -> Int {
        varintSize(UInt64(count)) + count
    }

    /// How many operations ``decode(_:)`` reserves room for ahead of reading
    /// them (about 4.5 MiB): a count field costs a damaged record nothing to
    /// claim, so a 64 MiB payload could otherwise ask for gigabytes.
    static let maxReservedOperations = 1 << 16

    /// The bytes of `value` as a LEB128 varint.
    static func varintSize(_ value: UInt64) -> Int {
        max(1, (UInt64.bitWidth - value.leadingZeroBitCount + 6) / 7)
    }

    /// The operations of a payload, values left encoded; nil when malformed.
    /// Never allocates more than the payload's own bytes justify: the count
    /// is trusted for at most ``maxReservedOperations``, and past that the
    /// array grows only with operations actually decoded.
    static func decode(_ payload: [UInt8]) -> [Operation]? {
        var cursor = ByteCursor(payload)
        guard let count = cursor.varint(), count <= UInt64(payload.count) else { return nil }
        var operations: [Operation] = []
        operations.reserveCapacity(Int(min(count, UInt64(maxReservedOperations))))
        for _ in 0..<count {
            guard let operation = decodeOperation(&cursor) else { return nil }
            operations.append(operation)
        }
        return cursor.isAtEnd ? operations : nil
    }

    private static func decodeOperation(_ cursor: inout ByteCursor) -> Operation? {
        switch cursor.byte().flatMap(OperationKind.init(rawValue:)) {
        case .put?:
            guard let table = cursor.string(), let key = cursor.lengthPrefixed(), let value = cursor.lengthPrefixed() else { return nil }
            return .put(table: table, key: key, value: .encoded(value))
        case .remove?:
            guard let table = cursor.string(), let key = cursor.lengthPrefixed() else { return nil }
            return .remove(table: table, key: key)
        case .setRoot?:
            guard let name = cursor.string(), let value = cursor.lengthPrefixed() else { return nil }
            return .setRoot(name: name, value: .encoded(value))
        case .removeRoot?:
            guard let name = cursor.string() else { return nil }
            return .removeRoot(name: name)
        case .declareTable?:
            guard let table = cursor.string(), let key = cursor.byte().flatMap(KeyEncoding.init(rawValue:)),
                  let value = cursor.byte().flatMap(ValueEncoding.init(rawValue:)) else { return nil }
            return .declareTable(table: table, encoding: TableEncoding(key: key, value: value))
        case .declareRoot?:
            guard let name = cursor.string(), let value = cursor.byte().flatMap(ValueEncoding.init(rawValue:)) else { return nil }
            return .declareRoot(name: name, encoding: value)
        case .patchRoot?:
            return decodePatch(&cursor)
        case nil:
            return nil
        }
    }

    /// A patch: at least one key and at most ``ValueFormat/maxDepth``, since
    /// a deeper member could not be encoded.
    private static func decodePatch(_ cursor: inout ByteCursor) -> Operation? {
        guard let name = cursor.string(), let count = cursor.varint(), (1...UInt64(ValueFormat.maxDepth)).contains(count) else { return nil }
        var path: [String] = []
        for _ in 0..<count {
            guard let key = cursor.string() else { return nil }
            path.append(key)
        }
        switch cursor.byte().flatMap(PatchChange.init(rawValue:)) {
        case .set?:
            guard let value = cursor.lengthPrefixed() else { return nil }
            return .patchRoot(name: name, path: path, value: .encoded(value))
        case .remove?: return .patchRoot(name: name, path: path, value: nil)
        case nil: return nil
        }
    }
}
