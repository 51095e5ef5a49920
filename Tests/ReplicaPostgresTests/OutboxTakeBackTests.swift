import Foundation
import Replica
import ReplicaCore
import ReplicaHTTP
import ReplicaPostgres
import ReplicaServer
import ReplicaTestSupport
import Testing

/// Until a push takes a new row's create, the create stays open: a later save of the row goes
/// into it, and a delete takes it back, so the API never hears of the row. Once a push has taken
/// the create (the API may have it, answered or not), changes and the delete are queued behind it.
/// On SQLite and PostgreSQL, against the mock API over HTTP.
@Suite("Outbox: a create no push has taken stays open: later saves go into it, a delete takes it back")
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

    /// Runs `body` with a mock API and a store of `kind`, the client's requests going through
    /// `before`, then recorded; stops them after.
    static func withLoop(_ kind: StoreKind, before: [any Interceptor] = [],
                         _ body: (OutboxPushTests.Loop, any ReplicaStore, Requests) async throws -> Void) async throws {
        let requests = Requests()
        let loop = try await OutboxPushTests.Loop.start(kind, interceptors: before + [requests])
        try await withTeardown {
            try await body(loop, loop.store, requests)
        } teardown: {
            await loop.stop()
        }
    }

    @Test("created, changed and deleted before a push: the outbox is empty, the row gone, and the API gets nothing",
          arguments: StoreKind.allCases)
    func neverSent(kind: StoreKind) async throws {
        try await Self.withLoop(kind) { loop, store, requests in
            let changes = Locked<[ChangeSet]>([])
            let token = await store.addObserver(for: ["Person"], queue: DispatchQueue(label: "test.takeback")) { set in
                changes.withLock { $0.append(set) }
            }
            defer { store.removeObserver(token) }
            let created = try await store.saveLocally("Person", ["name": .string("Cy")])
            #expect(created.sentAt == nil && created.key == .integer(-1))
            // The change goes into the create (the key stays out of its body).
            let renamed = try await store.saveLocally("Person", ["id": created.key, "name": .string("Cyd"), "numberOfKids": .integer(2)])
            #expect(renamed.description == "#\(created.id) create Person -1 (name, numberOfKids)")
            #expect(renamed.changes["name"] == .string("Cyd"))
            #expect(try await store.outbox() == [renamed])
            #expect(try await loop.local() == ["-1: Cyd", "1: Ann", "2: Bob"])

            let deleted = try await store.deleteLocally("Person", key: created.key)
            #expect(deleted == nil)
            #expect(try await store.outbox().isEmpty)
            #expect(try await store.outboxStatus().pending == 0)
            #expect(try await loop.local() == ["1: Ann", "2: Bob"])
            // The three commits report the row made, changed and gone.
            try await waitUntil("three change sets") { changes.withLock { $0.count } == 3 }
            #expect(changes.withLock { $0.map { "\($0["Person"]?.inserted.integers ?? []) \($0["Person"]?.updated.integers ?? []) "
                                                  + "\($0["Person"]?.deleted.integers ?? [])" } }
                    == ["[-1] [] []", "[] [-1] []", "[] [] [-1]"])

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
        }
    }

    @Test("a draft completed in a second save is one POST with its final values; once a push took the create, a change is an update",
          arguments: StoreKind.allCases)
    func draftCompleted(kind: StoreKind) async throws {
        try await Self.withLoop(kind) { loop, store, requests in
            loop.server.setController(OutboxPushTests.RequiringNames(), for: "people")
            // Alone, this create would be refused: the API requires a name.
            let draft = try await store.saveLocally("Person", ["name": .string("")])
            let completed = try await store.saveLocally("Person", ["id": draft.key, "name": .string("Dee")])
            #expect(completed.id == draft.id && completed.kind == .create)
            #expect(try await store.outbox().map(\.description) == ["#\(draft.id) create Person -1 (name)"])
            #expect(try await loop.client.push().description == "1 confirmed, 0 rejected, 0 still pending")
            #expect(requests.writes == ["POST /people"])
            #expect(try await loop.remote() == ["1: Ann", "2: Bob", "3: Dee"])

            // Taken by a push while the API is down: the next change is an update behind the create.
            loop.server.goDown()
            let eve = try await store.saveLocally("Person", ["name": .string("Eve")])
            _ = try await loop.client.push()
            let renamed = try await store.saveLocally("Person", ["id": eve.key, "name": .string("Eva")])
            #expect(renamed.kind == .update && renamed.id == eve.id + 1)
            loop.server.comeUp()
            #expect(try await loop.client.push().description == "2 confirmed, 0 rejected, 0 still pending")
            #expect(requests.writes.suffix(2) == ["POST /people", "PUT /people/4"])
            #expect(try await loop.remote() == ["1: Ann", "2: Bob", "3: Dee", "4: Eva"])
            #expect(try await loop.local() == ["1: Ann", "2: Bob", "3: Dee", "4: Eva"])
        }
    }

    @Test("a create a push took while the API was down: the delete is queued behind it, and the API ends without the row",
          arguments: StoreKind.allCases)
    func takenWhileDown(kind: StoreKind) async throws {
        try await Self.withLoop(kind) { loop, store, requests in
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
        }
    }

    // The case the mark is for: the API created the row, the answer never came. A delete that took
    // the create back would leave the API's row behind, and the next sync would bring it back.
    @Test("a create the API applied but whose answer was lost: the delete follows it, and a sync does not bring the row back",
          arguments: StoreKind.allCases)
    func answerLost(kind: StoreKind) async throws {
        try await Self.withLoop(kind, before: [OutboxPushTests.LosingAnswers(1)]) { loop, store, requests in
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
        }
    }

    @Test("a new row another pending row names is not taken back: the car is sent with the person's key, then the person's DELETE",
          arguments: StoreKind.allCases)
    func namedByAnotherRow(kind: StoreKind) async throws {
        try await Self.withLoop(kind) { loop, store, requests in
            let dee = try await store.saveLocally("Person", ["name": .string("Dee")])
            try await store.saveLocally("Car", ["name": .string("beetle"), "color": .string("red"), "personID": dee.key])
            let deleted = try await store.deleteLocally("Person", key: dee.key)
            #expect(deleted?.kind == .delete)
            #expect(try await store.outbox().map { "\($0.kind) \($0.entity)" } == ["create Person", "create Car", "delete Person"])

            #expect(try await loop.client.push(concurrency: 4).description == "3 confirmed, 0 rejected, 0 still pending")
            #expect(requests.writes == ["POST /people", "POST /cars", "DELETE /people/3"])
            #expect(try await OutboxPushTests.remoteCars(loop) == ["beetle: 3"])
            #expect(try await loop.remote() == ["1: Ann", "2: Bob"])
        }
    }
}
