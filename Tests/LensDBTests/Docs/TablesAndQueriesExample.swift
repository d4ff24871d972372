// The examples of the "Tables and queries" article, which quotes the lines
// between each pair of markers verbatim (ArticleExampleTests checks that it
// does); the lines after them check that the code does what the article says.
import LensDB
import Testing

@Suite struct TablesAndQueriesExample {
    // article:begin TablesAndQueries.md
    struct Person: Entity {
        var id: Int64
        var name: String
        var email: String
        var city: String
        var age: Int
        var score: Double
        var nickname: String?
    }
    // article:end

    struct Order: Entity {
        var id: Int64
        var person: Int64
    }

    struct Settings: Codable, Sendable {
        var lastEdited: Int64?
    }

    static func person(_ id: Int64, _ name: String, _ city: String, age: Int, score: Double) -> Person {
        Person(id: id, name: name, email: "\(name.lowercased())@example.com", city: city, age: age, score: score)
    }

    @Test func aTableItsIndexesAndOneTransactionOverSeveral() throws {
        let store = Store.inMemory()
        let alice = Self.person(42, "Alice", "Paris", age: 34, score: 8.5)
        let bob = Self.person(7, "Bob", "Lyon", age: 17, score: 6)
        let carol = Self.person(9, "Carol", "Paris", age: 52, score: 9.25)
        // article:begin TablesAndQueries.md
        let people = try store.table(Person.self, named: "people",
                                     indexes: [.on(\.city), .on(\.age), .on(\.score), .on(\.city, \.age), .unique(\.email)])
        try people.put(alice)                 // one durable transaction
        try people.put([bob, carol])          // one transaction for both
        let found = people[42]                // the latest committed version; no decoding
        try people.remove(42)
        // article:end
        #expect(found?.name == "Alice")
        #expect(people.all().map(\.name) == ["Bob", "Carol"])

        let orders = try store.table(Order.self, named: "orders")
        let settings = try store.root(Settings.self, named: "settings", default: Settings())
        try orders.put(Order(id: 1, person: 7))
        let orderID: Int64 = 1
        // article:begin TablesAndQueries.md
        try store.write { tx in
            try tx[people].put(alice)
            try tx[orders].remove(orderID)
            try tx[settings].set(\.lastEdited, alice.id)
        }
        // article:end
        #expect(people[42] != nil && orders.count == 0 && settings.value.lastEdited == 42)

        #expect(throws: TableError.self) {  // the unique email: neither put is kept
            try store.write { tx in
                try tx[people].put(Self.person(43, "Alice", "Nice", age: 20, score: 1))
                try tx[orders].put(Order(id: 2, person: 43))
            }
        }
        #expect(people[43] == nil && orders.count == 0)
    }

    @Test func queriesAndTheirResults() throws {
        let store = Store.inMemory()
        let people = try store.table(Person.self, named: "people", indexes: [.on(\.city), .on(\.age), .on(\.score)])
        try people.put([
            Self.person(1, "Alice", "Paris", age: 34, score: 8.5),
            Self.person(2, "Anna", "Lyon", age: 15, score: 7),
            Self.person(3, "Bob", "Paris", age: 17, score: 6),
            Self.person(4, "Carol", "Paris", age: 52, score: 9.25),
            Self.person(5, "Dan", "Lyon", age: 41, score: 6),
        ])
        // article:begin TablesAndQueries.md
        let adults = try people.query.filter(\.age >= 18).count()              // 3
        let ranked = people.query                                              // a value: nothing runs yet
            .filter(\.age >= 18 && \.city == "Paris" || \.name ~= /^A/)
            .sorted(by: \.score, .descending).then(by: \.name)
        let page = try ranked.limit(2).all()                                   // Carol, Alice
        let next = try ranked.after(page[page.count - 1]).limit(2).all()       // Anna
        let byCity = try people.query.sorted(by: \.name).grouped(by: \.city)   // Paris: Alice, Bob, Carol; Lyon: Anna, Dan
        let vip = try people.query.sorted(byIdentifiers: [5, 3]).ids()         // 5, 3, 1, 2, 4
        // article:end
        #expect(adults == 3)
        #expect(page.map(\.name) == ["Carol", "Alice"])
        #expect(next.map(\.name) == ["Anna"])
        #expect(byCity.map(\.key) == ["Paris", "Lyon"])
        #expect(byCity.map { $0.entities.map(\.name) } == [["Alice", "Bob", "Carol"], ["Anna", "Dan"]])
        #expect(vip == [5, 3, 1, 2, 4])
    }
}
