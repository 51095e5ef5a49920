import Foundation
@testable import ReplicaServer
import ReplicaTestSupport
import Testing

@Suite("MockServer Idempotency-Key")
struct MockServerIdempotencyTests {
    static let stores = ["memory", "sqlite"]

    static func keyed(_ key: String) -> [(String, String)] { [("Idempotency-Key", key)] }

    static func count(_ client: Client) async throws -> Int {
        try #require(try await client.get("/people").json?.arrayValue).count
    }

    @Test("a repeated POST or DELETE with its key answers the first response again, Idempotent-Replayed, with no second effect",
          arguments: stores)
    func replay(kind: String) async throws {
        let options = MockServerOptions(store: try await Fixture.store(kind))
        try await withServer(try Fixture.peopleResources, options: options) { server, client in
            let first = try await client.send(.POST, "/people", body: #"{"name":"ann"}"#, headers: Self.keyed("create-ann"))
            #expect(first.status == 201)
            #expect(first.header("Idempotent-Replayed") == nil)
            let changes = server.changes.sequence
            let again = try await client.send(.POST, "/people", body: #"{"name":"ann"}"#, headers: Self.keyed("create-ann"))
            #expect(again.status == 201)
            #expect(again.header("Idempotent-Replayed") == "true")
            #expect(again.bytes == first.bytes)
            #expect(again.header("Location") == first.header("Location"))
            #expect(again.header("Location") != nil)
            #expect(again.header("ETag") == first.header("ETag"))
            #expect(try await Self.count(client) == 1)
            #expect(server.changes.sequence == changes)
            // The key is the request's: the same body with another key creates again.
            #expect(try await client.send(.POST, "/people", body: #"{"name":"ann"}"#, headers: Self.keyed("create-ann-2")).status == 201)
            #expect(try await Self.count(client) == 2)

            let deleted = try await client.send(.DELETE, "/people/1", headers: Self.keyed("delete-1"))
            #expect(deleted.status == 204)
            let deletedAgain = try await client.send(.DELETE, "/people/1", headers: Self.keyed("delete-1"))
            #expect(deletedAgain.status == 204)   // not 404: the first answer, replayed
            #expect(deletedAgain.header("Idempotent-Replayed") == "true")
            #expect(try await client.send(.DELETE, "/people/1").status == 404)
        }
    }

    @Test("the key with another body, path or method answers 422 in the configured error style, and changes nothing")
    func reused() async throws {
        try await withServer(try Fixture.peopleResources) { server, client in
            #expect(try await client.send(.POST, "/people", body: #"{"name":"ann"}"#, headers: Self.keyed("k")).status == 201)
            let changes = server.changes.sequence
            let otherBody = try await client.send(.POST, "/people", body: #"{"name":"bob"}"#, headers: Self.keyed("k"))
            #expect(otherBody.status == 422)
            let message = try #require(otherBody.json?["errors"]?["base"]?[0]?.stringValue)
            #expect(message.contains("same parameters"))
            #expect(otherBody.header("Idempotent-Replayed") == nil)
            let otherPath = try await client.send(.PUT, "/people/1", body: #"{"name":"ann"}"#, headers: Self.keyed("k"))
            #expect(otherPath.status == 422)
            #expect(try await client.get("/people/1").json?["name"] == "ann")
            #expect(try await Self.count(client) == 1)
            #expect(server.changes.sequence == changes)
        }
        var options = MockServerOptions()
        options.validationErrors = MockValidationErrors(status: 400, shape: .problemDetails)
        try await withServer(try Fixture.peopleResources, options: options) { _, client in
            #expect(try await client.send(.POST, "/people", body: #"{"name":"ann"}"#, headers: Self.keyed("k")).status == 201)
            let reply = try await client.send(.POST, "/people", body: #"{"name":"bob"}"#, headers: Self.keyed("k"))
            #expect(reply.status == 422)
            #expect(reply.header("Content-Type") == "application/problem+json")
            #expect(reply.json?["status"] == 422)
            #expect(reply.json?["errors"]?[0]?["detail"]?.stringValue?.contains("same parameters") == true)
        }
    }

    @Test("a repeat while the first request with its key is being handled answers 409; the first then answers repeats")
    func concurrent() async throws {
        let (entered, enteredContinuation) = AsyncStream.makeStream(of: Void.self)
        let (release, releaseContinuation) = AsyncStream.makeStream(of: Void.self)
        try await withServer(try Fixture.peopleResources) { server, client in
            server.setController(GatedController(.create, entered: enteredContinuation, release: release), for: "people")
            let first = Task {
                try await client.send(.POST, "/people", body: #"{"name":"ann"}"#, headers: Self.keyed("slow"))
            }
            var waiting = entered.makeAsyncIterator()
            _ = await waiting.next()
            let duplicate = try await client.send(.POST, "/people", body: #"{"name":"ann"}"#, headers: Self.keyed("slow"))
            #expect(duplicate.status == 409)
            #expect(duplicate.json?["error"]?["code"] == "idempotencyKeyInUse")
            releaseContinuation.yield()
            let answered = try await first.value
            #expect(answered.status == 201)
            let replayed = try await client.send(.POST, "/people", body: #"{"name":"ann"}"#, headers: Self.keyed("slow"))
            #expect(replayed.status == 201)
            #expect(replayed.header("Idempotent-Replayed") == "true")
            #expect(replayed.bytes == answered.bytes)
            #expect(try await Self.count(client) == 1)
        }
    }

    @Test("a fault-injected 503 is not kept: the retry runs the action, once", arguments: stores)
    func faultNotKept(kind: String) async throws {
        let options = MockServerOptions(store: try await Fixture.store(kind))
        try await withServer(try Fixture.peopleResources, options: options) { server, client in
            server.setConditions(MockConditions(faults: [MockFault(.status(503), method: "POST", path: "/people")]))
            let failed = try await client.send(.POST, "/people", body: #"{"name":"ann"}"#, headers: Self.keyed("retry-me"))
            #expect(failed.status == 503)
            server.setConditions(MockConditions())
            let retried = try await client.send(.POST, "/people", body: #"{"name":"ann"}"#, headers: Self.keyed("retry-me"))
            #expect(retried.status == 201)
            #expect(retried.header("Idempotent-Replayed") == nil)
            let again = try await client.send(.POST, "/people", body: #"{"name":"ann"}"#, headers: Self.keyed("retry-me"))
            #expect(again.status == 201)
            #expect(again.header("Idempotent-Replayed") == "true")
            #expect(try await Self.count(client) == 1)
        }
    }

    @Test("a rate limit's 429 is not kept: the request with its key runs once the limit allows")
    func rateLimitNotKept() async throws {
        var options = MockServerOptions()
        options.rateLimit = MockRateLimit(requests: 1, per: .seconds(2))
        try await withServer(try Fixture.peopleResources, options: options) { _, client in
            // The window's one request, then the keyed one refused (with a fresh key should the window roll between).
            var key = ""
            for attempt in 0..<10 {
                _ = try await client.get("/people")
                key = "k\(attempt)"
                if try await client.send(.POST, "/people", body: #"{"name":"ann"}"#, headers: Self.keyed(key)).status == 429 { break }
            }
            var answer: Reply?
            for _ in 0..<60 where answer == nil {
                try await Task.sleep(for: .milliseconds(100))
                let reply = try await client.send(.POST, "/people", body: #"{"name":"ann"}"#, headers: Self.keyed(key))
                if reply.status != 429 { answer = reply }
                #expect(reply.header("Idempotent-Replayed") == nil)
            }
            #expect(answer?.status == 201)
            #expect(answer?.header("Idempotent-Replayed") == nil)
        }
    }

    @Test("a repeated PATCH answers the first answer and leaves a later change alone", arguments: stores)
    func patchReplay(kind: String) async throws {
        let options = MockServerOptions(store: try await Fixture.store(kind))
        try await withServer(try Fixture.peopleResources, options: options) { server, client in
            #expect(try await client.post("/people", #"{"name":"ann"}"#).status == 201)
            let first = try await client.send(.PATCH, "/people/1", body: #"{"name":"bob"}"#, headers: Self.keyed("rename"))
            #expect(first.status == 200)
            #expect(try await client.patch("/people/1", #"{"name":"cy"}"#).status == 200)
            let changes = server.changes.sequence
            let again = try await client.send(.PATCH, "/people/1", body: #"{"name":"bob"}"#, headers: Self.keyed("rename"))
            #expect(again.header("Idempotent-Replayed") == "true")
            #expect(again.json?["name"] == "bob")
            #expect(try await client.get("/people/1").json?["name"] == "cy")
            #expect(server.changes.sequence == changes)
        }
    }

    @Test("the cache keeps at most its capacity, and its eviction order stays short however often a key is replayed")
    func cacheBounds() {
        let cache = MockIdempotencyCache(retention: .seconds(3600), capacity: 3)
        let fingerprint = MockIdempotencyCache.Fingerprint(method: "POST", path: "/people", body: "{}")
        for index in 0..<100 {
            guard case .proceed = cache.begin("k\(index)", fingerprint) else { Issue.record("k\(index) not new"); return }
            cache.finish("k\(index)", with: MockResponse(status: 201))
        }
        #expect(cache.count == 3)
        for _ in 0..<10_000 {
            guard case .replay = cache.begin("k99", fingerprint) else { Issue.record("k99 not kept"); return }
        }
        #expect(cache.orderLength < 100)
        guard case .proceed = cache.begin("k0", fingerprint) else { Issue.record("k0 still kept"); return }
        cache.abandon("k0")
        guard case .proceed = cache.begin("k0", fingerprint) else { Issue.record("k0 not released"); return }
    }

    @Test("a kept response expires after idempotencyRetention; past idempotencyCapacity the least recently used goes")
    func retention() async throws {
        var options = MockServerOptions()
        options.idempotencyRetention = .milliseconds(300)
        try await withServer(try Fixture.peopleResources, options: options) { _, client in
            #expect(try await client.send(.POST, "/people", body: #"{"name":"ann"}"#, headers: Self.keyed("k")).status == 201)
            try await Task.sleep(for: .milliseconds(600))
            let after = try await client.send(.POST, "/people", body: #"{"name":"ann"}"#, headers: Self.keyed("k"))
            #expect(after.status == 201)
            #expect(after.header("Idempotent-Replayed") == nil)
            #expect(try await Self.count(client) == 2)
        }
        options = MockServerOptions()
        options.idempotencyCapacity = 2
        try await withServer(try Fixture.peopleResources, options: options) { _, client in
            for key in ["a", "b"] {
                #expect(try await client.send(.POST, "/people", body: #"{"name":"ann"}"#, headers: Self.keyed(key)).status == 201)
            }
            // `a` used again: `b` is now the least recently used, and goes when `c` comes.
            #expect(try await client.send(.POST, "/people", body: #"{"name":"ann"}"#, headers: Self.keyed("a")).header("Idempotent-Replayed") == "true")
            #expect(try await client.send(.POST, "/people", body: #"{"name":"ann"}"#, headers: Self.keyed("c")).status == 201)
            #expect(try await Self.count(client) == 3)
            #expect(try await client.send(.POST, "/people", body: #"{"name":"ann"}"#, headers: Self.keyed("a")).header("Idempotent-Replayed") == "true")
            let forgotten = try await client.send(.POST, "/people", body: #"{"name":"ann"}"#, headers: Self.keyed("b"))
            #expect(forgotten.status == 201)
            #expect(forgotten.header("Idempotent-Replayed") == nil)
            #expect(try await Self.count(client) == 4)
        }
    }
}
