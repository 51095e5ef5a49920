import Dispatch
import Foundation
import ReplicaServer
import Testing
#if canImport(Glibc)
import Glibc
private let streamSocket = Int32(SOCK_STREAM.rawValue)
private let noSignal = Int32(MSG_NOSIGNAL)
#elseif canImport(Darwin)
import Darwin
private let streamSocket = SOCK_STREAM
private let noSignal: Int32 = 0
#endif

private func posixSend(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int {
    send(fd, bytes, count, flags)
}

/// A blocking TCP connection to 127.0.0.1 for sending what HTTP clients will not send.
final class RawSocket: @unchecked Sendable {
    // @unchecked: `fd` is immutable; each test uses a socket from one thread at a time, except that
    // `exchange` sends on one thread while it receives on another, which POSIX sockets allow.
    let fd: Int32

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init(port: Int) throws {
        // The descriptor is stored only once connected. A class whose stored properties are all set
        // runs `deinit` when its init throws, so closing here as well closed the number twice, and the
        // second close could hit a descriptor another thread had opened under that number meanwhile.
        let fd = socket(AF_INET, streamSocket, 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        // Only a bound on a hang: a server starved by a loaded parallel run may take seconds to answer.
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let failure = Failure(description: "connect: errno \(errno)")
            close(fd)
            throw failure
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Sends all of `bytes`; false if the server closed first.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { posixSend(fd, $0.baseAddress, $0.count, noSignal) }
            if sent > 0 { offset += sent } else if sent < 0, errno == EINTR { continue } else { return false }
        }
        return true
    }

    /// Reads until the server closes (or resets) the connection or `limit` passes; returns the bytes and
    /// whether the connection was closed.
    func readToEnd(limit: Duration = .seconds(10)) -> (bytes: [UInt8], closed: Bool) {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                bytes += buffer[..<count]
            } else if count == 0 || errno == ECONNRESET {
                return (bytes, true)
            } else if errno != EINTR && errno != EAGAIN {
                return (bytes, true)
            }
        }
        return (bytes, false)
    }

    /// Reads one response with a `Content-Length` body, leaving the connection open.
    func readResponse() throws -> (status: Int, body: [UInt8]) {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        for _ in 0..<1000 {
            if let reply = RawReply(bytes), let length = reply.header("content-length").flatMap({ Int($0) }),
               reply.body.count >= length {
                return (reply.status, reply.body)
            }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw Failure(description: "connection closed or timed out after \(bytes.count) bytes") }
            bytes += buffer[..<count]
        }
        throw Failure(description: "no complete response")
    }

    /// Connects, sends `request` on one thread while reading on another until the server closes.
    static func exchange(port: Int, _ request: [UInt8]) async throws -> (bytes: [UInt8], closed: Bool) {
        let socket = try await onThread { Result { try RawSocket(port: port) } }.get()
        async let sent = onThread { socket.send(request) }
        let reply = await onThread { socket.readToEnd() }
        _ = await sent
        return reply
    }
}

/// Reads each socket to its end on a thread of its own, started at once, and notes when each one ended.
final class ThreadedReaders: @unchecked Sendable {
    // @unchecked: `replies` is only touched under `lock`; `done` is a semaphore.
    struct Reply: Sendable {
        var bytes: [UInt8]
        var closed: Bool
        var at: ContinuousClock.Instant
    }

    private let lock = NSLock()
    private var replies: [Reply] = []
    private let done = DispatchSemaphore(value: 0)
    private let count: Int

    init(_ sockets: [RawSocket], limit: Duration) {
        count = sockets.count
        for socket in sockets {
            Thread.detachNewThread { [self] in
                let reply = socket.readToEnd(limit: limit)
                let at = ContinuousClock.now
                lock.withLock { replies.append(Reply(bytes: reply.bytes, closed: reply.closed, at: at)) }
                done.signal()
            }
        }
    }

    /// Every socket's reply, once all of them have ended.
    func results() async -> [Reply] {
        await onThread { [self] in
            for _ in 0..<count { done.wait() }
            return lock.withLock { replies }
        }
    }
}

/// Runs blocking socket work on its own thread, never on the concurrency pool (two threads on two cores).
func onThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: work()) }
    }
}

/// An HTTP/1.1 response parsed from raw bytes.
struct RawReply {
    var status: Int
    var headLines: [String]
    var body: [UInt8]

    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 4,
              let end = (0...(bytes.count - 4)).first(where: { bytes[$0] == 13 && bytes[$0 + 1] == 10 && bytes[$0 + 2] == 13 && bytes[$0 + 3] == 10 })
        else { return nil }
        headLines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        guard let code = headLines.first?.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return nil }
        status = code
        body = Array(bytes[(end + 4)...])
    }

    func header(_ name: String) -> String? {
        for line in headLines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name { return parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }

    var json: JSONValue? { try? JSONValue(parsing: body) }
}

@Suite("MockServer transport: header-read and idle timeouts, JSON errors for requests the HTTP decoder rejects")
struct MockServerTransportTests {
    @Test("50 connections that sent half a request line are answered 408 and closed; other requests stay quick")
    func headerReadTimeout() async throws {
        // 1 s each: one after another, the 50 heads would take 50 s, far beyond what a loaded parallel
        // run adds (a quick request has taken 14 s there), so the bounds below hold on a busy machine
        // and still fail a server that serializes them.
        let options = MockServerOptions(headerReadTimeout: .seconds(1), idleTimeout: .seconds(120))
        try await withServer(try Fixture.peopleResources, options: options) { (server: MockServer, client: Client) async throws in
            let port = server.port
            let started = ContinuousClock.now
            let sockets = try await onThread { Result { try (0..<50).map { _ in try RawSocket(port: port) } } }.get()
            // Each socket is read on a thread of its own, started before the heads are sent: a reader
            // that waited for the concurrency pool (two threads, busy in a parallel run) would find the
            // connection closed seconds late and time the pool, not the server.
            let readers = ThreadedReaders(sockets, limit: .seconds(60))
            for socket in sockets { #expect(socket.send(Array("GET /peo".utf8))) }  // 8 bytes: never blocks
            // Meanwhile other connections are answered quickly.
            var slowest = Duration.zero
            for n in 0..<10 {
                let sent = ContinuousClock.now
                #expect(try await client.get("/people?n=\(n)").status == 200)
                slowest = max(slowest, sent.duration(to: .now))
            }
            // A server that waited for the half-sent heads one by one would take their 50 header
            // timeouts, 50 s; a loaded parallel run has taken up to 14 s to answer a quick request.
            #expect(slowest < .seconds(30), "slowest \(slowest)")
            let results = await readers.results()
            #expect(results.count == 50)
            for result in results {
                #expect(result.closed, "a half-sent request head was still open after 60 s")
                // Each head's 1 s runs on its own: one after another, 50 of them take 50 s.
                let elapsed = started.duration(to: result.at)
                #expect(elapsed >= .milliseconds(950) && elapsed < .seconds(30), "closed after \(elapsed)")
                let reply = RawReply(result.bytes)
                #expect(reply?.status == 408)
                #expect(reply?.json?["error"]?["code"] == "headerTimeout")
                #expect(reply?.json?["error"]?["status"] == 408)
            }
            #expect(try await client.get("/people").status == 200)
        }
    }

    @Test("a keep-alive connection with no request in progress is closed after the idle timeout")
    func idleTimeout() async throws {
        // Long enough that a loaded machine still serves the request before the connection counts as idle:
        // with the whole suite running in parallel on 2 cores, the server's event loop can go seconds
        // without running (a 1 s idle timeout, then a 3 s one, closed the connection before its request
        // was read there).
        let options = MockServerOptions(headerReadTimeout: .seconds(60), idleTimeout: .seconds(10))
        try await withServer(try Fixture.peopleResources, options: options) { (server: MockServer, _: Client) async throws in
            let port = server.port
            let socket = try await onThread { Result { try RawSocket(port: port) } }.get()
            #expect(socket.send(Array("GET /people HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)))
            // Both times are taken on the reading thread: a loaded test process may resume late.
            let (answered, idleSince) = try await onThread { Result { (try socket.readResponse(), ContinuousClock.now) } }.get()
            #expect(answered.status == 200)
            let (rest, closedAt) = await onThread { (socket.readToEnd(limit: .seconds(30)), ContinuousClock.now) }
            #expect(rest.closed)
            #expect(rest.bytes.isEmpty)
            let idle = idleSince.duration(to: closedAt)
            #expect(idle >= .milliseconds(9800) && idle < .seconds(30), "closed after \(idle)")
            // A connection that never sends anything is closed too.
            let silent = try await onThread { Result { try RawSocket(port: port) } }.get()
            let quiet = await onThread { silent.readToEnd(limit: .seconds(30)) }
            #expect(quiet.closed)
        }
    }

    /// Requests NIO's HTTP decoder rejects, and the answer each gets.
    enum RejectedHead: String, CaseIterable, CustomTestStringConvertible {
        case unknownMethod, tenThousandHeaders, megabyteURL, hugeHeader, malformedHeader

        var testDescription: String { rawValue }

        var request: String {
            switch self {
            case .unknownMethod: "FOO /people HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            case .tenThousandHeaders:
                "GET /people HTTP/1.1\r\nHost: 127.0.0.1\r\n" + (0..<10_000).map { "X-Header-\($0): v\r\n" }.joined() + "\r\n"
            case .megabyteURL: "GET /people?q=" + String(repeating: "a", count: 1 << 20) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            case .hugeHeader: "GET /people HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: " + String(repeating: "c", count: 100_000) + "\r\n\r\n"
            case .malformedHeader: "GET /people HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: x\r\n\r\n"
            }
        }

        var expected: (status: Int, code: String, message: String) {
            switch self {
            case .unknownMethod: (400, "unknownMethod", "unknown method 'FOO' in the request line")
            case .tenThousandHeaders: (431, "tooManyHeaders", "too many header fields: at most 1000")
            case .megabyteURL: (414, "uriTooLong", "request line too long: the URL may have at most 81920 bytes")
            case .hugeHeader: (431, "headTooLarge", "request head too large: at most 81920 bytes of URL and headers")
            case .malformedHeader: (400, "malformedRequest", "malformed request head")
            }
        }
    }

    @Test("unknown method, 10,000 headers, a 1 MB URL, a 100 KB header, a bad header: JSON errors saying what was wrong",
          arguments: RejectedHead.allCases)
    func rejectedHeads(_ head: RejectedHead) async throws {
        let (request, (status, code, message)) = (head.request, head.expected)
        try await withServer(try Fixture.peopleResources) { (server: MockServer, client: Client) async throws in
            let (bytes, closed) = try await RawSocket.exchange(port: server.port, Array(request.utf8))
            #expect(closed)
            let reply = try #require(RawReply(bytes), "no response: \(bytes.count) bytes")
            #expect(reply.status == status)
            #expect(reply.header("content-type") == "application/json; charset=utf-8")
            #expect(reply.header("connection") == "close")
            let error = try #require(reply.json?["error"], "body: \(String(decoding: reply.body, as: UTF8.self))")
            #expect(error["status"] == .int(Int64(status)))
            #expect(error["code"] == .string(code))
            #expect(error["message"]?.stringValue?.hasPrefix(message) == true, "\(error)")
            #expect(try await client.get("/people").status == 200)
        }
    }
}
