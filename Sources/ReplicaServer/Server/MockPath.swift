import ReplicaCore

/// A request's path segments and query items, decoded by the core's ``PercentEncoding`` (the one
/// encoder and decoder of both the client and the server), and path patterns for per-route faults.
enum MockPath {
    /// Decoded path segments, empty ones dropped; nil for a bad escape.
    static func segments(_ path: String) -> [String]? {
        var segments: [String] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            guard let decoded = PercentEncoding.decodeString(part) else { return nil }
            segments.append(decoded)
        }
        return segments
    }

    /// Decoded `name=value` pairs in order; nil for a bad escape.
    static func queryItems(_ query: String?) -> [(name: String, value: String)]? {
        guard let query, !query.isEmpty else { return [] }
        var items: [(name: String, value: String)] = []
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = PercentEncoding.decodeString(parts[0], plusIsSpace: true),
                  let value = parts.count > 1 ? PercentEncoding.decodeString(parts[1], plusIsSpace: true) : "" else { return nil }
            items.append((name: name, value: value))
        }
        return items
    }

    /// Whether decoded `segments` match a pattern like `/people/:id` (`:x` one segment, a final `*` the rest).
    static func matches(_ pattern: String, _ segments: [String]) -> Bool {
        let parts = pattern.split(separator: "/", omittingEmptySubsequences: true)
        for (index, part) in parts.enumerated() {
            if part == "*" && index == parts.count - 1 { return segments.count >= index }
            guard index < segments.count else { return false }
            if part.hasPrefix(":") { continue }
            if part != segments[index] { return false }
        }
        return parts.count == segments.count
    }
}
