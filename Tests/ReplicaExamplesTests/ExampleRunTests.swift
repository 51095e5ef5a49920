import Foundation
import Logging
import Replica
import ReplicaExamples
import ReplicaHTTP
import ReplicaServer
import ReplicaTestSupport
import Testing

/// Counts the requests a mock server answered, per method and path.
final class RequestCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [String: Int] = [:]

    func record(_ entry: MockRequestLogEntry) {
        lock.withLock { counts["\(entry.method) \(entry.path)", default: 0] += 1 }
    }

    func count(_ request: String) -> Int {
        lock.withLock { counts[request, default: 0] }
    }

    /// Waits until `request` was answered `times` times; `false` after `timeout`.
    func wait(for request: String, times: Int, timeout: Duration = .seconds(20)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while count(request) < times {
            if ContinuousClock.now > deadline { return false }
            try await Task.sleep(for: .milliseconds(10))
        }
        return true
    }
}

@Suite("README examples, run")
struct ExampleRunTests {
    // Five minutes: a guard against a hang. On two slow cores beside the whole suite this example
    // took more than one (2026-12-02), though alone it takes seconds.
    @Test("the quick start syncs the products, prints them and reports a change the server makes", .timeLimit(.minutes(5)))
    func quickStartAgainstMockServer() async throws {
        let requests = RequestCounter()
        let products = MockResource("products", properties: [MockProperty("name", .string), MockProperty("price", .double)])
        let server = try await MockServer.start(resources: [products],
                                                options: MockServerOptions(host: "127.0.0.1", port: 0,
                                                                           requestLog: { requests.record($0) }))
        let loaded = try await server.load(json: JSONValue(parsing: #"""
            {"products": [{"id": 1, "name": "cable", "price": 9.5}, {"id": 2, "name": "adapter", "price": 19}]}
            """#))
        #expect(loaded.loaded == 2)
        let baseURL = try #require(URL(string: server.baseURL))

        let run = Task { try await quickStart(baseURL: baseURL, maxUpdates: 1) }
        // A watchdog: cancelling ends the example's update loop, so a missing update fails below instead of hanging.
        // Both bounds are hang guards, far above the seconds the example takes: beside the whole suite on
        // two cores the periodic sync has not polled within 20 s (2026-12-04).
        let watchdog = Task {
            try await Task.sleep(for: .seconds(180))
            run.cancel()
        }
        // The second GET is the periodic sync's first: by then the live result set is open and subscribed.
        let polled = try await requests.wait(for: "GET /products", times: 2, timeout: .seconds(150))
        #expect(polled, "the periodic sync never called GET /products")
        let changed = try await server.load(json: JSONValue(parsing: #"""
            {"products": [{"id": 3, "name": "battery", "price": 4.25}, {"id": 1, "name": "cable", "price": 8}]}
            """#))
        #expect(changed.loaded == 2)

        let rows: [EntityRow]
        do {
            rows = try await run.value
        } catch {
            watchdog.cancel()
            await server.stop()
            throw error
        }
        watchdog.cancel()
        await server.stop()

        #expect(rows.map { $0["name"] } == [.string("adapter"), .string("battery"), .string("cable")])
        #expect(rows.map { $0["price"] } == [.double(19), .double(4.25), .double(8)])
        #expect(requests.count("GET /products") >= 3)
    }

    @Test("the routes example resolves as its comments say, on Schemas/blog.json")
    func routesExample() throws {
        let schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/blog.json"))
        let resolved = try routeResolution(schema: schema)
        #expect(resolved.entity == "Post")
        #expect(resolved.scope == "Post where userID = 3")
    }

    @Test("the JSON:API route example is the route Schemas/jsonapi.json declares for /articles")
    func jsonAPIRouteExample() throws {
        let schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/jsonapi.json"))
        #expect(schema.routes.first == jsonAPIRoute())
    }

    @Test("the large-result example shows the second page of a window and reads a screenful of 12,000 posts")
    func largeLiveResult() async throws {
        let schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/blog.json"))
        let engine = try SQLiteReplica(store: Store.inMemory(schema: schema))
        let posts = (1 ... 12_000).map { #"{"id": \#($0), "title": "Post \#($0)"}"# }.joined(separator: ",")
        _ = try await engine.sync(.get, "/users/1/posts", body: Data((#"{"posts": ["# + posts + "]}").utf8))
        let result = try await largeLiveResultExample(engine: engine)
        #expect(result.window == 40 && result.start == 40 && result.total == 12_000 && result.screen == 40)
    }

    @Test("the typed live-result example decodes every post, a screenful, and the first")
    func typedLiveResult() async throws {
        let schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/blog.json"))
        let engine = try SQLiteReplica(store: Store.inMemory(schema: schema))
        let posts = (1 ... 50).map { #"{"id": \#($0), "title": "Post \#(String(format: "%02d", $0))"}"# }.joined(separator: ",")
        _ = try await engine.sync(.get, "/users/1/posts", body: Data((#"{"posts": ["# + posts + "]}").utf8))
        let result = try typedLiveResultExample(engine: engine)
        #expect(result.all == 50 && result.screen.count == 40 && result.screen.last == "Post 40" && result.first == "Post 01")
    }

    /// Runs `body` with a client of a store of `clientSchema` against a mock server of Schemas/people.json
    /// holding `data`; the server stops whatever happens.
    func withPeopleServer<T: Sendable>(clientSchema: String, data: String? = nil,
                                       _ body: (ReplicaClient, SQLiteReplica) async throws -> T) async throws -> T {
        let full = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/people.json"))
        let server = try await MockServer.start(resources: MockResource.resources(for: full))
        do {
            if let data { _ = try await server.load(json: try JSONValue(parsing: data)) }
            let schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/\(clientSchema)"))
            let engine = try SQLiteReplica(store: Store.inMemory(schema: schema))
            let base = try #require(URL(string: server.baseURL))
            let client = ReplicaClient(engine: engine, configuration: ClientConfiguration(transport: HTTPTransport(),
                                                                                         baseURLs: [.production: base]))
            let result = try await body(client, engine)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    @Test("the service example keeps the replica synced from the mock server's feed until its task is cancelled")
    func serviceExampleRuns() async throws {
        let schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/people-live.json"))
        let server = try await MockServer.start(resources: MockResource.resources(for: schema))
        let directory = try TemporaryDirectory("replica-service-example")
        _ = try await server.load(json: try JSONValue(parsing: #"{"people": [{"id": 1, "name": "ann"}], "cars": [{"id": 10, "name": "a", "person_id": 1}]}"#))
        var logger = Logger(label: "service-example")
        logger.logLevel = .critical
        let base = try #require(URL(string: server.baseURL))
        let path = directory.path("people.sqlite")
        let running = Task { [logger] in
            try await serviceExample(schema: schema, databasePath: path, apiURL: base, otherServices: [], signals: [],
                                     logger: logger)
        }
        try await withTeardown {
            // Read-only, and only once the example has made the file: a reader that created it
            // would race with the example's own opening of the store.
            func count(_ entity: String) -> Int? {
                guard FileManager.default.fileExists(atPath: path) else { return nil }
                return try? Store(path: path, options: StoreOptions(readOnly: true)).count(entity)
            }
            try await waitUntil("the first syncs", timeout: .seconds(30)) { count("Person") == 1 && count("Car") == 1 }
            // Pushed by the server's /events: no timer fires within this test.
            try await waitUntil("the event stream", timeout: .seconds(30)) { server.changes.subscriberCount == 1 }
            _ = try await server.load(json: try JSONValue(parsing: #"[{"id": 2, "name": "bob"}]"#), into: "people")
            try await waitUntil("the pushed sync", timeout: .seconds(30)) { count("Person") == 2 }
            running.cancel()
            _ = try? await running.value
        } teardown: {
            running.cancel()
            _ = try? await running.value
            await server.stop()
            directory.remove()
        }
    }

    @Test("the typed-endpoint example creates, finds and deletes a person on the mock server")
    func typedEndpoints() async throws {
        let (result, remaining) = try await withPeopleServer(clientSchema: "people.json") { client, engine in
            (try await typedEndpointExample(client: client), try engine.store.rows("Person").count)
        }
        #expect(result.created == "john" && result.found == "john" && result.deleted)
        #expect(remaining == 0, "created, synced, then deleted locally too")
    }

    @Test("the writing example creates Ann and deletes Person 7 on the mock server through the outbox")
    func writing() async throws {
        var logger = Logger(label: "writing-example")
        logger.logLevel = .critical
        let (pushed, local, remote) = try await withPeopleServer(clientSchema: "people.json",
                                                                 data: #"{"people": [{"id": 7, "name": "Bob"}]}"#) { client, engine in
            _ = try await client.call("/people")
            let pushed = try await writingExample(client: client, logger: logger)
            let local = try engine.store.rows("Person").map { "\($0["id"] ?? .null) \($0["name"] ?? .null)" }
            let remote = try await client.call("/people").sync.objectCount
            return (pushed.description, local, remote)
        }
        #expect(pushed == "2 confirmed, 0 rejected, 0 still pending")
        #expect(local == ["8 Ann"])
        #expect(remote == 1)
    }

    @Test("the ad-hoc example gets the cars of a mock server whose paths the client's schema does not route")
    func adHocCall() async throws {
        let result = try await withPeopleServer(clientSchema: "blog.json",
                                                data: #"{"cars": [{"id": 1, "name": "beetle"}, {"id": 2, "name": "mini"}]}"#) { client, _ in
            try await adHocExample(client: client)
        }
        #expect(result.json == 2 && result.decoded == 2)
    }

    @Test("the ApiModel-routes example finds a post through /posts/:id.json and the signed-in user through /user.json")
    func apiModelRoutes() async throws {
        let schema = try Schema(json: Data(#"""
            {"name": "apimodel",
             "entities": {"Post": {"attributes": {"id": "integer", "title": "string"}},
                          "User": {"attributes": {"id": "integer", "name": "string"}}},
             "routes": [{"path": "/posts/:id.json", "target": "Post"},
                        {"path": "/user.json", "target": "User", "singleton": true}]}
            """#.utf8), file: "apimodel.json")
        let requests = RequestCounter()
        var options = MockServerOptions(requestLog: { requests.record($0) })
        options.formatExtension = ".json"
        let user = MockResource("user", properties: [MockProperty("name", .string)])
        let server = try await MockServer.start(resources: MockResource.resources(for: schema).filter { $0.name == "posts" } + [user],
                                                options: options)
        server.setController(SignedInController(), for: "user")
        let result: (post: AttributeValue?, user: AttributeValue?)
        let engine = try SQLiteReplica(store: Store.inMemory(schema: schema))
        do {
            _ = try await server.load(json: try JSONValue(parsing: #"{"posts": [{"id": 7, "title": "Hello"}]}"#))
            let client = ReplicaClient(engine: engine, configuration: ClientConfiguration(
                transport: HTTPTransport(), baseURLs: [.production: try #require(URL(string: server.baseURL))]))
            result = try await apiModelRoutesExample(client: client)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        #expect(result.post == .string("Hello") && result.user == .string("Ada"))
        #expect(requests.count("GET /posts/7.json") == 1 && requests.count("GET /user.json") == 1)
        #expect(try engine.store.rows("User").map(\.primaryKey) == [.integer(1)])
    }

    @Test("the validation-errors example reads ApiModel's namespaced field errors from the mock server")
    func validationErrors() async throws {
        let schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/people.json"))
        let engine = try SQLiteReplica(store: Store.inMemory(schema: schema))
        #expect(try await validationErrorsExample(schema: schema, engine: engine) == ["numberOfKids must be an integer"])
        #expect(try engine.store.rows("Person").isEmpty)
    }

    @Test("the mock-server defaults example namespaces every resource and uses the default controller")
    func mockDefaults() async throws {
        let schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/people.json"))
        let server = try await mockServerDefaults(schema: schema, controller: CRUDController())
        let transport = HTTPTransport()
        let body: [UInt8]
        do {
            let url = try #require(URL(string: server.baseURL + "/people"))
            var post = ClientRequest(method: .post, url: url)
            post.body = .bytes(Array(#"{"person": {"name": "john"}}"#.utf8))
            post.headers["Content-Type"] = "application/json"
            _ = try await transport.send(post).body.collect(upTo: 1 << 20)
            body = try await transport.send(ClientRequest(method: .get, url: url)).body.collect(upTo: 1 << 20)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        let json = try JSONValue(parsing: body)
        #expect(json["people"]?.arrayValue?.first?["name"] == .string("john"), "\(json)")
    }

    @Test("the pagination example pages /people as Slack (the resource's style) and /v1/customers as Jira (the route's), by 2")
    func mockPagination() async throws {
        let server = try await mockServerPagination()
        let transport = HTTPTransport()
        var bodies: [JSONValue] = []
        do {
            for name in ["ann", "bob", "cy"] {
                let url = try #require(URL(string: server.baseURL + "/people"))
                var post = ClientRequest(method: .post, url: url)
                post.body = .bytes(Array(#"{"name": "\#(name)"}"#.utf8))
                post.headers["Content-Type"] = "application/json"
                _ = try await transport.send(post).body.collect(upTo: 1 << 20)
            }
            for path in ["/people", "/v1/customers?startAt=2"] {
                let url = try #require(URL(string: server.baseURL + path))
                bodies.append(try JSONValue(parsing: try await transport.send(ClientRequest(method: .get, url: url)).body.collect(upTo: 1 << 20)))
            }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        #expect(bodies.first == ["ok": true, "items": [["id": 1, "name": "ann"], ["id": 2, "name": "bob"]],
                                 "response_metadata": ["next_cursor": .string(Data("2".utf8).base64EncodedString())]])
        #expect(bodies.last == ["startAt": 2, "maxResults": 2, "total": 3, "isLast": true, "values": [["id": 3, "name": "cy"]]])
    }

    @Test("the schema built in Swift has its two entities and the foreign key's JSON key")
    func schemaExample() throws {
        let schema = try schemaInSwift()
        #expect(schema.entities.map(\.name) == ["Person", "Car"])
        #expect(schema.entity(named: "Car")?.attribute(named: "personID")?.jsonKey == "person_id")
    }
}

/// Answers `GET /user` with the signed-in user: one object, as a singleton resource does.
struct SignedInController: MockController {
    func index(_ request: MockRequest) async throws -> MockResponse { .json(["id": 1, "name": "Ada"]) }
}
