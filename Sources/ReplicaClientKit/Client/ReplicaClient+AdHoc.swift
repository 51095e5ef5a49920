import Foundation
import ReplicaCore

extension ReplicaClient {
    /// An ad-hoc call: `path` matches no route, so nothing is synced; the response's JSON is the
    /// result's ``CallResult/data`` (`nil` for an empty body or a 204).
    func adHoc(_ path: String, method: HTTPMethod, remaining: [String: Parameter], headers: HeaderFields,
               uploadProgress: (@Sendable (Int64, Int64?) -> Void)?, timeout: Duration? = nil) async throws -> CallResult {
        let routePath = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
        var request = try await request(method: method, path: path, remaining: remaining, route: nil, headers: headers)
        request.uploadProgress = uploadProgress
        if let timeout { request.timeout = timeout }
        let (response, bytes) = try await sendCollecting(request)
        let json = try Self.json(of: bytes, response: response, request: request)
        let sync = SyncResult(changes: ChangeSet(), skipped: [], ignoredKeyCount: 0, objectCount: 0, byteCount: Int64(bytes.count),
                              data: json, route: nil, metadata: nil, seenKeys: PrimaryKeys(), scope: nil)
        return CallResult(status: response.status, headers: response.headers, sync: sync, notModified: response.status == 304,
                          pages: 1, unchangedPages: response.status == 304 ? 1 : 0, isTruncated: false, route: routePath)
    }

    /// Calls `path` as ``call(_:method:params:headers:options:uploadProgress:)`` does and decodes
    /// the response as `T` (dates in ISO 8601): the JSON of an ad-hoc call or a DATA route, or
    /// the body of a route that syncs it, which is then synced as well (decoded first: a
    /// response that does not decode changes nothing). One page: pagination is not followed.
    ///
    /// ```swift
    /// struct Stats: Decodable { var users: Int }
    /// let stats = try await client.call("/stats/today", as: Stats.self)   // no route: ad hoc
    /// ```
    ///
    /// - Parameters:
    ///   - path: A path or route pattern.
    ///   - method: The HTTP method.
    ///   - params: Path variables, query or body parameters.
    ///   - headers: Headers for this call.
    ///   - type: The type to decode.
    /// - Returns: The decoded response (`nil` or ``Nothing`` for an empty body when `T` allows it).
    /// - Throws: ``ClientError`` (status, connection, an empty or undecodable body) or ``SyncError``.
    public func call<T: Decodable>(_ path: String, method: HTTPMethod = .get, params: [String: Parameter] = [:],
                                   headers: HeaderFields = HeaderFields(), as type: T.Type) async throws -> T {
        let request: ClientRequest
        var synced: (method: HTTPMethod, path: String)?
        switch try await resolve(path, method: method, params: params) {
        case .routed(let prepared):
            request = try await self.request(for: prepared, headers: headers)
            if prepared.entry.entity != nil { synced = (prepared.method, prepared.path) }
        case .unrouted(let concrete, let remaining):
            request = try await self.request(method: method, path: concrete, remaining: remaining, route: nil, headers: headers)
        }
        let (response, bytes) = try await sendCollecting(request)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let value = try Self.decode(T.self, from: bytes, response: response, request: request, decoder: decoder)
        if let synced {
            try await syncEndpointResponse(method: synced.method, path: synced.path, bytes: bytes, status: response.status)
        }
        return value
    }

    /// Sends a request and reads its whole body (up to ``ClientConfiguration/maxDecodedBodyBytes``).
    func sendCollecting(_ request: ClientRequest) async throws -> (ClientResponse, [UInt8]) {
        let response = try await send(request)
        do {
            return (response, try await response.body.collect(upTo: configuration.maxDecodedBodyBytes))
        } catch var error as ClientError {
            error.request = "\(request.method) \(request.url.absoluteString)"
            throw error
        }
    }

    /// Whether a body holds nothing but whitespace.
    static func isBlank(_ bytes: [UInt8]) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
    }

    /// The JSON of a response body; `nil` for an empty one or a 204.
    static func json(of bytes: [UInt8], response: ClientResponse, request: ClientRequest) throws -> JSONValue? {
        guard response.status != 204, !isBlank(bytes) else { return nil }
        let what = "\(request.method) \(request.url.absoluteString)"
        if let error = JSONResponseCheck.error(ifNotJSON: bytes, response: response, request: what) { throw error }
        do {
            return try JSONValue(parsing: bytes)
        } catch {
            throw ClientError(.invalidResponse, "the response is not JSON: \(error)", status: response.status,
                              headers: response.headers, body: Array(bytes.prefix(1 << 10)), request: what)
        }
    }

    /// A response body decoded as `T`: an empty one (or a 204) gives `T`'s empty value (`nil`,
    /// ``Nothing``) or throws `.emptyBody`; one that does not decode throws `.invalidResponse`.
    static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8], response: ClientResponse, request: ClientRequest,
                                     decoder: JSONDecoder) throws -> T {
        let what = "\(request.method) \(request.url.absoluteString)"
        if response.status == 204 || isBlank(bytes) {
            guard let empty = (T.self as? any EmptyBodyResponse.Type)?.emptyBodyValue as? T else {
                throw ClientError(.emptyBody, "HTTP \(response.status) with an empty body; \(T.self) needs one",
                                  status: response.status, headers: response.headers, request: what)
            }
            return empty
        }
        if T.self == Nothing.self, let nothing = Nothing() as? T { return nothing }
        if let error = JSONResponseCheck.error(ifNotJSON: bytes, response: response, request: what) { throw error }
        do {
            return try decoder.decode(T.self, from: Data(bytes))
        } catch {
            throw ClientError(.invalidResponse, "cannot decode \(T.self) from the response: \(describe(error))",
                              status: response.status, headers: response.headers, body: Array(bytes.prefix(1 << 10)),
                              request: what)
        }
    }
}

/// The bodies of a call's pages, kept as they stream by (for a delegate that hears each page's
/// JSON): each up to a limit, past which that page's copy is dropped.
final class BodyCapture: Sendable {
    private let pages = Locked<[[UInt8]?]>([])
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Starts the copy of the next page.
    func beginPage() { pages.withLock { $0.append([]) } }

    func append(_ chunk: [UInt8]) {
        let limit = self.limit
        pages.withLock { pages in
            guard let last = pages.indices.last, let page = pages[last] else { return }
            pages[last] = page.count + chunk.count > limit ? nil : page + chunk
        }
    }

    /// Each page's JSON (`nil` for an empty body, a body past the limit, or one that is not JSON).
    var json: [JSONValue?] {
        pages.value.map { page in
            guard let page, !ReplicaClient.isBlank(page) else { return nil }
            return try? JSONValue(parsing: page)
        }
    }
}

/// A response body that copies its chunks into a ``BodyCapture`` as they are read.
struct CapturedBody: AsyncSequence, Sendable {
    typealias Element = [UInt8]
    let body: ResponseBody
    let capture: BodyCapture

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: ResponseBody.AsyncIterator
        let capture: BodyCapture

        mutating func next() async throws -> [UInt8]? {
            let chunk = try await base.next()
            if let chunk { capture.append(chunk) }
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: body.makeAsyncIterator(), capture: capture)
    }
}
