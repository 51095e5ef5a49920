import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// The mock server's HTTP/1.1 connections: Hummingbird's `HTTP1Channel` pipeline plus a request-head
/// timeout and JSON error answers for requests NIO's decoder rejects.
///
/// Pipeline, socket first: `MockHeadTimeoutHandler` (bytes) → NIO's HTTP/1 decoder and encoder →
/// `HTTP1ToHTTPServerCodec` → `MockTransportErrorHandler` → Hummingbird's `HTTPConnectionStateHandler`
/// (idle timeout) → the async channel Hummingbird reads requests from.
///
/// ```swift
/// let app = Application(responder: responder, server: MockHTTPChannel.builder(options: options))
/// ```
struct MockHTTPChannel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    /// The longest request line URL, and the longest single header line (name and value), in bytes.
    static let maxHeaderFieldSize = 80 * 1024
    /// The most bytes of URL, header names and header values one request head may have.
    static let maxHeadSize = 80 * 1024
    /// The most header fields one request may have.
    static let maxHeaderCount = 1000

    let responder: HTTPChannelHandler.Responder
    let headerReadTimeout: TimeAmount
    let bodyTimeout: TimeAmount
    let idleTimeout: Duration

    /// The server builder for `Application`.
    static func builder(options: MockServerOptions) -> HTTPServerBuilder {
        let headerReadTimeout = TimeAmount(options.headerReadTimeout)
        let bodyTimeout = TimeAmount(options.bodyTimeout)
        let idleTimeout = options.idleTimeout
        return HTTPServerBuilder { responder in
            MockHTTPChannel(responder: responder, headerReadTimeout: headerReadTimeout, bodyTimeout: bodyTimeout,
                            idleTimeout: idleTimeout)
        }
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let connection = MockConnectionState()
            var limits = NIOHTTPDecoderLimitConfiguration()
            limits.maxHeaderFieldSize = Self.maxHeaderFieldSize
            limits.maxHeaderListSize = Self.maxHeadSize
            limits.maxHeaderFieldCount = Self.maxHeaderCount
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(MockHeadTimeoutHandler(connection: connection, timeout: headerReadTimeout))
            try pipeline.configureHTTPServerPipeline(
                withPipeliningAssistance: false,
                withErrorHandling: false,  // MockTransportErrorHandler answers parse errors
                withOutboundHeaderValidation: false,
                withEncoderConfiguration: .init(),
                withDecoderLimitConfiguration: limits
            )
            try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
            try pipeline.addHandler(MockTransportErrorHandler(connection: connection, bodyTimeout: bodyTimeout))
            try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: idleTimeout, logger: logger))
            return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
        }
    }

    func handle(value asyncChannel: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: asyncChannel, logger: logger)
    }
}

/// What the two ends of one connection's pipeline share; used only on the connection's event loop.
final class MockConnectionState {
    /// A request head was decoded and its `.end` not yet.
    var requestOpen = false
    /// Requests whose response has not ended yet.
    var responsesPending = 0
    /// Bytes of a new request head have arrived (the head timeout runs) and the head is not decoded yet.
    var headStarted = false
    /// The connection is being closed by a timeout or an error answer: later errors are not answered.
    var closing = false
    /// The head timeout, while `headStarted`.
    var timer: Scheduled<Void>?
    /// The body deadline, from a request's head to its end.
    var bodyTimer: Scheduled<Void>?
    /// The answer being written says `Connection: close`.
    var answerCloses = false
    /// What the started head looked like, to say which limit it broke.
    var headBytes = 0
    var headLines = 0
    var firstLineLength: Int?
    var firstBytes: [UInt8] = []

    /// Neither reading a request nor answering one: bytes now start a new head.
    var isIdle: Bool { !requestOpen && responsesPending == 0 }

    func startHead() {
        headStarted = true
        headBytes = 0
        headLines = 0
        firstLineLength = nil
        firstBytes = []
    }

    func headReceived() {
        headStarted = false
        timer?.cancel()
        timer = nil
    }

    /// Closes after an error answer the way servers must so the client can read it: output first (the
    /// client sees the answer, then end of stream), input drained and dropped, the whole connection after
    /// `linger` or as soon as the client closes. Closing at once could reset the connection while the client
    /// is still sending (a long URL, many headers), and a reset can discard the answer before it is read.
    func closeLingering(_ context: ChannelHandlerContext, linger: TimeAmount = .seconds(2)) {
        closing = true
        context.close(mode: .output, promise: nil)
        context.eventLoop.assumeIsolated().scheduleTask(in: linger) { context.close(promise: nil) }
    }

    /// Counts a chunk of a started head: bytes, lines, the first line's length and first bytes.
    func count(_ buffer: ByteBuffer) {
        buffer.withUnsafeReadableBytes { bytes in
            for byte in bytes {
                if firstLineLength == nil {
                    if byte == 10 { firstLineLength = headBytes } else if firstBytes.count < 64 { firstBytes.append(byte) }
                }
                if byte == 10 { headLines += 1 }
                headBytes += 1
            }
        }
    }
}

/// First in the pipeline: starts the head timeout when a request's first bytes arrive on an idle
/// connection, and answers 408 with a JSON body and closes when the head is not complete in time.
final class MockHeadTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let connection: MockConnectionState
    private let timeout: TimeAmount

    init(connection: MockConnectionState, timeout: TimeAmount) {
        self.connection = connection
        self.timeout = timeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        if !connection.headStarted, connection.isIdle, !connection.closing, buffer.readableBytes > 0 {
            connection.startHead()
            let seconds = Double(timeout.nanoseconds) / 1e9
            connection.timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [connection] in
                guard connection.headStarted, !connection.closing else { return }
                connection.closing = true
                connection.headReceived()
                let error = MockHTTPError(status: 408, code: "headerTimeout",
                                          message: "the request head was not complete within \(MockTransportErrorHandler.format(seconds)) s")
                context.writeAndFlush(NIOAny(MockTransportErrorHandler.rawResponse(error)))
                    .assumeIsolated().whenComplete { _ in connection.closeLingering(context) }
            }
        }
        if connection.headStarted { connection.count(buffer) }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.closing = true
        connection.headReceived()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        connection.headReceived()
    }
}

/// After the HTTP codec: tracks requests and responses, and answers a request head NIO could not
/// decode (unknown method, head over the limits, malformed) with the server's JSON error shape.
final class MockTransportErrorHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let connection: MockConnectionState
    private let bodyTimeout: TimeAmount

    init(connection: MockConnectionState, bodyTimeout: TimeAmount) {
        self.connection = connection
        self.bodyTimeout = bodyTimeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !connection.closing else { return }  // the rest of a rejected request
        switch unwrapInboundIn(data) {
        case .head:
            connection.headReceived()
            connection.requestOpen = true
            connection.responsesPending += 1
            startBodyDeadline(context)
        case .body:
            break
        case .end:
            connection.requestOpen = false
            connection.bodyTimer?.cancel()
            connection.bodyTimer = nil
        }
        context.fireChannelRead(data)
    }

    /// However steadily a body trickles in, it must end within `bodyTimeout` of its head: then the
    /// reader of the body gets ``MockBodyTimeout`` (answered 408 with `Connection: close`), or, when the
    /// answer has already gone out, the connection closes.
    private func startBodyDeadline(_ context: ChannelHandlerContext) {
        connection.bodyTimer?.cancel()
        let timeout = bodyTimeout
        connection.bodyTimer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [connection] in
            connection.bodyTimer = nil
            guard connection.requestOpen, !connection.closing, context.channel.isActive else { return }
            if connection.responsesPending > 0 {
                context.fireErrorCaught(MockBodyTimeout(seconds: Double(timeout.nanoseconds) / 1e9))
            } else {
                connection.closeLingering(context)
            }
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head):
            connection.answerCloses = head.headerFields[.connection]?.lowercased() == "close"
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            connection.responsesPending -= 1
            // An answer given before its request's body ended (413 for a body over the limit, 408 for one too
            // slow) closes the connection: the rest of the body is dropped, not read to its end.
            guard connection.answerCloses, connection.requestOpen, !connection.closing else {
                return context.write(data, promise: promise)
            }
            connection.closing = true
            connection.bodyTimer?.cancel()
            connection.bodyTimer = nil
            let written = promise ?? context.eventLoop.makePromise()
            context.writeAndFlush(data, promise: written)
            written.futureResult.assumeIsolated().whenComplete { [connection] _ in connection.closeLingering(context) }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.bodyTimer?.cancel()
        connection.bodyTimer = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // After an error answer or a timeout: the decoder's complaints about the bytes still arriving.
        if connection.closing { return }
        // Errors inside a request being read or answered belong to it (its body reader reports them).
        guard connection.isIdle, error is HTTPParserError || error is HTTP1TypeConversionError, context.channel.isActive else {
            return context.fireErrorCaught(error)
        }
        let answer = Self.describe(error, connection: connection)
        connection.closing = true
        connection.headReceived()
        let body = Self.jsonBody(answer)
        var fields = HTTPFields()
        fields[.contentType] = "application/json; charset=utf-8"
        fields[.contentLength] = String(body.readableBytes)
        fields[.connection] = "close"
        let status = HTTPResponse.Status(code: answer.status, reasonPhrase: Self.reason(answer.status))
        context.write(wrapOutboundOut(.head(HTTPResponse(status: status, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { [connection] _ in
            connection.closeLingering(context)
        }
    }

    /// The answer for a head NIO rejected, naming the limit it broke when the bytes tell.
    static func describe(_ error: any Error, connection: MockConnectionState) -> MockHTTPError {
        if let error = error as? HTTPParserError {
            switch error {
            case .invalidMethod:
                let token = connection.firstBytes.prefix { $0 != 32 && $0 != 13 && $0 != 10 }
                let method = String(decoding: token, as: UTF8.self)
                return MockHTTPError(status: 400, code: "unknownMethod",
                                     message: "unknown method\(method.isEmpty ? "" : " '\(method)'") in the request line")
            case .headerOverflow:
                if connection.headStarted, connection.firstLineLength.map({ $0 > MockHTTPChannel.maxHeaderFieldSize }) ?? true {
                    return MockHTTPError(status: 414, code: "uriTooLong",
                                         message: "request line too long: the URL may have at most \(MockHTTPChannel.maxHeaderFieldSize) bytes")
                }
                if connection.headStarted, connection.headLines > MockHTTPChannel.maxHeaderCount {
                    return MockHTTPError(status: 431, code: "tooManyHeaders",
                                         message: "too many header fields: at most \(MockHTTPChannel.maxHeaderCount)")
                }
                return MockHTTPError(status: 431, code: "headTooLarge",
                                     message: "request head too large: at most \(MockHTTPChannel.maxHeadSize) bytes of URL and headers, "
                                         + "\(MockHTTPChannel.maxHeaderFieldSize) bytes per header and \(MockHTTPChannel.maxHeaderCount) headers")
            default:
                return MockHTTPError(status: 400, code: "malformedRequest", message: "malformed request head: \(error)")
            }
        }
        return MockHTTPError(status: 400, code: "malformedRequest", message: "malformed request head: \(error)")
    }

    static func jsonBody(_ error: MockHTTPError) -> ByteBuffer {
        var bytes = Array(error.body.serialized().utf8)
        bytes.append(10)
        return ByteBuffer(bytes: bytes)
    }

    /// A whole HTTP/1.1 response for `error`, as bytes, for handlers in front of the HTTP encoder.
    static func rawResponse(_ error: MockHTTPError) -> ByteBuffer {
        let body = jsonBody(error)
        var buffer = ByteBuffer(string: "HTTP/1.1 \(error.status) \(reason(error.status))\r\n"
            + "Content-Type: application/json; charset=utf-8\r\nContent-Length: \(body.readableBytes)\r\nConnection: close\r\n\r\n")
        buffer.writeImmutableBuffer(body)
        return buffer
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 408: return "Request Timeout"
        case 414: return "URI Too Long"
        case 431: return "Request Header Fields Too Large"
        default: return "Bad Request"
        }
    }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}

/// What the reader of a request body gets when the body did not end within
/// ``MockServerOptions/bodyTimeout`` of its head.
struct MockBodyTimeout: Error, CustomStringConvertible {
    var seconds: Double

    var description: String {
        "the request body was not complete within \(MockTransportErrorHandler.format(seconds)) s (the body timeout, --body-timeout)"
    }
}
