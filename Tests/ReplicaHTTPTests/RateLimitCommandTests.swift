import Foundation
import HTTPTypes
import Hummingbird
import ReplicaTestSupport
import Testing

/// `replica sync` under rate limits as APIs send them: a 429 with `Retry-After`, GitHub's 403
/// with `X-RateLimit-Remaining: 0` and a Unix `X-RateLimit-Reset`, the IETF `RateLimit` field.
@Suite("replica sync under rate limits")
struct RateLimitCommandTests {
    static let schema = #"""
        {"name": "github", "version": 1, "unmappedKeys": "ignore",
         "entities": {"Label": {"table": "labels", "attributes": {"id": "integer", "name": "string"}}},
         "routes": [{"path": "/labels", "target": "Label", "stale": "delete"}]}
        """#

    /// A server whose first `limited` answers to /labels are `refusal()`, then the labels.
    static func server(limited: Int, _ refusal: @escaping @Sendable () -> (Int, [String: String])) async throws -> (StreamingServer, Locked<[Date]>) {
        let arrivals = Locked<[Date]>([])
        let router = Router()
        router.get("/labels") { _, _ -> Response in
            let count = arrivals.withLock { $0.append(Date()); return $0.count }
            var fields = HTTPFields()
            fields[.contentType] = "application/json"
            guard count > limited else {
                let (status, headers) = refusal()
                for (name, value) in headers { if let field = HTTPField.Name(name) { fields[field] = value } }
                return Response(status: HTTPResponse.Status(code: status), headers: fields,
                                body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"message": "API rate limit exceeded for 203.0.113.7."}"#)))
            }
            return Response(status: .ok, headers: fields,
                            body: ResponseBody(byteBuffer: ByteBuffer(string: #"[{"id": 1, "name": "bug"}, {"id": 2, "name": "docs"}]"#)))
        }
        return (try await StreamingServer.start(router), arrivals)
    }

    static func sync(_ server: StreamingServer, _ directory: TemporaryDirectory, _ extra: [String] = []) async throws -> ChildProcess.Output {
        let schema = directory.url("github.json")
        try Data(Self.schema.utf8).write(to: schema)
        return try await ChildProcess.run(ChildProcess.replica, ["sync", "--db", directory.path("github.sqlite"), "--schema", schema.path,
                                                                 "--base-url", "http://127.0.0.1:\(server.port)"] + extra + ["/labels"])
    }

    @Test("a 429 with Retry-After: 1 is asked again after a second; GitHub's used-up 403 after its reset; the IETF RateLimit field too")
    func waits() async throws {
        let refusals: [(String, @Sendable () -> (Int, [String: String]), Double)] = [
            ("Retry-After", { (429, ["Retry-After": "1"]) }, 0.9),
            ("X-RateLimit-Reset", {
                (403, ["X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "0", "X-RateLimit-Used": "60",
                       "X-RateLimit-Reset": String(Int(Date().timeIntervalSince1970) + 2), "X-RateLimit-Resource": "core"])
            }, 1.0),
            ("RateLimit", { (429, ["RateLimit": #""default";r=0;t=1"#, "RateLimit-Policy": #""default";q=60;w=60"#]) }, 0.9),
        ]
        for (name, refusal, least) in refusals {
            let (server, arrivals) = try await Self.server(limited: 1, refusal)
            let directory = try TemporaryDirectory("replica-rate-limit")
            try await withTeardown {
                let output = try await Self.sync(server, directory)
                #expect(output.status == 0, "\(name): \(output.stderr)")
                #expect(output.stdout == "/labels: 200, inserted 2, updated 0, deleted 0 (2 objects)\n", "\(name)")
                let times = arrivals.withLock { $0 }
                #expect(times.count == 2, "\(name)")
                if times.count == 2 { #expect(times[1].timeIntervalSince(times[0]) >= least, "\(name): \(times)") }
            } teardown: {
                await server.stop()
                directory.remove()
            }
        }
    }

    @Test("a reset further off than --max-wait fails at once naming it (exit 1, nothing written); --retries 0 fails the first 429")
    func givesUp() async throws {
        let (server, arrivals) = try await Self.server(limited: 100) {
            (403, ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": String(Int(Date().timeIntervalSince1970) + 3600)])
        }
        let directory = try TemporaryDirectory("replica-rate-limit")
        try await withTeardown {
            let started = ContinuousClock.now
            let output = try await Self.sync(server, directory, ["--max-wait", "5"])
            #expect(started.duration(to: .now) < .seconds(20))
            #expect(output.status == 1)
            #expect(output.stdout == "")
            let prefix = "Error: /labels: GET http://127.0.0.1:\(server.port)/labels: HTTP 403: the rate limit is used up "
                + "(X-RateLimit-Remaining: 0, resets at "
            #expect(output.stderr.hasPrefix(prefix), "\(output.stderr)")
            #expect(output.stderr.contains(": later than the longest wait of 5 s (RetryInterceptor.maxRetryAfter, replica sync --max-wait) "
                                           + "API rate limit exceeded for 203.0.113.7.\n"), "\(output.stderr)")
            #expect(arrivals.withLock { $0.count } == 1)
            #expect(!FileManager.default.fileExists(atPath: directory.path("github.sqlite")))
        } teardown: {
            await server.stop()
            directory.remove()
        }

        let (busy, busyArrivals) = try await Self.server(limited: 100) { (429, ["Retry-After": "1"]) }
        let other = try TemporaryDirectory("replica-rate-limit")
        try await withTeardown {
            let output = try await Self.sync(busy, other, ["--retries", "0"])
            #expect(output.status == 1)
            #expect(output.stderr.hasPrefix("Error: /labels: GET http://127.0.0.1:\(busy.port)/labels: HTTP 429 API rate limit exceeded"),
                    "\(output.stderr)")
            #expect(busyArrivals.withLock { $0.count } == 1)
            let refused = try await Self.sync(busy, other, ["--retries=-1"])
            #expect(refused.status == 64)
            #expect(refused.stderr.contains("--retries takes a number from 0 up to 100, not -1"), "\(refused.stderr)")
        } teardown: {
            await busy.stop()
            other.remove()
        }
    }
}
