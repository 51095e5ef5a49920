import Hummingbird
import NIOCore

extension MockServer {
    /// `answer` with its JSON body sent under a body fault (`.stallBody`, `.truncateBody`,
    /// `.malformedBody`); status and headers stay those of the intact answer, except that a stalled
    /// or truncated body is chunked (no Content-Length) so the client cannot finish early.
    ///
    /// ```swift
    /// answer = faulty(answer, body: body, fault: .truncateBody(afterBytes: 10), channel: channel)
    /// ```
    /// - Parameters:
    ///   - answer: the response as it would be sent without the fault.
    ///   - body: its JSON body.
    ///   - fault: the body fault; any other kind leaves `answer` as it is.
    ///   - channel: the connection, closed by `.truncateBody`.
    /// - Returns: the response to send.
    func faulty(_ answer: Response, body: JSONValue, fault: MockFault.Kind, channel: any Channel) -> Response {
        let bytes = body.serializedBytes() + [10]
        var answer = answer
        switch fault {
        case .stallBody(let afterBytes, let duration):
            let split = min(max(0, afterBytes), bytes.count)
            let limit = min(duration, options.stallLimit)
            let stalls = self.stalls
            answer.body = ResponseBody { writer in
                if split > 0 { try await writer.write(ByteBuffer(bytes: bytes[..<split])) }
                await stalls.wait(limit: limit)
                if split < bytes.count { try await writer.write(ByteBuffer(bytes: bytes[split...])) }
                try await writer.finish(nil)
            }
            answer.headers[.contentLength] = nil  // chunked: the stall is mid-body
        case .truncateBody(let afterBytes):
            let split = min(max(0, afterBytes), bytes.count)
            answer.body = ResponseBody { writer in
                if split > 0 { try await writer.write(ByteBuffer(bytes: bytes[..<split])) }
                // No final chunk: closing here leaves the client with a body it knows is incomplete.
                channel.close(mode: .all, promise: nil)
                throw MockTruncatedBody(sent: split, length: bytes.count)
            }
            answer.headers[.contentLength] = nil  // chunked: without its last chunk the body never looks complete
        case .malformedBody:
            answer.body = ResponseBody(byteBuffer: ByteBuffer(bytes: Self.malformed(bytes)))
        case .status, .dropConnection, .stall:
            break
        }
        return answer
    }

    /// JSON text made invalid at its very end: a `,` before the final `]` or `}`, or, for a body
    /// that does not end in one, a stray `}` after it.
    ///
    /// ```swift
    /// MockServer.malformed(Array(#"[{"id":1}]"#.utf8))   // [{"id":1},]
    /// ```
    static func malformed(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        let last = bytes.lastIndex { $0 != 10 && $0 != 13 && $0 != 32 && $0 != 9 }
        if let last, bytes[last] == UInt8(ascii: "]") || bytes[last] == UInt8(ascii: "}") {
            bytes.insert(UInt8(ascii: ","), at: last)
        } else {
            bytes.insert(UInt8(ascii: "}"), at: last.map { $0 + 1 } ?? bytes.endIndex)
        }
        return bytes
    }
}

/// Ends a response body cut short by a `.truncateBody` fault, so the server drops the connection.
struct MockTruncatedBody: Error, CustomStringConvertible {
    /// The bytes sent.
    var sent: Int
    /// The bytes the whole body had.
    var length: Int

    var description: String { "body truncated by a fault after \(sent) of \(length) bytes" }
}
