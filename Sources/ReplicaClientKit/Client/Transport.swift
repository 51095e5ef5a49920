import ReplicaCore

/// Sends HTTP requests: the client's only contact with the network.
///
/// `ReplicaHTTP` implements it over AsyncHTTPClient, streaming bodies both ways; a user can plug
/// in any other (RestingKit's `HTTPClient`).
///
/// ```swift
/// struct Canned: Transport {
///     func send(_ request: ClientRequest) async throws -> ClientResponse {
///         ClientResponse(status: 200, body: ResponseBody(bytes: Array("[]".utf8)))
///     }
/// }
/// ```
public protocol Transport: Sendable {
    /// Sends `request` and returns the response as soon as its head arrives; the body streams.
    ///
    /// - Throws: ``ClientError`` `.connection` or `.timeout` for network failures.
    func send(_ request: ClientRequest) async throws -> ClientResponse
}

/// One link of the client's interceptor chain: sees each request before it is sent (in chain
/// order) and each response after (in reverse order); may change either, answer without
/// calling `next` (short-circuit), or call `next` again (retry).
///
/// ```swift
/// struct Stamp: Interceptor {
///     func intercept(_ request: ClientRequest, next: Interceptor.Next) async throws -> ClientResponse {
///         var request = request
///         request.headers["X-Client"] = "replica"
///         return try await next(request)
///     }
/// }
/// ```
public protocol Interceptor: Sendable {
    /// The rest of the chain, ending at the transport.
    typealias Next = @Sendable (ClientRequest) async throws -> ClientResponse

    /// Handles `request`, usually by calling `next` with it (possibly changed).
    func intercept(_ request: ClientRequest, next: Next) async throws -> ClientResponse
}

extension Array where Element == any Interceptor {
    /// Runs `request` through the interceptors in order, then `transport`.
    func run(_ request: ClientRequest, transport: any Transport) async throws -> ClientResponse {
        var next: Interceptor.Next = { try await transport.send($0) }
        for interceptor in reversed() {
            let rest = next
            next = { try await interceptor.intercept($0, next: rest) }
        }
        return try await next(request)
    }
}

/// A closure as an interceptor: ApiModel's before/after hooks are thin conveniences on it.
///
/// ```swift
/// let hook = ClosureInterceptor(before: { request in print(request.url) },
///                               after: { response in print(response.status) })
/// ```
public struct ClosureInterceptor: Interceptor {
    let before: (@Sendable (inout ClientRequest) async throws -> Void)?
    let after: (@Sendable (ClientRequest, inout ClientResponse) async throws -> Void)?

    /// Hooks around every request: `before` may change the request, `after` the response.
    ///
    /// ```swift
    /// ClosureInterceptor(before: { $0.headers["X-Trace"] = UUID().uuidString })
    /// ```
    public init(before: (@Sendable (inout ClientRequest) async throws -> Void)? = nil,
                after: (@Sendable (inout ClientResponse) async throws -> Void)? = nil) {
        self.before = before
        self.after = after.map { hook in { @Sendable _, response in try await hook(&response) } }
    }

    /// Hooks around every request whose `after` also receives the request that was sent (as
    /// ApiModel's after-request hook does).
    ///
    /// ```swift
    /// ClosureInterceptor(before: nil, afterResponse: { request, response in
    ///     print(request.method, request.url, "→", response.status)
    /// })
    /// ```
    public init(before: (@Sendable (inout ClientRequest) async throws -> Void)? = nil,
                afterResponse: @escaping @Sendable (ClientRequest, inout ClientResponse) async throws -> Void) {
        self.before = before
        self.after = afterResponse
    }

    public func intercept(_ request: ClientRequest, next: Next) async throws -> ClientResponse {
        var request = request
        try await before?(&request)
        var response = try await next(request)
        try await after?(request, &response)
        return response
    }
}
