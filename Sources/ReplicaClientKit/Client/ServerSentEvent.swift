import Foundation
import ReplicaCore

/// One Server-Sent Event (the WHATWG `text/event-stream` format).
///
/// ```swift
/// for await event in client.events("/events") {
///     print(event.event, event.id ?? "-", event.data)   // change 42 {"paths": ["/people"]}
/// }
/// ```
public struct ServerSentEvent: Sendable, Hashable {
    /// The event's `id:` field, if it had one: sent back as `Last-Event-ID` when reconnecting.
    public var id: String?
    /// The `event:` field; `message` when absent.
    public var event: String
    /// The `data:` lines, joined with newlines.
    public var data: String

    /// Creates an event.
    ///
    /// ```swift
    /// ServerSentEvent(id: "7", event: "change", data: #"{"paths": ["/people"]}"#)
    /// ```
    public init(id: String? = nil, event: String = "message", data: String) {
        self.id = id
        self.event = event
        self.data = data
    }

    /// The paths the event says changed: a JSON object's `paths` (strings) or `path`, or the data
    /// itself when it is one path (`/people/7`); empty when it names none (every path is then affected).
    ///
    /// ```swift
    /// ServerSentEvent(data: #"{"paths": ["/cars", "/people/1/cars"]}"#).paths   // ["/cars", "/people/1/cars"]
    /// ServerSentEvent(data: "/people/7").paths                                   // ["/people/7"]
    /// ```
    public var paths: [String] {
        let text = data.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("/") && !text.contains("\n") { return [text] }
        guard text.hasPrefix("{"), case .object(let object)? = try? JSONValue(parsing: text) else { return [] }
        if case .array(let items)? = object["paths"] { return items.compactMap(\.stringValue) }
        if case .string(let path)? = object["path"] { return [path] }
        return []
    }
}

/// Reads `text/event-stream` bytes as they arrive, chunk by chunk, into events.
///
/// ```swift
/// var parser = ServerSentEventParser()
/// let events = parser.feed(Array("id: 1\ndata: hello\n\n".utf8))   // [ServerSentEvent(id: "1", data: "hello")]
/// ```
public struct ServerSentEventParser: Sendable {
    /// The last `id:` seen (what `Last-Event-ID` sends on reconnection).
    public private(set) var lastEventID: String?
    /// The last `retry:` the server asked for, in milliseconds.
    public private(set) var retry: Int?
    private var line: [UInt8] = []
    private var afterCarriageReturn = false
    private var atStart = true
    private var eventType = ""
    private var data = ""
    private var hasData = false

    public init() {}

    /// Parses `bytes` and returns the events they complete.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if afterCarriageReturn {
                afterCarriageReturn = false
                if byte == 10 { continue }   // CR LF is one line end
            }
            switch byte {
            case 10:
                if let event = endLine() { events.append(event) }
            case 13:
                afterCarriageReturn = true
                if let event = endLine() { events.append(event) }
            default:
                line.append(byte)
            }
        }
        return events
    }

    private mutating func endLine() -> ServerSentEvent? {
        var bytes = line
        line.removeAll(keepingCapacity: true)
        if atStart {
            atStart = false
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        }
        guard !bytes.isEmpty else { return dispatch() }
        if bytes[0] == UInt8(ascii: ":") { return nil }   // a comment (a keep-alive)
        let text = String(decoding: bytes, as: UTF8.self)
        let field: Substring, value: Substring
        if let colon = text.firstIndex(of: ":") {
            field = text[..<colon]
            var rest = text[text.index(after: colon)...]
            if rest.hasPrefix(" ") { rest = rest.dropFirst() }
            value = rest
        } else {
            field = text[...]
            value = ""
        }
        switch field {
        case "event": eventType = String(value)
        case "data":
            if hasData { data += "\n" }
            data += value
            hasData = true
        case "id" where !value.contains("\u{0}"): lastEventID = String(value)
        case "retry": if let milliseconds = Int(value), milliseconds >= 0 { retry = milliseconds }
        default: break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            eventType = ""
            data = ""
            hasData = false
        }
        guard hasData else { return nil }
        return ServerSentEvent(id: lastEventID, event: eventType.isEmpty ? "message" : eventType, data: data)
    }
}
