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
    /// How the route syncs incrementally (a since-cursor, tombstones), or `nil` for full syncs only.
    public var incremental: IncrementalSync?
    /// The Server-Sent Events stream that says when the route's data changed, or `nil`.
    public var push: PushSource?
    /// How the route's collection goes on past its first page (`"pagination"` in a schema
    /// file); `nil` for the schema's ``Schema/pagination``, and without one `Link` headers.
    ///
    /// ```swift
    /// Route(.get, "/v1/customers", target: .entity("Customer"), stale: .delete, envelope: "data", pagination: .stripe)
    /// ```
    public var pagination: PaginationRule?
    /// How the objects of a response are routed to entities by a key they carry (JSON:API's
    /// `type`, with `included` stored too), or `nil` when every object is of the route's target.
    ///
    /// ```swift
    /// Route(.get, "/articles", target: .entity("Article"), pagination: .jsonAPI,
    ///       discriminator: .jsonAPI(["articles": "Article", "people": "Person"]))
    /// ```
    public var discriminator: Discriminator?

    /// Creates a route.
    ///
    /// ```swift
    /// Route(.get, "/reports/:id", target: .data, timeout: .seconds(120), headers: ["Accept": "application/json"])
    /// Route(.get, "/user.json", target: .entity("User"), singleton: true)
    /// Route(.get, "/people", target: .entity("Person"), stale: .delete,
    ///       incremental: IncrementalSync(cursor: .header("X-Cursor"), items: JSONPointer("/items"),
    ///                                    deleted: JSONPointer("/deleted")),
    ///       push: PushSource(events: "/events"))
    /// Route(.get, "/conversations.list", target: .entity("Channel"), envelope: "channels", pagination: .slack)
    /// Route(.get, "/articles", target: .entity("Article"), discriminator: .jsonAPI(["articles": "Article", "people": "Person"]))
    /// ```
    public init(_ method: HTTPMethod = .get, _ path: String, target: RouteTarget,
                stale: StalePolicy = .keep, envelope: String? = nil, timeout: Duration? = nil, headers: [String: String] = [:],
                singleton: Bool = false, incremental: IncrementalSync? = nil, push: PushSource? = nil,
                pagination: PaginationRule? = nil, discriminator: Discriminator? = nil) {
        self.pagination = pagination
        self.discriminator = discriminator
        self.method = method
        self.path = path
        self.target = target
        self.stalePolicy = stale
        self.envelope = envelope
        self.timeout = timeout
        self.headers = headers
        self.singleton = singleton
        self.incremental = incremental
        self.push = push
    }
}

/// A Server-Sent Events stream that announces changes: each event triggers a sync of the
/// synced paths it names (``ReplicaService`` and ``ReplicaClient/subscribe(_:)`` listen to it).
///
/// In a schema file it is the route's `"push"` object: `{"events": "/events"}`.
///
/// ```swift
/// Route(.get, "/people", target: .entity("Person"), push: PushSource(events: "/events"))
/// ```
public struct PushSource: Sendable, Hashable {
    /// The path of the event stream, relative to the client's base URL (`/events`).
    public var events: String

    /// Creates a push source.
    ///
    /// ```swift
    /// PushSource(events: "/events")
    /// ```
    ///
    /// - Parameter events: The event stream's path.
    public init(events: String) {
        self.events = events
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
