import Foundation
import Hummingbird
import NIOCore
import Replica
import ReplicaHTTP
import ReplicaServer
import ReplicaTestSupport
import Testing

/// ApiModel's routes: format extensions (`/posts/:id.json`) and singleton resources (`/user.json`).
@Suite("ApiModel routes: suffixed show routes and singletons, over HTTP")
struct ApiModelRouteTests {
    static let blog = """
        {"name": "blog",
         "entities": {"Post": {"attributes": {"id": "integer", "title": "string", "contents": "string"}}},
         "routes": [{"path": "/posts.json", "target": "Post", "stale": "delete"},
                    {"path": "/posts/:id.json", "target": "Post"}]}
        """

    @Test("find, save, findAll and delete go through `.json` routes; the mock server takes the extension off")
    func suffixedRoutes() async throws {
        let schema = try Schema(json: Data(Self.blog.utf8), file: "blog.json")
        let log = RequestLines()
        var options = MockServerOptions()
        options.formatExtension = ".json"
        options.requestLog = { log.append("\($0.method) \($0.path) \($0.status)") }
        let server = try await MockServer.start(resources: MockResource.resources(for: schema), options: options)
        try await withTeardown {
        _ = try await server.load(json: try JSONValue(parsing: #"{"posts": [{"title": "a", "contents": "x"}, {"title": "b", "contents": "y"}]}"#))
        let engine = try SQLiteReplica(store: Store.inMemory(schema: schema))
        let client = ReplicaClient(engine: engine, configuration: ClientConfiguration(
            transport: HTTPTransport(), baseURLs: [.production: try #require(URL(string: server.baseURL))]))

        let found = try await client.find("Post", id: .integer(2))
        #expect(found?["title"] == .string("b"))
        #expect(try await client.find("Post", id: .integer(42)) == nil)
        let created = try await client.save("Post", ["title": .string("c"), "contents": .string("z")])
        #expect(created?["id"] == .integer(3))
        let renamed = try await client.save("Post", ["id": .integer(3), "title": .string("C")])
        #expect(renamed?["title"] == .string("C") && renamed?["contents"] == .string("z"))
        let all = try await client.findAll("Post")
        #expect(all.map { $0["title"] } == [.string("a"), .string("b"), .string("C")])
        try await client.delete("Post", id: .integer(1))
        #expect(try engine.store.rows("Post").map(\.primaryKey) == [.integer(2), .integer(3)])
        #expect(log.lines == [
            "GET /posts/2.json 200", "GET /posts/42.json 404", "POST /posts.json 201", "PUT /posts/3.json 200",
            "GET /posts.json 200", "DELETE /posts/1.json 204",
        ])
        // Without the extension the mock server serves the same resource.
        #expect(try await client.call("/posts/2").data?["title"] == .string("b"))
        } teardown: {
            await server.stop()
        }
    }

    static let account = """
        {"name": "account",
         "entities": {"User": {"attributes": {"id": "integer", "name": "string"}}},
         "routes": [{"path": "/user.json", "target": "User", "singleton": true},
                    {"path": "/users.json", "target": "User", "stale": "delete"}]}
        """

    @Test("find(entity) reads a singleton route; it names one object and deletes nothing else; save and delete use its path")
    func singleton() async throws {
        let me = SignedInUser()
        let router = Router()
        router.get("/users.json") { _, _ in Self.json(#"[{"id": 1, "name": "Bob"}, {"id": 5, "name": "Ada"}]"#) }
        router.get("/user.json") { _, _ in
            guard let body = me.current else { return Response(status: .notFound) }
            return Self.json(body)
        }
        router.put("/user.json") { request, _ in
            let sent = try JSONValue(parsing: String(buffer: try await request.body.collect(upTo: 1 << 16)))
            me.current = #"{"id": 5, "name": \#(sent["name"]?.serialized() ?? "null")}"#
            return Self.json(#"{"id": 5}"#)
        }
        router.delete("/user.json") { _, _ in
            me.current = nil
            return Response(status: .noContent)
        }
        let server = try await StreamingServer.start(router)
        try await withTeardown {
        let schema = try Schema(json: Data(Self.account.utf8), file: "account.json")
        let engine = try SQLiteReplica(store: Store.inMemory(schema: schema))
        let client = ReplicaClient(engine: engine, configuration: ClientConfiguration(
            transport: HTTPTransport(), baseURLs: [.production: try #require(URL(string: "http://127.0.0.1:\(server.port)"))]))

        #expect(try await client.findAll("User").count == 2)
        me.current = #"{"id": 5, "name": "Ada Lovelace"}"#
        let found = try #require(try await client.find("User"))
        #expect(found.primaryKey == .integer(5) && found["name"] == .string("Ada Lovelace"))
        #expect(try engine.store.rows("User").map { $0["name"] } == [.string("Bob"), .string("Ada Lovelace")],
                "a singleton's answer makes no other row stale")

        let saved = try await client.save("User", ["id": .integer(5), "name": .string("Grace")])
        #expect(saved?["name"] == .string("Grace"))
        #expect(me.current == #"{"id": 5, "name": "Grace"}"#)

        try await client.delete("User", id: .integer(5))
        #expect(try engine.store.rows("User").map(\.primaryKey) == [.integer(1)])
        #expect(try await client.find("User") == nil, "404: no signed-in user")

        let byKey = await #expect(throws: ClientError.self) { try await client.find("User", id: .integer(1)) }
        #expect(byKey?.message == #"no GET route shows one User (a path with its primary key as a variable); /user.json is a singleton: find("User")"#)
        } teardown: {
            await server.stop()
        }
    }

    @Test("find(entity) on an entity without a singleton route says what is missing")
    func noSingleton() async throws {
        let schema = try Schema(json: Data(Self.blog.utf8), file: "blog.json")
        let client = ReplicaClient(engine: try SQLiteReplica(store: Store.inMemory(schema: schema)),
                                   configuration: ClientConfiguration(transport: HTTPTransport(), baseURLs: [.production: try #require(URL(string: "http://127.0.0.1:9"))]))
        let error = await #expect(throws: ClientError.self) { try await client.find("Post") }
        #expect(error?.code == .invalidRequest)
        #expect(error?.message == #"no singleton GET route for Post (a route with "singleton": true); find("Post", id:) reads one object by key"#)
    }

    static func json(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}

/// The request lines a mock server logged. `@unchecked Sendable`: `lines` is guarded by `lock`.
final class RequestLines: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []
    func append(_ line: String) { lock.withLock { stored.append(line) } }
    var lines: [String] { lock.withLock { stored } }
}

/// The signed-in user's JSON a test server answers. `@unchecked Sendable`: guarded by `lock`.
final class SignedInUser: @unchecked Sendable {
    private let lock = NSLock()
    private var body: String?
    var current: String? {
        get { lock.withLock { body } }
        set { lock.withLock { body = newValue } }
    }
}
