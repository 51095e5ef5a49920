import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import InMemoryTracing
import NIOCore
import Replica
import ReplicaHTTP
import ReplicaTestSupport
import Testing
import Tracing

/// Two pages of people, `/people` then `/people?page=2` (by its `Link` header), recording the
/// trace headers of every request; page 2 can be made to fail. `@unchecked Sendable`: guarded by `lock`.
final class TracedPeople: @unchecked Sendable {
    enum SecondPage { case ok, serverError, malformed }

    struct Seen {
        var target: String
        var traceparent: [String]
        var tracestate: [String]
    }

    private let lock = NSLock()
    private var seen: [Seen] = []
    private var base = ""
    private var second = SecondPage.ok

    func setBase(_ url: String) { lock.withLock { base = url } }
    func setSecondPage(_ page: SecondPage) { lock.withLock { second = page } }
    /// The requests answered so far.
    var requests: [Seen] { lock.withLock { seen } }

    func respond(_ request: Request) -> Response {
        lock.withLock {
            let values = { (name: String) in HTTPField.Name(name).map { request.headers[values: $0] } ?? [] }
            seen.append(Seen(target: request.uri.description, traceparent: values("traceparent"), tracestate: values("tracestate")))
            let json: HTTPFields = [.contentType: "application/json"]
            guard request.uri.queryParameters["page"] == "2" else {
                var headers = json
                if let link = HTTPField.Name("Link") { headers[link] = "<\(base)/people?page=2>; rel=\"next\"" }
                return Response(status: .ok, headers: headers,
                                body: ResponseBody(byteBuffer: ByteBuffer(string: #"[{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}]"#)))
            }
            switch second {
            case .ok:
                return Response(status: .ok, headers: json, body: ResponseBody(byteBuffer: ByteBuffer(string: #"[{"id": 3, "name": "cy"}]"#)))
            case .serverError:
                return Response(status: .internalServerError, headers: json,
                                body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"message": "down"}"#)))
            case .malformed:
                return Response(status: .ok, headers: json, body: ResponseBody(byteBuffer: ByteBuffer(string: #"[{"id": 3, "name": "#)))
            }
        }
    }
}

@Suite("Client tracing: spans of a sync, and traceparent on its requests")
struct ClientTracingTests {
    static let schema = """
        {"name": "people", "entities": {"Person": {"attributes": {"id": "integer", "name": "string"}}},
         "routes": [{"path": "/people", "target": "Person", "stale": "delete"}]}
        """

    /// Serves `people` on 127.0.0.1 and a free port; runs `body` with a client tracing into `tracer`.
    static func withAPI(_ people: TracedPeople, tracer: any Tracer, transport: HTTPTransport = HTTPTransport(),
                        _ body: (ReplicaClient, SQLiteReplica) async throws -> Void) async throws {
        let router = Router()
        router.get("/people") { request, _ in people.respond(request) }
        let server = try await StreamingServer.start(router)
        try await withTeardown {
            let base = "http://127.0.0.1:\(server.port)"
            people.setBase(base)
            let engine = try SQLiteReplica(store: try Store.inMemory(schema: try Schema(json: Data(Self.schema.utf8), file: "people.json")))
            var configuration = ClientConfiguration(transport: transport, baseURLs: [.production: try #require(URL(string: base))])
            configuration.tracer = tracer
            try await body(ReplicaClient(engine: engine, configuration: configuration), engine)
        } teardown: {
            try? await transport.shutdown()
            await server.stop()
        }
    }

    @Test("a sync under the caller's span: call → page → parse for each page, merge → notify; each request carries its page's traceparent")
    func spanTree() async throws {
        let people = TracedPeople()
        let tracer = W3CTestTracer()
        try await Self.withAPI(people, tracer: tracer) { client, engine in
            let token = engine.addObserver(queue: DispatchQueue(label: "observer")) { _ in }
            defer { engine.removeObserver(token) }
            let result = try await tracer.withSpan("refresh") { _ in try await client.call("/people") }
            #expect(result.pages == 2)

            let refresh = try #require(tracer.finished("refresh").first)
            let calls = tracer.finished("replica.call")
            try #require(calls.count == 1)
            let call = calls[0]
            #expect(call.traceID == refresh.traceID)
            #expect(call.parentSpanID == refresh.spanID)
            #expect(call.attributes.get("http.route") == .string("/people"))
            #expect(call.attributes.get("http.request.method") == .string("GET"))
            #expect(call.attributes.get("url.path") == .string("/people"))
            #expect(call.attributes.get("http.response.status_code") == .int64(200))
            #expect(call.attributes.get("replica.pages") == .int64(2))
            #expect(call.attributes.get("replica.rows.inserted") == .int64(3))
            #expect(call.status == nil && call.errors.isEmpty)

            let pages = tracer.finished("replica.page")
            try #require(pages.count == 2)
            #expect(pages.map(\.parentSpanID) == [call.spanID, call.spanID])
            #expect(pages.map { $0.attributes.get("replica.page") } == [.int64(1), .int64(2)])
            #expect(pages.map { $0.attributes.get("http.response.status_code") } == [.int64(200), .int64(200)])
            #expect(pages.allSatisfy { $0.kind == .client })
            let parses = tracer.finished("replica.parse")
            #expect(parses.map(\.parentSpanID) == pages.map(\.spanID))
            #expect(parses.map { $0.attributes.get("replica.objects") } == [.int64(2), .int64(1)])

            let merge = try #require(tracer.finished("replica.merge").first)
            #expect(merge.parentSpanID == call.spanID)
            #expect(merge.attributes.get("replica.rows.inserted") == .int64(3))
            let notify = try #require(tracer.finished("replica.notify").first)
            #expect(notify.parentSpanID == merge.spanID)
            #expect(notify.attributes.get("replica.observers") == .int64(1))
            #expect(notify.attributes.get("replica.entities") == .stringArray(["Person"]))

            // The server got each page's own span as the parent of its request, in the caller's trace.
            let requests = people.requests
            #expect(requests.map(\.target) == ["/people", "/people?page=2"])
            #expect(requests.map(\.traceparent.count) == [1, 1])
            let parents = try requests.map { try TraceParent(try #require($0.traceparent.first)) }
            #expect(parents.map(\.traceID) == [refresh.traceID, refresh.traceID])
            #expect(parents.map(\.spanID) == pages.map(\.spanID))
            #expect(requests.map(\.tracestate) == [["replica=test"], ["replica=test"]])
        }
    }

    @Test("no trace headers when no trace is active (a tracer that records nothing)")
    func noActiveTrace() async throws {
        let people = TracedPeople()
        try await Self.withAPI(people, tracer: NoOpTracer()) { client, _ in
            let result = try await client.call("/people")
            #expect(result.pages == 2)
            #expect(people.requests.map(\.traceparent) == [[], []])
            #expect(people.requests.map(\.tracestate) == [[], []])
        }
    }

    @Test("a failed page records its error on its span (and its parse span's) and on the call's; nothing merges",
          arguments: [TracedPeople.SecondPage.serverError, .malformed])
    func failedPage(_ failure: TracedPeople.SecondPage) async throws {
        let people = TracedPeople()
        people.setSecondPage(failure)
        let tracer = W3CTestTracer()
        try await Self.withAPI(people, tracer: tracer) { client, engine in
            await #expect(throws: (any Error).self) { try await client.call("/people") }
            #expect(try engine.store.count("Person") == 0)
            let call = try #require(tracer.finished("replica.call").first)
            #expect(call.status?.code == .error)
            #expect(call.errors.count == 1)
            let pages = tracer.finished("replica.page")
            try #require(pages.count == 2)
            #expect(pages[0].status == nil && pages[0].errors.isEmpty)
            #expect(pages[1].status?.code == .error)
            #expect(pages[1].errors.count == 1)
            #expect(tracer.finished("replica.merge").isEmpty)
            #expect(tracer.finished("replica.notify").isEmpty)
            let parses = tracer.finished("replica.parse")
            switch failure {
            case .serverError:
                #expect(pages[1].attributes.get("http.response.status_code") == .int64(500))
                #expect((call.errors.first?.error as? ClientError)?.status == 500)
                #expect(parses.count == 1)
            case .malformed, .ok:
                #expect((call.errors.first?.error as? SyncError)?.code == .malformedJSON)
                #expect(parses.count == 2)
                #expect(parses.last?.status?.code == .error)
                #expect(parses.last?.parentSpanID == pages[1].spanID)
            }
        }
    }

    @Test("AsyncHTTPClient tracing with the tracer too: one traceparent a request, its own span's, under the page's")
    func asyncHTTPClientTracing() async throws {
        let people = TracedPeople()
        let tracer = W3CTestTracer()
        var configuration = HTTPClient.Configuration()
        configuration.tracing.tracer = tracer
        try await Self.withAPI(people, tracer: tracer, transport: HTTPTransport(configuration: configuration)) { client, _ in
            try await tracer.withSpan("refresh") { _ in _ = try await client.call("/people") }
            let pages = tracer.finished("replica.page")
            let exchanges = tracer.finished("GET")
            try #require(pages.count == 2 && exchanges.count == 2)
            #expect(exchanges.map(\.parentSpanID) == pages.map(\.spanID))
            #expect(people.requests.map(\.traceparent.count) == [1, 1])
            let parents = try people.requests.map { try TraceParent(try #require($0.traceparent.first)) }
            #expect(parents.map(\.spanID) == exchanges.map(\.spanID))
        }
    }
}
