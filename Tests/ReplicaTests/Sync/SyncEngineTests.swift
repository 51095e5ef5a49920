import Foundation
import GRDB
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// A blog store and its engine, in memory.
struct BlogFixture {
    let store: Store
    let engine: SQLiteReplica

    init() throws {
        store = try Store.inMemory(schema: try Schema(contentsOf: TestSupport.schemaFile("blog.json")))
        engine = try SQLiteReplica(store: store)
    }

    func sync(_ path: String, _ json: String, _ method: HTTPMethod = .get, options: SyncOptions = SyncOptions()) async throws -> SyncResult {
        try await engine.sync(method, path, body: Data(json.utf8), options: options)
    }

    func keys(_ entity: String, where predicate: String? = nil, _ arguments: [AttributeValue] = []) throws -> [AttributeValue] {
        try store.rows(entity, where: predicate, arguments: arguments).map(\.primaryKey)
    }
}

extension PrimaryKeys {
    var ints: [Int64] { integers }
}

@Suite("Sync engine")
struct SyncEngineTests {
    @Test("nested to-many and to-one objects are upserted with their foreign keys")
    func nestedObjects() async throws {
        let blog = try BlogFixture()
        let result = try await blog.sync("/users", """
            [{"user_id": 1, "name": "Ann", "email": "ann@example.com", "avatar_sm": "a.png", "friends": [2],
              "posts": [{"id": 10, "title": "Hi", "comments": [{"id": 100, "body": "first", "user_id": 2}]}]},
             {"user_id": 2, "name": "Bob", "unknown_key": true}]
            """)
        #expect(result.changes["User"]?.inserted.ints == [1, 2])
        #expect(result.changes["Post"]?.inserted.ints == [10])
        #expect(result.changes["Comment"]?.inserted.ints == [100])
        #expect(result.objectCount == 4)
        #expect(result.ignoredKeyCount == 1)
        let post = try #require(try blog.store.rows("Post").first)
        #expect(post["userID"] == .integer(1))
        let comment = try #require(try blog.store.rows("Comment").first)
        #expect(comment["postID"] == .integer(10))
        #expect(comment["userID"] == .integer(2))
        let ann = try #require(try blog.store.rows("User", where: "userID = 1").first)
        #expect(ann["avatarSm"] == .string("a.png"))
        #expect(ann["friends"] == .json([2]))

        let single = try await blog.sync("/posts/7", #"{"post": {"title": "T", "author": {"user_id": 5, "name": "Eve"}}}"#)
        #expect(single.changes["User"]?.inserted.ints == [5])
        #expect(single.changes["Post"]?.inserted.ints == [7])
        let seven = try #require(try blog.store.rows("Post", where: "id = 7").first)
        #expect(seven["userID"] == .integer(5))
        #expect(seven["published"] == .bool(false))
    }

    @Test("the route's scope fills missing foreign keys; stale rows are deleted inside the scope only")
    func scopeAndStaleRows() async throws {
        let blog = try BlogFixture()
        _ = try await blog.sync("/users/4/posts", #"{"posts": [{"id": 40, "title": "other user's"}]}"#)
        let first = try await blog.sync("/users/3/posts", #"{"posts": [{"id": 1, "title": "a"}, {"id": 2, "title": "b"}]}"#)
        #expect(first.changes["Post"]?.inserted.ints == [1, 2])
        #expect(try blog.keys("Post", where: "userID = 3") == [.integer(1), .integer(2)])

        let second = try await blog.sync("/users/3/posts", #"{"posts": [{"id": 1, "title": "a2"}, {"id": 3, "title": "c"}]}"#)
        #expect(second.changes["Post"]?.inserted.ints == [3])
        #expect(second.changes["Post"]?.updated.ints == [1])
        #expect(second.changes["Post"]?.deleted.ints == [2])
        #expect(try blog.keys("Post", where: "userID = 3") == [.integer(1), .integer(3)])
        #expect(try blog.keys("Post", where: "userID = 4") == [.integer(40)])

        // The same policy with stale rows kept, by option.
        let kept = try await blog.sync("/users/3/posts", #"{"posts": []}"#, options: SyncOptions(stalePolicy: .keep))
        #expect(kept.changes.isEmpty)
        #expect(try blog.keys("Post", where: "userID = 3").count == 2)
        let emptied = try await blog.sync("/users/3/posts", #"{"posts": []}"#)
        #expect(emptied.changes["Post"]?.deleted.ints == [1, 3])
        #expect(try blog.keys("Post") == [.integer(40)])
    }

    @Test("unscoped stale deletion: a dense range of keys that spans the table keeps all; a key below, above or beside it is stale")
    func staleDeletionAtTheEdges() async throws {
        let blog = try BlogFixture()
        func users(_ ids: [Int]) -> String {
            "[" + ids.map { #"{"user_id": \#($0), "name": "u\#($0)"}"# }.joined(separator: ",") + "]"
        }
        _ = try await blog.sync("/users", users(Array(1...5)))
        // Nothing stale: the seen keys 1...5 are the table's whole range.
        let same = try await blog.sync("/users", users(Array(1...5)))
        #expect(same.changes["User"]?.deleted.ints ?? [] == [])
        // Keys outside the seen range (0 and 100) and a hole inside it (3) are stale, found by reading the keys.
        _ = try await blog.sync("/users", users([0, 100] + Array(1...5)))
        let below = try await blog.sync("/users", users(Array(1...5)))
        #expect(below.changes["User"]?.deleted.ints == [0, 100])
        let hole = try await blog.sync("/users", users([1, 2, 4, 5]))
        #expect(hole.changes["User"]?.deleted.ints == [3])
        // Unsorted and repeated keys are the same set.
        let unsorted = try await blog.sync("/users", users([5, 2, 4, 1, 2]))
        #expect(unsorted.changes["User"]?.deleted.ints ?? [] == [])
        #expect(try blog.keys("User").map(\.description) == ["1", "2", "4", "5"])
        // A skipped object's key need not name a row: the shortcut is not taken and the stale row 5 is found.
        let skipped = try await blog.sync("/users", #"[{"user_id": 1, "name": "a"}, {"user_id": 2, "name": "b"}, {"user_id": 4, "name": "d"}, {"user_id": 9, "name": 5, "email": []}]"#,
                                          options: SyncOptions(onInvalid: .skip))
        #expect(skipped.skipped.count == 1)
        #expect(skipped.changes["User"]?.deleted.ints == [5])
    }

    @Test("unchanged objects write nothing and report nothing")
    func unchangedObjects() async throws {
        let blog = try BlogFixture()
        let json = #"[{"user_id": 1, "name": "Ann", "friends": [1, 2]}, {"user_id": 2, "name": "Bob"}]"#
        _ = try await blog.sync("/users", json)
        let again = try await blog.sync("/users", json)
        #expect(again.changes.isEmpty)
        #expect(again.objectCount == 2)
        // A key absent from the JSON leaves the stored value untouched; explicit null clears it.
        _ = try await blog.sync("/users/1", #"{"user_id": 1, "name": "Ann", "email": "a@x"}"#)
        let absent = try await blog.sync("/users/1", #"{"user_id": 1, "name": "Ann"}"#)
        #expect(absent.changes.isEmpty)
        #expect(try blog.store.rows("User", where: "userID = 1").first?["email"] == .string("a@x"))
        let cleared = try await blog.sync("/users/1", #"{"user_id": 1, "email": null}"#)
        #expect(cleared.changes["User"]?.updated.ints == [1])
        #expect(try blog.store.rows("User", where: "userID = 1").first?["email"] == .null)
    }

    @Test("MANY responses in RSAPI's shape and in the plain-object shape")
    func manyShapes() async throws {
        let blog = try BlogFixture()
        let rsapi = try await blog.sync("/bootstrap", """
            [{"User": [{"user_id": 1, "name": "A"}, {"user_id": 2, "name": "B"}], "Post": [{"id": 1, "title": "x", "user_id": 1}],
              "Unknown": [{"id": 9}]}]
            """)
        #expect(rsapi.changes["User"]?.inserted.ints == [1, 2])
        #expect(rsapi.changes["Post"]?.inserted.ints == [1])
        let plain = try await blog.sync("/bootstrap", """
            {"users": [{"user_id": 3, "name": "C"}], "comments": [{"id": 5, "body": "hey", "post_id": 1, "user_id": 3}]}
            """)
        #expect(plain.changes["User"]?.inserted.ints == [3])
        #expect(plain.changes["Comment"]?.inserted.ints == [5])
        #expect(try blog.store.rows("Comment").first?["postID"] == .integer(1))
    }

    @Test("DATA routes hand back the parsed JSON and store nothing")
    func dataRoute() async throws {
        let blog = try BlogFixture()
        let result = try await blog.sync("/stats", #"{"users": 3, "posts": [1, 2]}"#)
        #expect(result.data == ["users": 3, "posts": [1, 2]])
        #expect(result.changes.isEmpty)
        #expect(try blog.store.count("User") == 0)
    }

    @Test("malformed JSON at the end of a large array rolls the whole response back")
    func rollbackOnMalformedJSON() async throws {
        let blog = try BlogFixture()
        _ = try await blog.sync("/users", #"[{"user_id": 1, "name": "Keep"}]"#)
        var json = "[" + (2...5001).map { #"{"user_id": \#($0), "name": "u\#($0)"}"# }.joined(separator: ",")
        json += ",]"
        let error = await #expect(throws: SyncError.self) { try await blog.sync("/users", json, options: SyncOptions(chunkSize: 4096)) }
        #expect(error?.code == .malformedJSON)
        #expect(error?.message.hasPrefix("byte \(json.utf8.count - 1) ") == true, "\(error.map(String.init(describing:)) ?? "")")
        #expect(error?.source == "GET /users")
        #expect(try blog.keys("User") == [.integer(1)])
    }

    @Test("a type error under the fail policy rolls back; under skip the object is skipped and reported")
    func invalidObjects() async throws {
        let blog = try BlogFixture()
        let json = #"[{"user_id": 1, "name": "A"}, {"user_id": "abc", "name": "B"}, {"user_id": 3, "name": "C"}]"#
        let error = await #expect(throws: SyncError.self) { try await blog.sync("/users", json) }
        #expect(error?.code == .invalidObject)
        #expect(error?.message.contains("User.userID at /1/user_id") == true, "\(error.map(String.init(describing:)) ?? "")")
        #expect(try blog.store.count("User") == 0)

        let skipped = try await blog.sync("/users", json, options: SyncOptions(onInvalid: .skip))
        #expect(skipped.changes["User"]?.inserted.ints == [1, 3])
        #expect(skipped.skipped.count == 1)
        #expect(skipped.skipped.first?.pointer.description == "/1")
        #expect(skipped.skipped.first?.entity == "User")
        #expect(skipped.skipped.first?.reason.contains("cannot convert \"abc\" to integer") == true)
    }

    @Test("integers beyond Int64 keep every digit in json and string attributes; an integer attribute quotes the literal")
    func bigIntegers() async throws {
        let blog = try BlogFixture()
        let users = #"[{"user_id": 1, "name": 12345678901234567890, "friends": [12345678901234567890, -99999999999999999999]}]"#
        let first = try await blog.sync("/users", users)
        #expect(first.changes["User"]?.inserted.ints == [1])
        let ann = try #require(try blog.store.rows("User").first)
        #expect(ann["name"] == .string("12345678901234567890"))
        #expect(ann["friends"] == .json([.bigInteger("12345678901234567890"), .bigInteger("-99999999999999999999")]))
        let stored = try await blog.store.database.read { db in try String.fetchOne(db, sql: "SELECT friends FROM users") }
        #expect(stored == "[12345678901234567890,-99999999999999999999]")
        // The same literals again are no change: nothing is written.
        let again = try await blog.sync("/users", users)
        #expect(again.changes["User"]?.updated.ints ?? [] == [])

        // The fast path (a plain string attribute of a post) keeps the literal too.
        _ = try await blog.sync("/users/1/posts", #"{"posts": [{"id": 7, "title": 123456789012345678901234567890}]}"#)
        #expect(try blog.store.rows("Post").first?["title"] == .string("123456789012345678901234567890"))

        let error = await #expect(throws: SyncError.self) {
            try await blog.sync("/users", #"[{"user_id": 12345678901234567890, "name": "B"}]"#)
        }
        #expect(error?.message.contains("cannot convert 12345678901234567890 to integer (it is out of the 64-bit integer range)") == true,
                "\(error.map(String.init(describing:)) ?? "")")
        #expect(error?.message.contains("/0/user_id") == true, "\(error.map(String.init(describing:)) ?? "")")
    }

    @Test("a constraint violation rolls back and names the object")
    func constraintViolation() async throws {
        let blog = try BlogFixture()
        // `name` is non-null: a new user without one cannot be inserted.
        let error = await #expect(throws: SyncError.self) {
            try await blog.sync("/users", #"[{"user_id": 1, "name": "A"}, {"user_id": 2}]"#)
        }
        #expect(error?.code == .database)
        #expect(error?.message.contains("User 2") == true)
        #expect(error?.message.contains("NOT NULL") == true)
        #expect(try blog.store.count("User") == 0)
    }

    @Test("an object of collections imported as one entity says what it is and names the MANY route")
    func collectionsReadAsOneObject() async throws {
        let blog = try BlogFixture()
        let (chunks, continuation) = AsyncStream<[UInt8]>.makeStream()
        continuation.yield(Array(#"{"posts": [{"id": 1, "title": "x"}], "users": []}"#.utf8))
        continuation.finish()
        let error = await #expect(throws: SyncError.self) {
            _ = try await blog.engine.importChunks(chunks, into: .entity("Post"), source: "dump.json")
        }
        #expect(error?.code == .unexpectedShape)
        #expect(error?.description == "dump.json: the input is an object of collections (posts, users), not Post objects: "
                + "import it through the MANY route GET /bootstrap", "\(error.map(String.init(describing:)) ?? "")")
    }

    @Test("no route names the closest routes")
    func closestRoutes() throws {
        let blog = try BlogFixture()
        #expect(blog.engine.routes.closestRoutes(to: "/users/3/psts") == ["GET /users/:userID/posts", "GET /users/:userID"])
        #expect(blog.engine.routes.closestRoutes(to: "/user?page=2") == ["GET /users"])
        #expect(blog.engine.routes.closestRoutes(to: "/zzzzzzzzzz").isEmpty)
        let error = #expect(throws: RouteError.self) { try blog.engine.routes.resolve(.get, "/pots") }
        #expect(error?.message == "no route for GET /pots; closest: POST /posts")
    }

    @Test("a missing namespace or envelope is an error naming where it was expected")
    func unexpectedShape() async throws {
        let blog = try BlogFixture()
        let error = await #expect(throws: SyncError.self) { try await blog.sync("/users/3/posts", #"[{"id": 1}]"#) }
        #expect(error?.code == .unexpectedShape)
        #expect(error?.message.contains("/posts or /post") == true, "\(error.map(String.init(describing:)) ?? "")")
        let route = await #expect(throws: SyncError.self) { try await blog.sync("/nowhere", "[]") }
        #expect(route?.code == .noRoute)
    }
}

@Suite("Sync engine envelopes")
struct SyncEnvelopeTests {
    static func engine() throws -> SQLiteReplica {
        let schema = try Schema(name: "api", envelope: "data", routes: [
            Route(.get, "/posts", target: .entity("Post"), stale: .delete),
            Route(.get, "/raw/posts", target: .entity("Post"), envelope: ""),
            Route(.get, "/v2/posts", target: .entity("Post"), envelope: "JsonResponseEnvelope.SuccessFullJsonResponse"),
            Route(.get, "/meta", target: .data),
        ]) {
            Entity("Post", namespace: "post") {
                Attribute("id", .integer)
                Attribute("title", .string)
            }
        }
        return try SQLiteReplica(store: try Store.inMemory(schema: schema))
    }

    @Test("schema and route envelopes are unwrapped, with the entity's namespace inside")
    func unwrapped() async throws {
        let engine = try Self.engine()
        let wrapped = try await engine.sync(.get, "/posts", body: Data(#"{"data": {"posts": [{"id": 1, "title": "a"}]}, "meta": {"next": null}}"#.utf8))
        #expect(wrapped.changes["Post"]?.inserted.integers == [1])
        let raw = try await engine.sync(.get, "/raw/posts", body: Data(#"{"post": {"id": 2, "title": "b"}}"#.utf8))
        #expect(raw.changes["Post"]?.inserted.integers == [2])
        let deep = try await engine.sync(.get, "/v2/posts", body: Data(#"{"JsonResponseEnvelope": {"SuccessFullJsonResponse": {"posts": [{"id": 3}]}}}"#.utf8))
        #expect(deep.changes["Post"]?.inserted.integers == [3])
        let meta = try await engine.sync(.get, "/meta", body: Data(#"{"data": {"version": 2}}"#.utf8))
        #expect(meta.data == ["version": 2])
    }

    @Test("a missing envelope key fails naming the path, and changes nothing")
    func missing() async throws {
        let engine = try Self.engine()
        let error = await #expect(throws: SyncError.self) {
            try await engine.sync(.get, "/posts", body: Data(#"{"result": {"posts": [{"id": 1}]}}"#.utf8))
        }
        #expect(error?.code == .unexpectedShape)
        #expect(error?.message.contains("/data/posts or /data/post") == true, "\(error.map(String.init(describing:)) ?? "")")
        let data = await #expect(throws: SyncError.self) { try await engine.sync(.get, "/meta", body: Data(#"{"version": 2}"#.utf8)) }
        #expect(data?.message.contains("no key 'data'") == true, "\(data.map(String.init(describing:)) ?? "")")
        #expect(try engine.store.count("Post") == 0)
    }
}
