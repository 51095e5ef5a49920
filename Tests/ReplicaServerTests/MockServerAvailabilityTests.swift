import Foundation
import ReplicaServer
import ReplicaTestSupport
import Testing

@Suite("MockServer down and up")
struct MockServerAvailabilityTests {
    @Test("goDown(): every request gets 503 with Retry-After and is not kept for its Idempotency-Key; POST /_replica/up brings it back",
          arguments: ["memory", "sqlite"])
    func unavailable(kind: String) async throws {
        let options = MockServerOptions(store: try await Fixture.store(kind))
        try await withServer(try Fixture.peopleResources, options: options) { server, client in
            server.goDown()
            #expect(server.outage == .unavailable(retryAfter: 1))
            let refused = try await client.get("/people")
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") == "1")
            #expect(refused.json?["error"]?["code"] == "serviceUnavailable")
            let write = try await client.send(.POST, "/people", body: #"{"name":"ann"}"#, headers: [("Idempotency-Key", "k")])
            #expect(write.status == 503)
            #expect(try await client.get("/_replica/status").json == ["available": false, "mode": "unavailable", "retryAfter": 1])

            let up = try await client.send(.POST, "/_replica/up")
            #expect(up.status == 200)
            #expect(up.json == ["available": true])
            #expect(server.outage == nil)
            let retried = try await client.send(.POST, "/people", body: #"{"name":"ann"}"#, headers: [("Idempotency-Key", "k")])
            #expect(retried.status == 201)
            #expect(retried.header("Idempotent-Replayed") == nil)
            #expect(try await client.get("/people").json?.arrayValue?.count == 1)
        }
    }

    @Test("POST /_replica/down?mode=drop closes connections unanswered (a network error) until POST /_replica/up")
    func dropped() async throws {
        try await withServer(try Fixture.peopleResources) { server, client in
            #expect(try await client.send(.POST, "/_replica/down?mode=drop").json == ["available": false, "mode": "drop"])
            #expect(server.outage == .dropConnection)
            let dropped: Reply? = try? await client.get("/people")
            #expect(dropped == nil)
            let droppedWrite: Reply? = try? await client.post("/people", #"{"name":"ann"}"#)
            #expect(droppedWrite == nil)
            #expect(try await client.send(.POST, "/_replica/up").status == 200)
            #expect(try await client.get("/people").json == .array([]))

            let slow = try await client.send(.POST, "/_replica/down?retry_after=7")
            #expect(slow.status == 200)
            #expect(server.outage == .unavailable(retryAfter: 7))
            #expect(try await client.get("/people").header("Retry-After") == "7")
            server.comeUp()
            #expect(try await client.get("/people").status == 200)
            #expect(try await client.send(.POST, "/_replica/down?mode=sideways").status == 400)
            #expect(try await client.send(.GET, "/_replica/down").status == 405)
            #expect(try await client.get("/people").status == 200)
        }
    }

    @Test("MockServerOptions.outage starts the server down; a resource or route may not take the control prefix")
    func startsDown() async throws {
        var options = MockServerOptions()
        options.outage = .unavailable(retryAfter: 3)
        try await withServer(try Fixture.peopleResources, options: options) { server, client in
            let refused = try await client.get("/people")
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") == "3")
            server.comeUp()
            #expect(try await client.get("/people").status == 200)
        }
        await #expect(throws: MockServerError.self) {
            _ = try await MockServer.start(resources: [MockResource("_replica", properties: [MockProperty("name", .string)])])
        }
        await #expect(throws: MockServerError.self) {
            _ = try await MockServer.start(resources: try Fixture.peopleResources,
                                           routes: [MockRoute("GET", "/_replica/people", resource: "people")])
        }
    }
}

@Suite("MockServer replica serve --down", .serialized)
struct MockServerServeDownTests {
    @Test("replica serve --down answers 503 until POST /_replica/up; --help tells the writes' headers and the control routes")
    func serveDown() async throws {
        let server = try ServeProcess(["--schema", "Schemas/people.json", "--port", "0", "--down"])
        let base = String(try await server.firstLine().dropFirst("Listening on ".count))
        let client = Client(base: base)
        let refused = try await client.get("/people")
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") != nil)
        #expect(try await client.send(.POST, "/_replica/up").status == 200)
        #expect(try await client.get("/people").status == 200)
        #expect(await server.stop(SIGINT) == 0)
        #expect(server.standardError.contains("GET /people 503 "))

        let help = try ServeProcess(["--help"])
        #expect(await help.finish() == 0)
        for word in ["--down", "Idempotency-Key", "If-Match", "/_replica/up", "/_replica/down"] {
            #expect(help.standardOutput.contains(word), "--help lacks \(word)")
        }
    }
}
