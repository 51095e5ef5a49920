import Foundation
import Replica
import ReplicaTestSupport
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// Byte chunks of a fixed size, as an HTTP body would arrive.
struct Chunked: AsyncSequence, Sendable {
    typealias Element = [UInt8]
    let bytes: [UInt8]
    let size: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        let bytes: [UInt8]
        let size: Int
        var offset = 0
        mutating func next() async -> [UInt8]? {
            guard offset < bytes.count else { return nil }
            let end = Swift.min(bytes.count, offset + size)
            defer { offset = end }
            return Array(bytes[offset..<end])
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(bytes: bytes, size: size) }
}

@Suite("Sync streaming, files and observers")
struct SyncStreamingTests {
    static let usersJSON: String = "[" + (1...300).map { i in
        #"{"user_id": \#(i), "name": "user \#(i) ✓", "email": "u\#(i)@example.com", "friends": [\#(i % 7)], "created_at": "2024-05-01T12:00:\#(String(format: "%02d", i % 60))Z"}"#
    }.joined(separator: ",") + "]"

    @Test("chunked streaming gives the same rows and changes as the whole buffer", arguments: [1, 7, 64, 4096])
    func chunkedEqualsWhole(chunkSize: Int) async throws {
        let whole = try BlogFixture()
        let wholeResult = try await whole.sync("/users", Self.usersJSON)
        let streamed = try BlogFixture()
        let streamedResult = try await streamed.engine.sync(.get, "/users", chunks: Chunked(bytes: Array(Self.usersJSON.utf8), size: chunkSize))
        #expect(streamedResult.changes.entities == wholeResult.changes.entities)
        #expect(try streamed.store.rows("User") == (try whole.store.rows("User")))
        #expect(try whole.store.count("User") == 300)
    }

    @Test("imports a file by entity with scope and progress")
    func importFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.path("posts.json")
        let posts = "[" + (1...2500).map { #"{"id": \#($0), "title": "post \#($0)"}"# }.joined(separator: ",") + "]"
        try Data(posts.utf8).write(to: URL(fileURLWithPath: file))
        let blog = try BlogFixture()
        let reports = ProgressLog()
        let options = SyncOptions(progress: { reports.append($0) }, progressInterval: 1000, chunkSize: 1000)
        let result = try await blog.engine.importFile(file, into: .entity("Post", scope: ["userID": .integer(9)]), options: options)
        #expect(result.changes["Post"]?.inserted.count == 2500)
        #expect(result.byteCount == Int64(posts.utf8.count))
        #expect(try blog.store.count("Post", where: "userID = 9") == 2500)
        let seen = reports.values
        #expect(seen.count >= 3)
        #expect(seen.last?.objectsWritten == 2500)
        #expect(seen.last?.bytesRead == Int64(posts.utf8.count))
        #expect(seen.last?.totalBytes == Int64(posts.utf8.count))
        let missing = await #expect(throws: SyncError.self) {
            try await blog.engine.importFile(directory.path("nope.json"), into: .entity("Post"))
        }
        #expect(missing?.code == .input)
    }

    @Test("observers receive exact change sets in commit order, and removal inside a callback is immediate")
    func observers() async throws {
        let blog = try BlogFixture()
        let received = ChangeLog()
        let queue = DispatchQueue(label: "observer")
        let token = TokenBox()
        token.value = blog.engine.addObserver(for: ["Post"], queue: queue) { changes in
            received.append(changes)
            if received.count == 2, let value = token.value { blog.engine.removeObserver(value) }
        }
        var all: [ChangeSet] = []
        let stream = blog.engine.changes()
        let collector = Task { for await changes in stream { all.append(changes); if all.count == 3 { break } }; return all }
        let first = try await blog.sync("/users/1/posts", #"{"posts": [{"id": 1, "title": "a"}]}"#)
        _ = try await blog.sync("/users", #"[{"user_id": 1, "name": "Ann"}]"#)   // no Post change
        let third = try await blog.sync("/users/1/posts", #"{"posts": [{"id": 1, "title": "b"}, {"id": 2, "title": "c"}]}"#)
        _ = try await blog.sync("/users/1/posts", #"{"posts": [{"id": 1, "title": "b"}]}"#)   // deletes 2, after removal
        let everything = await collector.value
        queue.sync {}
        let posts = received.values
        #expect(posts.count == 2)
        #expect(posts.map(\.sequence) == [first.changes.sequence, third.changes.sequence])
        #expect(posts[0].entities.keys.sorted() == ["Post"])
        #expect(posts[1]["Post"]?.inserted.ints == [2])
        #expect(posts[1]["Post"]?.updated.ints == [1])
        #expect(everything.map(\.sequence) == everything.map(\.sequence).sorted())
        #expect(everything[1]["User"]?.inserted.ints == [1])
    }

    @Test("cancelling an import rolls it back")
    func cancellation() async throws {
        let blog = try BlogFixture()
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        continuation.yield(Array(#"[{"user_id": 1, "name": "A"},"#.utf8))
        // Cancel once the first object was parsed, while the body is still open.
        let (parsed, parsedContinuation) = AsyncStream<Void>.makeStream()
        let options = SyncOptions(progress: { _ in parsedContinuation.yield() }, progressInterval: 1)
        let task = Task { try await blog.engine.sync(.get, "/users", chunks: stream, options: options) }
        var iterator = parsed.makeAsyncIterator()
        _ = await iterator.next()
        task.cancel()
        let error = await #expect(throws: SyncError.self) { try await task.value }
        #expect(error?.code == .cancelled)
        continuation.finish()
        #expect(try blog.store.count("User") == 0)
    }
}

/// Thread-safe logs for callbacks in tests. `@unchecked Sendable`: guarded by `lock`.
final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [SyncProgress] = []
    func append(_ item: SyncProgress) { lock.lock(); items.append(item); lock.unlock() }
    var values: [SyncProgress] { lock.lock(); defer { lock.unlock() }; return items }
}

final class ChangeLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [ChangeSet] = []
    func append(_ item: ChangeSet) { lock.lock(); items.append(item); lock.unlock() }
    var values: [ChangeSet] { lock.lock(); defer { lock.unlock() }; return items }
    var count: Int { lock.lock(); defer { lock.unlock() }; return items.count }
}

final class TokenBox: @unchecked Sendable {
    var value: ObserverToken?
}
