import AsyncHTTPClient
import ReplicaServer
import ReplicaTestSupport
import Testing

@Suite("MockServer conditions: latency, faults, conditional requests")
struct MockServerConditionTests {
    @Test("every response waits a random time within the latency range")
    func latency() async throws {
        let conditions = MockConditions(latency: .milliseconds(150) ... .milliseconds(300))
        try await withServer(try Fixture.peopleResources, options: MockServerOptions(conditions: conditions)) { server, client in
            _ = try await client.get("/people")  // warm the connection
            for path in ["/people", "/people/1", "/nothing", "/people"] {
                let start = ContinuousClock.now
                let reply = try await client.get(path)
                let measured = start.duration(to: .now)
                // The server reports the delay it chose; it lies in the range, and the client waited at least that long.
                let chosen = try #require(reply.headers.first(name: "X-Mock-Latency").flatMap(Double.init))
                #expect(chosen >= 150 && chosen <= 300, "\(chosen) ms")
                #expect(measured >= .milliseconds(150), "\(measured)")
                #expect(measured >= .microseconds(Int(chosen * 1000)), "\(measured) < \(chosen) ms")
            }
            server.setConditions(MockConditions())
            let reply = try await client.get("/people")
            #expect(reply.headers.first(name: "X-Mock-Latency") == nil)
        }
    }

    @Test("a status fault answers its code; probability 0 never fires; per-route faults only hit their route")
    func statusFaults() async throws {
        try await withServer(try Fixture.peopleResources) { server, client in
            server.setConditions(MockConditions(faults: [MockFault(.status(503))]))
            let failed = try await client.post("/people", #"{"name":"x"}"#)
            #expect(failed.status == 503)
            #expect(failed.json?["error"]?["code"] == "injectedFault")
            server.setConditions(MockConditions(faults: [MockFault(.status(500), probability: 0)]))
            for _ in 0..<20 { #expect(try await client.get("/people").status == 200) }
            #expect(try await client.get("/people").json == .array([]))

            server.setConditions(MockConditions(faults: [MockFault(.status(429), method: "GET", path: "/people/:id")]))
            #expect(try await client.post("/people", #"{"name":"x"}"#).status == 201)
            #expect(try await client.get("/people/1").status == 429)
            #expect(try await client.get("/people").status == 200)
            #expect(try await client.put("/people/1", #"{"name":"y"}"#).status == 200)

            server.setConditions(MockConditions(faults: [MockFault(.status(500), probability: 0.5)]))
            var codes: [Int: Int] = [:]
            for _ in 0..<200 { codes[try await client.get("/people").status, default: 0] += 1 }
            #expect(Set(codes.keys) == [200, 500])
            #expect((codes[500] ?? 0) > 50 && (codes[500] ?? 0) < 150, "\(codes)")
        }
    }

    @Test("a dropped connection fails the request without a response, and the server keeps serving")
    func droppedConnection() async throws {
        try await withServer(try Fixture.peopleResources) { server, client in
            server.setConditions(MockConditions(faults: [MockFault(.dropConnection, path: "/people")]))
            let dropped: Reply? = try? await client.get("/people")
            #expect(dropped == nil)
            let other = try await client.get("/people/1")
            #expect(other.status == 404)
            server.setConditions(MockConditions())
            let healed = try await client.get("/people")
            #expect(healed.status == 200)
        }
    }

    @Test("a stall holds the request until the client times out; stop() releases stalled requests")
    func stall() async throws {
        try await withServer(try Fixture.peopleResources) { server, client in
            server.setConditions(MockConditions(faults: [MockFault(.stall, method: "GET")]))
            let start = ContinuousClock.now
            await #expect(throws: HTTPClientError.self) { try await client.send(.GET, "/people", timeout: .milliseconds(400)) }
            #expect(start.duration(to: .now) >= .milliseconds(390))
            #expect(try await client.post("/people", #"{"name":"x"}"#).status == 201)

            let pending = Task { try await client.send(.GET, "/people", timeout: .seconds(60)) }
            try await Task.sleep(for: .milliseconds(200))  // let the request reach the stall
            let stopping = ContinuousClock.now
            await server.stop()
            // The stall would hold the request 60 s: stopping within 30 s (10.2–11.8 s seen under a full
            // parallel run, 0.1 s alone) proves release rather than waiting it out.
            #expect(stopping.duration(to: .now) < .seconds(30))
            await #expect(throws: (any Error).self) { try await pending.value }
        }
    }

    @Test("releaseStalls() ends the stalls in progress: a held body sends the rest, a held answer's connection closes; later requests stall again")
    func releaseStalls() async throws {
        try await withServer(try Fixture.peopleResources) { server, client in
            #expect(try await client.post("/people", #"{"name":"john"}"#).status == 201)
            server.setConditions(MockConditions(faults: [
                MockFault(.stallBody(afterBytes: 5, duration: .seconds(120)), method: "GET", path: "/people"),
                MockFault(.stall, method: "GET", path: "/people/:id"),
            ]))
            let start = ContinuousClock.now
            let body = Task { try await client.send(.GET, "/people", timeout: .seconds(120)) }
            let held = Task { try await client.send(.GET, "/people/1", timeout: .seconds(120)) }
            // Released as they reach their stalls, however long that takes on a loaded machine.
            var released = 0
            try await waitUntil("both requests stalled and released", timeout: .seconds(60)) {
                released += server.releaseStalls()
                return released == 2
            }
            #expect(released == 2)
            let whole = try await body.value
            #expect(whole.status == 200)
            #expect(whole.json?.arrayValue?.map { $0["name"] } == ["john"])
            await #expect(throws: (any Error).self) { try await held.value }
            // Waited out, the stalls would take 120 s.
            #expect(start.duration(to: .now) < .seconds(60))
            // A request that meets the fault afterwards stalls again.
            await #expect(throws: HTTPClientError.self) { try await client.send(.GET, "/people/1", timeout: .milliseconds(400)) }
            _ = server.releaseStalls()  // that request's stall, which the server may still hold
        }
    }

    @Test("collections and objects carry ETag and Last-Modified; If-None-Match and If-Modified-Since answer 304")
    func conditionalRequests() async throws {
        try await withServer(try Fixture.peopleResources) { _, client in
            _ = try await client.post("/people", #"{"name":"john"}"#)
            for path in ["/people", "/people/1"] {
                let first = try await client.get(path)
                let tag = try #require(first.header("ETag"))
                let modified = try #require(first.header("Last-Modified"))
                #expect(tag.hasPrefix("\"") && tag.hasSuffix("\""))
                #expect(modified.hasSuffix(" GMT"))
                let cached = try await client.get(path, headers: [("If-None-Match", tag)])
                #expect(cached.status == 304)
                #expect(cached.bytes.isEmpty)
                #expect(cached.header("ETag") == tag)
                #expect(try await client.get(path, headers: [("If-None-Match", "W/\(tag), \"other\"")]).status == 304)
                #expect(try await client.get(path, headers: [("If-None-Match", "\"stale\"")]).status == 200)
                #expect(try await client.get(path, headers: [("If-Modified-Since", modified)]).status == 304)
                #expect(try await client.get(path, headers: [("If-Modified-Since", "Thu, 01 Jan 1970 00:00:00 GMT")]).status == 200)
            }
            let before = try await client.get("/people")
            _ = try await client.put("/people/1", #"{"name":"jeff"}"#)
            let after = try await client.get("/people", headers: [("If-None-Match", before.header("ETag") ?? "")])
            #expect(after.status == 200)
            #expect(after.header("ETag") != before.header("ETag"))
        }
    }
}
