/// An immutable route table, frozen from a ``RouteTableBuilder``, that matches
/// request paths without regular expressions.
///
/// Matching walks the path's UTF-8 bytes once per trie level, preferring a
/// literal segment over a variable at each level and backtracking when the
/// literal branch fails further down. See ``match(method:path:)`` for the rules.
///
/// ```swift
/// var builder = RouteTableBuilder<String>()
/// try builder.add(method: .get, pattern: "/users/new", target: "form")
/// try builder.add(method: .get, pattern: "/users/:id/posts", target: "posts")
/// let trie = try builder.build()
/// trie.match(method: .get, path: "/users/new/posts")?.target   // "posts"
/// ```
public final class RouteTrie<Target: Sendable>: Sendable {
    /// The routes, in registration order.
    public let routes: [RouteEntry<Target>]

    /// The frozen nodes and edges.
    @usableFromInline
    let storage: RouteTrieStorage

    /// Builds the trie; see ``RouteTableBuilder/build()``.
    ///
    /// ```swift
    /// let trie = try RouteTrie(routes: builder.routes)
    /// ```
    ///
    /// - Parameters:
    ///   - routes: The routes, in registration order.
    /// - Throws: `RouteError` with code `.duplicateRoute` or `.ambiguousRoutes`, naming both patterns.
    public init(routes: [RouteEntry<Target>]) throws(RouteError) {
        try Self.checkConflicts(routes)
        self.routes = routes
        self.storage = RouteTrieStorage(routes: routes.map { ($0.method, $0.pattern) })
    }

    /// Refuses two routes with the same method and shape.
    private static func checkConflicts(_ routes: [RouteEntry<Target>]) throws(RouteError) {
        var seen: [HTTPMethod: [String: Int]] = [:]
        for (index, route) in routes.enumerated() {
            let shape = route.pattern.shape
            guard let earlier = seen[route.method]?[shape] else {
                seen[route.method, default: [:]][shape] = index
                continue
            }
            let first = routes[earlier].pattern
            let second = route.pattern
            if first == second {
                throw RouteError(
                    code: .duplicateRoute,
                    message: "duplicate route: \(route.method) \"\(second)\" (route #\(index + 1)) "
                        + "repeats \(route.method) \"\(first)\" (route #\(earlier + 1))",
                    pattern: first.description,
                    otherPattern: second.description
                )
            }
            throw RouteError(
                code: .ambiguousRoutes,
                message: "ambiguous routes: \(route.method) \"\(first)\" (route #\(earlier + 1)) and "
                    + "\(route.method) \"\(second)\" (route #\(index + 1)) have the same shape \"\(shape)\", "
                    + "so no path can tell them apart",
                pattern: first.description,
                otherPattern: second.description
            )
        }
    }
}
