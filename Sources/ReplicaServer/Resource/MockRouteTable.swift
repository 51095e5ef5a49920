/// The API's own routes (``MockRoute``) checked against their resources and matched by the core's
/// routing: each route's ``RoutePattern`` sits in a ``RouteTrie``, which prefers a literal segment
/// to a variable at each level (`GET /pet/findByStatus` over `GET /pet/:petId`) and backtracks when
/// a branch leads nowhere for the method.
///
/// A trie refuses two routes of one method and one shape, which the mock server takes: a route
/// whose shape an earlier one of its method already has goes to the next trie, tried when the
/// earlier ones find no route whose values fit their properties (`GET /users/:id` with an integer
/// key, then `GET /users/:username`: `/users/7` is the first, `/users/alice` the second).
struct MockRouteTable: Sendable {
    /// The routes, in the order given.
    let routes: [CompiledMockRoute]
    /// Tries over ``routes`` (each target an index into it), in the order they are tried.
    private let tries: [RouteTrie<Int>]

    /// Lays out `routes`.
    ///
    /// - Parameters:
    ///   - routes: the routes, in the order given (earlier ones win over later ones of the same shape).
    init(_ routes: [CompiledMockRoute] = []) {
        self.routes = routes
        var layers: [[RouteEntry<Int>]] = []
        var shapes: [Set<String>] = []
        for (index, route) in routes.enumerated() {
            let shape = route.method.rawValue + " " + route.pattern.shape
            let layer = shapes.firstIndex { !$0.contains(shape) } ?? shapes.count
            if layer == shapes.count {
                shapes.append([])
                layers.append([])
            }
            shapes[layer].insert(shape)
            layers[layer].append(RouteEntry(method: route.method, pattern: route.pattern, target: index))
        }
        // A trie throws only for two routes of one method and shape, which no layer holds.
        tries = layers.compactMap { try? RouteTrie(routes: $0) }
    }

    /// The route answering `method` on `path`, and its variables' values typed as their properties;
    /// nil when no route of that method matches with values that fit.
    ///
    /// - Parameters:
    ///   - method: the request's method.
    ///   - path: the request's path, its segments percent-encoded.
    func match(method: HTTPMethod, path: String) -> (route: CompiledMockRoute, values: JSONObject)? {
        for trie in tries {
            guard let match = trie.match(method: method, path: path) else { continue }
            let route = routes[match.target]
            if let values = route.values(match.parameters) { return (route, values) }
        }
        return nil
    }

    /// The methods with a route for `path` (``match(method:path:)`` finds one), in the order
    /// `GET`, `POST`, `PUT`, `PATCH`, `DELETE`: empty when no route matches the path.
    func allowedMethods(path: String) -> [HTTPMethod] {
        HTTPMethod.allCases.filter { match(method: $0, path: path) != nil }
    }

    /// The table without the routes of the resource `name`.
    func removing(resource name: String) -> MockRouteTable {
        MockRouteTable(routes.filter { $0.route.resource != name })
    }
}
