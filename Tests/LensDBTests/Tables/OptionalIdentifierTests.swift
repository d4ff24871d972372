import Foundation
import LensTestSupport
import Testing
@testable import LensDB

// `Entity` asks for a `Comparable` identifier, which `Optional` is not: only
// a program's own conformance, like this one, makes an optional identifier.
extension Optional: @retroactive Comparable where Wrapped == UInt64 {
    public static func < (a: UInt64?, b: UInt64?) -> Bool {
        switch (a, b) {
        case let (x?, y?): x < y
        case (nil, _?): true
        default: false
        }
    }
}

/// An entity whose identifier is an `Optional`: its table keys it in the
/// value format, and every identifier, holding a value or not, takes that
/// form, never the integer a dynamic cast would see inside.
struct Ticket: Entity, Equatable {
    var id: UInt64?
    var title: String
}

@Suite struct OptionalIdentifierTests {
    @Test func anOptionalIdentifierIsKeyedInTheValueFormatWhateverItHolds() throws {
        #expect(OrderedKey.encoding(of: UInt64?.self) == .valueFormat)
        #expect(try OrderedKey.encode(UInt64?.some(7)).0 == .valueFormat)
        #expect(try OrderedKey.encode(UInt64(7)).0 == .uint64)
        #expect(try identifierValue(UInt64?.some(7)) == .bytes(ValueEncoder().encode(UInt64?.some(7))))
        #expect(try identifierValue(UInt64(7)) == UInt64(7).indexValue)
    }

    @Test func putGetQueryAndReopenAnOptionalIdentifier() throws {
        let fileSystem = SimulatedFileSystem()
        let tickets = [Ticket(id: 7, title: "seven"), Ticket(id: nil, title: "none"), Ticket(id: 300, title: "three hundred")]
        do {
            let store = try tableStore(fileSystem)
            let table = try store.table(Ticket.self, named: "tickets")
            try table.put(tickets)
            #expect(table[7] == tickets[0])
            #expect(table[nil] == tickets[1])
            #expect(try table.query.filter(\.title == "three hundred").all() == [tickets[2]])
            store.close()
        }
        let store = try tableStore(fileSystem)
        defer { store.close() }
        let table = try store.table(Ticket.self, named: "tickets")
        #expect(table.count == 3)
        #expect(Set(table.all().map(\.title)) == ["seven", "none", "three hundred"])
        #expect(table[300] == tickets[2])
        try table.remove(7)
        #expect(table[7] == nil && table.count == 2)
    }
}
