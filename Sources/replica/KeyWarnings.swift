import Replica

/// The warnings `import` and `sync` print for keys that were not stored: per source (file or
/// page request) and entity, every key with its count and first pointer, and hints: another key
/// convention, an attribute's `jsonKey`, or `ignoreKeys`/`unmappedKeys` for keys that share a suffix.
enum KeyWarnings {
    /// The warning lines for the result of an import of one input, empty when every key was stored.
    ///
    /// ```swift
    /// for line in KeyWarnings.lines(result, mapping: engine.mapping, source: "people.json") { printWarning(line) }
    /// ```
    static func lines(_ result: SyncResult, mapping: SchemaMapping, source: String) -> [String] {
        let named = result.ignoredKeys.filter { $0.kind.dropsValue }
            .reduce(0) { $0 + $1.count }
        // One input: `source` names it as the user gave it (`standard input` for `-`).
        let keys = result.ignoredKeys.map { key in var key = key; key.source = nil; return key }
        return lines(keys, unnamed: max(0, result.ignoredKeyCount - named), mapping: mapping, source: source)
    }

    /// The warning lines for `keys` (and `unnamed` occurrences of keys past the distinct limit).
    ///
    /// ```swift
    /// KeyWarnings.lines(result.ignoredKeys, unnamed: 0, mapping: mapping, source: "/issues")
    /// ```
    static func lines(_ keys: [IgnoredKey], unnamed: Int, mapping: SchemaMapping, source: String) -> [String] {
        var lines: [String] = []
        let unknown = keys.filter { $0.kind == .unknownKey }
        let collections = keys.filter { $0.kind == .unknownCollection }
        let types = keys.filter { $0.kind == .unknownType }
        let duplicates = keys.filter { $0.kind == .duplicateKey }
        for (place, entity, group) in groups(unknown, source: source) {
            let count = group.reduce(0) { $0 + $1.count }
            lines.append("\(place): \(entity ?? ""): \(count) \(count == 1 ? "key" : "keys") matched no attribute and "
                         + "\(count == 1 ? "was" : "were") not stored: " + items(group))
        }
        for (place, _, group) in groups(collections, source: source) {
            let count = group.reduce(0) { $0 + $1.count }
            lines.append("\(place): \(count) \(count == 1 ? "object" : "objects") of collections that match no entity "
                         + "\(count == 1 ? "was" : "were") not stored: " + items(group))
        }
        for (place, _, group) in groups(types, source: source) {
            let count = group.reduce(0) { $0 + $1.count }
            lines.append("\(place): \(count) \(count == 1 ? "object" : "objects") of types that match no entity of the route "
                         + "\(count == 1 ? "was" : "were") not stored: " + items(group))
        }
        if unnamed > 0 {
            lines.append("\(source): \(unnamed) more \(unnamed == 1 ? "key was" : "keys were") not stored "
                         + "(past the first distinct keys named above)")
        }
        if !unknown.isEmpty {
            if let (convention, matched) = mapping.suggestedConvention(for: unknown) {
                lines.append("the schema's keyConvention is \(mapping.schema.keyConvention.rawValue); \(convention.rawValue) "
                             + "would match \(matched) of these keys")
            }
            for key in unknown.prefix(5) {
                if let attribute = mapping.likelyAttribute(for: key) {
                    lines.append("'\(key.key)' looks like \(key.entity ?? "").\(attribute): give it \"jsonKey\": \"\(key.key)\"")
                }
            }
            lines += patternHints(unknown)
        }
        for (place, _, group) in groups(duplicates, source: source) {
            lines.append("\(place): objects gave keys twice; the last value was stored: "
                         + group.map(\.description).joined(separator: ", "))
        }
        for (place, _, group) in groups(keys.filter { $0.kind == .sharedChild }, source: source) {
            lines.append("\(place): children were nested under two parents of a one-to-many relationship; the last "
                         + "parent kept them: " + group.map(\.description).joined(separator: ", ")
                         + " (a child shared by many parents is a many-to-many: \"through\")")
        }
        if !lines.isEmpty { lines.append("--strict makes these errors (nothing is written)") }
        return lines
    }

    /// `url × 30 (first at /0/url), node_id × 30 (first at /0/node_id)`.
    private static func items(_ keys: [IgnoredKey]) -> String {
        keys.map { "\($0.key) × \($0.count) (first at \(pointer($0)))" }.joined(separator: ", ")
    }

    private static func pointer(_ key: IgnoredKey) -> String {
        key.example.components.isEmpty ? "/" : key.example.description
    }

    /// The keys grouped by where they first occurred, then by entity, each in first-seen order.
    private static func groups(_ keys: [IgnoredKey], source: String) -> [(String, String?, [IgnoredKey])] {
        var order: [String] = []
        var grouped: [String: (String, String?, [IgnoredKey])] = [:]
        for key in keys {
            let place = key.source ?? source
            let id = place + "\u{0}" + (key.entity ?? "")
            if grouped[id] == nil {
                order.append(id)
                grouped[id] = (place, key.entity, [])
            }
            grouped[id]?.2.append(key)
        }
        return order.compactMap { grouped[$0] }
    }

    /// For three or more keys of one entity ending in the same `_suffix` (`*_url`): the
    /// `ignoreKeys` pattern that drops them, or `unmappedKeys` to keep them.
    static func patternHints(_ keys: [IgnoredKey]) -> [String] {
        var order: [String] = []
        var bySuffix: [String: Set<String>] = [:]
        for key in keys {
            let last = key.key.split(separator: ".").last.map(String.init) ?? key.key
            guard let underscore = last.lastIndex(of: "_"), underscore != last.startIndex else { continue }
            let suffix = String(last[underscore...])
            guard suffix.count > 1 else { continue }
            if bySuffix[suffix] == nil { order.append(suffix) }
            bySuffix[suffix, default: []].insert(key.key)
        }
        return order.compactMap { suffix in
            guard let names = bySuffix[suffix], names.count >= 3 else { return nil }
            return "\(names.count) of these keys end in \(suffix): \"ignoreKeys\": [\"*\(suffix)\"] drops them without "
                + "a warning; \"unmappedKeys\": \"keep\" stores unmapped keys as JSON in a column"
        }
    }
}
