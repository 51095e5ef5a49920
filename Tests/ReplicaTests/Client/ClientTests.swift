import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// A transport answering from a closure, recording every request it saw.
final class ScriptedTransport: Transport, @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var seen: [ClientRequest] = []
    private var bodies: [[UInt8]] = []
    let handler: @Sendable (ClientRequest, Int) throws -> ClientResponse

    init(_ handler: @escaping @Sendable (ClientRequest, Int) throws -> ClientResponse) { self.handler = handler }

    func send(_ request: ClientRequest) async throws -> ClientResponse {
        var body: [UInt8] = []
        switch request.body {
        case .bytes(let bytes): body = bytes
        case .multipart(let multipart): for try await chunk in multipart.chunks() { body += chunk }
        default: break
        }
        let index = record(request, body)
        return try handler(request, index)
    }

    private func record(_ request: ClientRequest, _ body: [UInt8]) -> Int {
        lock.withLock {
            seen.append(request)
            bodies.append(body)
            return seen.count
        }
    }

    var requests: [ClientRequest] { lock.lock(); defer { lock.unlock() }; return seen }
    var sentBodies: [String] { lock.lock(); defer { lock.unlock() }; return bodies.map { String(decoding: $0, as: UTF8.self) } }
}

func json(_ status: Int, _ text: String, _ headers: HeaderFields = HeaderFields()) -> ClientResponse {
    ClientResponse(status: status, headers: headers, body: ResponseBody(bytes: Array(text.utf8)))
}

@Suite("Client")
struct ClientTests {
    static func client(_ transport: ScriptedTransport, configure: (inout ClientConfiguration) -> Void = { _ in })
        throws -> (ReplicaClient, BlogFixture) {
        let blog = try BlogFixture()
        guard let base = URL(string: "http://127.0.0.1:9/api/") else { throw ClientError(.invalidRequest, "url") }
        var configuration = ClientConfiguration(transport: transport, baseURLs: [.production: base,
                                                                                 .development: URL(fileURLWithPath: "/dev")])
        configure(&configuration)
        return (ReplicaClient(engine: blog.engine, configuration: configuration), blog)
    }

    @Test("save sends dates in the configured time zone and keeps the values a terse reply leaves out")
    func saveTimeZoneAndMerge() async throws {
        let transport = ScriptedTransport { _, _ in json(201, #"{"post": {"id": 5}}"#) }
        let paris = try #require(TimeZone(identifier: "Europe/Paris"))
        let (client, blog) = try Self.client(transport) { $0.timeZone = paris }
        let date = Date(timeIntervalSince1970: 1_714_566_896)   // 2024-05-01T12:34:56Z
        let saved = try await client.save("Post", ["title": .string("t"), "userID": .integer(3), "createdAt": .date(date)])
        #expect(transport.sentBodies[0] == #"{"post":{"user_id":3,"title":"t","created_at":"2024-05-01T14:34:56+02:00"}}"#)
        #expect(saved?["id"] == .integer(5) && saved?["title"] == .string("t") && saved?["createdAt"] == .date(date))
        #expect(try blog.store.count("Post") == 1)
    }

    @Test("an upload named by its path: its file name and application/octet-stream; multipart chunks come one at a time")
    func uploadDefaults() async throws {
        let upload = FileUpload(path: "/var/backups/db.tar")
        #expect(upload.fileName == "db.tar" && upload.mimeType == "application/octet-stream")
        #expect(FileUpload(fileName: "a.txt", bytes: [1]).mimeType == FileUpload.defaultMimeType)
        let body = MultipartBody(fields: [("note", .file(FileUpload(fileName: "n.txt", bytes: Array("hi".utf8)))), ("title", "t")],
                                 boundary: "B")
        var chunks: [String] = []
        for try await chunk in body.chunks() { chunks.append(String(decoding: chunk, as: UTF8.self)) }
        #expect(chunks == [
            "--B\r\nContent-Disposition: form-data; name=\"note\"; filename=\"n.txt\"\r\nContent-Type: application/octet-stream\r\n\r\n",
            "hi", "\r\n",
            "--B\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\n", "t", "\r\n",
            "--B--\r\n",
        ])
        #expect(Int64(chunks.joined().utf8.count) == body.contentLength)
    }

    @Test("ISO 8601 in a time zone: its offset on that day, Z for UTC")
    func zonedDates() throws {
        let may = Date(timeIntervalSince1970: 1_714_566_896)       // 2024-05-01T12:34:56Z
        let january = Date(timeIntervalSince1970: 1_704_112_496)   // 2024-01-01T12:34:56Z
        let paris = try #require(TimeZone(identifier: "Europe/Paris"))
        let newfoundland = try #require(TimeZone(identifier: "America/St_Johns"))
        #expect(ISO8601.string(from: may, in: paris) == "2024-05-01T14:34:56+02:00")
        #expect(ISO8601.string(from: january, in: paris) == "2024-01-01T13:34:56+01:00")
        #expect(ISO8601.string(from: may, in: newfoundland) == "2024-05-01T10:04:56-02:30")
        #expect(ISO8601.string(from: may, in: try #require(TimeZone(secondsFromGMT: 0))) == "2024-05-01T12:34:56Z")
        #expect(ISO8601.seconds("2024-05-01T10:04:56-02:30".utf8) == may.timeIntervalSince1970)
    }

    @Test("fills path variables, encodes the query, and syncs the response through the route")
    func callSyncs() async throws {
        let transport = ScriptedTransport { _, _ in json(200, #"{"posts": [{"id": 1, "title": "a"}]}"#) }
        let (client, blog) = try Self.client(transport)
        let result = try await client.call("/users/:userID/posts", params: ["userID": 3, "q": "a b&c", "tags": ["x", "y"]])
        #expect(result.status == 200)
        #expect(result.changes["Post"]?.inserted.integers == [1])
        #expect(transport.requests[0].url.absoluteString == "http://127.0.0.1:9/api/users/3/posts?q=a%20b%26c&tags%5B%5D=x&tags%5B%5D=y")
        #expect(transport.requests[0].headers["Accept"] == "application/json")
        #expect(try blog.store.rows("Post").first?["userID"] == .integer(3))
        let missing = await #expect(throws: ClientError.self) { try await client.call("/users/:userID/posts") }
        #expect(missing?.code == .invalidRequest)
        #expect(missing?.message == "missing value for variable 'userID' of /users/:userID/posts")
    }

    @Test("JSON, form and multipart bodies")
    func bodies() async throws {
        let transport = ScriptedTransport { request, _ in
            request.method == .post ? json(201, #"{"post": {"id": 5, "title": "t"}}"#) : json(200, #"{"post": {"id": 5, "title": "u"}}"#)
        }
        let (client, blog) = try Self.client(transport) { $0.bodyEncodings["/posts/:id"] = .form }
        try await client.call("/posts", method: .post, params: ["title": "t", "draft": true])
        #expect(transport.sentBodies[0] == #"{"draft":true,"title":"t"}"#)
        #expect(transport.requests[0].headers["Content-Type"] == "application/json")
        #expect(try blog.store.count("Post") == 1)

        try await client.call("/posts/:id", method: .put, params: ["id": 5, "title": "x y", "tags": ["a"]])
        #expect(transport.requests[1].url.path == "/api/posts/5")
        #expect(transport.sentBodies[1] == "tags%5B%5D=a&title=x%20y")
        #expect(transport.requests[1].headers["Content-Type"] == "application/x-www-form-urlencoded")

        let upload = FileUpload(fileName: "a.txt", mimeType: "text/plain", bytes: Array("hello".utf8))
        try await client.call("/posts/5", method: .put, params: ["title": "with file", "attachment": .file(upload)])
        let type = try #require(transport.requests[2].headers["Content-Type"])
        #expect(type.hasPrefix("multipart/form-data; boundary="))
        let boundary = String(type.dropFirst("multipart/form-data; boundary=".count))
        #expect(transport.sentBodies[2] == """
            --\(boundary)\r
            Content-Disposition: form-data; name="attachment"; filename="a.txt"\r
            Content-Type: text/plain\r
            \r
            hello\r
            --\(boundary)\r
            Content-Disposition: form-data; name="title"\r
            \r
            with file\r
            --\(boundary)--\r

            """)
    }

    @Test("header providers run per request; call headers override them; variable providers fill paths")
    func providers() async throws {
        let counter = Counter()
        let transport = ScriptedTransport { _, _ in json(200, #"{"posts": []}"#) }
        let (client, _) = try Self.client(transport) { configuration in
            configuration.headers["X-Static"] = "s"
            configuration.headerProviders = [.header("Authorization") { "Bearer \(counter.next())" }]
            configuration.variableProviders["userID"] = { "42" }
        }
        try await client.call("/users/:userID/posts")
        try await client.call("/users/:userID/posts", headers: ["Authorization": "Basic override"])
        #expect(transport.requests.map(\.url.path) == ["/api/users/42/posts", "/api/users/42/posts"])
        #expect(transport.requests[0].headers["Authorization"] == "Bearer 1")
        #expect(transport.requests[1].headers["Authorization"] == "Basic override")
        #expect(transport.requests[0].headers["X-Static"] == "s")
    }

    @Test("interceptors see requests in order and responses in reverse; they can short-circuit and retry")
    func interceptors() async throws {
        let log = Log()
        struct Named: Interceptor {
            let name: String
            let log: Log
            func intercept(_ request: ClientRequest, next: Next) async throws -> ClientResponse {
                log.append("→\(name)")
                var request = request
                request.headers.add("X-Chain", name)
                let response = try await next(request)
                log.append("←\(name)")
                return response
            }
        }
        let transport = ScriptedTransport { request, index in
            index == 1 ? json(503, #"{"error": "busy"}"#, ["Retry-After": "0"]) : json(200, #"{"posts": []}"#)
        }
        let (client, _) = try Self.client(transport) { configuration in
            configuration.interceptors = [Named(name: "a", log: log), RetryInterceptor(maxAttempts: 3), Named(name: "b", log: log)]
        }
        try await client.call("/users/1/posts")
        #expect(log.values == ["→a", "→b", "←b", "→b", "←b", "←a"])
        #expect(transport.requests.count == 2)
        #expect(transport.requests[1].headers.values("X-Chain") == ["a", "b"])

        let short = ClosureInterceptor(before: { request in
            if request.url.path.hasSuffix("/stats") { throw ClientError(.invalidRequest, "blocked") }
        })
        let (blocked, _) = try Self.client(transport) { $0.interceptors = [short] }
        let error = await #expect(throws: ClientError.self) { try await blocked.call("/stats") }
        #expect(error?.message == "blocked")
        #expect(transport.requests.count == 2)
    }

    @Test("a 422 carries field errors, in both shapes, and changes nothing")
    func validationErrors() async throws {
        let transport = ScriptedTransport { _, index in
            index == 1 ? json(422, #"{"errors": {"title": ["can't be blank"], "body": "too short"}}"#)
                       : json(422, #"{"post": {"errors": {"title": ["is taken"]}}}"#)
        }
        let (client, blog) = try Self.client(transport)
        let first = await #expect(throws: ClientError.self) { try await client.call("/posts", method: .post, params: ["title": ""]) }
        #expect(first?.code == .status)
        #expect(first?.status == 422)
        #expect(first?.fieldErrors == ["title": ["can't be blank"], "body": ["too short"]])
        let second = await #expect(throws: ClientError.self) { try await client.call("/posts", method: .post, params: ["title": "x"]) }
        #expect(second?.fieldErrors == ["title": ["is taken"]])
        #expect(try blog.store.count("Post") == 0)
    }

    @Test("a 304 changes nothing and never deletes stale rows")
    func notModified() async throws {
        let transport = ScriptedTransport { request, index in
            if index == 1 { return json(200, #"{"posts": [{"id": 1, "title": "a"}, {"id": 2, "title": "b"}]}"#, ["ETag": "\"v1\""]) }
            return request.headers["If-None-Match"] == "\"v1\"" ? ClientResponse(status: 304) : json(200, #"{"posts": []}"#)
        }
        let (client, blog) = try Self.client(transport)
        try await client.call("/users/1/posts")
        let second = try await client.call("/users/1/posts")
        #expect(second.notModified)
        #expect(second.changes.isEmpty)
        #expect(try blog.store.count("Post") == 2)
        #expect(transport.requests[1].headers["If-None-Match"] == "\"v1\"")
    }

    @Test("five pages sync one scope; stale rows go only after the last page")
    func pagination() async throws {
        let transport = ScriptedTransport { request, _ in
            let page = Int(URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?
                .first { $0.name == "page" }?.value ?? "1") ?? 1
            let posts = (1...2).map { #"{"id": \#((page - 1) * 2 + $0), "title": "p\#(page)"}"# }.joined(separator: ",")
            var headers = HeaderFields()
            if page < 5 { headers["Link"] = #"</api/users/1/posts?page=\#(page + 1)>; rel="next", </api/users/1/posts?page=5>; rel="last""# }
            return json(200, #"{"posts": [\#(posts)]}"#, headers)
        }
        let (client, blog) = try Self.client(transport)
        _ = try await blog.sync("/users/1/posts", #"{"posts": [{"id": 99, "title": "stale"}]}"#)
        _ = try await blog.sync("/users/2/posts", #"{"posts": [{"id": 100, "title": "other scope"}]}"#)
        let result = try await client.call("/users/1/posts")
        #expect(result.pages == 5)
        #expect(result.changes["Post"]?.inserted.integers == Array(1...10))
        #expect(result.changes["Post"]?.deleted.integers == [99])
        #expect(try blog.keys("Post", where: "userID = 1").count == 10)
        #expect(try blog.keys("Post", where: "userID = 2") == [.integer(100)])
        // Page 1's Link names page 5 as the last: pages 2 to 5 are asked for ahead, together, each once.
        #expect(transport.requests.map { $0.url.query ?? "" }.sorted() == ["", "page=2", "page=3", "page=4", "page=5"])
    }

    @Test("an empty body where one is needed is an error; connection failures are distinct")
    func emptyAndConnection() async throws {
        let transport = ScriptedTransport { request, _ in
            if request.url.path.hasSuffix("/stats") { throw URLError(.cannotConnectToHost) }
            return json(200, "")
        }
        let (client, _) = try Self.client(transport)
        let empty = await #expect(throws: ClientError.self) { try await client.call("/users/1/posts") }
        #expect(empty?.code == .emptyBody)
        let connection = await #expect(throws: ClientError.self) { try await client.call("/stats") }
        #expect(connection?.code == .connection)
    }

    @Test("a since-cursor from the last response's metadata goes back as a query parameter")
    func sinceCursor() async throws {
        let transport = ScriptedTransport { _, index in
            json(200, #"{"meta": {"cursor": "c\#(index)"}, "users": [{"user_id": \#(index), "name": "u"}]}"#)
        }
        let incremental = IncrementalSync(parameter: "since", cursor: .pointer(JSONPointer("/meta/cursor") ?? .root))
        let schema = try Schema(name: "feed", routes: [Route(.get, "/users", target: .entity("User"), incremental: incremental)]) {
            Entity("User", primaryKey: "userID", jsonIDKey: "user_id", collectionNamespace: "users") {
                Attribute("userID", .integer)
                Attribute("name", .string)
            }
        }
        let engine = try SQLiteReplica(store: try Store.inMemory(schema: schema))
        guard let base = URL(string: "http://127.0.0.1:9") else { return }
        let configuration = ClientConfiguration(transport: transport, baseURLs: [.production: base])
        let client = ReplicaClient(engine: engine, configuration: configuration)
        try await client.call("/users")
        try await client.call("/users")
        try await client.call("/users")
        #expect(transport.requests.map { $0.url.query ?? "" } == ["", "since=c1", "since=c2"])
        #expect(try engine.store.count("User") == 3)
    }

    @Test("environments switch the base URL")
    func environments() async throws {
        let transport = ScriptedTransport { _, _ in json(200, "{}") }
        let (client, _) = try Self.client(transport) { $0.environment = .development }
        try await client.call("/stats")
        #expect(transport.requests[0].url.absoluteString == "file:///dev/stats")
    }
}

/// Thread-safe helpers for tests. `@unchecked Sendable`: guarded by `lock`.
final class Log: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func append(_ item: String) { lock.lock(); items.append(item); lock.unlock() }
    var values: [String] { lock.lock(); defer { lock.unlock() }; return items }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func next() -> Int { lock.lock(); defer { lock.unlock() }; value += 1; return value }
}
