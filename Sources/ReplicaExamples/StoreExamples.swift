import Foundation
import Replica

/// README "The sync engine": one response synced, and an observer.
public func syncEngineExample(schema: Schema, responseData: Data) async throws -> SyncResult {
    // README: sync-engine
    let store = try Store(path: "blog.sqlite", schema: schema)
    let engine = try SQLiteReplica(store: store)
    let result = try await engine.sync(.get, "/users/3/posts", body: responseData)
    print(result.changes)   // #1 Post: 2 inserted, 1 updated, 1 deleted
    engine.addObserver(for: ["Post"], queue: .main) { changes in
        if let posts = changes["Post"] { print(posts.inserted) }
    }
    // README: end
    return result
}

/// README "The store": reading rows and decoding them.
///
/// - Returns: How many posts and users were read.
public func storeExample(schema: Schema) throws -> (posts: Int, users: Int) {
    // README: store
    let store = try Store(path: "blog.sqlite", schema: schema)   // creates or migrates
    let posts = try store.rows("Post", where: "userID = ?", arguments: [.integer(3)],
                               sort: [.descending("createdAt")], limit: 20)
    struct User: Decodable { var userID: Int; var name: String; var friends: [Int]? }
    let users = try store.fetch(User.self, from: "User", sort: [.ascending("name")])
    // README: end
    return (posts.count, users.count)
}

/// README "The store": one file shared by processes, a reader that never takes the write lock
/// and a writer that waits for other writers.
///
/// - Returns: What the import wrote, or `nil` when another process held the lock too long.
public func storeProcessesExample(schema: Schema) async throws -> SyncResult? {
    // README: store-processes
    let reader = try Store(path: "blog.sqlite", options: StoreOptions(readOnly: true))   // never takes the write lock
    let writer = try SQLiteReplica(store: Store(path: "blog.sqlite", schema: schema, options: StoreOptions(busyTimeout: 5)))
    do {
        return try await writer.importFile("posts.json", into: .entity("Post"), options: SyncOptions(busyTimeout: 60))
    } catch let error as SyncError where error.code == .busy {
        print(error)   // posts.json: blog.sqlite: another process holds the write lock; gave up after waiting 60.0 s (busy timeout 60 s); nothing was written
        print(try reader.count("Post"))   // what the other process had committed: readers never wait
        return nil
    }
    // README: end
}

/// README "Live result sets": a sectioned, limited live query and its updates.
public func liveResultSetExample(engine: SQLiteReplica, lastWeek: Date) async throws {
    // README: live-result-set
    let posts = try LiveResultSet(engine: engine, query: LiveQuery(
        "Post",
        where: .equal("userID", .integer(3)) && .greater("createdAt", .date(lastWeek)),
        sort: [.descending("createdAt")],
        sectionKey: "published",          // sections ordered with the sort
        sectionOffset: 1,                 // the view's first section belongs to something else
        limit: 100))
    for await update in posts.updates() {
        // update.previous + update.diff == update.snapshot
        for change in update.diff.changes { print(change) }
    }
    // README: end
}

/// README "Live result sets": a large result, a window onto it, resets. Returns the rows of
/// the window, its start and the whole count, then the rows read for a screenful.
public func largeLiveResultExample(engine: SQLiteReplica) async throws -> (window: Int, start: Int, total: Int, screen: Int) {
    // README: live-large
    var query = LiveQuery("Post", sort: [.ascending("title")])
    query.window = .rows(0 ..< 40)                  // a screenful; the set tracks the rest by key
    query.resetThreshold = 1_000                    // a commit moving more arrives as one reset
    let page = try LiveResultSet(engine: engine, query: query)
    try await page.moveWindow(to: .rows(40 ..< 80)) // the next page: a diff of the window only
    let shown = page.snapshot                       // shown.windowStart 40, shown.totalCount all rows

    let all = try LiveResultSet(engine: engine, query: LiveQuery("Post", sort: [.ascending("title")]))
    let snapshot = all.snapshot                     // past 10,000 rows: keys and sort values only
    let screen = try snapshot.rows(in: 0 ..< 40)    // one query for the rows on screen
    // README: end
    return (shown.count, shown.windowStart, shown.totalCount, screen.count)
}

/// README "Live result sets": rows decoded into a type of your own. Returns how many posts were
/// decoded in all, the titles of the first screenful, and the first title.
public func typedLiveResultExample(engine: SQLiteReplica) throws -> (all: Int, screen: [String], first: String?) {
    // README: live-typed
    struct Post: Decodable { var id: Int; var title: String }
    let posts = try LiveResultSet(engine: engine, query: LiveQuery("Post", sort: [.ascending("title")]))
    let snapshot = posts.snapshot
    let all = try snapshot.decode(Post.self)                  // as store.fetch(Post.self, from: "Post")
    let screen = try snapshot.decode(Post.self, in: 0 ..< 40) // only these rows are read in a large result
    let first = try snapshot.decode(Post.self, at: ResultIndexPath(section: 0, row: 0))
    // README: end
    return (all.count, screen.map(\.title), first?.title)
}

// README: store-protocol
/// Works the same on either store: `store` may be an SQLiteReplica or a PostgresReplica.
func followPeople(in store: any ReplicaStore, page: Data) async throws -> Int {
    let people = try await LiveResultSet(store: store, query: LiveQuery("Person", sort: [.ascending("name")]))
    defer { people.close() }
    let result = try await store.sync(.get, "/people", body: page)   // one transaction
    print(result.changes)                                            // #1 Person: 2 inserted
    return people.snapshot.count                                     // reflects the commit
}
// README: end

/// README "Architecture": the store-neutral example, run on any store.
public func storeProtocolExample(store: any ReplicaStore, page: Data) async throws -> Int {
    try await followPeople(in: store, page: page)
}
