/// How an input holds its values.
///
/// ```swift
/// InputFormat(path: "events.ndjson")   // .ndjson
/// InputFormat(path: "users.json")      // .json
/// ```
public enum InputFormat: String, Sendable, Hashable, CaseIterable {
    /// One JSON value: a top-level array of objects, one object, or a route's response shape
    /// (envelope, namespace, MANY, DATA).
    case json
    /// NDJSON (JSON Lines): one JSON value per line, read as if it were the array of those
    /// values, streaming. Lines end with `\n` or `\r\n`; blank lines are skipped; a value may
    /// not span lines, nor two values share one. Only for an entity, or a route whose target is
    /// an entity: each line is one object of it (the route's envelope and namespace do not
    /// apply), and the whole input is the complete collection for stale-row deletion.
    case ndjson

    /// The format a file's name says: `.ndjson` and `.jsonl` (in any case) are NDJSON;
    /// anything else, and standard input (`-`), is JSON.
    ///
    /// ```swift
    /// InputFormat(path: "logs/2024-05-01.JSONL")   // .ndjson
    /// ```
    ///
    /// - Parameter path: A file path, or `-` for standard input.
    public init(path: String) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: ".") else {
            self = .json
            return
        }
        switch name[name.index(after: dot)...].lowercased() {
        case "ndjson", "jsonl": self = .ndjson
        default: self = .json
        }
    }
}
