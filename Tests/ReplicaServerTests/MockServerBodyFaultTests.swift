import AsyncHTTPClient
import Dispatch
import Foundation
import NIOCore
import ReplicaServer
import Testing
#if canImport(Glibc)
import Glibc
private let streamSocket = Int32(SOCK_STREAM.rawValue)
#elseif canImport(Darwin)
import Darwin
private let streamSocket = SOCK_STREAM
#endif

@Suite("MockServer body faults: stalled, truncated and malformed bodies; faults for one page")
struct MockServerBodyFaultTests {
    /// Adds `count` people so a collection's body is long enough to cut.
    static func seed(_ client: Client, count: Int = 5) async throws {
        for n in 1...count { #expect(try await client.post("/people", #"{"name":"person \#(n)"}"#).status == 201) }
    }

    @Test("stallBody sends the first bytes, then nothing for the duration, then the rest, chunked")
    func stallBody() async throws {
        try await withServer(try Fixture.peopleResources) { server, client in
            try await Self.seed(client)
            let normal = try await client.get("/people")
            let duration = Duration.milliseconds(300)
            server.setConditions(MockConditions(faults: [MockFault(.stallBody(afterBytes: 20, duration: duration), method: "GET")]))

            let raw = try await RawHTTP.get(port: server.port, path: "/people")
            #expect(raw.status == 200)
            #expect(raw.header("Content-Length") == nil)
            #expect(raw.header("Transfer-Encoding")?.lowercased() == "chunked")
            let body = raw.body
            #expect(body.complete)
            #expect(body.bytes == normal.bytes)
            // The longest wait between two reads that brought body bytes comes right after the first 20 bytes.
            let gap = try #require(body.longestGap)
            #expect(gap.bytesBefore == 20)
            #expect(gap.duration >= duration * 0.8, "\(gap.duration)")
            #expect(gap.duration < .seconds(15), "\(gap.duration)")  // a loaded parallel run delays reads by seconds

            // An ordinary client waits the stall out and gets the whole, valid body.
            let started = ContinuousClock.now
            let slow = try await client.get("/people")
            #expect(started.duration(to: .now) >= duration * 0.8)
            #expect(slow.bytes == normal.bytes)
            #expect(slow.json == normal.json)
        }
    }

    @Test("a stalled body never waits past MockServerOptions.stallLimit")
    func stallBodyLimit() async throws {
        try await withServer(try Fixture.peopleResources, options: MockServerOptions(stallLimit: .milliseconds(200))) { server, client in
            try await Self.seed(client)
            let normal = try await client.get("/people")
            server.setConditions(MockConditions(faults: [MockFault(.stallBody(afterBytes: 10, duration: .seconds(60)))]))
            let started = ContinuousClock.now
            #expect(try await client.get("/people").bytes == normal.bytes)
            let waited = started.duration(to: .now)
            #expect(waited >= .milliseconds(160) && waited < .seconds(30), "\(waited)")  // the stall's own 60 s, cut to 0.2 s
        }
    }

    @Test("stop() releases a stalled body: the rest is sent and the server goes down")
    func stallBodyReleasedByStop() async throws {
        try await withServer(try Fixture.peopleResources) { server, client in
            try await Self.seed(client, count: 1)
            let normal = try await client.get("/people")
            server.setConditions(MockConditions(faults: [MockFault(.stallBody(afterBytes: 10, duration: .seconds(60)))]))
            let started = ContinuousClock.now
            var request = HTTPClientRequest(url: server.baseURL + "/people")
            request.method = .GET
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
            var received: [UInt8] = []
            var firstChunk: Int?
            var stopping: Task<Void, Never>?
            for try await chunk in response.body {
                received += Array(chunk.readableBytesView)
                if firstChunk == nil { firstChunk = chunk.readableBytes }
                // The first bytes are here and the rest is stalled: stopping the server releases it.
                if stopping == nil { stopping = Task { await server.stop() } }
            }
            await stopping?.value
            // Released, not waited out: the stall is 60 s. Alone this takes a tenth of a second; in a
            // full parallel run of the suites it has taken 10.2 to 12.1 s (not understood yet), so the
            // bound is half the stall rather than a tight one.
            #expect(started.duration(to: .now) < .seconds(30))
            #expect(firstChunk == 10)
            #expect(received == normal.bytes)
            #expect(!server.isRunning)
        }
    }

    @Test("truncateBody sends exactly the first bytes, then closes the connection")
    func truncateBody() async throws {
        try await withServer(try Fixture.peopleResources) { server, client in
            try await Self.seed(client)
            let normal = try await client.get("/people")
            #expect(normal.bytes.count > 30)
            server.setConditions(MockConditions(faults: [MockFault(.truncateBody(afterBytes: 30), method: "GET", path: "/people")]))

            let raw = try await RawHTTP.get(port: server.port, path: "/people")
            #expect(raw.status == 200)
            #expect(raw.header("Content-Length") == nil)
            let body = raw.body
            #expect(!body.complete)
            #expect(body.bytes == Array(normal.bytes.prefix(30)))

            await #expect(throws: (any Error).self) { try await client.get("/people") }
            // A cut covering the whole body still never looks complete.
            server.setConditions(MockConditions(faults: [MockFault(.truncateBody(afterBytes: 1 << 20), method: "GET")]))
            let whole = try await RawHTTP.get(port: server.port, path: "/people")
            #expect(whole.body.bytes == normal.bytes)
            #expect(!whole.body.complete)
            await #expect(throws: (any Error).self) { try await client.get("/people") }
            // The server keeps serving.
            server.setConditions(MockConditions())
            #expect(try await client.get("/people").bytes == normal.bytes)
        }
    }

    @Test("malformedBody is invalid JSON only at its end; HEAD, errors and 304 are untouched")
    func malformedBody() async throws {
        try await withServer(try Fixture.peopleResources) { server, client in
            try await Self.seed(client, count: 3)
            let normal = try await client.get("/people")
            #expect(normal.json?.arrayValue?.count == 3)
            let tag = try #require(normal.header("ETag"))
            server.setConditions(MockConditions(faults: [MockFault(.malformedBody, method: "GET")]))

            let bad = try await client.get("/people")
            #expect(bad.status == 200)
            #expect(bad.header("ETag") == tag)
            #expect(bad.header("Content-Length") == String(bad.bytes.count))
            #expect((try? JSONValue(parsing: bad.bytes)) == nil)
            // Everything but the final `,]` is the intact array.
            #expect(bad.text == normal.text.replacingOccurrences(of: "}]\n", with: "},]\n"))
            let object = try await client.get("/people/1")
            #expect((try? JSONValue(parsing: object.bytes)) == nil)
            #expect(object.text.hasSuffix(",}\n"))

            #expect(try await client.get("/people", headers: [("If-None-Match", tag)]).status == 304)
            #expect(try await client.send(.HEAD, "/people").status == 200)
            let missing = try await client.get("/people/99")
            #expect(missing.status == 404)
            #expect(missing.json?["error"] != nil)

            server.setConditions(MockConditions())
            #expect(try JSONValue(parsing: try await client.get("/people").bytes) == normal.json)
        }
    }

    @Test("a fault with a query filter hits only requests carrying those query items")
    func queryFilter() async throws {
        try await withServer(try Fixture.peopleResources) { server, client in
            try await Self.seed(client, count: 5)
            server.setConditions(MockConditions(faults: [
                MockFault(.malformedBody, method: "GET", path: "/people", query: ["_page": "3"]),
                MockFault(.status(503), path: "/people", query: ["_page": "4", "_limit": "1"]),
            ]))
            func parses(_ path: String) async throws -> Bool {
                let reply = try await client.get(path)
                #expect(reply.status == 200, "\(path)")
                return (try? JSONValue(parsing: reply.bytes)) != nil
            }
            #expect(try await parses("/people?_page=2&_limit=2"))
            #expect(try await parses("/people?_page=3&_limit=2") == false)
            #expect(try await parses("/people?_limit=2&_page=3") == false)
            #expect(try await parses("/people?_page=%33&_limit=2") == false)
            #expect(try await parses("/people?_page=1"))
            #expect(try await parses("/people"))
            #expect(try await client.get("/people?_page=4&_limit=1").status == 503)
            #expect(try await client.get("/people?_page=4&_limit=2").status == 200)
            #expect(try await client.get("/people?_page=4").status == 200)
        }
    }
}

/// A raw HTTP/1.1 exchange on its own socket, read to the end: each read with the time it arrived,
/// so a test sees exactly which bytes came when, and whether a chunked body was complete.
struct RawHTTP: Sendable {
    var reads: [(at: ContinuousClock.Instant, bytes: [UInt8])]

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The decoded chunked body.
    struct Body {
        var bytes: [UInt8] = []
        /// How many body bytes had arrived after each read.
        var arrived: [Int] = []
        var times: [ContinuousClock.Instant] = []
        /// Whether the last (empty) chunk arrived.
        var complete = false

        /// The longest pause between two reads that brought body bytes, and the body bytes before it.
        var longestGap: (duration: Duration, bytesBefore: Int)? {
            var last: (time: ContinuousClock.Instant, count: Int)?
            var best: (duration: Duration, bytesBefore: Int)?
            for (time, count) in zip(times, arrived) where count > (last?.count ?? 0) {
                if let last, best.map({ last.time.duration(to: time) > $0.duration }) ?? true {
                    best = (last.time.duration(to: time), last.count)
                }
                last = (time, count)
            }
            return best
        }
    }

    var raw: [UInt8] { reads.flatMap(\.bytes) }

    private var headEnd: Int? {
        let raw = raw
        guard raw.count >= 4 else { return nil }
        return (0...(raw.count - 4)).first { raw[$0] == 13 && raw[$0 + 1] == 10 && raw[$0 + 2] == 13 && raw[$0 + 3] == 10 }
    }

    private var headLines: [Substring] {
        guard let headEnd else { return [] }
        return String(decoding: raw[..<headEnd], as: UTF8.self).split(separator: "\r\n")
    }

    var status: Int? { headLines.first.flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Int($0) } }

    func header(_ name: String) -> String? {
        for line in headLines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name.lowercased() {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    /// The chunked body after the head, each byte credited to the read that brought it.
    var body: Body {
        var body = Body()
        let raw = raw
        guard let headEnd else { return body }
        var offsets: [Int] = []  // the raw offset of each body byte
        var index = headEnd + 4
        func line() -> String? {
            guard let end = (index..<max(index, raw.count - 1)).first(where: { raw[$0] == 13 && raw[$0 + 1] == 10 }) else { return nil }
            defer { index = end + 2 }
            return String(decoding: raw[index..<end], as: UTF8.self)
        }
        while let sizeLine = line(), let size = Int(sizeLine.split(separator: ";").first ?? "", radix: 16) {
            if size == 0 {
                body.complete = true
                break
            }
            let end = min(index + size, raw.count)
            body.bytes += raw[index..<end]
            offsets += Array(index..<end)
            if end < index + size { break }  // cut inside this chunk
            index = end + 2
        }
        var consumed = 0
        for read in reads {
            consumed += read.bytes.count
            body.times.append(read.at)
            body.arrived.append(offsets.prefix { $0 < consumed }.count)
        }
        return body
    }

    /// Sends `GET path` with `Connection: close` to 127.0.0.1:`port` and reads until the server closes.
    static func get(port: Int, path: String) async throws -> RawHTTP {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try exchange(port: port, request: "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n") })
            }
        }
    }

    private static func exchange(port: Int, request: String) throws -> RawHTTP {
        let connection = try RawSocket(port: port)
        defer { withExtendedLifetime(connection) {} }
        let fd = connection.fd
        guard connection.send(Array(request.utf8)) else { throw Failure(description: "send: errno \(errno)") }
        var exchange = RawHTTP(reads: [])
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                exchange.reads.append((ContinuousClock.now, Array(buffer[..<count])))
            } else if count == 0 || errno == ECONNRESET {
                return exchange
            } else if errno != EINTR {
                throw Failure(description: "recv: errno \(errno)")
            }
        }
    }
}
