import Foundation
import Logging
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

/// Log records kept in memory. `@unchecked Sendable`: guarded by `lock`.
final class LogRecords: @unchecked Sendable {
    private let lock = NSLock()
    private var records: [(Logger.Level, String)] = []
    func append(_ level: Logger.Level, _ message: String) { lock.withLock { records.append((level, message)) } }
    var all: [(level: Logger.Level, message: String)] { lock.withLock { records.map { (level: $0.0, message: $0.1) } } }
}

/// A swift-log handler writing into ``LogRecords``.
struct CapturingLogHandler: LogHandler {
    let records: LogRecords
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        records.append(event.level, event.message.description)
    }
}

@Suite("Client hooks and logging")
struct HookTests {
    @Test("parameter hooks read and change the parameters before encoding, for every kind of call")
    func parameterHooks() async throws {
        let seen = LogRecords()
        let transport = ScriptedTransport { request, _ in
            request.method == .get ? json(200, #"{"posts": []}"#) : json(201, #"{"post": {"id": 5, "title": "t"}}"#)
        }
        let (client, _) = try ClientTests.client(transport) { configuration in
            configuration.parameterHooks = [{ request in
                seen.append(.info, "\(request.method) \(request.path) \(request.route ?? "-") \(request.params.keys.sorted())")
                request.params["access_token"] = "secret"
            }]
        }
        try await client.call("/users/:userID/posts", params: ["userID": 3, "page": 2])
        try await client.call("/posts", method: .post, params: ["title": "t"])
        try await client.call("/stats/today")
        struct NewPost: Encodable, Sendable { var title: String }
        _ = try await client.perform(Endpoint<NewPost, Nothing>(.post, "/posts"), NewPost(title: "e"))
        #expect(transport.requests[0].url.query == "access_token=secret&page=2")
        #expect(transport.sentBodies[1] == #"{"access_token":"secret","title":"t"}"#)
        #expect(transport.requests[2].url.query == "access_token=secret")
        #expect(transport.sentBodies[3] == #"{"access_token":"secret","title":"e"}"#)
        #expect(seen.all.map(\.message) == [
            #"GET /users/3/posts /users/:userID/posts ["page"]"#, #"POST /posts /posts ["title"]"#,
            #"GET /stats/today - []"#, #"POST /posts /posts ["title"]"#,
        ])
    }

    @Test("an after hook receives the request and the response")
    func afterHook() async throws {
        let seen = LogRecords()
        let transport = ScriptedTransport { _, _ in json(200, #"{"posts": []}"#) }
        let (client, _) = try ClientTests.client(transport) { configuration in
            configuration.interceptors = [ClosureInterceptor(before: { $0.headers["X-Hooked"] = "1" },
                                                             afterResponse: { request, response in
                seen.append(.info, "\(request.method) \(request.url.path) \(request.headers["X-Hooked"] ?? "-") → \(response.status)")
                response.headers["X-After"] = "yes"
            })]
        }
        let result = try await client.call("/users/:userID/posts", params: ["userID": 3])
        #expect(seen.all.map(\.message) == ["GET /api/users/3/posts 1 → 200"])
        #expect(result.headers["X-After"] == "yes")
    }

    @Test("LoggingInterceptor: method, URL, status and time at info; headers and bodies at debug, Authorization hidden")
    func logging() async throws {
        let records = LogRecords()
        for level in [Logger.Level.info, .debug] {
            var logger = Logger(label: "test") { _ in CapturingLogHandler(records: records) }
            logger.logLevel = level
            let transport = ScriptedTransport { _, _ in json(201, #"{"post": {"id": 5, "title": "t"}}"#, ["X-Server": "mock"]) }
            let (client, _) = try ClientTests.client(transport) { configuration in
                configuration.headers["Authorization"] = "Bearer secret"
                configuration.interceptors = [LoggingInterceptor(logger: logger)]
            }
            try await client.call("/posts", method: .post, params: ["title": "t"])
        }
        let all = records.all
        let info = all.filter { $0.level == .info }.map(\.message)
        #expect(info.count == 2)
        #expect(info.allSatisfy { $0.hasPrefix("POST http://127.0.0.1:9/api/posts → 201 in ") }, "\(info)")
        let debug = all.filter { $0.level == .debug }.map(\.message)
        #expect(debug.count == 4, "\(debug)")
        #expect(debug.contains { $0.contains("request headers:") && $0.contains("Authorization: (hidden)") && !$0.contains("secret") })
        #expect(debug.contains(#"POST http://127.0.0.1:9/api/posts request body: {"title":"t"}"#))
        #expect(debug.contains { $0.contains("response headers: X-Server: mock") })
        #expect(debug.contains(#"POST http://127.0.0.1:9/api/posts response body: {"post": {"id": 5, "title": "t"}}"#))
    }
}
