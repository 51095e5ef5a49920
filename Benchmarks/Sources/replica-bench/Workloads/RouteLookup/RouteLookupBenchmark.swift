import Replica

// Adapted from the routing scratch package's `RouteBenchmark` (RouteLookupBenchmark.swift):
// errors are thrown instead of stopping the process, and the fixture is built once per run.

/// Route-lookup throughput: a 200-route table shaped like a real REST API,
/// matched against a pre-built list of realistic request paths.
///
/// ```swift
/// let fixture = try RouteLookupFixture()
/// let lookupsPerSecond = fixture.measure(iterations: 2_000)
/// ```
///
/// The table mixes literal and variable segments (1 to 7 segments deep) over
/// five methods; the paths include query strings, fragments, trailing slashes,
/// percent-escaped values and a few misses. Uses only `Replica`'s public API.
struct RouteLookupFixture: Sendable {
    /// The frozen route table (200 routes).
    let trie: RouteTrie<Int>
    /// The request list (about 1,000 method and path pairs).
    let requests: [(method: HTTPMethod, path: String)]

    /// How many requests match a route.
    var hits: Int {
        requests.filter { trie.match(method: $0.method, path: $0.path) != nil }.count
    }

    /// Matches the whole request list `iterations` times.
    ///
    /// - Parameter iterations: How many times to match the whole path list.
    /// - Returns: Lookups per second.
    func measure(iterations: Int) -> Double {
        var checksum = 0
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<iterations {
            for request in requests {
                if let match = trie.match(method: request.method, path: request.path) {
                    checksum &+= match.target &+ match.parameters.count
                }
            }
        }
        let elapsed = start.duration(to: clock.now)
        // Keep the work observable so the optimiser cannot drop it.
        if checksum == 42 { print("checksum", checksum) }
        return Double(iterations * requests.count) / elapsed.seconds
    }

    /// Builds the route table (200 routes) and the request list.
    ///
    /// - Throws: `RouteError` if a benchmark route is rejected, ``BenchmarkError`` if the table is not 200 routes.
    init() throws {
        let resources = [
            "users", "groups", "repos", "orgs", "projects", "teams", "gists",
            "issues", "events", "notifications", "labels", "milestones", "releases",
        ]
        var routes: [(HTTPMethod, String)] = []
        for (index, resource) in resources.enumerated() {
            let base = "/api/v1/\(resource)"
            routes.append((.get, base))
            routes.append((.post, base))
            routes.append((.get, "\(base)/search"))
            for method in [HTTPMethod.get, .put, .patch, .delete] {
                routes.append((method, "\(base)/:id"))
            }
            for offset in 1...2 {
                let child = resources[(index + offset) % resources.count]
                routes.append((.get, "\(base)/:id/\(child)"))
                routes.append((.post, "\(base)/:id/\(child)"))
                routes.append((.get, "\(base)/{id}/\(child)/:childID"))
                routes.append((.delete, "\(base)/:id/\(child)/:childID"))
            }
        }
        routes += [
            (.get, "/"),
            (.get, "/health"),
            (.get, "/api/v1/me"),
            (.get, "/api/v1/repos/:owner/:repo/contents/:path"),
            (.get, "/api/v1/orgs/:org/teams/:team/members/:member"),
        ]
        guard routes.count == 200 else { throw BenchmarkError("expected 200 routes, got \(routes.count)") }

        var builder = RouteTableBuilder<Int>()
        for (index, route) in routes.enumerated() {
            try builder.add(method: route.0, pattern: route.1, target: index)
        }
        trie = try builder.build()

        // Deterministic pseudo-random values (LCG).
        var seed: UInt64 = 0x2545_F491_4F6C_DD1D
        func next(_ bound: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(bound))
        }
        let values = ["42", "1337", "7", "981234", "c0ffee", "caf%C3%A9", "a%2Fb", "Zo%C3%AB", "550e8400-e29b-41d4-a716-446655440000"]
        let suffixes = ["", "", "", "", "?page=2&per_page=50", "/", "?q=swift%20nio#top", ""]
        var requests: [(method: HTTPMethod, path: String)] = []
        for number in 0..<1_000 {
            let route = routes[number % routes.count]
            var path = ""
            for part in route.1.split(separator: "/") {
                path += "/"
                if part.hasPrefix(":") || part.hasPrefix("{") {
                    path += values[next(values.count)]
                } else {
                    path += part
                }
            }
            if path.isEmpty { path = "/" }
            if number % 20 == 19 { path += "/nope" }   // a miss now and then
            let suffix = suffixes[next(suffixes.count)]
            if !(path == "/" && suffix == "/") { path += suffix }   // "//" is an empty segment, not the root
            requests.append((route.0, path))
        }
        self.requests = requests
    }
}
