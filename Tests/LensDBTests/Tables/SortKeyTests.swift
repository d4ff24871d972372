import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// A field type of the program's own: `Comparable`, but with no index
/// order, so a sort compares its rows' fields rather than index values.
struct Edition: Comparable, Codable, Hashable, Sendable {
    var major: Int
    var minor: Int

    static func < (a: Edition, b: Edition) -> Bool { (a.major, a.minor) < (b.major, b.minor) }
}

struct Release: Entity, Equatable {
    var id: Int64
    var edition: Edition
    var previous: Edition?
    var name: String
}

/// Orders on fields whose type indexes cannot order: each direction, ties
/// broken by the next key and then by identifier, nil first ascending and
/// last descending, checked against the same sort written out.
@Suite struct SortKeyTests {
    static func releases() throws -> (Store, Table<Release>, [Release]) {
        let store = try tableStore()
        let table = try store.table(Release.self, named: "releases")
        let all = (Int64(1)...30).map { id -> Release in
            let edition = Edition(major: Int(id % 4), minor: Int(id * 7 % 3))
            return Release(id: id, edition: edition, previous: id % 5 == 0 ? nil : Edition(major: Int(id % 3), minor: 0),
                           name: ["b", "a", "c"][Int(id % 3)])
        }
        try table.put(all)
        return (store, table, all)
    }

    @Test func aFieldWithoutAnIndexOrderSortsEachWay() throws {
        let (store, table, all) = try Self.releases()
        defer { store.close() }
        let ascending = all.sorted { $0.edition != $1.edition ? $0.edition < $1.edition : $0.id < $1.id }
        #expect(try table.query.sorted(by: \.edition).all() == ascending)
        let descending = all.sorted { $0.edition != $1.edition ? $1.edition < $0.edition : $0.id < $1.id }
        #expect(try table.query.sorted(by: \.edition, .descending).all() == descending)
        #expect(try table.query.sorted(by: \.edition, .descending).offset(3).limit(4).all() == Array(descending[3..<7]))
        let thenByName = all.sorted {
            if $0.edition != $1.edition { return $1.edition < $0.edition }
            if $0.name != $1.name { return $0.name < $1.name }
            return $0.id < $1.id
        }
        #expect(try table.query.sorted(by: \.edition, .descending).then(by: \.name).all() == thenByName)
    }

    @Test func aNilOptionalComesFirstAscendingAndLastDescending() throws {
        let (store, table, all) = try Self.releases()
        defer { store.close() }
        func before(_ a: Edition?, _ b: Edition?) -> Bool {
            switch (a, b) {
            case (nil, _?): true
            case let (x?, y?): x < y
            default: false
            }
        }
        let ascending = all.sorted { $0.previous != $1.previous ? before($0.previous, $1.previous) : $0.id < $1.id }
        #expect(try table.query.sorted(by: \.previous).all() == ascending)
        #expect(try table.query.sorted(by: \.previous).first()?.previous == nil)
        let descending = all.sorted { $0.previous != $1.previous ? before($1.previous, $0.previous) : $0.id < $1.id }
        #expect(try table.query.sorted(by: \.previous, .descending).all() == descending)
        #expect(try table.query.sorted(by: \.previous, .descending).all().last?.previous == nil)
    }
}
