import LensDB

/// One change, as the reference model and the store both see it.
public enum ModelOperation: Sendable, Equatable {
    case put(table: String, key: [UInt8], value: [UInt8])
    case remove(table: String, key: [UInt8])
    case setRoot(name: String, value: [UInt8])
    case removeRoot(name: String)

    /// Applies the change to a store transaction.
    public func apply(to transaction: inout Transaction) {
        switch self {
        case let .put(table, key, value): transaction.put(value, for: key, in: table)
        case let .remove(table, key): transaction.remove(key, from: table)
        case let .setRoot(name, value): transaction.setRoot(.encoded(value), named: name)
        case let .removeRoot(name): transaction.removeRoot(named: name)
        }
    }
}

/// The obviously-correct store: plain dictionaries, changed one transaction
/// at a time. Random tests and the crash fuzzer compare stores against it.
public struct ReferenceModel: Sendable, Equatable {
    public private(set) var tables: [String: [[UInt8]: [UInt8]]] = [:]
    public private(set) var roots: [String: [UInt8]] = [:]

    public init() {}

    public mutating func apply(_ transaction: [ModelOperation]) {
        for operation in transaction {
            switch operation {
            case let .put(table, key, value): tables[table, default: [:]][key] = value
            case let .remove(table, key):
                tables[table]?[key] = nil
                if tables[table]?.isEmpty == true { tables[table] = nil }
            case let .setRoot(name, value): roots[name] = value
            case let .removeRoot(name): roots[name] = nil
            }
        }
    }

    /// Whether `state` holds exactly the model's tables and roots.
    public func matches(_ state: StoreState) -> Bool {
        guard state.tableNames == tables.keys.sorted(), state.rootNames == roots.keys.sorted() else { return false }
        for (name, entries) in tables {
            let stored = state.entries(in: name)
            guard stored.count == entries.count else { return false }
            for (key, value) in entries {
                // A value that cannot encode is a mismatch, not a reason to stop checking.
                guard let bytes = try? stored[key]?.bytes(), bytes == value else { return false }
            }
        }
        for (name, value) in roots {
            guard let bytes = try? state.root(named: name)?.bytes(), bytes == value else { return false }
        }
        return true
    }
}
