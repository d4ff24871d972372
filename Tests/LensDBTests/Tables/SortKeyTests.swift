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

/// A release whose edition ties often, so the keys after it decide.
private struct Build: Entity, Equatable {
    var id: Int64
    var edition: Edition
    var name: String
    var size: Double?

    // NaN is not equal to itself: compare sizes by their bits.
    static func == (a: Build, b: Build) -> Bool {
        a.id == b.id && a.edition == b.edition && a.name == b.name && a.size?.bitPattern == b.size?.bitPattern
    }
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

    /// After a key with no index order, a sort compares rows key by key:
    /// keys of index-ordered types then order as filters and indexes do
    /// (strings by their NFC forms, a nil first, NaN after every number),
    /// each in its own direction.
    @Test func orderedKeysAfterOneWithoutAnIndexOrderBreakItsTies() throws {
        var random = SeededGenerator.fromEnvironment("SortKeyTests.orderedKeysAfterOneWithoutAnIndexOrderBreakItsTies")
        let store = try tableStore()
        defer { store.close() }
        let table = try store.table(Build.self, named: "builds")
        // "é" precomposed and decomposed are one name once normalized.
        let names = ["b", "a", "c", "\u{E9}", "e\u{301}", "ea"]
        let sizes: [Double?] = [nil, .nan, -1.5, -0.0, 0, 2, 2.5, 1e9]
        let builds = (Int64(1)...80).map { id in
            Build(id: id, edition: Edition(major: Int.random(in: 0...1, using: &random), minor: 0),
                  name: names.randomElement(using: &random)!, size: sizes.randomElement(using: &random)!)
        }
        try table.put(builds)
        func nameOrder(_ a: String, _ b: String) -> Int {
            let (x, y) = (a.precomposedStringWithCanonicalMapping, b.precomposedStringWithCanonicalMapping)
            return x.utf8.lexicographicallyPrecedes(y.utf8) ? -1 : (y.utf8.lexicographicallyPrecedes(x.utf8) ? 1 : 0)
        }
        func sizeOrder(_ a: Double?, _ b: Double?) -> Int {
            // nil first, then numbers, then NaN.
            func rank(_ size: Double?) -> (Int, Double) { size.map { $0.isNaN ? (2, 0) : (1, $0) } ?? (0, 0) }
            let (x, y) = (rank(a), rank(b))
            return x < y ? -1 : (y < x ? 1 : 0)
        }
        func sorted(_ compare: (Build, Build) -> Int) -> [Build] {
            builds.sorted { let order = compare($0, $1); return order != 0 ? order < 0 : $0.id < $1.id }
        }
        let byNameDescendingThenSize = sorted { a, b in
            if a.edition != b.edition { return a.edition < b.edition ? -1 : 1 }
            let name = nameOrder(a.name, b.name)
            return name != 0 ? -name : sizeOrder(a.size, b.size)
        }
        #expect(try table.query.sorted(by: \.edition).then(by: \.name, .descending).then(by: \.size).all() == byNameDescendingThenSize)
        let bySizeDescending = sorted { a, b in
            if a.edition != b.edition { return a.edition < b.edition ? 1 : -1 }
            return -sizeOrder(a.size, b.size)
        }
        #expect(try table.query.sorted(by: \.edition, .descending).then(by: \.size, .descending).all() == bySizeDescending)
        #expect(try table.query.sorted(by: \.edition, .descending).then(by: \.size, .descending).offset(5).limit(30).all()
            == Array(bySizeDescending[5..<35]))
        // A short page keeps its first few by a bounded heap, not a whole sort.
        #expect(try table.query.sorted(by: \.edition).then(by: \.name, .descending).then(by: \.size).offset(2).limit(5).all()
            == Array(byNameDescendingThenSize[2..<7]))
    }

    /// The two orders a sort uses agree for every index-ordered type:
    /// `orderedLess` on the values (a filter's, and a sort's where a key
    /// has no index order) and `<` on their index values (an index's, and
    /// a sort's otherwise), at each type's edges.
    @Test func orderedLessIsTheIndexValuesOrder() {
        func check<V: IndexOrderedValue & Comparable>(_ values: [V], _ label: String) {
            for a in values {
                for b in values {
                    #expect(orderedLess(a, b) == (a.indexValue < b.indexValue), "\(label): \(a) < \(b)")
                }
            }
        }
        check([Int.min, -1, 0, 1, Int.max], "Int")
        check([Int8.min, 0, Int8.max], "Int8")
        check([0, 1, UInt64(Int64.max), UInt64(Int64.max) + 1, UInt64.max], "UInt64")
        check([-Double.infinity, -1.5, -0.0, 0, 1e-300, 2, .infinity, .nan], "Double")
        check([-1, -0.0, 0, Float.nan, 3.5, .greatestFiniteMagnitude], "Float")
        check(["", "a", "b", "Z", "\u{E9}", "e\u{301}", "ea", "\u{65E5}\u{672C}"], "String")
        check([-1, 0, 5, Double.nan].map(Date.init(timeIntervalSinceReferenceDate:)), "Date")
        check(["00000000-0000-0000-0000-000000000000", "7F000000-0000-0000-0000-000000000001", "80000000-0000-0000-0000-000000000000",
               "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"].map { UUID(uuidString: $0)! }, "UUID")
    }
}
