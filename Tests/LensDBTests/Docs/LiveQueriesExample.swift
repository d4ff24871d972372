// The examples of the "Live queries, change feeds and relationships"
// article, which quotes the lines between each pair of markers verbatim
// (ArticleExampleTests checks that it does); the lines after them check that
// the code does what the article says.
import LensDB
import Testing

@Suite struct LiveQueriesExample {
    struct Person: Entity, Equatable {
        var id: Int64
        var name: String
        var city: String
        var score: Double
        var manager: Ref<Person>?
        var team: Ref<Team>?
        var tags: [Ref<Tag>] = []
    }

    struct Team: Entity, Equatable {
        var id: String
        var name: String
    }

    struct Tag: Entity, Equatable {
        var id: Int64
        var label: String
    }

    @Test func aLivePageFollowsTheCommits() async throws {
        let store = Store.inMemory()
        let people = try store.table(Person.self, named: "people", indexes: [.on(\.city), .on(\.score)])
        try people.put((1...30).map { Person(id: $0, name: "P\($0)", city: "Paris", score: Double($0)) })
        let (shown, continuation) = AsyncStream.makeStream(of: [Person].self)
        @Sendable func show(_ page: [Person]) { continuation.yield(page) }

        let watcher = Task {
            // article:begin LiveQueriesAndRelationships.md
            for await page in people.query.filter(\.city == "Paris")
                    .sorted(by: \.score, .descending).offset(20).limit(20).values {
                show(page)
            }
            // article:end
        }
        var pages = shown.makeAsyncIterator()
        #expect(await pages.next()?.map(\.id) == Array((1...10).reversed()))
        // A commit before the window shifts it: the page is what all() returns now.
        try people.put(Person(id: 31, name: "P31", city: "Paris", score: 31))
        #expect(await pages.next()?.map(\.id) == Array((1...11).reversed()))
        watcher.cancel()
        await watcher.value
    }

    @Test func aGraphOfRelatedEntitiesAndAMerge() throws {
        let store = Store.inMemory()
        let people = try store.table(Person.self, named: "people", indexes: [.on(\.city), .on(\.team)])
        let teams = try store.table(Team.self, named: "teams")
        let tags = try store.table(Tag.self, named: "tags")
        try teams.put(Team(id: "core", name: "Core"))
        try tags.put([Tag(id: 1, label: "oncall"), Tag(id: 2, label: "mentor")])
        try people.put([
            Person(id: 1, name: "Ada", city: "London", score: 9, team: Ref("core")),
            Person(id: 2, name: "Blaise", city: "Paris", score: 7, manager: Ref(1), tags: [Ref(1), Ref(2)]),
            Person(id: 3, name: "Claude", city: "Paris", score: 8, manager: Ref(99), team: Ref("core")),
            Person(id: 4, name: "Denis", city: "Paris", score: 5),
        ])
        // article:begin LiveQueriesAndRelationships.md
        let graph = try people.query.filter(\.city == "Paris")
            .including(\.manager) { $0.including(\.team) }
            .including(\.tags)
            .graph()
        for person in graph.roots {
            print(person.name, person.manager.flatMap { graph[$0]?.name } ?? "no manager")
        }
        // article:end
        #expect(graph.roots.map(\.name) == ["Blaise", "Claude", "Denis"])
        #expect(graph[Ref<Person>(1)]?.name == "Ada")
        #expect(graph[Ref<Team>("core")]?.name == "Core")  // Ada's team, reached through her
        #expect(graph.entities(Tag.self).count == 2)
        #expect(graph.missing.map(\.id) == ["99"])

        let remote = [Person(id: 3, name: "Claude", city: "Lyon", score: 8, team: Ref("core"))]
        // article:begin LiveQueriesAndRelationships.md
        try people.merge(remote, matching: people.query.filter(\.team == Ref("core")),
                         strategy: .discardExtraLocalData)
        // article:end
        #expect(people[1] == nil)             // in the team locally, not remotely
        #expect(people[3]?.city == "Lyon")
        #expect(people[2] != nil && people[4] != nil)
    }
}
