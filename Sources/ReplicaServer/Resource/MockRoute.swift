import ReplicaCore

/// One of an API's own routes (`POST /pet`, `GET /pet/:petId`, `GET /repos/:owner/:repo/issues`),
/// served as a resource's CRUD beside RESTEasy's `/<resource>` routes, so that a mock server answers
/// the paths a client of the real API calls.
///
/// What a route does follows from its method and the shape of its path:
///
/// | path | `GET` | `POST` | `PUT`, `PATCH` | `DELETE` |
/// |---|---|---|---|---|
/// | ends in the key (`/pet/:petId`, `/refs/:owner/:repo/:ref`) | show | update | update | destroy |
/// | ends in another property (`/user/:username`) | show the one object with it | update it | update it | destroy it |
/// | anything else (`/pet`, `/users/:user_id/posts`) | index | create | update the body's key | 405 |
///
/// A variable names a property of the resource (its JSON key) when it is bound to one. The variables
/// of a collection path filter the index and are set on created objects (`GET /users/7/posts` lists
/// the posts with `user_id` 7). An unbound variable at the end of a path is the key (`:petId` is `id`);
/// one elsewhere is only matched. Where a path matches but no route takes the method, RESTEasy's routes
/// are tried, then the answer is 405 with the route's methods. A literal segment wins over a variable
/// (`GET /pet/findByStatus` is not `GET /pet/:petId`).
///
/// ```swift
/// let routes = [
///     MockRoute("GET", "/pet/:petId", resource: "pets"),
///     MockRoute("POST", "/pet", resource: "pets"),
///     MockRoute("GET", "/pet/findByStatus", resource: "pets"),
/// ]
/// let server = try await MockServer.start(resources: resources, routes: routes)
/// // GET /pet/findByStatus?status=sold lists sold pets; POST /pet creates one.
/// ```
public struct MockRoute: Sendable, Hashable, CustomStringConvertible {
    /// The HTTP method, upper case: `GET`, `POST`, `PUT`, `PATCH` or `DELETE`.
    public var method: String
    /// The path template: `/pet/:petId`; OpenAPI's `/pet/{petId}` is read the same. It is read and
    /// matched as the client reads its routes (a ``RoutePattern``: `:id.json` is the variable `id`
    /// before the suffix `.json`, a literal's `%XX` escapes are decoded); a path no pattern reads
    /// (an empty segment, a variable name that is no identifier) is refused by the server.
    public var path: String
    /// The resource it serves (its name, as in `/pets`).
    public var resource: String
    /// The property each variable names (`["user_id": "user_id", "userID": "user_id"]`); a variable
    /// absent here is bound to a property of its own name when the resource has one.
    public var bindings: [String: String]
    /// A dot-separated key that wraps the index's array (`"data"` answers `{"data": [...]}`); nil for a bare array.
    public var envelope: String?
    /// How the index of this route pages (``MockPagination``), overriding the resource's and the server's;
    /// nil, the default, takes theirs (`replica serve --pagination /v1/customers=stripe` sets it).
    public var pagination: MockPagination?

    /// Creates a route.
    ///
    /// ```swift
    /// let route = MockRoute("GET", "/users/:userID/posts", resource: "posts", bindings: ["userID": "user_id"])
    /// let customers = MockRoute("GET", "/v1/customers", resource: "customers", pagination: .stripe)
    /// ```
    /// - Parameters:
    ///   - method: the HTTP method.
    ///   - path: the path template, `:name` or `{name}` for a variable.
    ///   - resource: the resource name.
    ///   - bindings: the property of each variable whose name is not the property's.
    ///   - envelope: the key wrapping the index's array, if any (``MockPagination/link`` only).
    ///   - pagination: how the index pages, nil for the resource's or the server's style.
    public init(_ method: String, _ path: String, resource: String, bindings: [String: String] = [:], envelope: String? = nil,
                pagination: MockPagination? = nil) {
        self.method = method.uppercased()
        self.path = path
        self.resource = resource
        self.bindings = bindings
        self.envelope = envelope
        self.pagination = pagination
    }

    /// `GET /pet/:petId → pets`.
    public var description: String { "\(method) \(path) → \(resource)" }

    /// The routes of a schema that target an entity, each bound to the entity's resource: its
    /// variables bound to the attributes they name (under their JSON keys), its envelope the route's
    /// or the schema's, and a GET's pagination the style that answers as the route's (or the
    /// schema's) `"pagination"` reads (``MockPagination/init(mirroring:envelope:)``), so that one
    /// schema file drives the client and the mock server alike. DATA and MANY routes, which no
    /// resource answers, are left out.
    ///
    /// ```swift
    /// let schema = try Schema(contentsOf: URL(fileURLWithPath: "Schemas/blog.json"))
    /// MockRoute.routes(for: schema).map(\.description)
    /// // ["GET /users → users", "GET /users/:userID → users", "GET /users/:userID/posts → posts", …]
    /// ```
    /// - Parameters:
    ///   - schema: the schema.
    /// - Returns: one route per entity route of a method the mock server serves.
    public static func routes(for schema: Schema) -> [MockRoute] {
        schema.routes.compactMap { route -> MockRoute? in
            guard case .entity(let name) = route.target, let entity = schema.entity(named: name),
                  Self.methods.contains(route.method.rawValue) else { return nil }
            var bindings: [String: String] = [:]
            // Each variable names an attribute, by its name or its JSON key; bound to the attribute's property.
            let properties = entity.attributes.map { (attribute: $0, property: MockProperty($0, in: schema)) }
            for variable in (try? RoutePattern(route.path).variables) ?? [] {
                let named = properties.first { $0.attribute.name == variable } ?? properties.first { $0.property.name == variable }
                if let named { bindings[variable] = named.property.name }
            }
            // A JSON:API route's documents are written by its entity's serializer (``JSONAPISerializer``),
            // `data` included; its pagination mirrors as the `jsonapi` style's `data`.
            let isJSONAPI = route.discriminator?.layout == .jsonAPI && route.envelope == nil
            let envelope = isJSONAPI ? nil : route.envelope ?? schema.envelope
            // A GET collection that declares its pagination is answered in the style it reads.
            let pagination = route.method == .get ? (route.pagination ?? schema.pagination)
                .flatMap { MockPagination(mirroring: $0, envelope: isJSONAPI ? "data" : envelope) } : nil
            return MockRoute(route.method.rawValue, route.path, resource: entity.tableName, bindings: bindings,
                             envelope: envelope?.isEmpty == false ? envelope : nil, pagination: pagination)
        }
    }

    /// The methods a route can have.
    static let methods: Set<String> = ["GET", "POST", "PUT", "PATCH", "DELETE"]

    /// The path as the core's ``RoutePattern`` reads it (`:name` and `{name}` alike, `:id.json` a
    /// variable `id` with a suffix); a path without its leading `/` is read with it.
    ///
    /// - Throws: `RouteError` `.invalidPattern` for a path no pattern reads (an empty segment,
    ///   a variable name that is no identifier, one used twice).
    func pattern() throws(RouteError) -> RoutePattern {
        try RoutePattern(path.hasPrefix("/") ? path : "/" + path)
    }
}

/// A route checked against its resource: its core ``RoutePattern``, each variable's property, and its action.
struct CompiledMockRoute: Sendable {
    /// What the path addresses.
    enum Target: Sendable {
        /// The collection, filtered by the variables (a parent's key among them when one is a parent).
        case collection
        /// One object by its key.
        case key
        /// The one object whose properties equal the path's values (`/user/:username`).
        case lookup
    }

    let route: MockRoute
    /// The route's method, one of ``MockRoute/methods``.
    let method: HTTPMethod
    /// The path, matched by the core's routing (``MockRouteTable``).
    let pattern: RoutePattern
    /// The property of each variable, nil for one that only matches.
    let properties: [String: MockProperty]
    let target: Target

    /// Checks `route` against `resource`.
    ///
    /// - Throws: `MockServerError` `.invalidResource` for a method the server does not serve, a path
    ///   that is no route pattern, or a binding to a property the resource lacks.
    init(_ route: MockRoute, resource: MockResource) throws {
        func fail(_ message: String) -> MockServerError {
            MockServerError(code: .invalidResource, message: "route \(route.method) \(route.path): \(message)")
        }
        guard MockRoute.methods.contains(route.method), let method = HTTPMethod(rawValue: route.method) else {
            throw fail("the method must be GET, POST, PUT, PATCH or DELETE")
        }
        do {
            pattern = try route.pattern()
        } catch {
            throw fail(error.message)
        }
        self.route = route
        self.method = method
        var properties: [String: MockProperty] = [:]
        for name in pattern.variables {
            if let bound = route.bindings[name] {
                guard let property = resource.property(named: bound) else {
                    throw fail("variable :\(name) names \(bound), which \(resource.name) lacks")
                }
                properties[name] = property
            } else if let property = resource.property(named: name) {
                properties[name] = property
            }
        }
        let key = resource.primaryKey
        let last: String?
        switch pattern.segments.last {
        case .variable(let name)?, .suffixedVariable(let name, _)?: last = name
        case .literal?, nil: last = nil
        }
        guard let last else {
            self.properties = properties
            target = .collection
            return
        }
        if properties[last] == nil, key.kind != .composite {
            // `/pet/:petId`: an unbound last variable is the key.
            properties[last] = MockProperty(key.name, key.type)
        }
        let bound = Set(properties.values.map(\.name))
        let keyNames = Set(key.parts.map(\.name))
        if !keyNames.isSubset(of: bound) {
            // `/refs/:owner/:repo` names some parts of a key: the objects with them; `/user/:username` one object.
            target = key.kind == .composite ? .collection : .lookup
        } else {
            // The key and nothing else names one object by key; with more (`/users/:user_id/posts/:id`) all must match.
            target = bound == keyNames ? .key : .lookup
        }
        self.properties = properties
    }

    /// The values of a match's bound variables, typed as their properties; nil when a value cannot
    /// be its property's (`/pet/abc` for an integer key), which is then no match of this route.
    func values(_ parameters: RouteParameters) -> JSONObject? {
        var values = JSONObject()
        for (name, text) in parameters {
            guard let property = properties[name] else { continue }
            guard let value = MockPrimaryKey.parse(text, as: property) else { return nil }
            values[property.name] = value
        }
        return values
    }

    /// The action for a method on this path.
    func action(for method: String) -> MockAction? {
        switch (target, method) {
        case (.collection, "GET"): return .index
        case (.collection, "POST"): return .create
        case (.collection, "PUT"), (.collection, "PATCH"): return .update
        case (.collection, _): return nil
        case (_, "GET"): return .show
        case (_, "DELETE"): return .destroy
        default: return .update
        }
    }

    /// The path of one object by this (GET, by-key) route, built by the core's reverse routing
    /// (``RoutePattern/path(_:)``): `/pet/7`; nil when a variable has no value.
    func path(of object: JSONObject) -> String? {
        try? pattern.path { name in
            guard let property = properties[name], let value = object[property.name], !value.isNull else { return nil }
            return value.stringValue ?? value.serialized()
        }
    }
}
