import Foundation
import ReplicaServer
import Testing

/// The mock server's limits on what one request may ask (issue 58, item 9): filters and sort keys get a
/// 400 naming the limit on every store, a chunked body over the limit its 413 at once, a body that
/// trickles a 408 after the body timeout, and `Link` headers repeat only the parameters the server took.
@Suite("MockServer: request limits")
struct MockServerLimitTests {
    static let stores = ["memory", "sqlite", "postgres"]

    @Test("more than 256 filters or 64 sort keys are a 400 naming the limit on every store; at the limit, a 200",
          arguments: stores)
    func filterAndSortLimits(kind: String) async throws {
        try await withServer(try Fixture.peopleResources, options: MockServerOptions(store: try await Fixture.store(kind))) { _, client in
            #expect(try await client.post("/people", #"{"name": "ann"}"#).status == 201)
            let filters = { (count: Int) in Array(repeating: "name=ann", count: count).joined(separator: "&") }
            let many = try await client.get("/people?" + filters(999))
            #expect(many.status == 400)
            #expect(many.json?["error"]?["code"] == "tooManyFilters")
            #expect(many.json?["error"]?["message"] == "too many filters: at most 256 property filters in one request")
            let most = try await client.get("/people?" + filters(256))
            #expect(most.status == 200)
            #expect(most.json?.arrayValue?.count == 1)

            let sort = { (count: Int) in Array(repeating: "name", count: count).joined(separator: ",") }
            let sorted = try await client.get("/people?_sort=" + sort(2000))
            #expect(sorted.status == 400)
            #expect(sorted.json?["error"]?["code"] == "tooManySortKeys")
            #expect(sorted.json?["error"]?["message"] == "_sort: too many sort keys: at most 64, not 2000")
            let sortedMost = try await client.get("/people?_sort=" + sort(64))
            #expect(sortedMost.status == 200)
            #expect(sortedMost.json?.arrayValue?.count == 1)
        }
    }

    @Test("Link headers repeat the filters and sort the server took, not unknown parameters")
    func linkKeepsKnownParameters() async throws {
        try await withServer(try Fixture.peopleResources) { _, client in
            for name in ["ann", "bob", "ann"] { #expect(try await client.post("/people", #"{"name": "\#(name)"}"#).status == 201) }
            let junk = String(repeating: "x", count: 60_000)
            let page = try await client.get("/people?_page=1&_limit=1&junk=\(junk)&name=ann&_sort=id&other=1")
            #expect(page.status == 200)
            let link = try #require(page.header("Link"))
            #expect(link.count < 1_000, "a Link header of \(link.count) bytes")
            #expect(!link.contains("junk") && !link.contains("other"))
            #expect(link.contains("/people?name=ann&_sort=id&_page=2&_limit=1>; rel=\"next\""), "\(link)")
        }
    }

    @Test("a chunked body over the limit is answered 413 as soon as it passes it, and the connection closes")
    func chunkedBodyOverLimit() async throws {
        try await withServer(try Fixture.peopleResources, options: MockServerOptions(maxBodySize: 1024)) { server, client in
            let port = server.port
            let socket = try await onThread { Result { try RawSocket(port: port) } }.get()
            let head = "POST /people HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            let chunk = String(repeating: " ", count: 4096)
            // 4 KiB of a body that never ends: the answer must not wait for its end.
            #expect(socket.send(Array((head + String(chunk.utf8.count, radix: 16) + "\r\n" + chunk + "\r\n").utf8)))
            let reply = await onThread { socket.readToEnd(limit: .seconds(60)) }
            #expect(reply.closed)
            let answer = RawReply(reply.bytes)
            #expect(answer?.status == 413)
            #expect(answer?.json?["error"]?["code"] == "bodyTooLarge")
            #expect(answer?.json?["error"]?["message"] == "the request body is larger than 1024 bytes (the body limit, --max-body)")
            #expect(answer?.header("connection") == "close")
            #expect(try await client.post("/people", #"{"name": "small"}"#).status == 201)
        }
    }

    @Test("a body trickling a byte at a time is answered 408 once the body timeout passes, and the connection closes")
    func tricklingBody() async throws {
        var options = MockServerOptions(idleTimeout: .seconds(300))
        options.bodyTimeout = .seconds(2)
        try await withServer(try Fixture.peopleResources, options: options) { server, client in
            let port = server.port
            let socket = try await onThread { Result { try RawSocket(port: port) } }.get()
            #expect(socket.send(Array("POST /people HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{".utf8)))
            let started = ContinuousClock.now
            // A byte every 200 ms, far inside the idle timeout, until the server closes.
            let trickle = Thread {
                while socket.send(Array(" ".utf8)) { Thread.sleep(forTimeInterval: 0.2) }
            }
            trickle.start()
            let (reply, endedAt) = await onThread { (socket.readToEnd(limit: .seconds(120)), ContinuousClock.now) }
            #expect(reply.closed)
            let elapsed = started.duration(to: endedAt)
            #expect(elapsed >= .milliseconds(1900) && elapsed < .seconds(100), "answered after \(elapsed)")
            let answer = RawReply(reply.bytes)
            #expect(answer?.status == 408)
            #expect(answer?.json?["error"]?["code"] == "bodyTimeout")
            #expect(answer?.json?["error"]?["message"]
                    == "the request body was not complete within 2 s (the body timeout, --body-timeout)")
            #expect(try await client.get("/people").status == 200)
        }
    }
}
