import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Configuration per call and per route")
struct CallConfigurationTests {
    @Test("the environment switches at run time; a call's timeout overrides the configuration's")
    func environmentAndTimeout() async throws {
        let transport = ScriptedTransport { _, _ in json(200, #"{"posts": []}"#) }
        let (client, _) = try ClientTests.client(transport) { $0.timeout = .seconds(30) }
        #expect(client.environment == .production)
        try await client.call("/users/:userID/posts", params: ["userID": 3])
        try client.use(.development)
        #expect(client.environment == .development)
        try await client.call("/users/:userID/posts", params: ["userID": 3], timeout: .seconds(3))
        try await client.call("/stats/today", timeout: .milliseconds(1500))
        #expect(transport.requests[0].url.absoluteString == "http://127.0.0.1:9/api/users/3/posts")
        #expect(transport.requests[1].url.absoluteString == "file:///dev/users/3/posts")
        #expect(transport.requests.map(\.timeout) == [.seconds(30), .seconds(3), .milliseconds(1500)])
        // An environment without a base URL is refused, and the current one stays.
        let partial = ReplicaClient(store: client.store, configuration: ClientConfiguration(
            transport: transport, baseURLs: [.production: try #require(URL(string: "http://127.0.0.1:9"))]))
        #expect(throws: ClientError.self) { try partial.use(.development) }
        #expect(partial.environment == .production)
    }

    @Test("a route's timeout and headers (schema) apply to its calls, under the call's own")
    func routeSettings() async throws {
        let text = """
            {"name": "reports", "entities": {"Report": {"attributes": {"id": "integer", "title": "string"}}},
             "routes": [{"path": "/reports", "target": "Report", "timeout": 90, "headers": {"X-Route": "reports", "Accept": "application/vnd.reports+json"}},
                        {"path": "/reports/:id", "target": "Report"}]}
            """
        let schema = try Schema(json: Data(text.utf8))
        let route = try #require(schema.routes.first)
        #expect(route.timeout == .seconds(90) && route.headers == ["X-Route": "reports", "Accept": "application/vnd.reports+json"])
        let again = try Schema(json: Data(schema.fileJSON.serializedBytes()))
        #expect(again.routes.first?.timeout == .seconds(90) && again.routes.first?.headers == route.headers)

        let transport = ScriptedTransport { _, _ in json(200, #"[{"id": 1, "title": "q1"}]"#) }
        let engine = try SQLiteReplica(store: Store.inMemory(schema: schema))
        let client = ReplicaClient(engine: engine, configuration: ClientConfiguration(
            transport: transport, baseURLs: [.production: try #require(URL(string: "http://127.0.0.1:9"))]))
        try await client.call("/reports")
        try await client.call("/reports", headers: ["X-Route": "mine"], timeout: .seconds(5))
        try await client.call("/reports/1")
        #expect(transport.requests.map(\.timeout) == [.seconds(90), .seconds(5), .seconds(30)])
        #expect(transport.requests.map { $0.headers["X-Route"] } == ["reports", "mine", nil])
        #expect(transport.requests[0].headers["Accept"] == "application/vnd.reports+json")
        #expect(transport.requests[2].headers["Accept"] == "application/json")

        let wrong = #"{"name": "x", "entities": {"R": {"attributes": {"id": "integer"}}}, "routes": [{"path": "/r", "target": "R", "timeout": -1}]}"#
        #expect {
            try Schema(json: Data(wrong.utf8))
        } throws: { error in
            "\(error)".contains("/routes/0/timeout") && "\(error)".contains("expected a timeout in seconds")
        }
    }

    @Test("the schema's top-level headers go with every request, over the configuration's and under a route's and a call's; User-Agent is replica/<version> when none names one")
    func schemaHeaders() async throws {
        let text = """
            {"name": "reports", "headers": {"User-Agent": "reports-sync/1", "X-Api-Version": "2024-01-01", "X-Route": "all"},
             "entities": {"Report": {"attributes": {"id": "integer", "title": "string"}}},
             "routes": [{"path": "/reports", "target": "Report", "headers": {"X-Route": "reports"}},
                        {"path": "/reports/:id", "target": "Report"}]}
            """
        let schema = try Schema(json: Data(text.utf8))
        #expect(schema.headers == ["User-Agent": "reports-sync/1", "X-Api-Version": "2024-01-01", "X-Route": "all"])
        #expect(try Schema(json: Data(schema.fileJSON.serializedBytes())) == schema)
        let built = try Schema(name: "reports", routes: schema.routes, headers: schema.headers) { schema.entities[0] }
        #expect(built == schema)

        let transport = ScriptedTransport { request, _ in
            request.url.path.hasSuffix("/reports") ? json(200, #"[{"id": 1, "title": "q1"}]"#) : json(200, #"{"id": 1, "title": "q1"}"#)
        }
        let client = ReplicaClient(engine: try SQLiteReplica(store: Store.inMemory(schema: schema)), configuration: {
            var configuration = ClientConfiguration(transport: transport, baseURLs: [.production: URL(fileURLWithPath: "/")])
            configuration.headers = ["X-Api-Version": "1999", "X-Config": "c"]
            return configuration
        }())
        try await client.call("/reports")
        try await client.call("/reports/1", headers: ["user-agent": "call/2"])
        try await client.call("/stats")
        _ = try await client.perform(Endpoint<Nothing, Nothing>(.get, "/ping"), Nothing())
        #expect(transport.requests.map { $0.headers["X-Route"] } == ["reports", "all", "all", "all"])
        #expect(transport.requests.map { $0.headers["X-Api-Version"] } == Array(repeating: "2024-01-01", count: 4))
        #expect(transport.requests.map { $0.headers["X-Config"] } == Array(repeating: "c", count: 4))
        #expect(transport.requests.map { $0.headers.values("User-Agent") }
                == [["reports-sync/1"], ["call/2"], ["reports-sync/1"], ["reports-sync/1"]])

        // Without one in the schema: the configuration's, else replica/<version>.
        let plainSchema = try Schema(name: "reports", entities: schema.entities, routes: schema.routes)
        let plain = ScriptedTransport { _, _ in json(200, "[]") }
        let plainClient = ReplicaClient(engine: try SQLiteReplica(store: Store.inMemory(schema: plainSchema)), configuration:
            ClientConfiguration(transport: plain, baseURLs: [.production: URL(fileURLWithPath: "/")]))
        try await plainClient.call("/reports")
        _ = try await plainClient.perform(Endpoint<Nothing, Nothing>(.get, "/ping"), Nothing())
        #expect(plain.requests.map { $0.headers.values("User-Agent") } == [["replica/\(ReplicaVersion.current)"], ["replica/\(ReplicaVersion.current)"]])

        let wrong = #"{"name": "x", "headers": {"X-A": 1}, "entities": {"R": {"attributes": {"id": "integer"}}}}"#
        #expect {
            try Schema(json: Data(wrong.utf8))
        } throws: { error in
            "\(error)".hasSuffix("/headers/X-A: expected a header value as a string, found number")
        }
    }
}
