// The example of the "Consistency" article, which quotes the lines between
// the markers verbatim (ArticleExampleTests checks that it does).
import LensDB
import Testing

@Suite struct ConsistencyExample {
    @MainActor
    @Test func aFeedFollowsItsTables() async throws {
        // article:begin
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
}
