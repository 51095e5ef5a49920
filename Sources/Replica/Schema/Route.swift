/// What the response of one API path means: the declaration of a route in a schema.
///
/// ```swift
/// Route(.get, "/users/:userID/posts", target: .entity("Post"))
/// Route(.get, "/bootstrap", target: .many)
/// Route(.get, "/stats", target: .data)
/// Route(.get, "/user.json", target: .entity("User"), singleton: true)   // the signed-in user
/// ```
public struct Route: Sendable, Hashable {
    /// The HTTP method, upper case (`GET`).
    public var method: HTTPMethod
    /// The path pattern with `:variables` (or `{variables}`).
    public var path: String
    /// What the response holds.
    public var target: RouteTarget
    /// What happens to stored rows of the scope that a complete collection response did not contain.
    public var stalePolicy: StalePolicy
    /// A dot-separated envelope for this route's responses, overriding the schema's; `""` means none.
    public var envelope: String?
    /// How long a client call through this route may take, overriding the client's timeout
    /// (a call's own timeout overrides both); `nil` for the client's.
    public var timeout: Duration?
    /// Headers a client sends with every call through this route (a call's own headers override them).
    public var headers: [String: String]
    /// `true` for a singleton resource (ApiModel's `/user.json`, the signed-in user): the path
    /// names one object without its key, the response is that object, and nothing else of the
    /// entity is ever stale because of it. `ReplicaClient.find(_:)` reads through it.
    public var singleton: Bool

    /// Creates a route.
    ///
    /// ```swift
    /// Route(.get, "/reports/:id", target: .data, timeout: .seconds(120), headers: ["Accept": "application/json"])
    /// Route(.get, "/user.json", target: .entity("User"), singleton: true)
    /// ```
    public init(_ method: HTTPMethod = .get, _ path: String, target: RouteTarget,
                stale: StalePolicy = .keep, envelope: String? = nil, timeout: Duration? = nil, headers: [String: String] = [:],
                singleton: Bool = false) {
        self.method = method
        self.path = path
        self.target = target
        self.stalePolicy = stale
        self.envelope = envelope
        self.timeout = timeout
        self.headers = headers
        self.singleton = singleton
    }
}

/// The target of a route.
public enum RouteTarget: Sendable, Hashable, CustomStringConvertible {
    /// The response holds one object or an array of objects of this entity.
    case entity(String)
    /// RSAPI's DATA: hand back the parsed JSON, store nothing.
    case data
    /// RSAPI's MANY: several entity collections keyed by entity (or table) name.
    case many

    public var description: String {
        switch self {
        case .entity(let name): return name
        case .data: return "DATA"
        case .many: return "MANY"
        }
    }
}

/// What a complete collection response does to rows it did not contain.
public enum StalePolicy: String, Sendable, Hashable, CaseIterable {
    /// Delete rows of the route's scope that the response did not contain.
    case delete
    /// Keep them.
    case keep
}
