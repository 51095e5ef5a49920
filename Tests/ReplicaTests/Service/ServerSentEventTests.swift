import Foundation
import Testing
@testable import Replica

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
