/// What inference and the OpenAPI import decide about keys they did not name themselves.
extension KeyConvention {
    /// The convention most keys follow: camelCase when more keys have an inner capital (and no
    /// underscore) than have an underscore, else snake_case.
    ///
    /// ```swift
    /// KeyConvention.detect(keys: ["id", "photoUrls", "shipDate"])   // .camelCase
    /// KeyConvention.detect(keys: ["id", "created_at"])              // .snakeCase
    /// ```
    /// - Parameter keys: every JSON key seen, each as often as it was seen.
    /// - Returns: `.camelCase` or `.snakeCase`.
    package static func detect(keys: some Sequence<String>) -> KeyConvention {
        var snake = 0
        var camel = 0
        for key in keys {
            if key.contains("_") { snake += 1 }
            if key.dropFirst().contains(where: \.isUppercase) && !key.contains("_") { camel += 1 }
        }
        return camel > snake ? .camelCase : .snakeCase
    }

    /// The attribute name of a JSON key under this convention, made an identifier:
    /// `+1` → `plus1`, `content-type` → `contentType` (the attribute then names its `jsonKey`).
    ///
    /// ```swift
    /// KeyConvention.snakeCase.inferredAttributeName(forKey: "+1")          // "plus1"
    /// KeyConvention.snakeCase.inferredAttributeName(forKey: "user_id")     // "userID"
    /// KeyConvention.camelCase.inferredAttributeName(forKey: "photoUrls")   // "photoUrls"
    /// ```
    /// - Parameter key: the JSON key.
    /// - Returns: an identifier (letters, digits, `_`; never starting with a digit).
    package func inferredAttributeName(forKey key: String) -> String {
        var words: [String] = []
        for part in key.split(separator: "_", omittingEmptySubsequences: true) {
            var text = String(part)
            if text.hasPrefix("+") { text = "plus_" + text.dropFirst() }
            if text.hasPrefix("-") { text = "minus_" + text.dropFirst() }
            words.append(String(text.map { $0.isLetter || $0.isNumber ? $0 : "_" }))
        }
        let cleaned = words.joined(separator: "_")
        let name = attributeName(forJSONKey: cleaned.isEmpty ? "value" : cleaned)
            .filter { $0.isLetter || $0.isNumber || $0 == "_" }
        guard let first = name.first, !first.isNumber else { return "value" + name }
        // `user_id` → `userID`, as hand-written schemas name keys, when the convention maps it back.
        if self == .snakeCase, name.count > 2, name.hasSuffix("Id") {
            let upper = name.dropLast(2) + "ID"
            if jsonKey(forAttribute: String(upper)) == key { return String(upper) }
        }
        return name
    }
}
