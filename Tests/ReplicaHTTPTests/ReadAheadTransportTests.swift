import AsyncHTTPClient
import Foundation
import Hummingbird
import NIOCore
import ReplicaHTTP
import ReplicaTestSupport
import Testing

/// `HTTPTransport` reads a body ahead of its consumer, up to its `readAhead` bytes, through
/// AsyncHTTPClient's delegate API: the bytes arrive whole and in order whatever the limit, a body
/// dropped half-read frees its connection, and the request's timeout counts to the response head.
@Suite("HTTPTransport: bodies read ahead of the parser")
struct ReadAheadTransportTests {
    /// 2 MiB of a pattern that shows a lost, doubled or reordered chunk: byte i is (i * 7 + i / 65,536) mod 251.
    static let bodySize = 2 << 20
    static let pattern: [UInt8] = (0..<bodySize).map { UInt8(($0 &* 7 &+ $0 / 65_536) % 251) }

    /// Holds `/late-head`'s answer until the test opens it.
    final class Gate: Sendable {
        let opened: AsyncStream<Void>
        let continuation: AsyncStream<Void>.Continuation
        init() { (opened, continuation) = AsyncStream<Void>.makeStream() }
        func open() { continuation.finish() }
        func wait() async { for await _ in opened {} }
    }

    /// A server with `/bytes` (the pattern, written in 64 KiB pieces), `/late-head` (answers once
    /// `gate` opens) and `/slow-body` (the head and a first piece at once, the 3 others once
    /// `release` opens).
    static func server(gate: Gate = Gate(), release: Gate = Gate()) async throws -> StreamingServer {
        let router = Router()
        router.get("/bytes") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: Hummingbird.ResponseBody { writer in
                var offset = 0
                while offset < bodySize {
                    let end = min(bodySize, offset + 65_536)
                    try await writer.write(ByteBuffer(bytes: pattern[offset..<end]))
                    offset = end
                }
                try await writer.finish(nil)
            })
        }
        router.get("/late-head") { _, _ -> Response in
            await gate.wait()
            return Response(status: .ok, body: Hummingbird.ResponseBody(byteBuffer: ByteBuffer(string: "late")))
        }
        router.get("/slow-body") { _, _ -> Response in
            Response(status: .ok, body: Hummingbird.ResponseBody { writer in
                try await writer.write(ByteBuffer(string: "piece 0\n"))
                await release.wait()
                for piece in 1..<4 { try await writer.write(ByteBuffer(string: "piece \(piece)\n")) }
                try await writer.finish(nil)
            })
        }
        return try await StreamingServer.start(router)
    }

    static func request(_ server: StreamingServer, _ path: String, timeout: Duration = .seconds(30)) throws -> ClientRequest {
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)\(path)"))
        return ClientRequest(method: .get, url: url, timeout: timeout)
    }

    /// Whether `chunk` is the pattern's bytes from `offset` on.
    static func matches(_ chunk: [UInt8], at offset: Int) -> Bool {
        guard offset + chunk.count <= bodySize else { return false }
        return chunk.withUnsafeBytes { received in
            pattern.withUnsafeBytes { expected in
                guard let received = received.baseAddress, let expected = expected.baseAddress else { return chunk.isEmpty }
                return memcmp(received, expected + offset, chunk.count) == 0
            }
        }
    }

    @Test("a body many times the read-ahead arrives whole and in order", arguments: [1, 100_000, 1 << 20])
    func wholeBody(readAhead: Int) async throws {
        let server = try await Self.server()
        let transport = HTTPTransport(configuration: HTTPClient.Configuration(), readAhead: readAhead)
        try await withTeardown {
            let response = try await transport.send(try Self.request(server, "/bytes"))
            #expect(response.status == 200)
            var received = 0
            var mismatch: Int?
            for try await chunk in response.body {
                if mismatch == nil && !Self.matches(chunk, at: received) { mismatch = received }
                received += chunk.count
            }
            #expect(received == Self.bodySize)
            #expect(mismatch == nil, "the chunk at byte \(mismatch ?? -1) differs")
        } teardown: {
            try? await transport.shutdown()
            await server.stop()
        }
    }

    @Test("a body dropped after its first chunk frees the connection: the next request on a one-connection client goes through")
    func droppedBody() async throws {
        let server = try await Self.server()
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 1
        let transport = HTTPTransport(configuration: configuration, readAhead: 65_536)
        try await withTeardown {
            for _ in 0..<3 {
                let response = try await transport.send(try Self.request(server, "/bytes"))
                var iterator = response.body.makeAsyncIterator()
                let first = try await iterator.next()
                #expect((first?.count ?? 0) > 0)
            }
            // The dropped exchanges were cancelled, so this one gets the connection and its whole body
            // (were they not, it would wait for a connection until its timeout).
            let last = try await transport.send(try Self.request(server, "/bytes"))
            #expect(try await last.body.collect(upTo: Self.bodySize).count == Self.bodySize)
        } teardown: {
            try? await transport.shutdown()
            await server.stop()
        }
    }

    @Test("the timeout counts to the response head: a late head fails with .timeout, a body still coming past the deadline arrives whole",
          .timeLimit(.minutes(1)))
    func timeoutToTheHead() async throws {
        let gate = Gate()
        let release = Gate()
        let server = try await Self.server(gate: gate, release: release)
        let transport = HTTPTransport(configuration: HTTPClient.Configuration())
        try await withTeardown {
            // The server answers only once the gate opens, after this: the deadline ended the wait.
            let error = await #expect(throws: ClientError.self) {
                _ = try await transport.send(try Self.request(server, "/late-head", timeout: .milliseconds(500)))
            }
            #expect(error?.code == .timeout)
            gate.open()
            // The head and the first piece come at once; the rest only once the deadline has passed
            // (the server waits for the test to say so, however long the head took on a busy machine).
            // 10 s: a loaded parallel run has taken more than 3 s to bring a head over loopback.
            let timeout = Duration.seconds(10)
            let sent = ContinuousClock.now
            let response = try await transport.send(try Self.request(server, "/slow-body", timeout: timeout))
            var iterator = response.body.makeAsyncIterator()
            var body = try #require(try await iterator.next())
            try await Task.sleep(until: sent + timeout + .milliseconds(300), clock: .continuous)
            release.open()
            while let chunk = try await iterator.next() { body += chunk }
            #expect(ContinuousClock.now - sent > timeout)
            #expect(String(decoding: body, as: UTF8.self) == (0..<4).map { "piece \($0)\n" }.joined())
        } teardown: {
            gate.open()
            release.open()
            try? await transport.shutdown()
            await server.stop()
        }
    }
}
