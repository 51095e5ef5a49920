import CoreMetrics
import Foundation
import ReplicaCore
import Tracing

/// Where a client sends requests: RSAPI's development and production base URLs.
public enum Environment: String, Sendable, Hashable, CaseIterable {
    case development
    case production
}

/// Supplies a header on every request: a fixed value or a closure evaluated per request
/// (an auth token that changes). Values given with a call override providers.
///
/// ```swift
/// .header("Authorization") { "Bearer \(await tokens.current())" }
/// ```
public struct HeaderProvider: Sendable {
    public let name: String
    let value: @Sendable () async throws -> String?

    public static func header(_ name: String, _ value: String) -> HeaderProvider {
        HeaderProvider(name: name, value: { value })
    }

    public static func header(_ name: String, _ value: @escaping @Sendable () async throws -> String?) -> HeaderProvider {
        HeaderProvider(name: name, value: value)
    }
}

/// The configuration of a ``ReplicaClient``.
///
/// ```swift
/// var configuration = ClientConfiguration(transport: HTTPTransport(),
///                                         baseURLs: [.production: URL(string: "https://api.example.com")!])
/// configuration.headerProviders = [.header("Authorization") { "Bearer \(token)" }]
/// configuration.interceptors = [LoggingInterceptor(), RetryInterceptor()]
/// ```
public struct ClientConfiguration: Sendable {
    /// The base URL of each environment.
    public var baseURLs: [Environment: URL]
    /// The environment requests go to (production by default).
    public var environment: Environment
    /// Sends the requests.
    public var transport: any Transport
    /// The interceptor chain, in request order.
    public var interceptors: [any Interceptor]
    /// Headers sent with every request (the schema's top-level `headers`, a route's and a call's
    /// override them). Without a `User-Agent` here or there, ``defaultUserAgent`` is sent.
    public var headers: HeaderFields
    /// Headers computed per request.
    public var headerProviders: [HeaderProvider]
    /// Path variables always available (the current user's id), by name.
    public var variableProviders: [String: @Sendable () async throws -> String?]
    /// The timeout of each request, to its response head (its body has ``bodyLimits``).
    public var timeout: Duration
    /// Body encodings by route pattern (`/upload/:id`), JSON when not listed.
    public var bodyEncodings: [String: BodyEncoding]
    /// Pagination by route pattern (`/v1/customers`), over the route's own ``Route/pagination``
    /// and the schema's ``Schema/pagination``; `Link` headers when none says.
    ///
    /// ```swift
    /// configuration.pagination["/v1/customers"] = .stripe
    /// ```
    public var pagination: [String: PaginationRule]
    /// Remember ETag / Last-Modified per URL and send conditional GETs.
    public var conditionalRequests: Bool
    /// The most pages one call follows. A call stopped there deletes no stale row
    /// (``CallResult/isTruncated``).
    public var maxPages: Int
    /// What a sync does when its last page says the collection goes on (`"has_more": true`, a
    /// non-empty next cursor, a `links.next`, a total above what was read) but the route's
    /// pagination found no page after it: fail and write nothing (`.fail`, the default), or write
    /// the pages read and delete nothing (`.warn`). Never a stale deletion.
    ///
    /// ```swift
    /// configuration.unfollowedPages = .warn
    /// ```
    public var unfollowedPages: UnfollowedPagesPolicy = .fail
    /// Whether a paged call asks for the next page as soon as a page's `Link: <…>; rel="next"`
    /// header names it, so that it arrives while the page before it is parsed and written
    /// (`true` by default). At most one page is asked for ahead; one that the traversal does not
    /// reach (a page that fails) is cancelled. Turn it off for an API that counts every request
    /// against a tight rate limit and wants them one after the other.
    ///
    /// ```swift
    /// configuration.prefetchPages = false   // one request at a time
    /// ```
    public var prefetchPages: Bool
    /// How many pages one paged call asks for ahead of the page it is reading (4 by default),
    /// when the pages to come are known before they are read: offsets or page numbers with a
    /// total or a page count, a `Link` header naming `rel="last"`. Otherwise (a cursor, a next
    /// URL, a `Link` without `rel="last"`) only the next page is asked for ahead. Pages still
    /// commit in order, as one transaction; a page the traversal does not reach is cancelled.
    /// 1 asks only for the next page ahead; ``prefetchPages`` `false` for none.
    ///
    /// ```swift
    /// configuration.concurrentPages = 8   // a latency-bound API: eight pages in flight
    /// ```
    public var concurrentPages: Int = 4
    /// Hooks that read and change a call's parameters before they are encoded (ApiModel's
    /// before-request hook, e.g. adding an `access_token`), in order, for every call, ad-hoc call,
    /// model operation and typed endpoint.
    ///
    /// ```swift
    /// configuration.parameterHooks = [{ request in request.params["access_token"] = .value(.string(token)) }]
    /// ```
    public var parameterHooks: [@Sendable (inout RequestParameters) async throws -> Void]
    /// What ``ReplicaClient/push(concurrency:)`` does when the API refuses a local change because
    /// its row changed there (412 to the change's `If-Match`, or 409), by entity name;
    /// ``ConflictPolicy/serverWins`` for an entity not named.
    ///
    /// ```swift
    /// configuration.conflictPolicies["Person"] = .mergeFields
    /// configuration.conflictPolicies["Setting"] = .clientWins
    /// ```
    public var conflictPolicies: [String: ConflictPolicy] = [:]
    /// The time zone of the dates model operations send (``ReplicaClient/save(_:_:)``): ISO 8601
    /// with this zone's offset, as ApiModel sends dates in its configured zone. UTC (`Z`) by default.
    public var timeZone: TimeZone
    /// The largest response a typed endpoint decodes (``ReplicaClient/perform(_:_:pathVariables:files:headers:)``
    /// reads it into memory to decode it): 64 MiB by default.
    public var maxDecodedBodyBytes: Int
    /// Other hosts a next page link or a redirect may lead to. A page's `Link: <…>; rel="next"` or a
    /// redirect to another origin (scheme, host, port) than the request's fails with
    /// ``ClientError/Code/crossOrigin`` naming both, unless an entry here admits it: `*` (any),
    /// an origin (`https://cdn.example.com`), `host:port`, `host` or `*.example.com` (see
    /// ``Origin/isAllowed(by:from:)``). Even then the request there carries none of the configured
    /// headers, header providers' values or cookies, only ``ClientRequest/headersSentToOtherOrigins``.
    /// Empty by default.
    ///
    /// ```swift
    /// configuration.allowedHosts = ["cdn.example.com"]   // pages 2… come from the CDN, without the API key
    /// ```
    public var allowedHosts: [String]
    /// The most redirects one request follows (10 by default); a longer chain fails with
    /// ``ClientError/Code/redirect`` naming it, and so does a loop, at once.
    public var maxRedirects: Int
    /// The limits of every response body: idle 60 s, deadline 30 minutes, 1 GiB (``BodyLimits``).
    ///
    /// ```swift
    /// configuration.bodyLimits.maxBytes = 4 << 30   // 4 GiB pages
    /// ```
    public var bodyLimits: BodyLimits
    /// The factory given to ``metricsFactory``; `nil` reads swift-metrics' global one at each call.
    var chosenMetricsFactory: (any MetricsFactory)?
    /// The tracer given to ``tracer``; `nil` reads the global one at each call.
    var chosenTracer: (any Tracer)?

    /// The `User-Agent` sent when neither the configuration, the schema, the route nor the call
    /// names one: `replica/0.1.0` (``ReplicaVersion/current``).
    ///
    /// ```swift
    /// configuration.headers["User-Agent"] = "my-app/2.0 " + ClientConfiguration.defaultUserAgent
    /// ```
    public static var defaultUserAgent: String { "replica/\(ReplicaVersion.current)" }

    public init(transport: any Transport, baseURLs: [Environment: URL], environment: Environment = .production) {
        self.transport = transport
        self.baseURLs = baseURLs
        self.environment = environment
        self.interceptors = []
        self.headers = HeaderFields()
        self.headerProviders = []
        self.variableProviders = [:]
        self.timeout = .seconds(30)
        self.bodyEncodings = [:]
        self.pagination = [:]
        self.conditionalRequests = true
        self.maxPages = 1000
        self.prefetchPages = true
        self.maxDecodedBodyBytes = 64 << 20
        self.parameterHooks = []
        self.timeZone = TimeZone(secondsFromGMT: 0) ?? .current
        self.allowedHosts = []
        self.maxRedirects = 10
        self.bodyLimits = BodyLimits()
    }
}

/// A call's parameters on their way to being encoded, for ``ClientConfiguration/parameterHooks``:
/// the query string (GET, DELETE, HEAD) or the body (the others).
///
/// ```swift
/// let hook: @Sendable (inout RequestParameters) async throws -> Void = { request in
///     if request.method == .get { request.params["locale"] = "en" }
/// }
/// ```
public struct RequestParameters: Sendable {
    /// The method.
    public let method: HTTPMethod
    /// The concrete path (variables filled).
    public let path: String
    /// The route pattern, when the path has one.
    public let route: String?
    /// The parameters; change them freely.
    public var params: [String: Parameter]
}
