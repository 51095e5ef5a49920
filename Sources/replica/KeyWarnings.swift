import Replica

/// The warnings `import` and `sync` print for keys that were not stored: counts, up to five
/// examples with their JSON pointers, and a hint when another key convention or an
/// attribute's `jsonKey` would match.
enum KeyWarnings {
    /// The warning lines for `result`, empty when every key was stored.
    ///
    /// ```swift
    /// for line in KeyWarnings.lines(result, mapping: engine.mapping, source: "people.json") { printWarning(line) }
    /// ```
    static func lines(_ result: SyncResult, mapping: SchemaMapping, source: String) -> [String] {
        var lines: [String] = []
        let unknown = result.ignoredKeys.filter { $0.kind == .unknownKey }
        let collections = result.ignoredKeys.filter { $0.kind == .unknownCollection }
        let duplicates = result.ignoredKeys.filter { $0.kind == .duplicateKey }
        if result.ignoredKeyCount > 0 {
            let examples = (unknown + collections).prefix(5).map(\.description).joined(separator: ", ")
            let more = unknown.count + collections.count > 5 ? ", …" : ""
            lines.append("\(source): \(result.ignoredKeyCount) \(result.ignoredKeyCount == 1 ? "key" : "keys") matched "
                         + "no attribute or entity and \(result.ignoredKeyCount == 1 ? "was" : "were") not stored: \(examples)\(more)")
            if let (convention, matched) = mapping.suggestedConvention(for: unknown) {
                lines.append("the schema's keyConvention is \(mapping.schema.keyConvention.rawValue); \(convention.rawValue) "
                             + "would match \(matched) of these keys")
            }
            for key in unknown.prefix(5) {
                if let attribute = mapping.likelyAttribute(for: key) {
                    lines.append("'\(key.key)' looks like \(key.entity ?? "").\(attribute): give it \"jsonKey\": \"\(key.key)\"")
                }
            }
        }
        if !duplicates.isEmpty {
            let examples = duplicates.prefix(5).map(\.description).joined(separator: ", ")
            lines.append("\(source): objects gave keys twice; the last value was stored: \(examples)")
        }
        let shared = result.ignoredKeys.filter { $0.kind == .sharedChild }
        if !shared.isEmpty {
            let examples = shared.prefix(5).map(\.description).joined(separator: ", ")
            lines.append("\(source): children were nested under two parents of a one-to-many relationship; the last "
                         + "parent kept them: \(examples) (a child shared by many parents is a many-to-many: \"through\")")
        }
        if !lines.isEmpty { lines.append("--strict makes these errors (nothing is written)") }
        return lines
    }
}
