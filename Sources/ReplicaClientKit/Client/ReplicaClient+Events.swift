import Foundation
import Logging
import ReplicaCore

extension ReplicaClient {
    /// Follows a Server-Sent Events stream (a route's ``PushSource``): events as they arrive,
    /// reconnecting when the connection drops or fails (after the server's `retry:` delay, 1 s by
    /// default; while it keeps failing, backing off from that delay, 100 ms at least, to 30 s)
    /// with `Last-Event-ID` set to the last event's id, until the consumer stops iterating or its
    /// task is cancelled.
    ///
    /// ```swift
    /// for await event in client.events("/events") {
    ///     for path in event.paths { client.poke(path) }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - path: The stream's path under the base URL (`/events`), or an absolute URL.
    ///   - lastEventID: The id to resume after, if known.
    ///   - headers: Headers for the stream's requests, over the configuration's.
    ///   - connection: Told each time the stream connects (`true`, with the status 200) and when that connection
    ///     drops (`false`); attempts that fail to connect are retried without a call.
    /// - Returns: The events; the stream never fails, it reconnects.
    public func events(_ path: String, lastEventID: String? = nil, headers: HeaderFields = HeaderFields(),
                       connection: (@Sendable (Bool) -> Void)? = nil) -> AsyncStream<ServerSentEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ServerSentEvent.self, bufferingPolicy: .bufferingNewest(1024))
        let task = Task {
            var lastID = lastEventID
            var failures = 0
            var retry = Duration.seconds(1)
            while !Task.isCancelled {
                var parser = ServerSentEventParser()
                var connected = false
                do {
                    var request = ClientRequest(method: .get, url: try eventsURL(path), timeout: .seconds(86_400), route: nil)
                    confine(&request)
                    // A stream has no end and may be quiet for long: it is bounded by its reconnections, not its size.
                    request.bodyLimits = BodyLimits(idleTimeout: .seconds(86_400), deadline: .seconds(366 * 86_400), maxBytes: .max)
                    request.headers = try await baseHeaders()
                    request.headers["Accept"] = "text/event-stream"
                    request.headers["Cache-Control"] = "no-cache"
                    for (name, value) in headers { request.headers[name] = value }
                    if request.headers["User-Agent"] == nil { request.headers["User-Agent"] = ClientConfiguration.defaultUserAgent }
                    if let lastID { request.headers["Last-Event-ID"] = lastID }
                    let response = try await send(request)
                    guard response.status == 200 else {
                        throw ClientError(.invalidResponse, "the event stream answered \(response.status)", status: response.status,
                                          request: "GET \(request.url.absoluteString)")
                    }
                    connected = true
                    connection?(true)
                    failures = 0
                    for try await chunk in response.body {
                        for event in parser.feed(chunk) { continuation.yield(event) }
                        lastID = parser.lastEventID ?? lastID
                        if let milliseconds = parser.retry { retry = .milliseconds(milliseconds) }
                    }
                    // The consumer stopped (the body ends when the task is cancelled): not a drop.
                    if Task.isCancelled { break }
                } catch {
                    if Task.isCancelled { break }
                    failures += 1
                    Logger(label: "replica.events").debug("event stream \(path): \(error)")
                }
                lastID = parser.lastEventID ?? lastID
                if let milliseconds = parser.retry { retry = .milliseconds(milliseconds) }
                // A drop is told once per connection; attempts that never connected are not drops.
                if connected { connection?(false) }
                // Failed attempts back off from the server's delay, and from 100 ms at least: a
                // `retry: 0` must not spin against a server that is down.
                let backoff = failures == 0 ? retry
                    : min(.seconds(30), max(retry, .milliseconds(100)) * Int(min(32, 1 << min(failures - 1, 5))))
                try? await Task.sleep(for: backoff)
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// The URL of an event stream: an absolute URL as it is, a path under the current base URL.
    func eventsURL(_ path: String) throws -> URL {
        if path.hasPrefix("http://") || path.hasPrefix("https://") {
            guard let url = URL(string: path) else { throw ClientError(.invalidRequest, "invalid URL \(path)") }
            return url
        }
        return try url(for: path, query: [])
    }
}
