@_spi(CrashTesting) import LensDB

/// One change, as the reference model and the store both see it.
public enum ModelOperation: Sendable, Equatable {
    case put(table: String, key: [UInt8], value: [UInt8], encoding: TableEncoding = .raw)
    case remove(table: String, key: [UInt8])
    case setRoot(name: String, value: [UInt8], encoding: ValueEncoding = .raw)
    case removeRoot(name: String)
    /// Sets (value-format bytes) or removes (nil) one member of a
    /// value-format root document, as a lens write logs it.
    case patchRoot(name: String, path: [String], value: [UInt8]?)

    /// Applies the change to a store transaction.
    public func apply(to transaction: inout Transaction) {
        switch self {
        case let .put(table, key, value, encoding): transaction.put(.encoded(value), for: key, in: table, encoding: encoding)
        case let .remove(table, key): transaction.remove(key, from: table)
        case let .setRoot(name, value, encoding): transaction.setRoot(.encoded(value), named: name, encoding: encoding)
        case let .removeRoot(name): transaction.removeRoot(named: name)
        case let .patchRoot(name, path, value): transaction.patchRoot(named: name, at: path, to: value)
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
            case let .patchRoot(name, path, value):
                // The workloads patch only roots and paths that exist.
                let document = try! Document(decodingBinary: roots[name]!)
                let member = value.map { try! Document(decodingBinary: $0) }
                roots[name] = Self.patched(document, path[...], to: member)!.binaryEncoded()
            }
        }
    }

    /// `document` with the member at `path` set to `value` or removed (nil),
    /// rebuilt level by level; nil when a key on the way is not an object member.
    static func patched(_ document: Document, _ path: ArraySlice<String>, to value: Document?) -> Document? {
        guard case .object = document, let key = path.first else { return nil }
        var copy = document
        guard path.count > 1 else {
            if let value { copy[key] = value } else { copy.removeValue(forKey: key) }
            return copy
        }
        guard let child = document.member(at: [key]), let changed = patched(child, path.dropFirst(), to: value) else { return nil }
        copy[key] = changed
        return copy
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
