import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Keys that are not stored")
struct IgnoredKeyTests {
    @Test("unknown keys of flat objects are named with counts and first pointers")
    func fastPath() async throws {
        let blog = try BlogFixture()
        let result = try await blog.sync("/users", #"[{"user_id": 1, "name": "A", "shoe": 1, "hat": 2}, {"user_id": 2, "name": "B", "shoe": 3}]"#)
        #expect(result.ignoredKeyCount == 3)
        #expect(result.ignoredKeys.map(\.description) == ["User.shoe × 2 (first at /0/shoe)", "User.hat × 1 (first at /0/hat)"])
        #expect(result.changes["User"]?.inserted.ints == [1, 2])
    }

    @Test("unknown keys of nested objects are named with their full pointer")
    func generalPath() async throws {
        let blog = try BlogFixture()
        let result = try await blog.sync("/users", #"[{"user_id": 1, "name": "A", "posts": [{"id": 5, "title": "t", "mood": "x"}]}]"#)
        #expect(result.ignoredKeys.map(\.description) == ["Post.mood × 1 (first at /0/posts/0/mood)"])
        #expect(result.ignoredKeyCount == 1)
    }

    @Test("a key given twice is reported on both paths; the last value is stored")
    func duplicates() async throws {
        let blog = try BlogFixture()
        let flat = try await blog.sync("/users", #"[{"user_id": 1, "name": "A", "name": "B"}]"#)
        #expect(flat.ignoredKeys.map(\.description) == ["duplicate User.name × 1 (first at /0/name)"])
        #expect(flat.ignoredKeyCount == 0)
        #expect(try blog.store.rows("User").first?["name"] == .string("B"))
        let nested = try await blog.sync("/users", #"[{"user_id": 2, "name": "C", "posts": [{"id": 5, "title": "x", "title": "y"}]}]"#)
        #expect(nested.ignoredKeys.map(\.description) == ["duplicate Post.title × 1 (first at /0/posts/0/title)"])
        #expect(try blog.store.rows("Post").first?["title"] == .string("y"))
    }

    @Test("a MANY collection that names no entity is reported, not skipped in silence")
    func unknownCollection() async throws {
        let blog = try BlogFixture()
        let result = try await blog.sync("/bootstrap", #"{"users": [{"user_id": 9, "name": "Z"}], "gadgets": [{"id": 1}, {"id": 2}]}"#)
        #expect(result.ignoredKeys.map(\.description) == ["collection gadgets × 2 (first at /gadgets)"])
        #expect(result.changes["User"]?.inserted.ints == [9])
    }

    @Test("pages of a session add up")
    func sessions() async throws {
        let blog = try BlogFixture()
        let session = try blog.engine.session(.get, "/users")
        _ = try await session.stage(body: Data(#"[{"user_id": 1, "name": "A", "shoe": 1}]"#.utf8))
        _ = try await session.stage(body: Data(#"[{"user_id": 2, "name": "B", "shoe": 2, "hat": 3}]"#.utf8))
        let result = try await session.commit()
        #expect(result.ignoredKeys.map(\.description) == ["User.shoe × 2 (first at /0/shoe)", "User.hat × 1 (first at /0/hat)"])
    }

    @Test("strict: the first key not stored fails the sync, naming it and where; nothing is written", arguments: [
        (#"[{"user_id": 1, "name": "A"}, {"user_id": 2, "name": "B", "shoe": 1}]"#, "key 'shoe' matches no attribute or relationship of User at /1/shoe"),
        (#"[{"user_id": 1, "name": "A", "name": "B"}]"#, "key 'name' of User is given twice in one object at /0/name"),
        (#"[{"user_id": 1, "name": "A", "posts": [{"id": 2, "title": "t", "mood": 1}]}]"#,
         "key 'mood' matches no attribute or relationship of Post at /0/posts/0/mood"),
    ])
    func strict(json: String, message: String) async throws {
        let blog = try BlogFixture()
        let error = await #expect(throws: SyncError.self) {
            try await blog.sync("/users", json, options: SyncOptions(strictKeys: true))
        }
        #expect(error?.code == .ignoredKey)
        #expect(error?.message == message + " (strict: nothing was written)", "\(error.map(String.init(describing:)) ?? "")")
        #expect(try blog.store.count("User") == 0)
        let (chunks, continuation) = AsyncStream<[UInt8]>.makeStream()
        continuation.yield(Array(json.utf8))
        continuation.finish()
        let staged = await #expect(throws: SyncError.self) {
            try await blog.engine.sync(.get, "/users", chunks: chunks, options: SyncOptions(strictKeys: true))
        }
        #expect(staged?.code == .ignoredKey)
        #expect(try blog.store.count("User") == 0)
    }

    @Test("hints: the key convention that would match, and the attribute a key resembles")
    func hints() async throws {
        let blog = try BlogFixture()
        let result = try await blog.sync("/users", #"[{"user_id": 1, "name": "A", "avatarSm": "a.png", "createdAt": 1, "userId": 1}]"#)
        let suggestion = blog.engine.mapping.suggestedConvention(for: result.ignoredKeys)
        #expect(suggestion?.convention == .camelCase)
        #expect(suggestion?.matched == 2)
        let likely = result.ignoredKeys.map { blog.engine.mapping.likelyAttribute(for: $0) }
        #expect(Set(likely.compactMap { $0 }) == ["avatarSm", "createdAt", "userID"])
    }
}
