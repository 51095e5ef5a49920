import Foundation
import ReplicaCore

/// Calls a REST API and syncs what it returns through the route table into the store.
///
/// RSAPI's `call:params:withDelegate:`, RestingKit's client and ApiModel's `find`/`save`, as one API.
///
/// ```swift
/// let client = ReplicaClient(engine: engine, configuration: configuration)
/// let result = try await client.call("/users/:userID/posts", params: ["userID": 3, "page": 2])
/// print(result.changes)
/// ```
///
/// The same client syncs into PostgreSQL (`ReplicaClient(store: replica, configuration:)` with a
/// `PostgresReplica`): every page of a call commits in one transaction with its validators, which
/// live in the database beside the rows, so every service sharing it revalidates from them.
public final class ReplicaClient: Sendable {
    /// The store responses are synced into.
    public let store: any ReplicaStore
    /// The configuration.
    public let configuration: ClientConfiguration
    private let currentEnvironment: EnvironmentState
    /// The sync loops ``poke(_:)`` wakes.
    let pokes = PokeBoard()

    /// A client syncing into `store`: an ``SQLiteReplica`` or a `PostgresReplica`.
    ///
    /// ```swift
    /// let store = try await openReplicaStore(url: "postgres://replica@db:5432/cache", schema: schema)
    /// let client = ReplicaClient(store: store, configuration: ClientConfiguration(
    ///     transport: HTTPTransport(), baseURLs: [.production: api]))
    /// ```
    public init(store: any ReplicaStore, configuration: ClientConfiguration) {
        self.store = store
        self.configuration = configuration
        self.currentEnvironment = EnvironmentState(configuration.environment)
    }

    /// The environment requests go to now: the configuration's until ``use(_:)`` switches it.
    ///
    /// ```swift
    /// print(client.environment)   // production
    /// ```
    public var environment: Environment { currentEnvironment.value }

    /// Switches the environment (its base URL) for the calls that start from now on, as a debug
    /// menu switches between development and production at run time.
    ///
    /// ```swift
    /// try client.use(.development)   // http://127.0.0.1:8888 from the next call on
    /// ```
    ///
    /// - Throws: ``ClientError`` `.invalidRequest` when the configuration has no base URL for it.
    public func use(_ environment: Environment) throws {
        guard configuration.baseURLs[environment] != nil else {
            throw ClientError(.invalidRequest, "no base URL for the \(environment) environment")
        }
        currentEnvironment.value = environment
    }

    /// A prepared request: the route, the concrete path and what is left of the parameters.
    struct Prepared: Sendable {
        var method: HTTPMethod
        var entry: RouteTable.Entry
        /// The method whose route reads the response (GET's, when the method has no route of its own).
        var syncMethod: HTTPMethod
        var path: String
        var remaining: [String: Parameter]
        /// This call's own timeout, overriding the route's and the configuration's.
        var timeout: Duration?
        var routeName: String { entry.pattern.description }
    }

    /// Calls `path` and syncs the response through its route.
    ///
    /// `path` is either a concrete path (`/users/3/posts`) or a pattern whose `:variables` are
    /// filled from `params` and the variable providers. The remaining parameters go into the
    /// query string (GET, DELETE, HEAD) or the body (JSON by default; form or multipart when the
    /// route says so; multipart whenever a parameter holds a ``FileUpload``).
    ///
    /// ```swift
    /// try await client.call("/posts", method: .post, params: ["title": "Hello"])
    /// ```
    ///
    /// - Parameters:
    ///   - path: A path or route pattern.
    ///   - method: The HTTP method.
    ///   - params: Path variables, query or body parameters.
    ///   - headers: Headers for this call; they override providers.
    ///   - options: Sync options (invalid-object policy, progress …).
    ///   - uploadProgress: Called as the request body is sent, with bytes sent and the total when known.
    ///   - timeout: How long this call's exchanges may take, overriding the route's (schema) and the
    ///     configuration's.
    /// - Returns: The HTTP status, headers and what changed.
    /// - Throws: ``ClientError`` (status > 299 with field errors, connection, timeout, empty body) or
    ///   ``SyncError``; the store is then unchanged.
    ///
    /// A path that matches no route (ApiModel's `Api.get(path)`) is an ad-hoc call: nothing is
    /// synced, and the response's JSON is in the result's ``CallResult/data`` (`nil` for an empty
    /// body); ``call(_:method:params:headers:as:)`` decodes it.
    @discardableResult
    public func call(_ path: String, method: HTTPMethod = .get, params: [String: Parameter] = [:],
                     headers: HeaderFields = HeaderFields(), options: SyncOptions = SyncOptions(),
                     uploadProgress: (@Sendable (Int64, Int64?) -> Void)? = nil,
                     timeout: Duration? = nil) async throws -> CallResult {
        switch try await resolve(path, method: method, params: params) {
        case .routed(var prepared):
            prepared.timeout = timeout
            return try await execute(prepared, headers: headers, options: options, uploadProgress: uploadProgress)
        case .unrouted(let concrete, let remaining):
            return try await adHoc(concrete, method: method, remaining: remaining, headers: headers, uploadProgress: uploadProgress,
                                   timeout: timeout)
        }
    }

    /// The delegate form of ``call(_:method:params:headers:options:)``: the outcome goes to
    /// `delegate` on `queue`.
    ///
    /// The delegate hears the JSON of every page first (``ReplicaClientDelegate/client(_:didReturnJSON:forRoute:)``),
    /// then the result.
    public func call(_ path: String, method: HTTPMethod = .get, params: [String: Parameter] = [:],
                     delegate: any ReplicaClientDelegate, queue: DispatchQueue) {
        Task {
            do {
                let result: CallResult
                var pages: [JSONValue?]
                switch try await resolve(path, method: method, params: params) {
                case .routed(let prepared):
                    let capture = BodyCapture(limit: configuration.maxDecodedBodyBytes)
                    result = try await execute(prepared, headers: HeaderFields(), options: SyncOptions(), capture: capture)
                    pages = prepared.entry.entity == nil ? [result.data] : capture.json
                case .unrouted(let concrete, let remaining):
                    result = try await adHoc(concrete, method: method, remaining: remaining, headers: HeaderFields(),
                                             uploadProgress: nil)
                    pages = [result.data]
                }
                if pages.isEmpty { pages = [nil] }   // every page answered 304
                let heard = pages
                queue.async {
                    for json in heard { delegate.client(self, didReturnJSON: json, forRoute: result.route) }
                    delegate.client(self, didReturn: result, forRoute: result.route)
                }
            } catch {
                queue.async { delegate.client(self, didFail: error, forRoute: path) }
            }
        }
    }

    /// A path resolved for a call: through a route, or (no route matches) as an ad-hoc call.
    enum Resolved {
        case routed(Prepared)
        case unrouted(path: String, remaining: [String: Parameter])
    }

    /// Like ``resolve(_:method:params:)``, for operations that need a route (model operations).
    func prepare(_ path: String, method: HTTPMethod, params: [String: Parameter]) async throws -> Prepared {
        switch try await resolve(path, method: method, params: params) {
        case .routed(let prepared):
            return prepared
        case .unrouted(let concrete, _):
            let routePath = concrete.split(separator: "?", maxSplits: 1).first.map(String.init) ?? concrete
            let closest = store.routes.closestRoutes(to: routePath)
            throw ClientError(.invalidRequest, "no route for \(method) \(routePath)"
                              + (closest.isEmpty ? "" : "; closest: " + closest.joined(separator: ", ")))
        }
    }

    /// Fills the path's variables and finds its route.
    func resolve(_ path: String, method: HTTPMethod, params: [String: Parameter]) async throws -> Resolved {
        var remaining = params
        var concrete = path
        if path.contains(":") || path.contains("{") {
            let pattern: RoutePattern
            do { pattern = try RoutePattern(path) } catch {
                throw ClientError(.invalidRequest, error.message)
            }
            var values: [String: String] = [:]
            for variable in pattern.variables {
                if let value = remaining[variable]?.text {
                    values[variable] = value
                    remaining[variable] = nil
                } else if let provider = configuration.variableProviders[variable], let value = try await provider() {
                    values[variable] = value
                } else {
                    throw ClientError(.invalidRequest, "missing value for variable '\(variable)' of \(pattern)")
                }
            }
            do { concrete = try pattern.path(with: values) } catch {
                throw ClientError(.invalidRequest, error.message)
            }
        }
        let routePath = concrete.split(separator: "?", maxSplits: 1).first.map(String.init) ?? concrete
        if let (entry, _) = store.routes.match(method, routePath) {
            return .routed(Prepared(method: method, entry: entry, syncMethod: method, path: concrete, remaining: remaining))
        }
        // A method without a route of its own (PUT /posts/7) reads its response as the GET route of the path.
        if method != .get, let (entry, _) = store.routes.match(.get, routePath) {
            return .routed(Prepared(method: method, entry: entry, syncMethod: .get, path: concrete, remaining: remaining))
        }
        return .unrouted(path: concrete, remaining: remaining)
    }

    /// The absolute URL of `path` (with `query` appended) in the current environment.
    func url(for path: String, query: [(String, Parameter)]) throws -> URL {
        let environment = self.environment
        guard let base = configuration.baseURLs[environment] else {
            throw ClientError(.invalidRequest, "no base URL for the \(environment) environment")
        }
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        text += path.hasPrefix("/") ? path : "/" + path
        if !query.isEmpty { text += (text.contains("?") ? "&" : "?") + FormEncoding.query(query) }
        guard let url = URL(string: text) else { throw ClientError(.invalidRequest, "invalid URL \(text)") }
        return url
    }

    func request(for prepared: Prepared, headers: HeaderFields, extraQuery: [(String, Parameter)] = []) async throws -> ClientRequest {
        // The route's headers (schema) under the call's own.
        var merged = HeaderFields(prepared.entry.route.headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        for (name, value) in headers { merged[name] = value }
        var request = try await request(method: prepared.method, path: prepared.path, remaining: prepared.remaining,
                                        route: prepared.routeName, headers: merged, extraQuery: extraQuery)
        if let timeout = prepared.timeout ?? prepared.entry.route.timeout { request.timeout = timeout }
        return request
    }

    /// A request of `method` to `path`: the remaining parameters in the query string (GET, DELETE,
    /// HEAD) or the body (JSON, or the route's encoding; multipart with a file).
    func request(method: HTTPMethod, path: String, remaining: [String: Parameter], route: String?, headers: HeaderFields,
                 extraQuery: [(String, Parameter)] = []) async throws -> ClientRequest {
        let remaining = try await applyParameterHooks(method: method, path: path, route: route, params: remaining)
        let sendsBody = method == .post || method == .put || method == .patch
        var query = sendsBody ? [] : Parameter.flatten(remaining)
        query += extraQuery
        var request = ClientRequest(method: method, url: try url(for: path, query: query),
                                  timeout: configuration.timeout, route: route)
        confine(&request)
        request.headers = try await baseHeaders()
        if sendsBody {
            let encoding: BodyEncoding = remaining.values.contains(where: \.containsFile)
                ? .multipart : route.flatMap { configuration.bodyEncodings[$0] } ?? .json
            switch encoding {
            case .json:
                request.body = .bytes(Parameter.object(remaining).json.serializedBytes())
                request.headers["Content-Type"] = "application/json"
            case .form:
                request.body = .bytes(Array(FormEncoding.query(Parameter.flatten(remaining)).utf8))
                request.headers["Content-Type"] = "application/x-www-form-urlencoded"
            case .multipart:
                let body = MultipartBody(fields: Parameter.flatten(remaining))
                request.body = .multipart(body)
                request.headers["Content-Type"] = body.contentType
            }
        }
        for (name, value) in headers { request.headers[name] = value }
        if request.headers["User-Agent"] == nil { request.headers["User-Agent"] = ClientConfiguration.defaultUserAgent }
        return request
    }

    /// The headers every request starts from: the configuration's, the schema's top-level
    /// `headers` over them, then the header providers' values, and `Accept: application/json`
    /// unless one of them gave an `Accept`.
    func baseHeaders() async throws -> HeaderFields {
        var headers = configuration.headers
        for (name, value) in store.schema.headers.sorted(by: { $0.key < $1.key }) { headers[name] = value }
        for provider in configuration.headerProviders {
            if let value = try await provider.value() { headers[provider.name] = value }
        }
        if headers["Accept"] == nil { headers["Accept"] = "application/json" }
        return headers
    }

    /// Gives `request` the configuration's body limits, allowed hosts and redirect limit.
    func confine(_ request: inout ClientRequest) {
        request.bodyLimits = configuration.bodyLimits
        request.allowedHosts = configuration.allowedHosts
        request.maxRedirects = configuration.maxRedirects
    }

    /// `params` after every ``ClientConfiguration/parameterHooks`` hook.
    func applyParameterHooks(method: HTTPMethod, path: String, route: String?,
                             params: [String: Parameter]) async throws -> [String: Parameter] {
        guard !configuration.parameterHooks.isEmpty else { return params }
        var request = RequestParameters(method: method, path: path, route: route, params: params)
        for hook in configuration.parameterHooks { try await hook(&request) }
        return request.params
    }

    /// Sends a request through the interceptors and the transport, turning failures into ``ClientError``s;
    /// the active trace's headers go with it.
    func send(_ request: ClientRequest) async throws -> ClientResponse {
        let request = traced(request)
        let what = "\(request.method) \(request.url.absoluteString)"
        var response: ClientResponse
        do {
            response = try await configuration.interceptors.run(request, transport: configuration.transport)
        } catch var error as ClientError {
            if error.request == nil { error.request = what }
            throw error
        } catch is CancellationError {
            throw ClientError(.cancelled, "cancelled", request: what)
        } catch {
            throw ClientError(.connection, String(describing: error), request: what)
        }
        guard response.status <= 299 || response.status == 304 else {
            let body = (try? await response.body.collect(upTo: 1 << 20)) ?? []
            throw ClientError(status: response.status, headers: response.headers, body: body, request: what)
        }
        if request.bodyLimits.maxBytes < .max {
            // The transport's own limit aside (a custom one may have none), the body stops past the maximum.
            response.body = ResponseBody(LimitedBody(body: response.body, limits: request.bodyLimits, request: what,
                                                     encoding: response.headers["Content-Encoding"]))
        }
        return response
    }
}

/// The environment a client sends to, switchable at run time.
final class EnvironmentState: Sendable {
    private let current: Locked<Environment>

    init(_ environment: Environment) { current = Locked(environment) }

    var value: Environment {
        get { current.value }
        set { current.withLock { $0 = newValue } }
    }
}
