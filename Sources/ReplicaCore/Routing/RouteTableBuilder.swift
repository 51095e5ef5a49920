/// One registered route: a method, a pattern and what the route leads to.
///
/// ```swift
/// let entry = RouteEntry(method: .get, pattern: try RoutePattern("/users/:id"), target: "User")
/// ```
public struct RouteEntry<Target: Sendable>: Sendable {
    /// The method the route answers.
    public let method: HTTPMethod
    /// The pattern the path must match.
    public let pattern: RoutePattern
    /// What the route leads to (an entity, a handler, …).
    public let target: Target

    /// Creates a route entry.
    ///
    /// ```swift
    /// let entry = RouteEntry(method: .post, pattern: try RoutePattern("/users"), target: "User")
    /// ```
    ///
    /// - Parameters:
    ///   - method: The method the route answers.
    ///   - pattern: The pattern the path must match.
    ///   - target: What the route leads to.
    public init(method: HTTPMethod, pattern: RoutePattern, target: Target) {
        self.method = method
        self.pattern = pattern
        self.target = target
    }
}

/// A mutable list of routes that freezes into an immutable, `Sendable` ``RouteTrie``.
///
/// Adding a route never fails on conflicts; ``build()`` checks the whole table
/// and refuses duplicate and ambiguous routes, naming both.
///
/// ```swift
/// var builder = RouteTableBuilder<String>()
/// try builder.add(method: .get, pattern: "/users", target: "users.index")
/// try builder.add(method: .get, pattern: "/users/:id", target: "users.show")
/// let trie = try builder.build()
/// trie.match(method: .get, path: "/users/42")?.parameters["id"]   // "42"
/// ```
public struct RouteTableBuilder<Target: Sendable>: Sendable {
    /// The routes added so far, in registration order.
    public private(set) var routes: [RouteEntry<Target>] = []

    /// Creates an empty builder.
    ///
    /// ```swift
    /// var builder = RouteTableBuilder<String>()
    /// ```
    public init() {}

    /// Adds a route for one method.
    ///
    /// ```swift
    /// builder.add(method: .get, pattern: try RoutePattern("/users/:id"), target: "users.show")
    /// ```
    ///
    /// - Parameters:
    ///   - method: The method the route answers.
    ///   - pattern: The pattern the path must match.
    ///   - target: What the route leads to.
    public mutating func add(method: HTTPMethod, pattern: RoutePattern, target: Target) {
        routes.append(RouteEntry(method: method, pattern: pattern, target: target))
    }

    /// Parses a pattern and adds a route for one method.
    ///
    /// ```swift
    /// try builder.add(method: .delete, pattern: "/users/{id}", target: "users.delete")
    /// ```
    ///
    /// - Parameters:
    ///   - method: The method the route answers.
    ///   - pattern: The pattern text, as accepted by ``RoutePattern/init(_:)``.
    ///   - target: What the route leads to.
    /// - Throws: `RouteError` with code `.invalidPattern` when the pattern does not parse.
    public mutating func add(method: HTTPMethod, pattern: String, target: Target) throws(RouteError) {
        add(method: method, pattern: try RoutePattern(pattern), target: target)
    }

    /// Parses a pattern and adds a route for each of several methods.
    ///
    /// ```swift
    /// try builder.add(methods: [.put, .patch], pattern: "/users/:id", target: "users.update")
    /// ```
    ///
    /// - Parameters:
    ///   - methods: The methods the route answers.
    ///   - pattern: The pattern text, as accepted by ``RoutePattern/init(_:)``.
    ///   - target: What the route leads to.
    /// - Throws: `RouteError` with code `.invalidPattern` when the pattern does not parse.
    public mutating func add(methods: some Sequence<HTTPMethod>, pattern: String, target: Target) throws(RouteError) {
        let parsed = try RoutePattern(pattern)
        for method in methods {
            add(method: method, pattern: parsed, target: target)
        }
    }

    /// Checks the routes and freezes them into an immutable trie.
    ///
    /// ```swift
    /// let trie = try builder.build()
    /// ```
    ///
    /// - Returns: The trie, safe to share between tasks and threads.
    /// - Throws: `RouteError` with code `.duplicateRoute` when a method and pattern
    ///   were added twice, or `.ambiguousRoutes` when two routes for the same
    ///   method differ only by variable names (`/users/:id`, `/users/:userID`).
    ///   The message names both patterns.
    public func build() throws(RouteError) -> RouteTrie<Target> {
        try RouteTrie(routes: routes)
    }
}
