import Foundation
import LensLog

/// The sample store of `logtool demo`: two tables keyed by ordered Int64
/// identifiers and a root document, all in the value encoding, so that every
/// other subcommand has something to show.
public enum DemoStore {
    struct Person: Codable {
        var id: Int64
        var name: String
        var city: String
        var age: Int
    }

    struct Order: Codable {
        var id: Int64
        var person: Int64
        var total: Double
        var placed: Date
    }

    struct Settings: Codable {
        var theme: String
        var notifications: Bool
    }

    /// Writes the sample into the store at `path` (created if needed), in
    /// three transactions, and returns the store's last LSN.
    @discardableResult
    /// With `key`, the sample store is encrypted.
    public static func write(at path: String, fileSystem: any FileSystem = POSIXFileSystem(), key: EncryptionKey? = nil) throws -> UInt64 {
        var options = StoreOptions()
        options.fileSystem = fileSystem
        options.encryptionKey = key
        let store = try Store(at: path, options: options)
        defer { store.close() }
        let encoder = ValueEncoder()
        let typed = TableEncoding(key: .int64, value: .valueFormat)
        let people = [Person(id: 1, name: "Alice", city: "Paris", age: 34), Person(id: 2, name: "Bob", city: "Lyon", age: 27),
                      Person(id: 3, name: "Chloé", city: "Paris", age: 41)]
        try store.write { tx in
            for person in people {
                tx.put(.encoded(try encoder.encode(person)), for: OrderedKey.int64(person.id), in: "people", encoding: typed)
            }
        }
        try store.write { tx in
            for id in Int64(1)...4 {
                let order = Order(id: id, person: (id % 3) + 1, total: Double(id) * 12.5, placed: Date(timeIntervalSince1970: 1_790_000_000 + Double(id) * 3600))
                tx.put(.encoded(try encoder.encode(order)), for: OrderedKey.int64(order.id), in: "orders", encoding: typed)
            }
        }
        try store.write { tx in
            tx.setRoot(.encoded(try encoder.encode(Settings(theme: "dark", notifications: true))), named: "settings", encoding: .valueFormat)
            tx.remove(OrderedKey.int64(4), from: "orders")
        }
        return store.current.lsn
    }
}
