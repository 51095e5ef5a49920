import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ReplicaClientKit
import ReplicaCore
import Tracing

/// The client's ``Transport`` over AsyncHTTPClient: request bodies (files, multipart) stream from
/// disk, response bodies stream straight into the sync engine's parser, so a 1 GB response never
/// sits in memory whole.
///
/// It follows redirects itself (up to ``ClientRequest/maxRedirects``; a loop fails at once,
/// naming the chain): one to another origin only when ``ClientRequest/allowedHosts`` admits it,
/// and then without the headers configured for the first (``ClientRequest/redirected(status:to:original:)``).
/// Every body is held to its ``ClientRequest/bodyLimits``; gzip and deflate bodies are
/// decompressed and bounded by their decompressed size, not by a ratio.
///
/// ```swift
/// let transport = HTTPTransport()                       // uses HTTPTransport.defaultClient
/// var configuration = ClientConfiguration(transport: transport,
///                                         baseURLs: [.production: URL(string: "https://api.example.com")!])
/// let client = ReplicaClient(engine: engine, configuration: configuration)
/// ```
public final class HTTPTransport: Transport {
    let client: HTTPClient
    let ownsClient: Bool
    /// How many bytes of a response body are read ahead of its consumer (the parser): the
    /// connection reads on while less than this waits, so the parser seldom waits for the network,
    /// and stops reading past it (back-pressure). 1 MiB by default.
    public let readAhead: Int

    /// The client `HTTPTransport()` uses, shared by all of them and never shut down (like
    /// `HTTPClient.shared`, on its event loops): AsyncHTTPClient's browser-like settings, except
    /// that redirects are left to the transport (which filters headers by origin), gzip and
    /// deflate bodies are decompressed without a ratio limit (the body's size limit bounds them),
    /// there is no read timeout (``BodyLimits/idleTimeout`` does not count the time
    /// back-pressure holds the connection), a connection that cannot be made fails its request at
    /// once (refused, no route: a ``RetryInterceptor`` retries it with backoff, a push leaves its
    /// mutations pending) and one that gets no answer fails after ``connectTimeout``.
    public static let defaultClient: HTTPClient = {
        var configuration = configured(.singletonConfiguration)
        configuration.timeout.connect = connectTimeout
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// How long ``defaultClient`` waits for a TCP (and TLS) connection to a host that does not
    /// answer: 10 seconds.
    public static let connectTimeout: TimeAmount = .seconds(10)

    /// `configuration` as the transport needs it: redirects disallowed (the transport follows
    /// them), decompression (when enabled) bounded by size through ``BodyLimits/maxBytes`` rather
    /// than by ratio, no read timeout, and no retrying of a connection that could not be made
    /// (the request fails with ``ClientError/Code/connection`` at once, and the client's
    /// interceptors decide: AsyncHTTPClient would otherwise retry it until the connect timeout,
    /// 90 seconds in its browser-like settings, while the API refuses connections).
    ///
    /// ```swift
    /// let client = HTTPClient(eventLoopGroup: group, configuration: HTTPTransport.configured(HTTPClient.Configuration()))
    /// ```
    public static func configured(_ configuration: HTTPClient.Configuration) -> HTTPClient.Configuration {
        var configuration = configuration
        configuration.redirectConfiguration = .disallow
        if case .enabled = configuration.decompression { configuration.decompression = .enabled(limit: .none) }
        configuration.timeout.read = nil
        configuration.connectionPool.retryConnectionEstablishment = false
        return configuration
    }

    /// A transport on an existing client (by default ``defaultClient``); you shut it down.
    /// Give it a client made with ``configured(_:)``: one that follows redirects itself sends
    /// every header but `Authorization` and `Cookie` to the other hosts they lead to.
    ///
    /// ```swift
    /// let transport = HTTPTransport(readAhead: 4 << 20)   // up to 4 MiB of each body ahead of the parser
    /// ```
    public init(client: HTTPClient? = nil, readAhead: Int = 1 << 20) {
        self.client = client ?? Self.defaultClient
        self.ownsClient = false
        self.readAhead = max(1, readAhead)
    }

    /// A transport on its own client, made from ``configured(_:)`` of `configuration`; call
    /// ``shutdown()`` when done.
    ///
    /// ```swift
    /// let transport = HTTPTransport(configuration: HTTPClient.Configuration(decompression: .enabled(limit: .none)))
    /// ```
    public init(configuration: HTTPClient.Configuration, readAhead: Int = 1 << 20) {
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: Self.configured(configuration))
        self.ownsClient = true
        self.readAhead = max(1, readAhead)
    }

    /// Shuts down the client the transport created (nothing for a shared one).
    public func shutdown() async throws {
        if ownsClient { try await client.shutdown() }
    }

    /// Sends `request`, following redirects (see the type's summary).
    ///
    /// - Throws: ``ClientError``: `.redirect` for a loop or too many, `.crossOrigin` for a
    ///   redirect to an origin not allowed, the exchange's own (`.timeout`, `.connection` …).
    public func send(_ request: ClientRequest) async throws -> ClientResponse {
        var current = request
        var chain = [request.url]
        while true {
            let response = try await exchange(current)
            guard [301, 302, 303, 307, 308].contains(response.status), let location = response.headers["Location"],
                  let target = URL(string: location, relativeTo: current.url)?.absoluteURL,
                  target.scheme == "http" || target.scheme == "https" else { return response }
            let what = "\(request.method) \(request.url.absoluteString)"
            let links = (chain + [target]).map(\.absoluteString).joined(separator: " → ")
            if chain.contains(where: { $0.absoluteString == target.absoluteString }) {
                throw ClientError(.redirect, "redirect loop: \(links)", request: what)
            }
            if chain.count > request.maxRedirects {
                throw ClientError(.redirect, "too many redirects (more than \(request.maxRedirects), "
                                  + "ClientConfiguration.maxRedirects): \(links)", request: what)
            }
            guard current.mayFollow(to: target) else {
                throw current.crossOriginError(to: target, what: "a redirect (HTTP \(response.status))")
            }
            chain.append(target)
            current = current.redirected(status: response.status, to: target, original: request)
        }
    }

    /// One exchange, no redirect followed.
    private func exchange(_ request: ClientRequest) async throws -> ClientResponse {
        let timeout = ReadAheadExchange.amount(request.timeout)
        let what = "\(request.method) \(request.url.absoluteString)"
        let bytes: [UInt8]?
        switch request.body {
        case .none:
            bytes = nil
        case .bytes(let body):
            bytes = body
        case .file, .multipart:
            // Uploads stream from disk through AsyncHTTPClient's async API, with its back-pressure.
            return try await sendThroughAsyncAPI(request, timeout: timeout, what: what)
        }
        // Only AsyncHTTPClient's async API sends the traceparent of its own span: with a tracer
        // that records, requests go that way.
        if injectsTraceHeaders { return try await sendThroughAsyncAPI(request, timeout: timeout, what: what) }
        var headers = HTTPHeaders()
        for (name, value) in request.headers { headers.add(name: name, value: value) }
        let outgoing: HTTPClient.Request
        do {
            outgoing = try HTTPClient.Request(url: request.url.absoluteString, method: .init(rawValue: request.method.rawValue),
                                              headers: headers, body: bytes.map { .bytes($0) })
        } catch {
            throw Self.clientError(error, request: what)
        }
        if let bytes { request.uploadProgress?(Int64(bytes.count), Int64(bytes.count)) }
        let exchange = ReadAheadExchange(limit: readAhead, request: what, limits: request.bodyLimits)
        let (head, body) = try await exchange.start(outgoing, on: client, timeout: timeout)
        var fields = HeaderFields()
        for header in head.headers { fields.add(header.name, header.value) }
        return ClientResponse(status: Int(head.status.code), headers: fields, body: ResponseBody(body))
    }

    /// The exchange through AsyncHTTPClient's async API: uploads, and every request when its
    /// client traces (it does so under a span of its own and sends that span's `traceparent` in
    /// place of the client's). Its body is relayed ahead of the consumer under the same limits.
    private func sendThroughAsyncAPI(_ request: ClientRequest, timeout: TimeAmount, what: String) async throws -> ClientResponse {
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = .init(rawValue: request.method.rawValue)
        let dropped = injectsTraceHeaders ? request.traceHeaderNames.map { $0.lowercased() } : []
        for (name, value) in request.headers where !dropped.contains(name.lowercased()) {
            outgoing.headers.add(name: name, value: value)
        }
        let progress = request.uploadProgress
        let total = request.body.knownLength
        switch request.body {
        case .none:
            break
        case .bytes(let bytes):
            outgoing.body = .bytes(ByteBuffer(bytes: bytes))
            progress?(Int64(bytes.count), Int64(bytes.count))
        case .file(let path):
            let chunks = MultipartBody.fileChunks(path: path)
            outgoing.body = .stream(CountingChunks(chunks: chunks, total: total, progress: progress),
                                    length: total.map { .known($0) } ?? .unknown)
        case .multipart(let multipart):
            outgoing.body = .stream(CountingChunks(chunks: multipart.chunks(), total: total, progress: progress),
                                    length: total.map { .known($0) } ?? .unknown)
        }
        let response: HTTPClientResponse
        do {
            response = try await client.execute(outgoing, timeout: timeout)
        } catch {
            throw Self.clientError(error, request: what)
        }
        var headers = HeaderFields()
        for header in response.headers { headers.add(header.name, header.value) }
        switch request.body {
        case .file, .multipart:
            // An upload's answer is small: pulled as the consumer reads it. Relayed ahead of the
            // consumer while the upload streamed, its body let the 200 MB upload's memory grow by
            // 100-150 MB (UploadTests); ReplicaClient still bounds its size (BodyLimits.maxBytes).
            return ClientResponse(status: Int(response.status.code), headers: headers,
                                  body: ResponseBody(StreamedBody(body: response.body, request: what)))
        case .none, .bytes:
            let exchange = ReadAheadExchange(limit: readAhead, request: what, limits: request.bodyLimits)
            let body = exchange.relay(response.body, headers: response.headers, on: client.eventLoopGroup.any())
            return ClientResponse(status: Int(response.status.code), headers: headers, body: ResponseBody(body))
        }
    }

    /// Whether AsyncHTTPClient traces the requests itself: with a tracer that records, it sends
    /// each one under a span of its own (a child of the page's) and injects that span's
    /// `traceparent`, so the client's own trace headers are left out rather than sent twice.
    var injectsTraceHeaders: Bool {
        guard let tracer = client.tracer else { return false }
        return !(tracer is NoOpTracer)
    }

    /// AsyncHTTPClient's errors as ``ClientError``s: timeouts apart from other connection
    /// failures, its redirect and decompression limits (of a client given to the transport) said plainly.
    static func clientError(_ error: any Error, request: String) -> ClientError {
        if let error = error as? ClientError { return error }
        if error is CancellationError { return ClientError(.cancelled, "cancelled", request: request) }
        if let error = error as? HTTPClientError {
            if error == .deadlineExceeded || error == .connectTimeout || error == .readTimeout || error == .writeTimeout {
                return ClientError(.timeout, "timed out (\(error))", request: request)
            }
            if error == .redirectCycleDetected {
                return ClientError(.redirect, "redirect loop (detected by the HTTPClient given to HTTPTransport)", request: request)
            }
            if error == .redirectLimitReached {
                return ClientError(.redirect, "too many redirects (the limit of the HTTPClient given to HTTPTransport)",
                                   request: request)
            }
        }
        if String(describing: type(of: error)) == "DecompressionError", String(describing: error) == "limit" {
            return ClientError(.bodyTooLarge, "the compressed response body inflated past the decompression limit of the "
                               + "HTTPClient given to HTTPTransport (its `decompression` setting; HTTPTransport.configured(_:) "
                               + "bounds decompressed bodies by BodyLimits.maxBytes instead)", request: request)
        }
        if let error = error as? IOError {
            // A system call's failure (a refused connection, a reset): its errno said plainly, not
            // NIO's account of where it read it.
            let reason = String(cString: strerror(error.errnoCode))
            return ClientError(.connection, reason.prefix(1).lowercased() + reason.dropFirst() + " (errno \(error.errnoCode))",
                               request: request)
        }
        return ClientError(.connection, String(describing: error), request: request)
    }
}

/// Request body chunks as `ByteBuffer`s, reporting upload progress as they are taken.
struct CountingChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let chunks: AsyncThrowingStream<[UInt8], any Error>
    let total: Int64?
    let progress: (@Sendable (Int64, Int64?) -> Void)?

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<[UInt8], any Error>.AsyncIterator
        let total: Int64?
        let progress: (@Sendable (Int64, Int64?) -> Void)?
        var sent: Int64 = 0

        mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try await base.next() else { return nil }
            sent += Int64(chunk.count)
            progress?(sent, total)
            return ByteBuffer(bytes: chunk)
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: chunks.makeAsyncIterator(), total: total, progress: progress)
    }
}

/// An upload's answer as byte chunks, pulled from AsyncHTTPClient as the consumer reads them
/// (back-pressure preserved), with its errors as ``ClientError``s.
struct StreamedBody: AsyncSequence, Sendable {
    typealias Element = [UInt8]
    let body: HTTPClientResponse.Body
    let request: String

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: HTTPClientResponse.Body.AsyncIterator
        let request: String

        mutating func next() async throws -> [UInt8]? {
            do {
                guard let buffer = try await base.next() else { return nil }
                return Array(buffer: buffer)
            } catch {
                throw HTTPTransport.clientError(error, request: request)
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: body.makeAsyncIterator(), request: request) }
}
