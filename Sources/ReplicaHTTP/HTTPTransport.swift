import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Replica
import Tracing

/// The client's ``Transport`` over AsyncHTTPClient: request bodies (files, multipart) stream from
/// disk, response bodies stream straight into the sync engine's parser, so a 1 GB response never
/// sits in memory whole.
///
/// ```swift
/// let transport = HTTPTransport()                       // uses HTTPClient.shared
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

    /// A transport on an existing client (by default AsyncHTTPClient's shared one); you shut it down.
    ///
    /// ```swift
    /// let transport = HTTPTransport(readAhead: 4 << 20)   // up to 4 MiB of each body ahead of the parser
    /// ```
    public init(client: HTTPClient = .shared, readAhead: Int = 1 << 20) {
        self.client = client
        self.ownsClient = false
        self.readAhead = max(1, readAhead)
    }

    /// A transport on its own client; call ``shutdown()`` when done.
    public init(configuration: HTTPClient.Configuration, readAhead: Int = 1 << 20) {
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.ownsClient = true
        self.readAhead = max(1, readAhead)
    }

    /// Shuts down the client the transport created (nothing for a shared one).
    public func shutdown() async throws {
        if ownsClient { try await client.shutdown() }
    }

    public func send(_ request: ClientRequest) async throws -> ClientResponse {
        let timeout = TimeAmount.nanoseconds(Int64(request.timeout.components.seconds) * 1_000_000_000
                                             + request.timeout.components.attoseconds / 1_000_000_000)
        let what = "\(request.method) \(request.url.absoluteString)"
        let bytes: [UInt8]?
        switch request.body {
        case .none:
            bytes = nil
        case .bytes(let body):
            bytes = body
        case .file, .multipart:
            // Uploads stream from disk through AsyncHTTPClient's async API, with its back-pressure;
            // what answers them is small, so reading it ahead would gain nothing.
            return try await sendThroughAsyncAPI(request, timeout: timeout, what: what)
        }
        // Only AsyncHTTPClient's async API sends the traceparent of its own span: with a tracer
        // that records, requests go that way (its body sequence reads one chunk at a time).
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
        let exchange = ReadAheadExchange(limit: readAhead, request: what)
        let (head, body) = try await exchange.start(outgoing, on: client, timeout: timeout)
        var fields = HeaderFields()
        for header in head.headers { fields.add(header.name, header.value) }
        return ClientResponse(status: Int(head.status.code), headers: fields, body: ResponseBody(body))
    }

    /// The exchange through AsyncHTTPClient's async API: uploads, and every request when its
    /// client traces (it does so under a span of its own and sends that span's `traceparent` in
    /// place of the client's). Its body comes one socket buffer per round trip.
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
        let body = ResponseBody(StreamedBody(body: response.body, request: what))
        return ClientResponse(status: Int(response.status.code), headers: headers, body: body)
    }

    /// Whether AsyncHTTPClient traces the requests itself: with a tracer that records, it sends
    /// each one under a span of its own (a child of the page's) and injects that span's
    /// `traceparent`, so the client's own trace headers are left out rather than sent twice.
    var injectsTraceHeaders: Bool {
        guard let tracer = client.tracer else { return false }
        return !(tracer is NoOpTracer)
    }

    /// AsyncHTTPClient's errors as ``ClientError``s: timeouts apart from other connection failures.
    static func clientError(_ error: any Error, request: String) -> ClientError {
        if let error = error as? ClientError { return error }
        if error is CancellationError { return ClientError(.cancelled, "cancelled", request: request) }
        if let error = error as? HTTPClientError,
           error == .deadlineExceeded || error == .connectTimeout || error == .readTimeout || error == .writeTimeout {
            return ClientError(.timeout, "timed out (\(error))", request: request)
        }
        return ClientError(.connection, String(describing: error), request: request)
    }
}

/// The response body as byte chunks, pulled from AsyncHTTPClient (back-pressure preserved),
/// with its errors as ``ClientError``s.
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
