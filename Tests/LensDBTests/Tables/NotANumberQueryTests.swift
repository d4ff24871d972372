import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// Rows holding a double or a date that is not a number: a query answers
/// the same whether an index serves it or every row is read, with such a
/// value after every other, as indexes and sorts place it.
@Suite struct NotANumberQueryTests {
    @Test func rangesAnswerAlikeWithAndWithoutAnIndex() throws {
        let values: [Double] = [1, .nan, 5, 3, -.infinity, .nan, .infinity, -0.0]
        let rows = values.enumerated().map { Sample(id: Int64($0.offset), x: $0.element, f: Float($0.element), when: Date(timeIntervalSinceReferenceDate: $0.element)) }
        let indexedStore = try tableStore(), plainStore = try tableStore()
        let indexed = try indexedStore.table(Sample.self, named: "s", indexes: [.on(\.x), .on(\.f), .on(\.when)])
        let plain = try plainStore.table(Sample.self, named: "s")
        try indexed.put(rows)
        try plain.put(rows)
        let date = { (interval: Double) in Date(timeIntervalSinceReferenceDate: interval) }
        let filters: [(String, Filter<Sample>, [Int64])] = [
            ("x > 3", \.x > 3, [1, 2, 5, 6]),
            ("x >= 3", \.x >= 3, [1, 2, 3, 5, 6]),
            ("x < 3", \.x < 3, [0, 4, 7]),
            ("x <= 3", \.x <= 3, [0, 3, 4, 7]),
            ("x > 0 && x < 6", \.x > 0 && \.x < 6, [0, 2, 3]),
            ("x < nan", \.x < .nan, [0, 2, 3, 4, 6, 7]),
            ("x > nan", \.x > .nan, []),
            ("x == nan", \.x == .nan, []),
            ("f >= 5", \.f >= 5, [1, 2, 5, 6]),
            ("when > 3", \.when > date(3), [1, 2, 5, 6]),
            ("when <= 3", \.when <= date(3), [0, 3, 4, 7]),
        ]
        for (name, filter, expected) in filters {
            #expect(try indexed.query.filter(filter).all().map(\.id).sorted() == expected, "\(name), through an index")
            #expect(try plain.query.filter(filter).all().map(\.id).sorted() == expected, "\(name), read row by row")
        }
        #expect(try plain.query.sorted(by: \.when).all().map(\.id) == indexed.query.sorted(by: \.when).all().map(\.id))
    }
}

private struct Sample: Entity {
    var id: Int64
    var x: Double
    var f: Float
    var when: Date
}
