import Foundation

/// How a mock server listens, stores and behaves.
///
/// ```swift
/// var options = MockServerOptions(port: 0)
/// options.store = try SQLiteMockStore(path: "mock.sqlite")
/// options.conditions.latency = .milliseconds(20) ... .milliseconds(80)
/// options.requestLog = { entry in print(entry) }
/// ```
public struct MockServerOptions: Sendable {
    /// The address to bind, `127.0.0.1` by default; another address only when asked.
    public var host: String
    /// The port, 0 for a free one (read it back from `MockServer.port`).
    public var port: Int
    /// Where objects live, in memory by default.
    public var store: any MockStore
    /// Latency and faults; changeable while running with `MockServer.setConditions(_:)`.
    public var conditions: MockConditions
    /// The largest request body accepted; larger ones get 413. 1 MiB by default.
    public var maxBodySize: Int
    /// The longest a stalled request waits before its connection is closed.
    public var stallLimit: Duration
    /// The longest a client may take to send a request's head (request line and headers) once its first
    /// byte has arrived; then the server answers 408 with a JSON error and closes the connection. 10 s by default.
    public var headerReadTimeout: Duration
    /// The longest a keep-alive connection may stay open with no request in progress (and a new one with
    /// no request at all) before the server closes it. 60 s by default.
    public var idleTimeout: Duration
    /// The longest a request's body may take to arrive once its head is in, however steadily it trickles;
    /// then the server answers 408 (`bodyTimeout`) and closes the connection. 60 s by default. (A gap of
    /// ``idleTimeout`` with no byte at all closes the connection sooner.)
    ///
    /// ```swift
    /// options.bodyTimeout = .seconds(10)   // `replica serve --body-timeout 10`
    /// ```
    public var bodyTimeout: Duration = .seconds(60)
    /// Data loaded into the store before the server listens, in order (``MockSeed``): a client that
    /// connects as soon as the port opens finds all of it, never an empty or partial collection.
    /// ``MockServer/seedResult`` says what was loaded.
    ///
    /// ```swift
    /// options.seeds = [.file("seed.json")]                       // {"people": [...], "cars": [...]}
    /// options.seeds = [.json(try JSONValue(parsing: "[{\"name\": \"ann\"}]"), into: "people")]
    /// ```
    public var seeds: [MockSeed] = []
    /// Called once per answered request (method, path, status, time), on the request's task.
    public var requestLog: (@Sendable (MockRequestLogEntry) -> Void)?
    /// How many changes of each resource the change feed keeps (``MockChangeFeed``): a `?since=`
    /// cursor older than that answers 410 Gone.
    public var changeWindow = 100_000
    /// The serializer of every resource that has none of its own (`MockServer.setSerializer`), as
    /// RESTEasy's server-wide option; objects as stored and collections as arrays by default.
    public var defaultSerializer: any MockSerializer = PassThroughSerializer()
    /// Serializers of single resources, by resource name, in force before the port opens (as
    /// `MockServer.setSerializer` sets them later). A server started for a schema adds a
    /// ``JSONAPISerializer`` for each entity its routes read as JSON:API, unless one is given here.
    ///
    /// ```swift
    /// options.serializers["articles"] = JSONAPISerializer(type: "articles")
    /// ```
    public var serializers: [String: any MockSerializer] = [:]
    /// The controller of every resource that has none of its own (`MockServer.setController`);
    /// plain CRUD by default.
    public var defaultController: any MockController = CRUDController()
    /// How validation errors (bad field values) are answered: 422 `{"errors": {…}}` by default;
    /// ApiModel's APIs answer `{"post": {"errors": {…}}}`, some with 400.
    public var validationErrors = MockValidationErrors()
    /// A format extension accepted on a path's last segment, as Rails serves ApiModel's routes:
    /// with `".json"`, `GET /posts.json` is `GET /posts` and `PUT /posts/7.json` is `PUT /posts/7`
    /// (a path without it still works). `nil`, the default, takes every segment as it is.
    ///
    /// ```swift
    /// options.formatExtension = ".json"
    /// ```
    public var formatExtension: String?
    /// How collections are paged (``MockPagination``) where neither the route (``MockRoute/pagination``)
    /// nor the resource (``MockResource/pagination``) says: ``MockPagination/link`` by default.
    ///
    /// ```swift
    /// options.pagination = .cursor   // `replica serve --pagination cursor`: ?limit=10&cursor=C
    /// ```
    public var pagination = MockPagination.link
    /// The page size of a paged request that gives none, in every style (`replica serve --page-size N`);
    /// 10 by default, less than 1 counts as 1.
    ///
    /// ```swift
    /// options.pageSize = 25   // GET /people?_page=1 holds 25
    /// ```
    public var pageSize = 10
    /// The most objects one page holds, in every style (`replica serve --max-page-size N`), as Jira caps
    /// `maxResults` at 50: a request asking more gets this many, and the sizes the answer echoes (`limit`,
    /// `maxResults`, `per_page`, `Link`'s `_limit`) are the one used. nil, the default, caps nothing.
    ///
    /// ```swift
    /// options.maxPageSize = 50   // ?startAt=0&maxResults=500 answers 50 objects and "maxResults": 50
    /// ```
    public var maxPageSize: Int?
    /// A server-wide rate limit (``MockRateLimit``), nil (the default) for none: over it, requests get
    /// 429 with `Retry-After` and `X-RateLimit-*` headers.
    ///
    /// ```swift
    /// options.rateLimit = MockRateLimit(requests: 5, per: .seconds(1))   // `replica serve --rate-limit 5/1`
    /// ```
    public var rateLimit: MockRateLimit?
    /// How long the response to a request carrying an `Idempotency-Key` header is kept and answered again
    /// to a repeat of the request (Stripe's idempotent requests): 24 hours by default, as Stripe.
    ///
    /// ```swift
    /// options.idempotencyRetention = .seconds(60)   // a key may be used again for another request after a minute
    /// ```
    public var idempotencyRetention: Duration = .seconds(86_400)
    /// The most responses kept for `Idempotency-Key`s at once (10,000 by default): past it, the least
    /// recently used one is forgotten, so that a long run does not grow without end.
    ///
    /// ```swift
    /// options.idempotencyCapacity = 100
    /// ```
    public var idempotencyCapacity = 10_000
    /// How the server starts: up (nil, the default) or down with this outage (``MockOutage``), until
    /// ``MockServer/comeUp()`` or `POST /_replica/up` (`replica serve --down`).
    ///
    /// ```swift
    /// options.outage = .unavailable(retryAfter: 5)   // every request gets 503 with Retry-After: 5
    /// ```
    public var outage: MockOutage?

    /// Creates options.
    ///
    /// ```swift
    /// let options = MockServerOptions(host: "0.0.0.0", port: 8888)
    /// ```
    /// - Parameters:
    ///   - host: the bind address.
    ///   - port: the port, 0 for a free one.
    ///   - store: the store, in memory by default.
    ///   - conditions: latency and faults.
    ///   - maxBodySize: the largest accepted request body, in bytes.
    ///   - stallLimit: how long a stall fault holds a request at most.
    ///   - headerReadTimeout: how long a started request head may take to arrive.
    ///   - idleTimeout: how long a connection may stay open with no request in progress.
    ///   - requestLog: a per-request log callback.
    public init(
        host: String = "127.0.0.1",
        port: Int = 0,
        store: any MockStore = MemoryMockStore(),
        conditions: MockConditions = MockConditions(),
        maxBodySize: Int = 1 << 20,
        stallLimit: Duration = .seconds(300),
        headerReadTimeout: Duration = .seconds(10),
        idleTimeout: Duration = .seconds(60),
        requestLog: (@Sendable (MockRequestLogEntry) -> Void)? = nil
    ) {
        self.host = host
        self.port = port
        self.store = store
        self.conditions = conditions
        self.maxBodySize = maxBodySize
        self.stallLimit = stallLimit
        self.headerReadTimeout = headerReadTimeout
        self.idleTimeout = idleTimeout
        self.requestLog = requestLog
    }
}

/// Data a server loads before it listens (``MockServerOptions/seeds``), as ``MockServer/load(json:into:)``
/// and ``MockServer/load(file:into:)`` load it.
///
/// ```swift
/// var options = MockServerOptions()
/// options.seeds = [.file("people.json", into: "people"), .file("many.json")]
/// let server = try await MockServer.start(schema: schema, options: options)   // listens once both are loaded
/// ```
public enum MockSeed: Sendable {
    /// A JSON file: an object keyed by resource names, or (with a resource) an array of its objects.
    case file(String, into: String? = nil)
    /// A JSON value, shaped as a file's.
    case json(JSONValue, into: String? = nil)
}

/// One answered request, for logs.
///
/// ```swift
/// options.requestLog = { print($0) } // GET /people 200 1.2ms
/// ```
public struct MockRequestLogEntry: Sendable, CustomStringConvertible {
    /// The HTTP method.
    public var method: String
    /// The path and query as requested.
    public var path: String
    /// The status answered; 0 for a dropped or stalled connection.
    public var status: Int
    /// The time from the request's head to its answer, latency included.
    public var duration: Duration

    public var description: String {
        let milliseconds = Double(duration / .microseconds(1)) / 1000
        let time = milliseconds < 10 ? String(format: "%.2fms", milliseconds) : String(format: "%.1fms", milliseconds)
        return "\(method) \(path) \(status == 0 ? "dropped" : String(status)) \(time)"
    }
}

/// The status and shape of a mock server's validation errors (a field value the resource refuses), so
/// that it answers as the API it stands in for does.
///
/// ```swift
/// var options = MockServerOptions()
/// options.validationErrors = .apiModel                       // 422 {"person": {"errors": {...}}}
/// options.validationErrors = MockValidationErrors(status: 400, namespaced: true)
/// options.validationErrors = .github                         // 422 {"message": "Validation Failed", "errors": [...]}
/// options.validationErrors = .problemDetails                 // 422 application/problem+json (RFC 9457)
/// ```
public struct MockValidationErrors: Sendable, Hashable {
    /// The body's shape.
    public enum Shape: String, Sendable, Hashable, CaseIterable {
        /// Rails' `{"errors": {"color": ["must be a string"]}}` (wrapped in the resource's singular
        /// name when ``MockValidationErrors/namespaced``).
        case rails
        /// GitHub's `{"message": "Validation Failed", "errors": [{"resource": "Label", "field":
        /// "color", "code": "custom", "message": "color must be a string"}]}`: one entry a message.
        case github
        /// RFC 9457 problem details, `Content-Type: application/problem+json`: `{"type":
        /// "about:blank", "title": "Unprocessable Content", "status": 422, "detail": "1 member of the
        /// request body is invalid.", "errors": [{"detail": "must be a string", "pointer": "#/color"}]}`.
        case problemDetails
        /// Stripe's one error: `{"error": {"type": "invalid_request_error", "code":
        /// "parameter_invalid", "message": "color must be a string", "param": "color"}}`, the
        /// first refused field only, as Stripe answers.
        case stripe
        /// JSON:API's error objects, `Content-Type: application/vnd.api+json`: `{"errors":
        /// [{"status": "422", "source": {"pointer": "/data/attributes/color"}, "title": "Invalid
        /// Attribute", "detail": "must be a string"}]}`.
        case jsonAPI
    }

    /// The HTTP status: 422 or 400.
    public var status: Int
    /// Whether the errors are wrapped in the resource's singular name (`{"person": {"errors": …}}`);
    /// for the ``Shape/rails`` shape only.
    public var namespaced: Bool
    /// The body's shape, ``Shape/rails`` by default.
    public var shape: Shape

    /// Creates a style.
    ///
    /// ```swift
    /// let style = MockValidationErrors(status: 400, namespaced: false)   // 400 {"errors": {...}}
    /// let github = MockValidationErrors(shape: .github)                  // 422 {"message": …, "errors": [...]}
    /// ```
    ///
    /// - Parameters:
    ///   - status: 422 (the default) or 400.
    ///   - namespaced: Whether to wrap the errors in the resource's singular name (Rails shape).
    ///   - shape: the body's shape.
    public init(status: Int = 422, namespaced: Bool = false, shape: Shape = .rails) {
        self.status = status == 400 ? 400 : 422
        self.namespaced = namespaced && shape == .rails
        self.shape = shape
    }

    /// ApiModel's shape: 422 `{"post": {"errors": {"title": ["can't be blank"]}}}`.
    public static let apiModel = MockValidationErrors(status: 422, namespaced: true)

    /// GitHub's shape: 422 `{"message": "Validation Failed", "errors": [{"resource", "field", "code", "message"}]}`.
    public static let github = MockValidationErrors(shape: .github)

    /// RFC 9457's shape: 422 `application/problem+json` with `title`, `detail` and `errors` (`detail`, `pointer`).
    public static let problemDetails = MockValidationErrors(shape: .problemDetails)

    /// Stripe's shape: 400 `{"error": {"type", "code", "message", "param"}}`.
    public static let stripe = MockValidationErrors(status: 400, shape: .stripe)

    /// JSON:API's shape: 422 `application/vnd.api+json` with `errors` (`status`, `source.pointer`, `title`, `detail`).
    public static let jsonAPI = MockValidationErrors(shape: .jsonAPI)

    /// A validation error answered in this style for `resource` (other errors as they are).
    func answer(_ error: MockHTTPError, resource: String?) -> MockResponse {
        guard !error.fieldErrors.isEmpty else { return MockResponse(status: error.status, headers: error.headers, body: error.body) }
        switch shape {
        case .rails:
            var body = error.body
            if namespaced, let resource { body = .object([MockInflection.singular(resource): body]) }
            return MockResponse(status: status, headers: error.headers, body: body)
        case .github:
            // The model's name as GitHub gives it: `labels` → `Label`.
            let model = resource.map { name in
                let singular = MockInflection.singular(name)
                return singular.prefix(1).uppercased() + singular.dropFirst()
            }
            var entries: [JSONValue] = []
            for (field, messages) in error.fieldErrors {
                for message in messages {
                    var entry = JSONObject()
                    if let model { entry["resource"] = .string(model) }
                    if field != "base" { entry["field"] = .string(field) }
                    entry["code"] = "custom"
                    entry["message"] = .string(field == "base" ? message : "\(field) \(message)")
                    entries.append(.object(entry))
                }
            }
            return MockResponse(status: status, headers: error.headers,
                                body: .object(["message": "Validation Failed", "errors": .array(entries), "status": .string(String(status))]))
        case .problemDetails:
            var entries: [JSONValue] = []
            for (field, messages) in error.fieldErrors {
                for message in messages {
                    // `object.sha` → `#/object/sha`; an error about the whole body has no pointer.
                    var entry: JSONObject = ["detail": .string(message)]
                    if field != "base" {
                        let tokens = field.split(separator: ".", omittingEmptySubsequences: false).map {
                            $0.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
                        }
                        entry["pointer"] = .string("#/" + tokens.joined(separator: "/"))
                    }
                    entries.append(.object(entry))
                }
            }
            let members = error.fieldErrors.count
            let body: JSONObject = [
                "type": "about:blank",
                "title": .string(status == 400 ? "Bad Request" : "Unprocessable Content"),
                "status": .int(Int64(status)),
                "detail": .string(members == 1 ? "1 member of the request body is invalid." : "\(members) members of the request body are invalid."),
                "errors": .array(entries),
            ]
            return MockResponse(status: status, headers: error.headers + [(name: "Content-Type", value: "application/problem+json")],
                                body: .object(body))
        case .stripe:
            // One error: the first one refused.
            guard let (field, messages) = error.fieldErrors.first(where: { !$0.1.isEmpty }), let message = messages.first else {
                return MockResponse(status: error.status, headers: error.headers, body: error.body)
            }
            var object: JSONObject = ["type": "invalid_request_error", "code": "parameter_invalid",
                                      "message": .string(field == "base" ? message : "\(field) \(message)")]
            if field != "base" { object["param"] = .string(field) }
            return MockResponse(status: status, headers: error.headers, body: .object(["error": .object(object)]))
        case .jsonAPI:
            var entries: [JSONValue] = []
            for (field, messages) in error.fieldErrors {
                for message in messages {
                    // `object.sha` → `/data/attributes/object/sha`; an error about the whole body has no source.
                    var entry: JSONObject = ["status": .string(String(status)), "title": "Invalid Attribute", "detail": .string(message)]
                    if field != "base" {
                        let tokens = field.split(separator: ".", omittingEmptySubsequences: false).map {
                            $0.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
                        }
                        entry["source"] = .object(["pointer": .string("/data/attributes/" + tokens.joined(separator: "/"))])
                    }
                    entries.append(.object(entry))
                }
            }
            return MockResponse(status: status, headers: error.headers + [(name: "Content-Type", value: "application/vnd.api+json")],
                                body: .object(["errors": .array(entries)]))
        }
    }
}
