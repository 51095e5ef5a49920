extension RouteTrie {
    /// Finds the route for a method and a request path.
    ///
    /// ```swift
    /// let match = trie.match(method: .get, path: "/users/42/posts?page=2")
    /// match?.parameters["id"]   // "42"
    /// ```
    ///
    /// Rules:
    /// - The path is split on `/` before anything is decoded, so `%2F` inside a
    ///   variable stays inside that variable. The leading `/` is optional, one
    ///   trailing `/` is ignored, and so is everything from the first `?` or `#`.
    /// - At each level a literal segment wins over a suffixed variable
    ///   (`:id.json`, the longest suffix first), which wins over a plain
    ///   variable; when a branch leads to no route for this method, matching
    ///   backtracks and tries the next: with `/users/new` and
    ///   `/users/:id/posts`, the path `/users/new/posts` matches the second.
    /// - Segments are compared after percent-decoding, byte for byte (UTF-8,
    ///   case-sensitive, no Unicode normalisation). A variable matches any
    ///   non-empty segment and captures it percent-decoded; a suffixed variable
    ///   matches a segment ending with its suffix after a non-empty value, and
    ///   captures the value without the suffix (`7.json` gives `7`).
    /// - A segment with a malformed escape (`%` not followed by two hex digits)
    ///   or decoding to invalid UTF-8 matches nothing: such a path has no match.
    ///
    /// - Parameters:
    ///   - method: The request method; routes registered for other methods are skipped.
    ///   - path: The request target's path, possibly with a query and a fragment.
    /// - Returns: The route, its pattern and the decoded variables; `nil` when no route matches.
    @inlinable
    public func match(method: HTTPMethod, path: String) -> RouteMatch<Target>? {
        guard let found = storage.lookup(path, method: method) else { return nil }
        return RouteMatch(entry: routes[found.route], parameters: found.parameters)
    }

    /// Finds the route for a request path, whatever its method.
    ///
    /// ```swift
    /// trie.match(path: "/users/42")?.pattern.description   // "/users/:id"
    /// ```
    ///
    /// The same rules as ``match(method:path:)`` apply, with every method
    /// accepted. When several methods have a route with the winning shape, the
    /// one registered first is returned.
    ///
    /// - Parameters:
    ///   - path: The request target's path, possibly with a query and a fragment.
    /// - Returns: The route, its pattern and the decoded variables; `nil` when no route matches.
    @inlinable
    public func match(path: String) -> RouteMatch<Target>? {
        guard let found = storage.lookup(path, method: nil) else { return nil }
        return RouteMatch(entry: routes[found.route], parameters: found.parameters)
    }

    /// The methods for which ``match(method:path:)`` finds a route for this
    /// path, in `HTTPMethod.allCases` order: empty means 404, a list without the
    /// request's method means 405 with this `Allow` list.
    ///
    /// ```swift
    /// trie.allowedMethods(path: "/users/42")   // [.get, .put, .delete]
    /// ```
    ///
    /// - Parameters:
    ///   - path: The request target's path, possibly with a query and a fragment.
    /// - Returns: The methods with a matching route.
    public func allowedMethods(path: String) -> [HTTPMethod] {
        storage.allowedMethods(path)
    }
}
