/// One request routed to a resource, as a controller sees it.
///
/// ```swift
/// func show(_ request: MockRequest) async throws -> MockResponse {
///     guard let id = request.id else { throw MockHTTPError.notFound(request.path) }
///     return .json(["id": id, "visits": 42])
/// }
/// ```
public struct MockRequest: Sendable {
    /// The parent of a nested route (`/people/1/cars`): its relation, resource and key.
    public struct ParentReference: Sendable {
        /// The child's parent relation (parent resource name and the child's key property).
        public var parent: MockParent
        /// The parent resource.
        public var resource: MockResource
        /// The parent's primary key from the path.
        public var id: JSONValue
    }

    /// The HTTP method (`GET`, `POST`…).
    public var method: String
    /// The decoded path, without the query.
    public var path: String
    /// The decoded path segments (`["people", "1", "cars"]`).
    public var segments: [String]
    /// The query items in order, percent-decoded.
    public var queryItems: [(name: String, value: String)]
    /// The request headers, names lowercased.
    public var headers: [String: String]
    /// The parsed JSON body; nil when the request has none.
    public var body: JSONValue?
    /// The resource the route names.
    public var resource: MockResource
    /// The action the route maps to; nil for a route beyond CRUD (see `MockController.custom(_:)`).
    public var action: MockAction?
    /// The primary key of a member route (`/people/:id`); for a composite key the array of its
    /// parts (`/refs/octocat/Hello-World/refs%2Fheads%2Fmain` → `["octocat", "Hello-World", "refs/heads/main"]`).
    public var id: JSONValue?
    /// The parent of a nested route.
    public var parent: ParentReference?
    /// The leading parts of a composite key that a collection route gives (`/refs/octocat/Hello-World`
    /// → `["owner": "octocat", "repo": "Hello-World"]`): the index lists the objects with them, a
    /// create sets them. Empty on other routes.
    public var keyPrefix: JSONObject = [:]
    /// The values an API route's path gives a collection (``MockRoute``: `GET /users/7/posts` →
    /// `["user_id": 7]`): the index lists the objects with them, a create sets them. Empty on
    /// RESTEasy's routes.
    public var scope: JSONObject = [:]
    /// The store to read and write.
    public var store: any MockStore
    /// The resource's serializer.
    public var serializer: any MockSerializer
    /// `http://host:port`, for links.
    public var baseURL: String
    /// The API route that shows one object by key (`GET /pet/:petId`), for the `Location` of created objects.
    var memberRoute: CompiledMockRoute?
    /// The key wrapping an API route's index (`"data"` answers `{"data": [...]}`).
    var envelope: String?
    /// The server's change feed: collection cursors and `?since=` answers.
    public var changes: MockChangeFeed?
    /// The server's resources by name, for nested to-one objects (``MockResource/toOne``).
    var resources: [String: MockResource] = [:]
    /// How the index pages: the route's, the resource's or the server's style, and the page sizes.
    var paging = MockPagingSettings()

    /// The first query value named `name`.
    ///
    /// ```swift
    /// let verbose = request.query("verbose") == "1"
    /// ```
    /// - Parameters:
    ///   - name: the parameter name.
    /// - Returns: its value, or nil.
    public func query(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }

    /// The header named `name` (case-insensitive).
    ///
    /// ```swift
    /// let token = request.header("Authorization")
    /// ```
    /// - Parameters:
    ///   - name: the header name.
    /// - Returns: its value, or nil.
    public func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }
}

/// The CRUD actions, as routed.
///
/// ```swift
/// if request.action == .create { ... }
/// ```
public enum MockAction: String, Sendable, Hashable, CaseIterable {
    /// `GET /people`, `GET /people/:id/cars`.
    case index
    /// `GET /people/:id`.
    case show
    /// `POST /people`, `POST /people/:id/cars`.
    case create
    /// `PUT` or `PATCH /people/:id`.
    case update
    /// `DELETE /people/:id`.
    case destroy

    /// The actions-mask bit of this action.
    public var mask: MockActions {
        switch self {
        case .index: return .index
        case .show: return .show
        case .create: return .create
        case .update: return .update
        case .destroy: return .destroy
        }
    }
}

/// A controller's answer: a status, headers and an optional JSON body.
///
/// ```swift
/// return MockResponse.json(["ok": true], status: 202)
/// ```
public struct MockResponse: Sendable {
    /// The HTTP status.
    public var status: Int
    /// Extra headers, in order.
    public var headers: [(name: String, value: String)]
    /// The JSON body; nil for none (204).
    public var body: JSONValue? {
        didSet {
            encodedBody = nil
            rendered = nil
        }
    }
    /// `body` serialized, once the server needed its bytes (for the ETag), so that it is not serialized twice.
    var encodedBody: [UInt8]?
    /// The body rendered straight from the store's rows (``MockCRUD``'s index on the fast path), when `body` is nil;
    /// only the server's own responses, never seen by a controller, carry one.
    var rendered: MockRenderedBody?

    /// The body's bytes, serialized once.
    mutating func bodyBytes() -> [UInt8]? {
        guard let body else { return nil }
        if let encodedBody { return encodedBody }
        let bytes = body.serializedBytes()
        encodedBody = bytes
        return bytes
    }

    /// Creates a response.
    ///
    /// ```swift
    /// MockResponse(status: 204)
    /// ```
    /// - Parameters:
    ///   - status: the HTTP status.
    ///   - headers: extra headers.
    ///   - body: the JSON body, nil for none.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: JSONValue? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response.
    ///
    /// ```swift
    /// MockResponse.json(["id": 1], status: 201)
    /// ```
    /// - Parameters:
    ///   - body: the body.
    ///   - status: the status, 200 by default.
    /// - Returns: the response.
    public static func json(_ body: JSONValue, status: Int = 200) -> MockResponse {
        MockResponse(status: status, body: body)
    }

    /// 204 No Content.
    public static let noContent = MockResponse(status: 204)
}
