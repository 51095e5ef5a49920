import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ReplicaTestSupport
import Testing

/// `/people` answering a 200 (ETag `"v1"`), then a 304 to its revalidation, then holding every
/// later request until ``release()``: after two cycles a `--every` loop's metrics stand still.
/// `@unchecked Sendable`: guarded by `lock`.
final class TwoCyclePeople: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private var released = false
    private var held: [CheckedContinuation<Void, Never>] = []

    /// The requests received so far.
    var requests: Int { lock.withLock { count } }

    func respond(_ request: Request) async -> Response {
        let number = lock.withLock { count += 1; return count }
        if number == 1 {
            return Response(status: .ok, headers: [.contentType: "application/json", .eTag: "\"v1\""],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: #"[{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}]"#)))
        }
        if number == 2, request.headers[.ifNoneMatch] == "\"v1\"" {
            return Response(status: .notModified, headers: [.eTag: "\"v1\""])
        }
        await withCheckedContinuation { continuation in
            let resume = lock.withLock { () -> Bool in
                if released { return true }
                held.append(continuation)
                return false
            }
            if resume { continuation.resume() }
        }
        return Response(status: .serviceUnavailable)
    }

    /// Answers the held requests (503) and every later one at once.
    func release() {
        let waiting = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            released = true
            defer { held = [] }
            return held
        }
        for continuation in waiting { continuation.resume() }
    }
}

@Suite("replica sync --every --metrics-port")
struct SyncMetricsCommandTests {
    @Test("serves the sync's metrics in Prometheus' text format at /metrics while it syncs")
    func servesMetrics() async throws {
        let people = TwoCyclePeople()
        let router = Router()
        router.get("/people") { request, _ in await people.respond(request) }
        let server = try await StreamingServer.start(router)
        let directory = try TemporaryDirectory("replica-sync-metrics")
        let sync = Process()
        try await withTeardown {
            let out = directory.path("out")
            let err = directory.path("err")
            _ = FileManager.default.createFile(atPath: out, contents: nil)
            _ = FileManager.default.createFile(atPath: err, contents: nil)
            sync.executableURL = URL(fileURLWithPath: ChildProcess.replica)
            sync.arguments = ["sync", "--db", directory.path("people.sqlite"),
                              "--schema", packageRoot.appendingPathComponent("Schemas/people.json").path,
                              "--base-url", "http://127.0.0.1:\(server.port)", "--every", "0.2", "--metrics-port", "0", "/people"]
            sync.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
            sync.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
            try sync.run()

            // The third request waits: both cycles before it have recorded their metrics and printed their lines.
            try await waitUntil("a third request", timeout: .seconds(60)) { people.requests >= 3 }
            // Each sync's line (its status line, "/people: ok … next in 0.2 s", aside).
            let stdout = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("/people: ok ") }
            #expect(stdout == ["/people: 200, inserted 2, updated 0, deleted 0 (2 objects)", "/people: 304 not modified"])
            let stderr = try String(contentsOfFile: err, encoding: .utf8)
            let line = try #require(stderr.split(separator: "\n").first { $0.hasPrefix("metrics: ") }, "\(stderr)")
            let url = String(line.dropFirst("metrics: ".count))
            #expect(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/metrics"))

            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
            #expect(response.status == .ok)
            #expect(response.headers["Content-Type"] == ["text/plain; version=0.0.4; charset=utf-8"])
            let body = String(buffer: try await response.body.collect(upTo: 1 << 20))
            let lines = Set(body.split(separator: "\n").map(String.init))
            for expected in [
                #"replica_sync_pages_total{route="/people"} 2"#,
                #"replica_sync_not_modified_pages_total{route="/people"} 1"#,
                #"replica_rows_total{route="/people",operation="inserted"} 2"#,
                #"replica_sync_duration_seconds_count{route="/people",outcome="success"} 1"#,
                #"replica_sync_duration_seconds_count{route="/people",outcome="not_modified"} 1"#,
                #"replica_write_lock_seconds_count{route="/people"} 1"#,
            ] {
                #expect(lines.contains(expected), "\(expected) not in:\n\(body)")
            }
            #expect(!body.contains("replica_sync_failures_total"), "\(body)")
            #expect(!body.contains(#"operation="updated""#), "\(body)")

            // The third request is held: the interrupted sync gets its graceful-shutdown time, then exits.
            // Awaited, not waitUntilExit(): a blocked thread here could be the one the servers in this process need.
            sync.interrupt()
            try await waitUntil("the sync's exit", timeout: .seconds(30)) { !sync.isRunning }
            #expect(sync.terminationStatus == 0)
        } teardown: {
            people.release()
            if sync.isRunning { sync.terminate() }
            while sync.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
            await server.stop()
            directory.remove()
        }
    }

    @Test("--metrics-port needs --every, and a port in range")
    func validation() async throws {
        let schema = packageRoot.appendingPathComponent("Schemas/people.json").path
        let alone = try await ChildProcess.run(ChildProcess.replica, ["sync", "--db", "/nonexistent/x.sqlite", "--schema", schema,
                                                                     "--base-url", "http://127.0.0.1:1", "--metrics-port", "0", "/people"])
        #expect(alone.status == 64)
        #expect(alone.stderr.contains("--metrics-port needs --every"), "\(alone.stderr)")
        let range = try await ChildProcess.run(ChildProcess.replica, ["sync", "--db", "/nonexistent/x.sqlite", "--schema", schema,
                                                                     "--base-url", "http://127.0.0.1:1", "--every", "1",
                                                                     "--metrics-port", "70000", "/people"])
        #expect(range.status == 64)
        #expect(range.stderr.contains("--metrics-port takes a whole number from 0 to 65535, not 70000"), "\(range.stderr)")
    }
}
