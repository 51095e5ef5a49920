import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

extension MockServer {
    /// `GET /events`: the change feed as Server-Sent Events, one per write, until the client
    /// goes or the server stops:
    ///
    /// ```
    /// id: 42
    /// event: change
    /// data: {"resource":"cars","key":10,"paths":["/cars","/cars/10","/people/1/cars"],"cursor":"k3f9a2.42"}
    /// ```
    ///
    /// With `Last-Event-ID`, the changes after that id come first; when the feed no longer holds
    /// them all, a `reset` event says that anything may have changed. Served unless a resource is
    /// named `events`.
    func eventStream(_ request: Request) -> Response? {
        guard request.method == .get, request.uri.path == "/events",
              registry.withLock({ $0.resources["events"] == nil }) else { return nil }
        let feed = changes
        let lastID = HTTPField.Name("Last-Event-ID").flatMap { request.headers[$0] }
        // Subscribed before the replay is read: a change in between comes once, from one or the other.
        let live = feed.subscribe()
        let replay: [MockChangeFeed.Change]? = lastID.map { text in UInt64(text).flatMap { feed.changes(after: $0) } } ?? []
        let body = ResponseBody { writer in
            try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
            var last: UInt64 = 0
            if let replay {
                for change in replay {
                    try await writer.write(ByteBuffer(string: Self.event(change, epoch: feed.epoch)))
                    last = change.sequence
                }
            } else {
                try await writer.write(ByteBuffer(string: "id: \(feed.sequence)\nevent: reset\ndata: {\"paths\":[\"/\"]}\n\n"))
            }
            for await change in live where change.sequence > last {
                try await writer.write(ByteBuffer(string: Self.event(change, epoch: feed.epoch)))
            }
            try await writer.finish(nil)
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: body)
    }

    /// One change as an event.
    static func event(_ change: MockChangeFeed.Change, epoch: String) -> String {
        let data: JSONValue = .object([
            "resource": .string(change.resource),
            "key": change.key,
            "deleted": .bool(change.deletedObject != nil),
            "paths": .array(change.paths.map { .string($0) }),
            "cursor": .string("\(epoch).\(change.sequence)"),
        ])
        return "id: \(change.sequence)\nevent: change\ndata: \(data.serialized())\n\n"
    }
}
