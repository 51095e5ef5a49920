import Foundation
import Replica
import ReplicaCore
import ReplicaHTTP
import ReplicaPostgres
import ReplicaServer
import ReplicaTestSupport
import Testing

/// A row created locally and deleted before any push took its create never reaches the API;
/// once a push has taken the create (the API may have it, answered or not), the delete goes
/// behind it. On SQLite and PostgreSQL, against the mock API over HTTP.
@Suite("Outbox: a local delete takes back a create no push has taken")
struct OutboxTakeBackTests {
    /// Records every request the client sends, `METHOD /path`.
    final class Requests: Interceptor {
        let sent = Locked<[String]>([])

        func intercept(_ request: ClientRequest, next: Next) async throws -> ClientResponse {
            sent.withLock { $0.append("\(request.method) \(request.url.path)") }
            return try await next(request)
        }

        /// The writes sent (every method but GET).
        var writes: [String] { sent.withLock { $0 }.filter { !$0.hasPrefix("GET ") } }
    }

    @Test("created, changed and deleted before a push: the outbox is empty, the row gone, and the API gets nothing",
          arguments: StoreKind.allCases)
    func neverSent(kind: StoreKind) async throws {
        let requests = Requests()
        let loop = try await OutboxPushTests.Loop.start(kind, interceptors: [requests])
        try await withTeardown {
            let store = loop.store
            let changes = Locked<[ChangeSet]>([])
            let token = await store.addObserver(for: ["Person"], queue: DispatchQueue(label: "test.takeback")) { set in
                changes.withLock { $0.append(set) }
            }
            defer { store.removeObserver(token) }
            let created = try await store.saveLocally("Person", ["name": .string("Cy")])
            let renamed = try await store.saveLocally("Person", ["id": created.key, "name": .string("Cyd")])
            #expect(created.sentAt == nil && created.key == .integer(-1))
            #expect(renamed.kind == .update)
            #expect(try await loop.local() == ["-1: Cyd", "1: Ann", "2: Bob"])

            let deleted = try await store.deleteLocally("Person", key: created.key)
            #expect(deleted == nil)
            #expect(try await store.outbox().isEmpty)
            #expect(try await store.outboxStatus().pending == 0)
            #expect(try await loop.local() == ["1: Ann", "2: Bob"])
            // The delete's commit reports the row gone.
            try await waitUntil("three change sets") { changes.withLock { $0.count } == 3 }
            #expect(changes.withLock { $0.last?["Person"]?.deleted.integers } == [-1])

            let pushed = try await loop.client.push()
            #expect(pushed.description == "0 confirmed, 0 rejected, 0 still pending")
            #expect(requests.writes.isEmpty)
            #expect(try await loop.remote() == ["1: Ann", "2: Bob"])
            // The API never numbered Cy: the next create is its 3.
            try await store.saveLocally("Person", ["name": .string("Dee")])
            #expect(try await loop.client.push().description == "1 confirmed, 0 rejected, 0 still pending")
            #expect(requests.writes == ["POST /people"])
            #expect(try await loop.remote() == ["1: Ann", "2: Bob", "3: Dee"])
            #expect(try await loop.local() == ["1: Ann", "2: Bob", "3: Dee"])
        } teardown: {
            await loop.stop()
        }
    }

    @Test("a create a push took while the API was down: the delete is queued behind it, and the API ends without the row",
          arguments: StoreKind.allCases)
    func takenWhileDown(kind: StoreKind) async throws {
        let requests = Requests()
        let loop = try await OutboxPushTests.Loop.start(kind, interceptors: [requests])
        try await withTeardown {
            let store = loop.store
            loop.server.goDown()
            let created = try await store.saveLocally("Person", ["name": .string("Cy")])
            let before = Date()
            #expect(try await loop.client.push().description == "0 confirmed, 0 rejected, 1 still pending")
            let taken = try #require(try await store.outbox().first)
            let sentAt = try #require(taken.sentAt)
            #expect(sentAt.timeIntervalSince1970 >= before.timeIntervalSince1970.rounded(.down) && taken.attempts == 1)

            let deleted = try #require(try await store.deleteLocally("Person", key: created.key))
            #expect(deleted.description == "#\(created.id + 1) delete Person -1")
            #expect(deleted.sentAt == nil)
            #expect(try await store.outbox().map(\.kind) == [.create, .delete])
            #expect(try await loop.local() == ["1: Ann", "2: Bob"])

            loop.server.comeUp()
            #expect(try await loop.client.push().description == "2 confirmed, 0 rejected, 0 still pending")
            #expect(requests.writes == ["POST /people", "POST /people", "DELETE /people/3"])
            #expect(try await loop.remote() == ["1: Ann", "2: Bob"])
            #expect(try await loop.local() == ["1: Ann", "2: Bob"])
            #expect(try await store.outbox().isEmpty)
        } teardown: {
            await loop.stop()
        }
    }

    // The case the mark is for: the API created the row, the answer never came. A delete that took
    // the create back would leave the API's row behind, and the next sync would bring it back.
    @Test("a create the API applied but whose answer was lost: the delete follows it, and a sync does not bring the row back",
          arguments: StoreKind.allCases)
    func answerLost(kind: StoreKind) async throws {
        let requests = Requests()
        let loop = try await OutboxPushTests.Loop.start(kind, interceptors: [OutboxPushTests.LosingAnswers(1), requests])
        try await withTeardown {
            let store = loop.store
            let created = try await store.saveLocally("Person", ["name": .string("Cy")])
            #expect(try await loop.client.push().description == "0 confirmed, 0 rejected, 1 still pending")
            #expect(try await loop.remote() == ["1: Ann", "2: Bob", "3: Cy"])

            #expect(try await store.deleteLocally("Person", key: created.key)?.kind == .delete)
            #expect(try await loop.client.push().description == "2 confirmed, 0 rejected, 0 still pending")
            // The POST again with its Idempotency-Key (the API answers the object it made), then the DELETE.
            #expect(requests.writes == ["POST /people", "POST /people", "DELETE /people/3"])
            #expect(try await loop.remote() == ["1: Ann", "2: Bob"])
            _ = try await loop.client.call("/people")
            #expect(try await loop.local() == ["1: Ann", "2: Bob"])
        } teardown: {
            await loop.stop()
        }
    }

    @Test("a new row another pending row names is not taken back: the car is sent with the person's key, then the person's DELETE",
          arguments: StoreKind.allCases)
    func namedByAnotherRow(kind: StoreKind) async throws {
        let requests = Requests()
        let loop = try await OutboxPushTests.Loop.start(kind, interceptors: [requests])
        try await withTeardown {
            let store = loop.store
            let dee = try await store.saveLocally("Person", ["name": .string("Dee")])
            try await store.saveLocally("Car", ["name": .string("beetle"), "color": .string("red"), "personID": dee.key])
            let deleted = try await store.deleteLocally("Person", key: dee.key)
            #expect(deleted?.kind == .delete)
            #expect(try await store.outbox().map { "\($0.kind) \($0.entity)" } == ["create Person", "create Car", "delete Person"])

            #expect(try await loop.client.push(concurrency: 4).description == "3 confirmed, 0 rejected, 0 still pending")
            #expect(requests.writes == ["POST /people", "POST /cars", "DELETE /people/3"])
            #expect(try await OutboxPushTests.remoteCars(loop) == ["beetle: 3"])
            #expect(try await loop.remote() == ["1: Ann", "2: Bob"])
        } teardown: {
            await loop.stop()
        }
    }
}
