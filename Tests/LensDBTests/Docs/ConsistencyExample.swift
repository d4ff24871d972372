// The examples of the "Consistency" article and of the README's "Keeping
// held objects current", which quote the lines between the markers verbatim
// (ArticleExampleTests checks that they do).
import LensDB
import Testing

@Suite struct ConsistencyExample {
    @MainActor
    @Test func aFeedFollowsItsTables() async throws {
        // article:begin Consistency.md
        struct Author: Entity, Equatable {
            var id: Int64
            var name: String
        }

        struct Post: Entity, Equatable {
            var id: Int64
            var title: String
            var author: Author
        }

        /// A screen's state: entities in a property, an array and a dictionary.
        struct FeedState: Codable, Sendable, Equatable {
            var posts: [Post]
            var pinned: Post?
            var authorsByHandle: [String: Author]
        }

        @MainActor
        final class FeedModel: MainActorConsistentHolder {
            var consistentValue: FeedState
            init(_ state: FeedState) { consistentValue = state }
        }

        let store = Store.inMemory()
        let authors = try store.table(Author.self, named: "authors")
        let posts = try store.table(Post.self, named: "posts")
        let ada = Author(id: 1, name: "Ada")
        let hello = Post(id: 10, title: "Hello", author: ada)
        try authors.put(ada)
        try posts.put(hello)

        let feed = FeedModel(FeedState(posts: [hello], pinned: hello, authorsByHandle: ["ada": ada]))
        store.consistency.register(feed)                        // held weakly
        store.consistency.follow(authors)                       // every commit is pushed
        store.consistency.follow(posts, options: .dropRemoved)  // removed posts leave the feed

        try authors.put(Author(id: 1, name: "Ada Lovelace"))
        await store.consistency.waitForUpdates()                // main-actor holders merge in a task
        // feed.consistentValue.posts[0].author.name == "Ada Lovelace", and so
        // do pinned?.author and authorsByHandle["ada"].

        try posts.remove(10)
        await store.consistency.waitForUpdates()
        // feed.consistentValue.posts == [] and pinned == nil.

        // A copy from elsewhere, refreshed from what the manager knows:
        let stale = Post(id: 11, title: "Draft", author: ada)
        let fresh = store.consistency.pull(stale)              // fresh.author.name == "Ada Lovelace"
        // article:end
        #expect(fresh.author.name == "Ada Lovelace")
        #expect(feed.consistentValue.posts.isEmpty)
        #expect(feed.consistentValue.pinned == nil)
        #expect(feed.consistentValue.authorsByHandle["ada"]?.name == "Ada Lovelace")
    }

    /// The README's summary: a holder registered, two tables followed, a
    /// push by hand and a pull.
    @MainActor
    @Test func theReadmeSummary() async throws {
        struct Person: Entity, Equatable {
            var id: Int64
            var name: String
        }
        struct Post: Entity, Equatable {
            var id: Int64
            var author: Person
        }
        @MainActor
        final class Screen: MainActorConsistentHolder {
            var consistentValue: [Post]
            init(_ posts: [Post]) { consistentValue = posts }
        }
        let store = Store.inMemory()
        let people = try store.table(Person.self, named: "people")
        let posts = try store.table(Post.self, named: "posts")
        let ada = Person(id: 1, name: "Ada")
        try people.put(ada)
        try posts.put(Post(id: 10, author: ada))
        let screen = Screen([Post(id: 10, author: ada)])
        let personFromNetwork = Person(id: 1, name: "Ada Lovelace")
        let staleCopy = Post(id: 11, author: Person(id: 1, name: "A."))
        // article:begin README.md
        store.consistency.register(screen)                        // held weakly; screen: MainActorConsistentHolder
        store.consistency.follow(people)                          // every commit to people reaches it, in LSN order
        store.consistency.follow(posts, options: .dropRemoved)    // removed posts leave arrays, optionals become nil
        store.consistency.push(personFromNetwork)                 // or push by hand (an optional version: an LSN)
        let fresh = store.consistency.pull(staleCopy)             // the freshest version of every entity in it
        // article:end
        // people is followed, so the store's version is the freshest there is.
        #expect(fresh.author == ada)
        await store.consistency.waitForUpdates()
        #expect(screen.consistentValue.map(\.author.name) == ["Ada Lovelace"])
        try people.put(Person(id: 1, name: "Countess of Lovelace"))
        await store.consistency.waitForUpdates()
        #expect(screen.consistentValue.map(\.author.name) == ["Countess of Lovelace"])
        try posts.remove(10)
        await store.consistency.waitForUpdates()
        #expect(screen.consistentValue.isEmpty)
    }
}
