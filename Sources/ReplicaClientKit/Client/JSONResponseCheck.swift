import Foundation
import ReplicaCore

/// Tells a response that is not JSON (an HTML error page, plain text) from JSON by its first byte
/// that is not whitespace, whatever its `Content-Type` says: JSON sent as `text/plain` or without
/// a content type still parses, and an HTML page answered with 200 fails naming its content type
/// instead of as a parse error at byte 0.
enum JSONResponseCheck {
    /// Whether `byte` can start a JSON text: `{`, `[`, `"`, `-`, a digit, `t`, `f`, `n`.
    static func canStartJSON(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "\""), UInt8(ascii: "-"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            return true
        default:
            return false
        }
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// The media type of a `Content-Type` header without its parameters (`text/html`).
    static func mediaType(_ headers: HeaderFields) -> String {
        guard let value = headers["Content-Type"] else { return "no Content-Type" }
        let type = value.split(separator: ";", maxSplits: 1).first.map(String.init) ?? value
        let trimmed = type.trimmingCharacters(in: .whitespaces)
        return trimmed.isEmpty ? "no Content-Type" : ErrorBody.printable(trimmed)
    }

    /// `nil` when `bytes` may be JSON (or hold only whitespace), else the error naming the content
    /// type, the status and the body's first bytes.
    static func error(ifNotJSON bytes: [UInt8], response: ClientResponse, request: String) -> ClientError? {
        guard let first = bytes.first(where: { !isWhitespace($0) }), !canStartJSON(first) else { return nil }
        return notJSON(bytes, status: response.status, headers: response.headers, request: request)
    }

    /// `GET https://api.example.com/users: expected JSON, got text/html (200): <!DOCTYPE html>…`
    static func notJSON(_ bytes: [UInt8], status: Int, headers: HeaderFields, request: String) -> ClientError {
        ClientError(.invalidResponse, "expected JSON, got \(mediaType(headers)) (\(status)): \(ErrorBody.excerpt(bytes))",
                    status: status, headers: headers, body: Array(bytes.prefix(1 << 10)), request: request)
    }
}

/// A response body that fails with ``JSONResponseCheck/notJSON(_:status:headers:request:)`` when its
/// first byte that is not whitespace cannot start JSON; its chunks pass through unchanged otherwise.
struct JSONCheckedBody: AsyncSequence, Sendable {
    typealias Element = [UInt8]
    let body: ResponseBody
    let status: Int
    let headers: HeaderFields
    let request: String

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: ResponseBody.AsyncIterator
        let status: Int
        let headers: HeaderFields
        let request: String
        var checked = false

        mutating func next() async throws -> [UInt8]? {
            guard let chunk = try await base.next() else { return nil }
            if checked { return chunk }
            guard let first = chunk.first(where: { !JSONResponseCheck.isWhitespace($0) }) else { return chunk }
            checked = true
            if JSONResponseCheck.canStartJSON(first) { return chunk }
            // Enough of the body to show its beginning.
            var bytes = chunk
            while bytes.count <= 500, let more = try await base.next() { bytes += more }
            throw JSONResponseCheck.notJSON(bytes, status: status, headers: headers, request: request)
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: body.makeAsyncIterator(), status: status, headers: headers, request: request)
    }
}
