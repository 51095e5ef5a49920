extension RouteTable {
    /// The declared routes closest to a path that matched none, best first: for "no route"
    /// errors, so that `/pepole` suggests `GET /people`.
    ///
    /// ```swift
    /// table.closestRoutes(to: "/pepole")   // ["GET /people", "GET /people/:id"]
    /// ```
    ///
    /// - Parameters:
    ///   - path: The path that matched no route (a query string is ignored).
    ///   - limit: The most suggestions.
    /// - Returns: `METHOD /pattern` strings within a small edit distance of the path.
    public func closestRoutes(to path: String, limit: Int = 3) -> [String] {
        let bare = String(path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        let requested = Self.segments(bare)
        var scored: [(distance: Int, text: String)] = []
        for entry in entries {
            let pattern = Self.segments(entry.pattern.description)
            let distance = Self.distance(requested, pattern)
            let allowance = max(2, requested.joined().count / 3)
            if distance <= allowance { scored.append((distance, "\(entry.route.method) \(entry.pattern)")) }
        }
        var seen: Set<String> = []
        return scored.sorted { ($0.distance, $0.text) < ($1.distance, $1.text) }
            .map(\.text).filter { seen.insert($0).inserted }.prefix(limit).map { $0 }
    }

    private static func segments(_ path: String) -> [String] {
        path.split(separator: "/").map(String.init)
    }

    /// Edits between two paths: per segment, a `:variable` matches any segment for free, other
    /// segments cost their character edit distance; a missing or extra segment costs its length + 2.
    private static func distance(_ a: [String], _ b: [String]) -> Int {
        // A missing or extra segment costs more than its letters: paths of the same shape come first.
        func cost(_ segment: String) -> Int { max(1, segment.count) + 2 }
        var previous = [0]
        for right in b { previous.append(previous[previous.count - 1] + cost(right)) }
        for left in a {
            var current = [previous[0] + cost(left)]
            for (j, right) in b.enumerated() {
                let substitute = previous[j] + (right.hasPrefix(":") || right.hasPrefix("{") ? 0 : characterDistance(left, right))
                current.append(min(substitute, previous[j + 1] + cost(left), current[j] + cost(right)))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// Levenshtein distance, ignoring case.
    private static func characterDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.lowercased()), b = Array(b.lowercased())
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1), previous[j] + 1, current[j - 1] + 1)
            }
            previous = current
        }
        return previous[b.count]
    }
}
