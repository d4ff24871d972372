import LensDB

/// One change, as the reference model and the store both see it.
public enum ModelOperation: Sendable, Equatable {
    case put(table: String, key: [UInt8], value: [UInt8], encoding: TableEncoding = .raw)
    case remove(table: String, key: [UInt8])
    case setRoot(name: String, value: [UInt8], encoding: ValueEncoding = .raw)
    case removeRoot(name: String)

    /// Applies the change to a store transaction.
    public func apply(to transaction: inout Transaction) {
        switch self {
        case let .put(table, key, value, encoding): transaction.put(.encoded(value), for: key, in: table, encoding: encoding)
        case let .remove(table, key): transaction.remove(key, from: table)
        case let .setRoot(name, value, encoding): transaction.setRoot(.encoded(value), named: name, encoding: encoding)
        case let .removeRoot(name): transaction.removeRoot(named: name)
        }
    }
}

/// The obviously-correct store: plain dictionaries, changed one transaction
/// at a time. Random tests and the crash fuzzer compare stores against it.
public struct ReferenceModel: Sendable, Equatable {
    public private(set) var tables: [String: [[UInt8]: [UInt8]]] = [:]
    public private(set) var roots: [String: [UInt8]] = [:]
    /// The encoding each table and root declared: kept while it holds anything.
    public private(set) var tableEncodings: [String: TableEncoding] = [:]
    public private(set) var rootEncodings: [String: ValueEncoding] = [:]

    public init() {}

    public mutating func apply(_ transaction: [ModelOperation]) {
        for operation in transaction {
            switch operation {
            case let .put(table, key, value, encoding):
                tables[table, default: [:]][key] = value
                tableEncodings[table] = encoding
            case let .remove(table, key):
                tables[table]?[key] = nil
                if tables[table]?.isEmpty == true {
                    tables[table] = nil
                    tableEncodings[table] = nil
                }
            case let .setRoot(name, value, encoding):
                roots[name] = value
                rootEncodings[name] = encoding
            case let .removeRoot(name):
                roots[name] = nil
                rootEncodings[name] = nil
            }
        }
    }

    /// Whether `state` holds exactly the model's tables and roots.
    public func matches(_ state: StoreState) -> Bool {
        guard state.tableNames == tables.keys.sorted(), state.rootNames == roots.keys.sorted() else { return false }
        for (name, entries) in tables {
            guard state.encoding(ofTable: name) == tableEncodings[name] else { return false }
            let stored = state.entries(in: name)
            guard stored.count == entries.count else { return false }
            for (key, value) in entries {
                // A value that cannot encode is a mismatch, not a reason to stop checking.
                guard let bytes = try? stored[key]?.bytes(), bytes == value else { return false }
            }
        }
        for (name, value) in roots {
            guard state.encoding(ofRoot: name) == rootEncodings[name] else { return false }
            guard let bytes = try? state.root(named: name)?.bytes(), bytes == value else { return false }
        }
        return true
    }
}
