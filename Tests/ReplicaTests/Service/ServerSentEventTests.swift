import Foundation
import Replica
import Testing
@testable import ReplicaClientKit
@testable import ReplicaCore
@testable import ReplicaSQLite

@Suite("Server-Sent Events and pokes")
struct ServerSentEventTests {
    @Test("the parser reads events split anywhere, CRLF and CR line ends, a BOM, comments, multi-line data, id and retry")
    func parser() {
        let text = "\u{FEFF}: keep-alive\r\nretry: 2500\r\nid: 7\r\nevent: change\r\ndata: {\"paths\":\r\ndata:  [\"/people\"]}\r\n\r\n"
            + "data:plain\rid\r\r" + "id: 9\n\n" + "event: ignored-without-data\n\n" + "data: last\n\n"
        let bytes = Array(text.utf8)
        // Every split point gives the same events.
        for split in [1, 2, 3, 7, 19, bytes.count / 2, bytes.count - 1] {
            var parser = ServerSentEventParser()
            let events = parser.feed(bytes[..<split]) + parser.feed(bytes[split...])
            #expect(events == [
                ServerSentEvent(id: "7", event: "change", data: "{\"paths\":\n [\"/people\"]}"),
                ServerSentEvent(id: "", event: "message", data: "plain"),
                ServerSentEvent(id: "9", event: "message", data: "last"),
            ], "split at \(split)")
            #expect(parser.retry == 2500)
            #expect(parser.lastEventID == "9")
        }
    }

    @Test("a stream that drops is told once, however many attempts fail before it connects again; it resumes after Last-Event-ID")
    func reconnection() async throws {
        // The last connection stays open (its body never ends) until the consumer stops.
        let (open, held) = AsyncStream.makeStream(of: [UInt8].self)
        defer { held.finish() }
        held.yield(Array("id: 2\ndata: /posts/2\n\n".utf8))
        let transport = ScriptedTransport { _, index in
            switch index {
            // Connects, sends an event and a retry delay of 0 ms, then the body ends: a drop.
            case 1: return json(200, "retry: 0\nid: 1\ndata: /posts\n\n")
            // The server is down for two attempts (retried after 100 ms and 200 ms: the floor of a failure's backoff).
            case 2, 3: throw ClientError(.connection, "connection refused")
            default: return ClientResponse(status: 200, body: ResponseBody(open))
            }
        }
        let (client, _) = try ClientTests.client(transport)
        let connections = Locked<[String]>([])
        var received: [String] = []
        for await event in client.events("/events", connection: { up in connections.withLock { $0.append(up ? "up" : "down") } }) {
            received.append("\(event.id ?? "-") \(event.data)")
            if received.count == 2 { break }
        }
        #expect(received == ["1 /posts", "2 /posts/2"])
        #expect(connections.value == ["up", "down", "up"])
        let requests = transport.requests
        #expect(requests.map { $0.headers["Last-Event-ID"] } == [nil, "1", "1", "1"])
        #expect(requests.allSatisfy { $0.headers["Accept"] == "text/event-stream" && $0.url.path == "/api/events" })
    }

    @Test("an event names paths by a JSON object's paths or path, or as its data; none means every path")
    func eventPaths() {
        #expect(ServerSentEvent(data: #"{"paths": ["/cars", "/people/1/cars"], "key": 10}"#).paths == ["/cars", "/people/1/cars"])
        #expect(ServerSentEvent(data: #"{"path": "/people"}"#).paths == ["/people"])
        #expect(ServerSentEvent(data: "/people/7").paths == ["/people/7"])
        #expect(ServerSentEvent(data: "something changed").paths.isEmpty)
    }

    @Test("a change affects its own path and the collection it is a direct member of")
    func affects() {
        #expect(PokeBoard.affects("/people", "/people"))
        #expect(PokeBoard.affects("/people/7", "/people"))
        #expect(PokeBoard.affects("/people/7?x=1", "/people?page=2"))
        #expect(PokeBoard.affects("/people/", "/people"))
        #expect(PokeBoard.affects("/", "/people/1/cars"))
        #expect(!PokeBoard.affects("/people/1/cars", "/people"))
        #expect(!PokeBoard.affects("/people", "/people/1/cars"))
        #expect(!PokeBoard.affects("/peoples", "/people"))
        #expect(!PokeBoard.affects("/cars/10", "/people/1/cars"))
    }
}
