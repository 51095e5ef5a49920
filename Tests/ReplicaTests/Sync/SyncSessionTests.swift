import Foundation
import Replica
import ReplicaTestSupport
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Sync sessions")
struct SyncSessionTests {
    static func posts(_ ids: ClosedRange<Int>, title: String = "t") -> String {
        #"{"posts": ["# + ids.map { #"{"id": \#($0), "title": "\#(title)\#($0)"}"# }.joined(separator: ",") + "]}"
    }

    @Test("pages are invisible until commit, then land in one transaction with one change set")
    func pagesCommitTogether() async throws {
        let blog = try BlogFixture()
        _ = try await blog.sync("/users/1/posts", #"{"posts": [{"id": 99, "title": "stale"}, {"id": 1, "title": "old"}]}"#)
        let log = ChangeLog()
        let token = blog.engine.addObserver(queue: DispatchQueue(label: "test")) { log.append($0) }
        defer { blog.engine.removeObserver(token) }
        let session = try blog.engine.session(.get, "/users/1/posts")
        let first = try await session.stage(body: Data(Self.posts(1...3).utf8), source: "page 1")
        let second = try await session.stage(body: Data(Self.posts(4...5).utf8), source: "page 2")
        #expect(first.keys.integers == [1, 2, 3])
        #expect(second.keys.integers == [4, 5])
        #expect(session.stagedRowCount == 5)
        #expect(try blog.keys("Post").count == 2)
        let result = try await session.commit()
        #expect(result.changes["Post"]?.inserted.ints == [2, 3, 4, 5])
        #expect(result.changes["Post"]?.updated.ints == [1])
        #expect(result.changes["Post"]?.deleted.ints == [99])
        #expect(result.objectCount == 5)
        #expect(result.writeLockDuration != nil)
        #expect(try blog.keys("Post") == (1...5).map { .integer(Int64($0)) })
        await #expect(throws: SyncError.self) { try await session.commit() }
        // One commit, one change set, delivered after it.
        try await waitUntil("one change set observed") { log.values.count == 1 }
        #expect(log.values.map(\.sequence) == [result.changes.sequence])
        #expect(log.values.first?["Post"]?.deleted.ints == [99])
    }

    @Test("a failure on any page leaves the store exactly as it was and ends the session")
    func failedPageRollsBack() async throws {
        let blog = try BlogFixture()
        _ = try await blog.sync("/users/1/posts", Self.posts(1...3, title: "before"))
        let before = try blog.store.rows("Post")
        let session = try blog.engine.session(.get, "/users/1/posts")
        _ = try await session.stage(body: Data(Self.posts(1...3, title: "after").utf8), source: "GET /users/1/posts?page=1")
        let error = await #expect(throws: SyncError.self) {
            try await session.stage(body: Data(#"{"posts": [{"id": 4, "title": "x"},]}"#.utf8), source: "GET /users/1/posts?page=2")
        }
        #expect(error?.code == .malformedJSON)
        #expect(error?.source == "GET /users/1/posts?page=2")
        #expect(error?.message.hasPrefix("byte 35 ") == true, "\(error.map(String.init(describing:)) ?? "")")
        let ended = await #expect(throws: SyncError.self) { try await session.commit() }
        #expect(ended?.message.contains("has ended") == true)
        #expect(try blog.store.rows("Post") == before)
    }

    @Test("an incomplete traversal upserts its pages and deletes nothing")
    func incompleteTraversal() async throws {
        let blog = try BlogFixture()
        _ = try await blog.sync("/users/1/posts", Self.posts(1...6))
        let session = try blog.engine.session(.get, "/users/1/posts")
        _ = try await session.stage(body: Data(Self.posts(1...2, title: "new").utf8))
        let result = try await session.commit(complete: false)
        #expect(result.changes["Post"]?.updated.ints == [1, 2])
        #expect(result.changes["Post"]?.deleted.isEmpty != false)
        #expect(try blog.keys("Post").count == 6)
    }

    @Test("keys vouched for by an unchanged page keep their rows; unvouched ones go")
    func vouchedKeys() async throws {
        let blog = try BlogFixture()
        _ = try await blog.sync("/users/1/posts", Self.posts(1...6))
        let session = try blog.engine.session(.get, "/users/1/posts")
        session.vouch(for: PrimaryKeys([.integer(1), .integer(2), .integer(3)]))
        _ = try await session.stage(body: Data(Self.posts(4...5).utf8))
        let result = try await session.commit()
        #expect(result.changes["Post"]?.deleted.ints == [6])
        #expect(result.changes["Post"]?.updated.isEmpty != false)
        #expect(try blog.keys("Post") == (1...5).map { .integer(Int64($0)) })
    }

    @Test("a skipped invalid object's key still counts as seen: its row stays", arguments: [false, true])
    func skippedKeysCountAsSeen(throughSession: Bool) async throws {
        let blog = try BlogFixture()
        _ = try await blog.sync("/users", #"[{"user_id": 1, "name": "A"}, {"user_id": 2, "name": "B"}, {"user_id": 3, "name": "C"}]"#)
        let json = #"[{"user_id": 1, "name": "A"}, {"user_id": 2, "name": "B", "created_at": "yesterday"}, {"user_id": "x", "name": "D"}]"#
        let options = SyncOptions(stalePolicy: .delete, onInvalid: .skip)
        let result: SyncResult
        if throughSession {
            let session = try blog.engine.session(.get, "/users", options: options)
            let page = try await session.stage(body: Data(json.utf8))
            #expect(page.keys.integers == [1, 2])
            result = try await session.commit()
        } else {
            result = try await blog.sync("/users", json, options: options)
        }
        #expect(result.skipped.map(\.pointer.description) == ["/1", "/2"])
        #expect(result.skipped.map(\.key) == [.integer(2), nil])
        #expect(result.changes["User"]?.deleted.ints == [3])
        #expect(try blog.keys("User") == [.integer(1), .integer(2)])
        #expect(try blog.store.rows("User", where: "userID = 2").first?["name"] == .string("B"))
    }

    @Test("rows spilled to the scratch file replay exactly as the direct path writes them")
    func spilledStaging() async throws {
        let direct = try BlogFixture()
        let staged = try BlogFixture()
        let users = (1...5000).map { id in
            #"{"user_id": \#(id), "name": "user \#(id) \#(String(repeating: "é", count: id % 40))", "email": \#(id % 3 == 0 ? "null" : "\"u\(id)@x\"")}"#
        }
        let json = "[" + users.joined(separator: ",") + "]"
        let expected = try await direct.sync("/users", json)
        let session = try staged.engine.session(.get, "/users", options: SyncOptions(chunkSize: 1000, stagingMemory: 0))
        _ = try await session.stage(body: Data(json.utf8))
        let result = try await session.commit()
        #expect(result.changes == expected.changes.renumbered(result.changes.sequence))
        #expect(try staged.store.rows("User") == direct.store.rows("User"))
    }

    @Test("one-page sessions behind sync(chunks:) are atomic and leave no parser behind")
    func chunkedSync() async throws {
        let blog = try BlogFixture()
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        continuation.yield(Array(#"[{"user_id": 1, "name": "A"},"#.utf8))
        continuation.yield(Array(#"{"user_id": 2, "name": "B"}]"#.utf8))
        continuation.finish()
        let result = try await blog.engine.sync(.get, "/users", chunks: stream)
        #expect(result.changes["User"]?.inserted.ints == [1, 2])
    }

    @Test("the parsing thread has ended when a sync returns, even after a writer-side error")
    func parserJoined() async throws {
        let blog = try BlogFixture()
        let probe = ChunkProbe()
        // User 2 has no name (NOT NULL): the writer fails on the first batch while the
        // parser is still reading an endless, slow input.
        let first = "[" + (1...3000).map { $0 == 2 ? #"{"user_id": 2}"# : #"{"user_id": \#($0), "name": "u"}"# }
            .joined(separator: ",") + ","
        let plan = try blog.engine.frontEnd.resolve(.route(.get, "/users"), options: SyncOptions())
        await #expect(throws: SyncError.self) {
            try await blog.engine.run(plan, source: "probe", totalBytes: nil, options: SyncOptions()) {
                probe.next(first: first)
            }
        }
        #expect(probe.isInside == false)
        let calls = probe.calls
        try await Task.sleep(for: .milliseconds(150))
        #expect(probe.calls == calls, "the parsing thread kept reading after the sync returned")
        #expect(try blog.store.count("User") == 0)
    }
}

/// An endless, slow chunk source that tells whether a call is under way.
/// `@unchecked Sendable`: guarded by `lock`.
final class ChunkProbe: @unchecked Sendable {
    private let lock = NSLock()
    private var inside = false
    private var count = 0

    func next(first: String) -> [UInt8] {
        let index = lock.withLock {
            inside = true
            count += 1
            return count
        }
        defer { lock.withLock { inside = false } }
        if index == 1 { return Array(first.utf8) }
        Thread.sleep(forTimeInterval: 0.02)
        return Array(#"{"user_id": \#(10_000 + index), "name": "more"},"#.utf8)
    }

    var isInside: Bool { lock.withLock { inside } }
    var calls: Int { lock.withLock { count } }
}

extension ChangeSet {
    /// The same changes under another sequence number, to compare two engines' change sets.
    func renumbered(_ sequence: UInt64) -> ChangeSet { ChangeSet(sequence: sequence, entities: entities) }
}
