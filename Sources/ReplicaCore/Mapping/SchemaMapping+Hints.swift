extension SchemaMapping {
    /// The key convention that would match the most of these ignored keys, when another one
    /// than the schema's would match any.
    ///
    /// ```swift
    /// engine.mapping.suggestedConvention(for: result.ignoredKeys)   // (.camelCase, 3)
    /// ```
    ///
    /// - Parameter keys: Keys an import did not store (``SyncResult/ignoredKeys``).
    /// - Returns: The convention and how many distinct keys it would match, or `nil`.
    public func suggestedConvention(for keys: [IgnoredKey]) -> (convention: KeyConvention, matched: Int)? {
        var best: (convention: KeyConvention, matched: Int)?
        for convention in KeyConvention.allCases where convention != schema.keyConvention {
            var matched = 0
            for key in keys where key.kind == .unknownKey {
                guard let entity = key.entity.flatMap({ schema.entity(named: $0) }) else { continue }
                let names = entity.attributes.filter { $0.jsonKey == nil }.map(\.name)
                    + entity.relationships.filter { $0.jsonKey == nil }.map(\.name)
                if names.contains(where: { convention.jsonKey(forAttribute: $0) == key.key }) { matched += 1 }
            }
            if matched > (best?.matched ?? 0) { best = (convention, matched) }
        }
        return best
    }

    /// The attribute an ignored key probably meant: same letters, other case or separators
    /// (`userId` for `userID`, `user-name` for `userName`).
    ///
    /// ```swift
    /// engine.mapping.likelyAttribute(for: ignored)   // "userID"
    /// ```
    ///
    /// - Returns: The attribute's name, or `nil`.
    public func likelyAttribute(for key: IgnoredKey) -> String? {
        guard key.kind == .unknownKey, let entity = key.entity.flatMap({ schema.entity(named: $0) }) else { return nil }
        func folded(_ text: String) -> String { text.lowercased().filter { $0.isLetter || $0.isNumber } }
        let wanted = folded(key.key)
        return entity.attributes.first { folded($0.name) == wanted }?.name
    }
}
