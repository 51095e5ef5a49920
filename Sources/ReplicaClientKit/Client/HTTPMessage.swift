import Foundation
import ReplicaCore

/// HTTP header fields in order, with case-insensitive lookup.
///
/// ```swift
/// var headers = HeaderFields()
/// headers["Authorization"] = "Bearer abc"
/// headers["authorization"]   // "Bearer abc"
/// ```
public struct HeaderFields: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    public private(set) var fields: [(name: String, value: String)] = []

    public init() {}

    public init(_ fields: [(String, String)]) {
        for (name, value) in fields { add(name, value) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The first value of `name` (case-insensitive); setting replaces every value of that name.
    public subscript(name: String) -> String? {
        get { fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value }
        set {
            fields.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame }
            if let newValue { fields.append((name, newValue)) }
        }
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    /// Adds a field, keeping existing ones of the same name.
    public mutating func add(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    public static func == (lhs: HeaderFields, rhs: HeaderFields) -> Bool {
        lhs.fields.map { [$0.name.lowercased(), $0.value] } == rhs.fields.map { [$0.name.lowercased(), $0.value] }
    }

    public func hash(into hasher: inout Hasher) {
        for field in fields {
            hasher.combine(field.name.lowercased())
            hasher.combine(field.value)
        }
    }

    public var description: String { fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n") }
}

/// The body of a request.
public enum RequestBody: Sendable, Hashable {
    /// No body.
    case none
    /// Bytes in memory.
    case bytes([UInt8])
    /// A file streamed from disk, not loaded.
    case file(path: String)
    /// A multipart/form-data body whose file parts are streamed from disk.
    case multipart(MultipartBody)

    /// The body's length when known without reading files.
    public var knownLength: Int64? {
        switch self {
        case .none: return 0
        case .bytes(let bytes): return Int64(bytes.count)
        case .file(let path): return (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
        case .multipart(let body): return body.contentLength
        }
    }
}

/// A request as the client sends it through interceptors to a ``Transport``.
public struct ClientRequest: Sendable {
    public var method: HTTPMethod
    /// The absolute URL, including the query string.
    public var url: URL
    public var headers: HeaderFields
    public var body: RequestBody
    /// How long the response head may take to arrive (the body has ``bodyLimits``).
    public var timeout: Duration
    /// The route pattern the request was built from (`/users/:userID/posts`), for logs and delegates.
    public var route: String?
    /// Called as the body is sent (bytes sent, total when known).
    public var uploadProgress: (@Sendable (Int64, Int64?) -> Void)?
    /// The names of the trace headers the client's tracer injected (`traceparent`, `tracestate`),
    /// for a transport whose HTTP client injects its own.
    package var traceHeaderNames: [String] = []
    /// The origin the headers were configured for, once the request has moved (a next link, a
    /// redirect) to another; `nil` means the URL's own (see ``headersOrigin``).
    public var configuredOrigin: Origin?
    /// Other origins a redirect (or a next link) may lead to (``ClientConfiguration/allowedHosts``):
    /// a transport that follows redirects follows one elsewhere only when ``mayFollow(to:)``
    /// says so, and with ``redirected(status:to:original:)``'s headers.
    public var allowedHosts: [String] = []
    /// The most redirects a transport follows for this request (``ClientConfiguration/maxRedirects``).
    public var maxRedirects = 10
    /// How long and how large the response body may be (``ClientConfiguration/bodyLimits``).
    public var bodyLimits = BodyLimits()

    public init(method: HTTPMethod, url: URL, headers: HeaderFields = HeaderFields(), body: RequestBody = .none,
                timeout: Duration = .seconds(30), route: String? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.route = route
    }

    /// `true` for requests that may be repeated safely: methods that are (GET, HEAD, OPTIONS,
    /// PUT, DELETE), and a POST or PATCH that carries an `Idempotency-Key`, which an API that
    /// honours it applies once however often it arrives (as the outbox's sends do).
    ///
    /// ```swift
    /// var request = ClientRequest(method: .post, url: url)
    /// request.isIdempotent                               // false
    /// request.headers["Idempotency-Key"] = UUID().uuidString
    /// request.isIdempotent                               // true: a RetryInterceptor may send it again
    /// ```
    public var isIdempotent: Bool {
        switch method {
        case .get, .head, .options, .put, .delete: return true
        case .post, .patch: return headers["Idempotency-Key"] != nil
        }
    }
}

/// A response whose body streams as byte chunks.
public struct ClientResponse: Sendable {
    public var status: Int
    public var headers: HeaderFields
    /// The body; read it once.
    public var body: ResponseBody

    public init(status: Int, headers: HeaderFields = HeaderFields(), body: ResponseBody = ResponseBody()) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// A response body: an `AsyncSequence` of byte chunks, read once, pulled from the transport
/// (so a slow consumer slows the download instead of buffering it).
///
/// ```swift
/// for try await chunk in response.body { consume(chunk) }
/// let all = try await response.body.collect(upTo: 1 << 20)
/// ```
public struct ResponseBody: AsyncSequence, Sendable {
    public typealias Element = [UInt8]

    /// Pulls the next chunk; `nil` at the end.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let pull: () async throws -> [UInt8]?

        public mutating func next() async throws -> [UInt8]? { try await pull() }
    }

    private let make: @Sendable () -> AsyncIterator

    /// An empty body.
    public init() {
        self.init(bytes: [])
    }

    /// A body of bytes in memory.
    public init(bytes: [UInt8]) {
        make = {
            var pending: [UInt8]? = bytes.isEmpty ? nil : bytes
            return AsyncIterator {
                defer { pending = nil }
                return pending
            }
        }
    }

    /// A body read from any sequence of byte chunks (a transport's streaming body).
    public init<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks) where Chunks.Element == [UInt8] {
        make = {
            var iterator = chunks.makeAsyncIterator()
            return AsyncIterator { try await iterator.next() }
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { make() }

    /// Reads the whole body, failing past `limit` bytes.
    ///
    /// - Throws: ``ClientError`` `.bodyTooLarge`, or the transport's error.
    public func collect(upTo limit: Int) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in self {
            bytes += chunk
            if bytes.count > limit {
                throw ClientError(.bodyTooLarge, "response body larger than \(limit) bytes")
            }
        }
        return bytes
    }
}
