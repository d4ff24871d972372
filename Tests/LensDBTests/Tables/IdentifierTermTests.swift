import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// An entity with a field of its identifier's type beside `id`.
struct Purchase: Entity, Equatable {
    var id: Int64
    var owner: Int64
    var total: Int
}

/// Which terms of a filter name the identifier, so that the primary key
/// serves them: `\.id` as the program writes it, never another field of
/// the identifier's type, however the key path was made.
@Suite struct IdentifierTermTests {
    static func purchases() throws -> (Store, Table<Purchase>) {
        let store = try tableStore()
        let table = try store.table(Purchase.self, named: "purchases", indexes: [.on(\.owner)])
        try table.put((1...40).map { Purchase(id: $0, owner: $0 % 4, total: Int($0) * 10) })
        return (store, table)
    }

    @Test func aFieldOfTheIdentifiersTypeIsNotTheIdentifier() throws {
        let (store, table) = try Self.purchases()
        defer { store.close() }
        let byOwner = table.query.filter(\.owner == 3)
        #expect(byOwner.explain().contains("use index purchases.owner"), "\(byOwner.explain())")
        #expect(try byOwner.all().map(\.id) == Array(stride(from: 3, through: 39, by: 4)))
        // Identifier 3 and owner 3 are different entities' worth.
        let both = table.query.filter(\.owner == 3 && \.id == 7)
        #expect(both.explain().contains("primary key: 1"), "\(both.explain())")
        #expect(try both.all().map(\.id) == [7])
        #expect(try table.query.filter(\.owner == 3 && \.id == 8).all().isEmpty)
    }

    @Test func theIdentifierIsRecognizedWrittenEitherWay() throws {
        let (store, table) = try Self.purchases()
        defer { store.close() }
        for query in [table.query.filter(\.id == 7), table.query.filter(\Purchase.id == 7), table.query.filter(.in(\.id, [7, 9]))] {
            #expect(query.explain().contains("use the primary key"), "\(query.explain())")
        }
        #expect(try table.query.filter(.in(\Purchase.id, [9, 7, 100])).all().map(\.owner) == [3, 1])
    }

    /// Each key path object is described once; a full cache starts over.
    @Test func eachPathIsDescribedOnceAndAFullCacheEmpties() {
        let paths = IdentifierPaths(capacity: 2)
        let owner: AnyKeyPath = \Purchase.owner, id: AnyKeyPath = \Purchase.id, total: AnyKeyPath = \Purchase.total
        var described = 0
        func ask(_ path: AnyKeyPath, _ answer: Bool) -> Bool {
            paths.isIdentifier(path) {
                described += 1
                return answer
            }
        }
        #expect(!ask(owner, false) && !ask(owner, true))
        #expect(ask(id, true) && ask(id, false))
        #expect(described == 2 && paths.count == 2)
        // A third path empties the cache: the first is described again.
        #expect(!ask(total, false))
        #expect(paths.count == 1)
        #expect(ask(owner, true))
        #expect(described == 4)
    }
}
